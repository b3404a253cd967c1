//! The two systems under comparison, driven through their command-line tools as a user's
//! scripts drive them: FDB5 5.25 (`fdb-list`, `fdb-axes`, `fdb-read`, ... from the PyPI wheels)
//! and `fieldstore`. Each turns one [`Case`] into an [`Outcome`] that can be compared.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use anyhow::{bail, Context};

use crate::cases::{Case, Op};
use crate::outcome::{disk_entries, Outcome};

/// One of the systems compared, with its root directory.
pub trait System {
    /// The system's name in messages and the report.
    fn name(&self) -> &'static str;
    /// The directory its catalogue and store are under.
    fn root(&self) -> &Path;
    /// The same system on another root (a copy, for wipe and purge).
    fn at(&self, root: &Path) -> anyhow::Result<Box<dyn System>>;
    /// Archives every message of a GRIB file, then flushes.
    fn archive(&self, file: &Path) -> anyhow::Result<()>;
    /// What the system answers to a case; `scratch` is a directory of the case's own.
    fn outcome(&self, case: &Case, scratch: &Path) -> anyhow::Result<Outcome>;
}

fn run(command: &mut Command) -> anyhow::Result<Output> {
    command.output().with_context(|| format!("running {command:?}"))
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn refused(output: &Output) -> Outcome {
    let text = String::from_utf8_lossy(&output.stderr);
    Outcome::Refused(text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string())
}

/// A tool's standard output if it succeeded, else its refusal.
fn answered(output: &Output) -> Result<String, Outcome> {
    if output.status.success() {
        Ok(stdout(output))
    } else {
        Err(refused(output))
    }
}

/// What is left after a wipe or purge: everything listed (`--full --porcelain`, as `listed`
/// answered) and the data and index files under `root`.
fn remaining(listed: Result<String, Outcome>, root: &Path) -> anyhow::Result<Outcome> {
    match listed {
        Ok(text) => Ok(Outcome::Remaining { listed: sorted_lines(&text), disk: disk_entries(root)? }),
        Err(refusal) => bail!("listing after a removal was refused: {refusal:?}"),
    }
}

fn sorted_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().filter(|l| !l.is_empty()).map(String::from).collect();
    lines.sort();
    lines
}

/// FDB5 5.25, its tools run with a configuration of their own (FDB5's schema file, one root).
pub struct Fdb5 {
    site_packages: PathBuf,
    home: PathBuf,
    schema: PathBuf,
    root: PathBuf,
}

impl Fdb5 {
    /// Installs FDB5 if needed (`scripts/fdb5-install.sh`) and prepares a configuration in
    /// `home` for a store under `root`.
    pub fn new(install_script: &Path, home: &Path, schema: &Path, root: &Path) -> anyhow::Result<Fdb5> {
        let out = run(Command::new("bash").arg(install_script))?;
        if !out.status.success() {
            bail!("installing FDB5 failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        let site_packages = PathBuf::from(stdout(&out).trim());
        Fdb5::configured(site_packages, home, schema, root)
    }

    fn configured(site_packages: PathBuf, home: &Path, schema: &Path, root: &Path) -> anyhow::Result<Fdb5> {
        // An FDB_HOME of its own: FDB5 otherwise reads stray files under /etc/fdb.
        std::fs::create_dir_all(home.join("etc/fdb"))?;
        std::fs::create_dir_all(root)?;
        let fdb5 = Fdb5 { site_packages, home: home.to_path_buf(), schema: schema.to_path_buf(), root: root.to_path_buf() };
        let config = format!(
            "type: local\nengine: toc\nschema: {}\nspaces:\n- handler: Default\n  regex: \".*\"\n  roots:\n  - path: {}\n",
            fdb5.schema.display(),
            root.display()
        );
        std::fs::write(fdb5.config(), config)?;
        Ok(fdb5)
    }

    fn config(&self) -> PathBuf {
        self.home.join(format!("config-{}.yaml", self.root.file_name().and_then(|n| n.to_str()).unwrap_or("root")))
    }

    /// FDB5's tool `name` (`fdb-write`, `fdb-list`, ...), its libraries found and this
    /// configuration in its environment.
    pub fn tool(&self, name: &str) -> Command {
        let libs: Vec<String> = ["fdb5lib", "metkitlib", "eckitlib", "eccodeslib"]
            .iter()
            .map(|lib| self.site_packages.join(lib).join("lib64").display().to_string())
            .collect();
        let mut command = Command::new(self.site_packages.join("fdb5lib/bin").join(name));
        command.env("FDB_HOME", &self.home).env("FDB5_CONFIG_FILE", self.config()).env("LD_LIBRARY_PATH", libs.join(":"));
        command
    }

    /// `fdb-TOOL ARGS REQUEST`: its standard output, or the refusal.
    fn answer(&self, tool: &str, args: &[&str], request: &str) -> anyhow::Result<Result<String, Outcome>> {
        Ok(answered(&run(self.tool(tool).args(args).arg(request))?))
    }

    /// The data and index files a wipe report names, as `DATASET/COLLOCATION.kind`, or the
    /// data set directory alone where the report deletes its catalogue (the whole data set).
    fn wipe_report(&self, text: &str) -> Outcome {
        let mut named = BTreeSet::new();
        let mut section = "";
        for line in text.lines() {
            let line = line.trim();
            if line.ends_with("URIs to delete:") || line.ends_with("(explicitly untouched):") {
                section = line;
                continue;
            }
            if !section.ends_with("to delete:") || !line.starts_with('/') {
                continue;
            }
            let path = Path::new(line);
            let dir = path.parent().and_then(Path::file_name).map(|d| d.to_string_lossy().into_owned()).unwrap_or_default();
            if section.starts_with("Catalogue") {
                named.insert(dir);
            } else if let Some(entry) = crate::outcome::disk_entry(path) {
                named.insert(entry);
            }
        }
        // A whole data set names its files too: the directory says it all.
        let whole: Vec<String> = named.iter().filter(|n| !n.contains('/')).cloned().collect();
        named.retain(|n| !whole.iter().any(|w| n.starts_with(&format!("{w}/"))));
        Outcome::Named(named)
    }
}

impl System for Fdb5 {
    fn name(&self) -> &'static str {
        "FDB5"
    }

    fn root(&self) -> &Path {
        &self.root
    }

    fn at(&self, root: &Path) -> anyhow::Result<Box<dyn System>> {
        Ok(Box::new(Fdb5::configured(self.site_packages.clone(), &self.home, &self.schema, root)?))
    }

    fn archive(&self, file: &Path) -> anyhow::Result<()> {
        let out = run(self.tool("fdb-write").arg(file))?;
        if !out.status.success() {
            bail!("fdb-write {} failed: {}", file.display(), String::from_utf8_lossy(&out.stderr));
        }
        Ok(())
    }

    fn outcome(&self, case: &Case, scratch: &Path) -> anyhow::Result<Outcome> {
        let request = case.request.as_str();
        let any_keys = "--minimum-keys=";
        Ok(match &case.op {
            Op::List { depth } => match self.answer("fdb-list", &[any_keys, "--porcelain", &format!("--depth={depth}")], request)? {
                Ok(text) => Outcome::Lines(sorted_lines(&text)),
                Err(refusal) => refusal,
            },
            Op::Axes => match self.answer("fdb-axes", &[any_keys, "--json"], request)? {
                Ok(text) => {
                    let axes: BTreeMap<String, Vec<String>> =
                        serde_json::from_str(&text).with_context(|| format!("fdb-axes printed {text:?}"))?;
                    Outcome::axes(axes)
                }
                Err(refusal) => refusal,
            },
            Op::Retrieve => {
                let (request_file, target) = (scratch.join("fdb5.req"), scratch.join("fdb5.grib"));
                std::fs::write(&request_file, format!("retrieve,{request}\n"))?;
                let out = run(self.tool("fdb-read").arg(&request_file).arg(&target))?;
                if out.status.success() {
                    Outcome::Bytes(std::fs::read(&target).unwrap_or_default())
                } else {
                    refused(&out)
                }
            }
            Op::Where => match self.answer("fdb-where", &[any_keys], request)? {
                Ok(text) => Outcome::Count(text.lines().filter(|l| !l.is_empty()).count() as u64),
                Err(Outcome::Refused(why)) if why.contains("No FDB entries found") => Outcome::Count(0),
                Err(refusal) => refusal,
            },
            Op::Stats => match self.answer("fdb-stats", &[any_keys, "--json"], request)? {
                Ok(text) => {
                    let stats: serde_json::Value = serde_json::from_str(text.trim())?;
                    let count = |name: &str| stats[name].as_u64().with_context(|| format!("fdb-stats --json has no '{name}'"));
                    Outcome::Stats { indexed: count("fields")?, reachable: count("reachable")? }
                }
                Err(Outcome::Refused(why)) if why.contains("No FDB entries found") => Outcome::Stats { indexed: 0, reachable: 0 },
                Err(refusal) => refusal,
            },
            Op::Wipe { doit } | Op::Purge { doit } => {
                let tool = if matches!(case.op, Op::Wipe { .. }) { "fdb-wipe" } else { "fdb-purge" };
                let args: &[&str] = if *doit { &["--doit"] } else { &[] };
                match self.answer(tool, args, request)? {
                    Ok(text) if tool == "fdb-wipe" && !doit => self.wipe_report(&text),
                    Ok(text) if !doit => Outcome::Count(
                        text.lines()
                            .filter_map(|l| l.trim().strip_prefix("Duplicated fields"))
                            .filter_map(|l| l.trim_start_matches([' ', ':']).replace(',', "").parse::<u64>().ok())
                            .sum(),
                    ),
                    Ok(_) => self.after_removal()?,
                    Err(refusal) => refusal,
                }
            }
        })
    }
}

impl Fdb5 {
    /// Everything listed (superseded fields too) and the data and index files on disk.
    fn after_removal(&self) -> anyhow::Result<Outcome> {
        remaining(self.answer("fdb-list", &["--minimum-keys=", "--porcelain", "--full"], "class=od")?, &self.root)
    }
}

/// The `fieldstore` binary with a configuration of its own (POSIX catalogue and store under
/// one root, FDB5's schema file).
pub struct Fieldstore {
    binary: PathBuf,
    schema: PathBuf,
    root: PathBuf,
    config: PathBuf,
}

impl Fieldstore {
    /// The `binary` on a store under `root` with the schema file `schema`; writes its
    /// configuration beside the root (`ROOT.yaml`).
    pub fn new(binary: &Path, schema: &Path, root: &Path) -> anyhow::Result<Fieldstore> {
        Fieldstore::configured(binary, schema, root, &root.with_extension("yaml"), "posix", &format!("root: {}", root.display()))
    }

    /// The `binary` reading, in place, the FDB5 databases under `fdb5_root`; its
    /// configuration is the file `config`.
    pub fn reading_fdb5(binary: &Path, schema: &Path, fdb5_root: &Path, config: &Path) -> anyhow::Result<Fieldstore> {
        Fieldstore::configured(binary, schema, fdb5_root, config, "fdb5", &format!("roots: [{}]", fdb5_root.display()))
    }

    fn configured(binary: &Path, schema: &Path, root: &Path, config: &Path, kind: &str, place: &str) -> anyhow::Result<Fieldstore> {
        std::fs::create_dir_all(root)?;
        let sections = format!("catalogue: {{type: {kind}, {place}}}\nstore: {{type: {kind}, {place}}}\n");
        std::fs::write(config, format!("schema: {}\n{sections}", schema.display()))?;
        Ok(Fieldstore {
            binary: binary.to_path_buf(),
            schema: schema.to_path_buf(),
            root: root.to_path_buf(),
            config: config.to_path_buf(),
        })
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.binary);
        command.arg("--config").arg(&self.config).args(args).env_remove("FIELDSTORE_CONFIG");
        command
    }

    /// With no minimum keys, as FDB5's tools are run (`--minimum-keys=`): the cases compare
    /// what requests name, not the tools' guards.
    fn answer(&self, args: &[&str], request: &str) -> anyhow::Result<Result<String, Outcome>> {
        Ok(answered(&run(self.command(args).arg("--minimum-keys=").arg(request))?))
    }

    fn json(&self, args: &[&str], request: &str) -> anyhow::Result<Result<serde_json::Value, Outcome>> {
        Ok(match self.answer(args, request)? {
            Ok(text) => Ok(serde_json::from_str(&text).with_context(|| format!("fieldstore {args:?} printed {text:?}"))?),
            Err(refusal) => Err(refusal),
        })
    }

    /// The data sets and collocations a wipe report names, as their directory and file names.
    fn wipe_report(report: &str) -> anyhow::Result<Outcome> {
        let report: WipeJson = serde_json::from_str(report).with_context(|| format!("wipe --json printed {report:?}"))?;
        let mut named: BTreeSet<String> = report.datasets.iter().map(OrderedKey::joined).collect();
        for (dataset, collocation) in &report.collocations {
            for kind in ["data", "index"] {
                named.insert(format!("{}/{}.{kind}", dataset.joined(), collocation.joined()));
            }
        }
        Ok(Outcome::Named(named))
    }

    fn after_removal(&self) -> anyhow::Result<Outcome> {
        remaining(self.answer(&["list", "--porcelain", "--full"], "class=od")?, &self.root)
    }
}

impl System for Fieldstore {
    fn name(&self) -> &'static str {
        "fieldstore"
    }

    fn root(&self) -> &Path {
        &self.root
    }

    fn at(&self, root: &Path) -> anyhow::Result<Box<dyn System>> {
        Ok(Box::new(Fieldstore::new(&self.binary, &self.schema, root)?))
    }

    fn archive(&self, file: &Path) -> anyhow::Result<()> {
        let out = run(self.command(&["archive"]).arg(file))?;
        if !out.status.success() {
            bail!("fieldstore archive {} failed: {}", file.display(), String::from_utf8_lossy(&out.stderr));
        }
        Ok(())
    }

    fn outcome(&self, case: &Case, scratch: &Path) -> anyhow::Result<Outcome> {
        let request = case.request.as_str();
        Ok(match &case.op {
            Op::List { depth } => match self.answer(&["list", "--porcelain", "--depth", &depth.to_string()], request)? {
                Ok(text) => Outcome::Lines(sorted_lines(&text)),
                Err(refusal) => refusal,
            },
            Op::Axes => match self.json(&["axes", "--json"], request)? {
                Ok(value) => Outcome::axes(serde_json::from_value(value)?),
                Err(refusal) => refusal,
            },
            Op::Retrieve => {
                let target = scratch.join("fieldstore.grib");
                let target_arg = target.display().to_string();
                match self.answer(&["retrieve", "-o", &target_arg], request)? {
                    Ok(_) => Outcome::Bytes(std::fs::read(&target)?),
                    Err(refusal) => refusal,
                }
            }
            Op::Where => match self.json(&["where", "--json"], request)? {
                Ok(value) => Outcome::Count(value.as_array().map_or(0, Vec::len) as u64),
                Err(refusal) => refusal,
            },
            Op::Stats => match self.json(&["stats", "--json"], request)? {
                Ok(value) => {
                    let count = |name: &str| value[name].as_u64().with_context(|| format!("stats --json has no '{name}'"));
                    let reachable = count("fields")?;
                    Outcome::Stats { indexed: reachable + count("superseded_fields")?, reachable }
                }
                Err(refusal) => refusal,
            },
            Op::Wipe { doit } | Op::Purge { doit } => {
                let verb = if matches!(case.op, Op::Wipe { .. }) { "wipe" } else { "purge" };
                let mut args = vec![verb, "--json"];
                if *doit {
                    args.push("--doit");
                }
                match self.answer(&args, request)? {
                    Ok(report) if verb == "wipe" && !doit => Fieldstore::wipe_report(&report)?,
                    Ok(report) if !doit => {
                        let report: serde_json::Value = serde_json::from_str(&report)?;
                        Outcome::Count(report["superseded_fields"].as_u64().context("purge --json has no 'superseded_fields'")?)
                    }
                    Ok(_) => self.after_removal()?,
                    Err(refusal) => refusal,
                }
            }
        })
    }
}

/// What `fieldstore wipe --json` says it removes.
#[derive(serde::Deserialize)]
struct WipeJson {
    datasets: Vec<OrderedKey>,
    collocations: Vec<(OrderedKey, OrderedKey)>,
}

/// A key as JSON prints it, its members kept in order (directory and file names join the
/// values in the schema's order).
struct OrderedKey(Vec<String>);

impl OrderedKey {
    fn joined(&self) -> String {
        self.0.join(":")
    }
}

impl<'de> serde::Deserialize<'de> for OrderedKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Values;
        impl<'de> serde::de::Visitor<'de> for Values {
            type Value = OrderedKey;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a key as a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<OrderedKey, A::Error> {
                let mut values = Vec::new();
                while let Some((_, value)) = map.next_entry::<String, String>()? {
                    values.push(value);
                }
                Ok(OrderedKey(values))
            }
        }
        deserializer.deserialize_map(Values)
    }
}
