//! FDB5's tools' command lines (eckit's `CmdArgs`): options `--name` (a switch) or
//! `--name=value` (also `--name value`), and requests, several per call.

use std::collections::{BTreeMap, BTreeSet};

/// One option a tool takes.
pub struct Opt {
    /// Its name, without `--`.
    pub name: &'static str,
    /// What value it takes, if any.
    pub value: Value,
    /// What it does, as FDB5's usage says it.
    pub help: &'static str,
}

/// The value an option takes, as FDB5's usage names it.
#[derive(Clone, Copy, PartialEq)]
pub enum Value {
    /// None: a switch (`--json`).
    Switch,
    /// `--config=string`.
    Text,
    /// `--depth=integer`.
    Integer,
    /// `--parallel=ordinal`.
    Ordinal,
    /// `--fp-tolerance=real`.
    Real,
    /// `--target=path`.
    Path,
    /// `--minimum-keys=string,string,...`.
    List,
}

/// The options every tool that visits databases takes first (FDB5's `FDBVisitTool`)...
pub const VISIT: &[Opt] = &[
    Opt { name: "minimum-keys", value: Value::List, help: "Use these keywords as a minimum set which *must* be specified" },
    Opt { name: "raw", value: Value::Switch, help: "Don't apply (contextual) expansion and checking on requests." },
    Opt {
        name: "ignore-errors",
        value: Value::Switch,
        help: "Ignore errors (report them as warnings) and continue processing wherever possible",
    },
    Opt { name: "ignore-no-data", value: Value::Switch, help: "No matching data found in FDB is not an error" },
];

/// The options an inspecting tool takes first (FDB5's `FDBInspect`): a visiting tool's, but
/// for the minimum keys.
pub fn inspect_first() -> &'static [Opt] {
    &VISIT[1..]
}

/// ... and last.
pub const VISIT_LAST: &[Opt] = &[
    Opt { name: "all", value: Value::Switch, help: "Visit all FDB databases" },
    Opt { name: "config", value: Value::Text, help: "FDB configuration filename" },
];

/// A command line read: the switches given, the values given, and the requests.
#[derive(Debug, Default)]
pub struct CommandLine {
    switches: BTreeSet<String>,
    values: BTreeMap<String, String>,
    /// The arguments that are no options: requests.
    pub requests: Vec<String>,
}

impl CommandLine {
    /// Reads `args` against `options`; the error is FDB5's (`Invalid option --x`).
    pub fn parse(args: &[String], options: &[&[Opt]]) -> Result<CommandLine, String> {
        let find = |name: &str| options.iter().flat_map(|o| o.iter()).find(|o| o.name == name);
        let mut line = CommandLine::default();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let Some(option) = arg.strip_prefix("--") else {
                line.requests.push(arg.clone());
                continue;
            };
            let (name, inline) = match option.split_once('=') {
                Some((name, value)) => (name, Some(value.to_string())),
                None => (option, None),
            };
            let Some(opt) = find(name) else { return Err(format!("Invalid option --{name}")) };
            match (opt.value != Value::Switch, inline) {
                (false, None) => {
                    line.switches.insert(name.to_string());
                }
                (false, Some(value)) => match value.as_str() {
                    "1" | "true" | "on" | "yes" => {
                        line.switches.insert(name.to_string());
                    }
                    "0" | "false" | "off" | "no" => {
                        line.switches.remove(name);
                    }
                    _ => return Err(format!("Invalid value '{value}' for --{name} (a switch: true or false)")),
                },
                (true, Some(value)) => {
                    line.values.insert(name.to_string(), value);
                }
                (true, None) => match args.next() {
                    Some(value) => {
                        line.values.insert(name.to_string(), value.clone());
                    }
                    None => return Err(format!("Option --{name} needs a value")),
                },
            }
        }
        Ok(line)
    }

    /// Whether switch `name` was given.
    pub fn has(&self, name: &str) -> bool {
        self.switches.contains(name)
    }

    /// The value given for `name`.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }
}

/// What FDB5 prints after a command line it refuses, before the options: a visiting tool's
/// usage line and example (`fdb-list`), or a tool's own synopsis (`fdb-read`).
pub enum Synopsis {
    /// `Usage: TOOL [options] [request1] [request2] ...` and FDB5's example request.
    Visit,
    /// The tool's own usage lines.
    Lines(&'static str),
    /// Text printed as it is between the message and the options.
    Verbatim(&'static str),
    /// An inspecting tool's (FDB5's `FDBInspect`: `fdb-inspect`, `fdb-dump`): as a visiting
    /// tool's, without the blank line before it.
    Inspect,
}

/// FDB5's usage text for a tool, printed after the message saying what is wrong: its
/// synopsis, and every option with its help.
pub fn usage(tool: &str, synopsis: &Synopsis, options: &[&[Opt]]) -> String {
    let mut text = match synopsis {
        Synopsis::Visit => format!(
            "\nUsage: {tool} [options] [request1] [request2] ...\n\nExamples:\n=========\n\n{tool} \
             class=rd,expver=xywz,stream=oper,date=20190603,time=00\n\n\n"
        ),
        Synopsis::Lines(lines) => format!("\n\n{lines}\n"),
        Synopsis::Verbatim(text) => text.to_string(),
        Synopsis::Inspect => format!(
            "\nUsage: {tool} [options] [request1] [request2] ...\n\nExamples:\n=========\n\n{tool} \
             class=rd,expver=xywz,stream=oper,date=20190603,time=00\n\n\n"
        ),
    };
    text.push_str("Options are:\n===========:\n\n");
    for opt in options.iter().flat_map(|o| o.iter()) {
        let value = match opt.value {
            Value::Switch => "",
            Value::Text => "=string",
            Value::Integer => "=integer",
            Value::Ordinal => "=ordinal",
            Value::Real => "=real",
            Value::Path => "=path",
            Value::List => "=string,string,...",
        };
        text.push_str(&format!("   --{}{value} ({})\n\n", opt.name, opt.help));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIST: &[Opt] = &[Opt { name: "json", value: Value::Switch, help: "" }, Opt { name: "depth", value: Value::Integer, help: "" }];

    fn parse(args: &[&str]) -> Result<CommandLine, String> {
        CommandLine::parse(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>(), &[VISIT, LIST, VISIT_LAST])
    }

    #[test]
    fn options_take_fdb5_s_forms_and_requests_are_the_rest() {
        let line = parse(&["--json", "class=od", "--depth=2", "--minimum-keys", "class", "class=rd"]).unwrap();
        assert!(line.has("json") && !line.has("all"));
        assert_eq!((line.value("depth"), line.value("minimum-keys")), (Some("2"), Some("class")));
        assert_eq!(line.requests, ["class=od", "class=rd"]);
        assert!(!parse(&["--json=false"]).unwrap().has("json"));
        assert_eq!(parse(&["--bogus"]).unwrap_err(), "Invalid option --bogus");
        assert_eq!(parse(&["--depth"]).unwrap_err(), "Option --depth needs a value");
        assert!(parse(&["--json=maybe"]).unwrap_err().contains("true or false"));
    }
}
