//! `fdb-list`, as FDB5 5.25's: its options, its header per request, its lines (with
//! `--location`, `--length`), `--json` (one flat object per entry, keys sorted), `--compact`
//! (the entries of each index as MARS requests, with their count and size), `--full` and
//! `--only-duplicates`, and its exit codes (finding nothing is no error).

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use fieldstore::{FieldStore, Key, ListOptions, Request};

use super::options::{CommandLine, Opt, Value, VISIT, VISIT_LAST};
use super::text::{big_num, bytes};
use super::{Failure, ToolRequests};

const OPTIONS: &[Opt] = &[
    Opt { name: "location", value: Value::Switch, help: "Also print the location of each field" },
    Opt { name: "timestamp", value: Value::Switch, help: "Also print the timestamp when the field was indexed" },
    Opt { name: "length", value: Value::Switch, help: "Also print the field size" },
    Opt { name: "full", value: Value::Switch, help: "Include all entries (including masked duplicates)" },
    Opt { name: "only-duplicates", value: Value::Switch, help: "List only the duplicated (older) entries" },
    Opt {
        name: "porcelain",
        value: Value::Switch,
        help: "Streamlined and stable output. Useful as input for other tools or scripts.Incompatible with timestamp",
    },
    Opt { name: "json", value: Value::Switch, help: "Output available fields in JSON form" },
    Opt { name: "compact", value: Value::Switch, help: "Aggregate available fields in MARS requests" },
    Opt { name: "depth", value: Value::Integer, help: "Output entries up to 'depth' levels deep [1-3]" },
    Opt { name: "threads", value: Value::Integer, help: "Number of threads to use for index reading (default 8)" },
];

/// Which entries are listed: FDB5's list modes.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// The newest entry of each identifier.
    Deduplicate,
    /// Every entry, superseded ones too.
    Full,
    /// Only the superseded entries.
    OnlyDuplicates,
}

/// How `fdb-list` prints, from its command line.
struct Style {
    location: bool,
    length: bool,
    porcelain: bool,
    json: bool,
    compact: bool,
    depth: u8,
    mode: Mode,
}

impl Style {
    /// The style the command line asks for; FDB5's errors for options it refuses together.
    fn of(line: &CommandLine) -> Result<Style, Failure> {
        let depth = match line.value("depth").map(str::parse::<u8>) {
            None => 3,
            Some(Ok(depth @ 1..=3)) => depth,
            Some(_) => return Err(Failure::user("--depth must be 1, 2 or 3")),
        };
        let (full, only_duplicates, compact) = (line.has("full"), line.has("only-duplicates"), line.has("compact"));
        let json = line.has("json");
        let porcelain = line.has("porcelain") || json;
        let refused = [
            (porcelain && line.has("timestamp"), "--porcelain and --timestamp are not compatible"),
            (compact && line.has("location"), "--compact and --location are not compatible"),
            (compact && full, "--compact and --full are not compatible"),
            (compact && only_duplicates, "--compact and --only-duplicates are not compatible"),
            (full && only_duplicates, "--full and --only-duplicates are not compatible"),
        ];
        if let Some((_, why)) = refused.iter().find(|(refused, _)| *refused) {
            return Err(Failure::user(why));
        }
        if line.has("timestamp") {
            return Err(Failure::unsupported(
                "--timestamp: fieldstore's indexes keep no time per field (list --location and where say where each field is)",
            ));
        }
        let mode = match (only_duplicates, full) {
            (true, _) => Mode::OnlyDuplicates,
            (_, true) => Mode::Full,
            _ => Mode::Deduplicate,
        };
        Ok(Style { location: line.has("location"), length: line.has("length"), porcelain, json, compact, depth, mode })
    }
}

/// Runs `fdb-list` with `args` (the program name left out).
pub fn run(args: &[String]) -> Result<(), Failure> {
    let options: &[&[Opt]] = &[VISIT, OPTIONS, VISIT_LAST];
    let line = CommandLine::parse(args, options).map_err(|e| Failure::usage(e, "fdb-list", options))?;
    let style = Style::of(&line)?;
    let tool = ToolRequests::open(&line, "class,expver")?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut json_entries: Vec<BTreeMap<String, String>> = Vec::new();
    // `--json --compact`: the compact requests between brackets, as FDB5 prints them.
    let json_compact = style.json && style.compact;
    if json_compact {
        write!(out, "[")?;
    }
    for (request, header) in tool.requests()? {
        if !style.porcelain {
            write!(out, "Listing for request\n{header}\n")?;
        }
        let entries = entries(&tool.store, &request, &style)?;
        if json_compact {
            print_compact(&mut out, &entries, true)?;
        } else if style.json {
            json_entries.extend(entries.iter().map(Entry::flat));
        } else if style.compact {
            print_compact(&mut out, &entries, style.porcelain)?;
        } else {
            for entry in &entries {
                entry.write_line(&mut out, &tool.store, &style)?;
            }
        }
    }
    if json_compact {
        write!(out, "]")?;
    } else if style.json {
        serde_json::to_writer(&mut out, &json_entries).map_err(|e| Failure::io(e.into()))?;
    }
    out.flush()?;
    Ok(())
}

/// One listed entry: its keys down to the depth asked (a data set's and a collocation's
/// shared by their fields), and a field's location at depth 3.
struct Entry {
    keys: Vec<Arc<Key>>,
    field: Option<fieldstore::FieldLocation>,
}

/// The entries a request names, in FDB5's modes.
fn entries(fs: &FieldStore, request: &Request, style: &Style) -> Result<Vec<Entry>, Failure> {
    // With the superseded entries, FDB5 lists index after index, newest first, as stored.
    let every = style.mode != Mode::Deduplicate;
    let options = ListOptions { depth: style.depth, include_superseded: every, storage_order: every, ..ListOptions::default() };
    let matches = fs.list(request, options)?;
    Ok(match style.depth {
        1 => matches.datasets.into_iter().map(|d| Entry { keys: vec![Arc::new(d)], field: None }).collect(),
        2 => matches.collocations.into_iter().map(|(d, c)| Entry { keys: vec![Arc::new(d), Arc::new(c)], field: None }).collect(),
        _ => matches
            .fields
            .into_iter()
            .filter(|f| style.mode != Mode::OnlyDuplicates || f.superseded)
            .map(|f| Entry { keys: vec![f.dataset, f.collocation, Arc::new(f.element)], field: Some(f.location) })
            .collect(),
    })
}

impl Entry {
    /// FDB5's line: `{dataset}{collocation}{element}`, then `, LOCATION` and `, length=N`.
    fn write_line(&self, out: &mut impl Write, fs: &FieldStore, style: &Style) -> Result<(), Failure> {
        // Found before anything is written: a location that cannot be shown leaves no part line.
        let location = match (style.location, &self.field) {
            (true, Some(field)) => Some(location_text(fs, field)?),
            _ => None,
        };
        for key in &self.keys {
            write!(out, "{{{}}}", key.non_empty())?;
        }
        if let Some(location) = location {
            write!(out, ", {location}")?;
        }
        if style.length {
            write!(out, ", length={}", self.field.as_ref().map_or(0, |f| f.length))?;
        }
        writeln!(out)?;
        Ok(())
    }

    /// FDB5's JSON object of an entry: every keyword of its keys, sorted, with its value.
    fn flat(&self) -> BTreeMap<String, String> {
        self.keys.iter().flat_map(|k| k.iter().filter(|(_, v)| !v.is_empty()).map(|(k, v)| (k.to_string(), v.to_string()))).collect()
    }
}

/// A field's location as FDB5 prints one: `TocFieldLocation[uri=URI[scheme=file,name=PATH],
/// offset=N,length=N,remapKey={}]` for a file, `FieldLocation[uri=URI,...]` otherwise.
fn location_text(fs: &FieldStore, field: &fieldstore::FieldLocation) -> Result<String, Failure> {
    let uri = fs.absolute_uri(&field.uri)?;
    let location = match uri.strip_prefix('/') {
        Some(_) => format!("TocFieldLocation[uri=URI[scheme=file,name={uri}]"),
        None => format!("FieldLocation[uri={uri}"),
    };
    Ok(format!("{location},offset={},length={},remapKey={{}}]", field.offset, field.length))
}

/// `--compact`: the entries of each dataset and collocation, per set of element keywords, as
/// one MARS request where they fill it (every combination of its values there), else one per
/// entry (FDB5 prints the combinations missing from it instead: a difference kept, docs/fdb5.md);
/// then, unless porcelain, their count and size.
fn print_compact(out: &mut impl Write, entries: &[Entry], porcelain: bool) -> std::io::Result<()> {
    // By "dataset,collocation", then by the element's keywords: the entries and each keyword's
    // values in the order met.
    type Group = (BTreeMap<String, Vec<String>>, Vec<Key>);
    let mut groups: BTreeMap<String, BTreeMap<String, Group>> = BTreeMap::new();
    let (mut count, mut total) = (0u64, 0u64);
    // Each entry once: the same element of the same collocation in another index is a duplicate.
    let mut seen = std::collections::HashSet::new();
    for entry in entries {
        let text = |i: usize| entry.keys.get(i).map(|k| k.display_non_empty()).unwrap_or_default();
        // Optional keywords a field has not are no part of its request.
        let element = entry.keys.get(2).map(|k| Key::from_pairs(k.iter().filter(|(_, v)| !v.is_empty()))).unwrap_or_default();
        let signature = element.keywords().collect::<Vec<_>>().join(":");
        let tree = format!("{},{}", text(0), text(1));
        let (values, elements) = groups.entry(tree.clone()).or_default().entry(signature).or_default();
        for (keyword, value) in element.iter() {
            let met = values.entry(keyword.to_string()).or_default();
            if !met.iter().any(|v| v == value) {
                met.push(value.to_string());
            }
        }
        if seen.insert((tree, element.clone())) {
            elements.push(element);
            count += 1;
            total = total.saturating_add(entry.field.as_ref().map_or(0, |f| f.length));
        }
    }
    for (tree, leaves) in &groups {
        for (values, elements) in leaves.values() {
            let cube = values.values().map(Vec::len).try_fold(1usize, usize::checked_mul);
            if cube == Some(elements.len()) {
                let request: Vec<String> = values.iter().map(|(k, v)| format!("{k}={}", v.join("/"))).collect();
                writeln!(out, "{tree},{}", request.join(","))?;
            } else {
                for element in elements {
                    let mut request: Vec<(&str, &str)> = element.iter().collect();
                    request.sort();
                    let request: Vec<String> = request.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    writeln!(out, "{tree},{}", request.join(","))?;
                }
            }
        }
    }
    if !porcelain {
        writeln!(out, "Entries       : {}", big_num(count))?;
        writeln!(out, "Total         : {} ({})", big_num(total), bytes(total))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(step: &str, param: &str) -> Entry {
        let location = fieldstore::FieldLocation { uri: "d/f.data".into(), offset: 0, length: 1000, crc32c: None };
        let keys = vec![
            Arc::new(Key::from_pairs([("class", "od"), ("expver", "0001")])),
            Arc::new(Key::from_pairs([("type", "fc")])),
            Arc::new(Key::from_pairs([("step", step), ("number", ""), ("param", param)])),
        ];
        Entry { keys, field: Some(location) }
    }

    fn compact(entries: &[Entry]) -> String {
        let mut out = Vec::new();
        print_compact(&mut out, entries, false).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn compact_prints_a_full_cube_as_one_request_and_a_partial_one_field_by_field() {
        let full = [field("0", "130"), field("0", "131"), field("6", "130"), field("6", "131")];
        assert_eq!(
            compact(&full),
            "class=od,expver=0001,type=fc,param=130/131,step=0/6\nEntries       : 4\nTotal         : 4,000 (3.90625 Kbytes)\n"
        );
        // Three of the four: what is there, never the combination missing (FDB5 prints that).
        let partial = [field("0", "130"), field("0", "131"), field("6", "130")];
        assert_eq!(
            compact(&partial),
            "class=od,expver=0001,type=fc,param=130,step=0\nclass=od,expver=0001,type=fc,param=131,step=0\n\
             class=od,expver=0001,type=fc,param=130,step=6\nEntries       : 3\nTotal         : 3,000 (2.92969 Kbytes)\n"
        );
    }
}
