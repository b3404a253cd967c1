//! `fieldstore copy` (FDB5's `fdb-copy`) between two configs: every field arrives whole and
//! verified, a copy run again copies only what is missing (also after a copy killed at any
//! moment), a field the target holds with other bytes is copied again, and `--modifiers` set
//! keys in each message.

use std::path::PathBuf;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_fieldstore");

/// Two POSIX stores, `source.yaml` and `target.yaml`, in a work directory.
struct Pair {
    dir: tempfile::TempDir,
}

impl Pair {
    fn new() -> Pair {
        let dir = tempfile::tempdir().unwrap();
        for name in ["source", "target"] {
            let root = dir.path().join(name);
            let config = format!(
                "catalogue: {{type: posix, root: {0}, create: true}}\nstore: {{type: posix, root: {0}, create: true}}\n",
                root.display()
            );
            std::fs::write(dir.path().join(format!("{name}.yaml")), config).unwrap();
        }
        Pair { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn command(&self, config: &str, args: &[&str]) -> Command {
        let mut command = Command::new(BIN);
        command.current_dir(self.dir.path()).arg("--config").arg(config).args(args);
        for variable in ["FIELDSTORE_CONFIG", "FIELDSTORE_ROOT", "FDB5_CONFIG_FILE", "FDB5_CONFIG", "FDB_HOME"] {
            command.env_remove(variable);
        }
        command
    }

    fn ok(&self, config: &str, args: &[&str]) -> Vec<u8> {
        let out = self.command(config, args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    }

    /// Runs a copy from source to target with `--json` and returns its summary.
    fn copy(&self, args: &[&str]) -> serde_json::Value {
        let args: Vec<&str> = ["copy", "--target", "target.yaml", "--json"].iter().chain(args).copied().collect();
        serde_json::from_slice(&self.ok("source.yaml", &args)).unwrap()
    }

    /// Every field of a store, as sorted GRIB messages.
    fn messages(&self, config: &str) -> Vec<Vec<u8>> {
        let bytes = self.ok(config, &["retrieve", "--all", "-o", "-"]);
        let mut all: Vec<Vec<u8>> =
            fieldstore::grib::scan(&bytes, "retrieved").unwrap().iter().map(|m| bytes[m.offset..m.offset + m.length].to_vec()).collect();
        all.sort();
        all
    }

    /// Archives sample fields of these steps, parameters and levels into the source.
    fn fill_source_with(&self, steps: &str, params: &str, levels: &str) -> usize {
        self.ok("source.yaml", &["sample", "--steps", steps, "--params", params, "--levels", levels, "--fill-bits", "16", "-o", "s.grib"]);
        self.ok("source.yaml", &["archive", "s.grib"]);
        self.messages("source.yaml").len()
    }

    /// Archives sample fields of these steps, two parameters and two levels into the source.
    fn fill_source(&self, steps: &str) -> usize {
        self.fill_source_with(steps, "130/131", "500/850")
    }
}

fn count(summary: &serde_json::Value, name: &str) -> u64 {
    summary[name].as_u64().unwrap_or_else(|| panic!("{name} in {summary}"))
}

#[test]
fn a_copy_run_again_copies_only_what_is_missing_or_different() {
    let pair = Pair::new();
    let fields = pair.fill_source("0/to/48/by/6") as u64;
    assert_eq!(fields, 36);

    // Part first, then all in batches of about one field: only the rest is copied.
    let part = pair.copy(&["class=od,expver=0001,step=6"]);
    assert_eq!((count(&part, "fields"), count(&part, "copied"), count(&part, "verified")), (4, 4, 4));
    let all = pair.copy(&["--all", "--batch-bytes", "1000"]);
    assert_eq!((count(&all, "fields"), count(&all, "copied"), count(&all, "already_there")), (fields, fields - 4, 4));
    assert_eq!(count(&all, "verified"), fields - 4);
    assert_eq!(pair.messages("target.yaml"), pair.messages("source.yaml"), "every field, byte for byte");

    let again = pair.copy(&["--all"]);
    assert_eq!((count(&again, "copied"), count(&again, "already_there")), (0, fields));

    // The target holds one field with other bytes: that one is copied again.
    pair.ok("target.yaml", &["sample", "--steps", "12", "--params", "131", "--levels", "850", "--fill-bits", "12", "-o", "other.grib"]);
    pair.ok("target.yaml", &["archive", "other.grib"]);
    assert_ne!(pair.messages("target.yaml"), pair.messages("source.yaml"));
    let repaired = pair.copy(&["--all", "--read-back"]);
    assert_eq!((count(&repaired, "copied"), count(&repaired, "already_there"), count(&repaired, "read_back")), (1, fields - 1, 1));
    assert_eq!(pair.messages("target.yaml"), pair.messages("source.yaml"));
}

#[test]
fn modifiers_set_keys_in_each_message_and_its_identifier() {
    let pair = Pair::new();
    let fields = pair.fill_source("0/6/12") as u64;
    let copied = pair.copy(&["--all", "--modifiers", "expver=0042", "--read-back", "--sort"]);
    assert_eq!((count(&copied, "copied"), count(&copied, "verified"), count(&copied, "read_back")), (fields, fields, fields));
    let listed = String::from_utf8(pair.ok("target.yaml", &["list", "--all", "--depth", "1"])).unwrap();
    assert!(listed.contains("expver=0042") && !listed.contains("expver=0001"), "{listed}");
    for message in pair.messages("target.yaml") {
        assert_eq!(fieldstore::grib::mars_keys(&message).unwrap().get("expver"), Some("0042"), "the message says what it is filed under");
    }
    // Run again: the modified messages are there already.
    let again = pair.copy(&["--all", "--modifiers", "expver=0042"]);
    assert_eq!((count(&again, "copied"), count(&again, "already_there")), (0, fields));
    // Modifiers that make several fields one are refused, naming two of them.
    let out = pair.command("source.yaml", &["copy", "--target", "target.yaml", "--all", "--modifiers", "step=0"]).output().unwrap();
    let error = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && error.contains("the modifiers make fields") && error.contains("one field"), "{error}");
    // A modifier ecCodes does not know is an error naming the field.
    let out = pair.command("source.yaml", &["copy", "--target", "target.yaml", "--all", "--modifiers", "noSuchKey=1"]).output().unwrap();
    let error = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && error.contains("setting the modifiers in field") && error.contains("noSuchKey"), "{error}");
}

/// A copy killed (SIGKILL) part way, then run again to the end: the target ends with every
/// field once, byte for byte. Each copy (a flush per field) is killed once its target's TOC
/// shows so many flushes, watched as it grows; and once at its very start.
#[test]
fn a_copy_killed_part_way_and_run_again_ends_with_every_field() {
    let pair = Pair::new();
    let fields = pair.fill_source_with("0/to/240/by/3", "130/131/132/133/135/138", "300/500/850/1000") as u64;
    let source = pair.messages("source.yaml");
    let target_root = pair.path("target");
    // The TOC of the target's one data set, once it is there.
    let toc_size = || {
        let dirs = std::fs::read_dir(&target_root).ok()?;
        dirs.filter_map(|d| d.ok()).find_map(|d| std::fs::metadata(d.path().join("toc")).ok()).map(|m| m.len())
    };
    let mut part_way = 0;
    for kill_at_toc_bytes in [0u64, 1, 20_000, 100_000] {
        let _ = std::fs::remove_dir_all(&target_root);
        let mut child = pair
            .command("source.yaml", &["copy", "--target", "target.yaml", "--all", "--batch-bytes", "1"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while kill_at_toc_bytes > 0 && toc_size().unwrap_or(0) < kill_at_toc_bytes && std::time::Instant::now() < deadline {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let _ = child.kill();
        let killed = !child.wait().unwrap().success();
        let resumed = pair.copy(&["--all"]);
        assert_eq!(count(&resumed, "copied") + count(&resumed, "already_there"), fields);
        if killed && count(&resumed, "already_there") > 0 && count(&resumed, "copied") > 0 {
            part_way += 1;
        }
        assert_eq!(pair.messages("target.yaml"), source, "killed at a TOC of {kill_at_toc_bytes} bytes, then run again");
    }
    assert!(part_way >= 1, "no copy was killed part way");
}

/// A target whose schema orders the element keywords otherwise files the copies under
/// identifiers in its own order: the copy is verified, and run again copies nothing.
#[test]
fn a_target_with_another_keyword_order_is_verified_and_resumed() {
    let pair = Pair::new();
    let fields = pair.fill_source("0/6/12") as u64;
    let schema = String::from_utf8(pair.ok("source.yaml", &["schema"])).unwrap();
    let reordered = schema
        .replace("[ step, levelist?, param", "[ param, levelist?, step")
        .replace("[ step, number?, levelist?, param", "[ param, number?, levelist?, step");
    assert_ne!(reordered, schema);
    std::fs::write(pair.path("reordered.schema"), reordered).unwrap();
    let root = pair.path("target");
    let config = format!(
        "schema: {}\ncatalogue: {{type: posix, root: {1}, create: true}}\nstore: {{type: posix, root: {1}, create: true}}\n",
        pair.path("reordered.schema").display(),
        root.display()
    );
    std::fs::write(pair.path("target.yaml"), config).unwrap();
    let copied = pair.copy(&["--all"]);
    assert_eq!((count(&copied, "copied"), count(&copied, "verified")), (fields, fields));
    let listed = String::from_utf8(pair.ok("target.yaml", &["list", "--all"])).unwrap();
    assert!(listed.contains("{param=130,levelist=500,step=0}"), "the target's own order: {listed}");
    let again = pair.copy(&["--all"]);
    assert_eq!((count(&again, "copied"), count(&again, "already_there")), (0, fields));
    assert_eq!(pair.messages("target.yaml"), pair.messages("source.yaml"));
}

#[test]
fn bad_targets_and_requests_are_errors_naming_them() {
    let pair = Pair::new();
    pair.fill_source("0");
    let fails = |args: &[&str]| {
        let out = pair.command("source.yaml", args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    let error = fails(&["copy", "--target", "missing.yaml", "--all"]);
    assert!(error.contains("missing.yaml"), "{error}");
    std::fs::write(pair.path("broken.yaml"), "catalogue: {type: posix}\n").unwrap();
    let error = fails(&["copy", "--target", "broken.yaml", "--all"]);
    assert!(error.contains("broken.yaml"), "{error}");
    let error = fails(&["copy", "--target", "target.yaml", "class=od,expver=0001,step=99"]);
    assert!(error.contains("nothing matched") && error.contains("step=99"), "{error}");
    let error = fails(&["copy", "--target", "target.yaml", "stream=oper"]);
    assert!(error.contains("minimum keys"), "{error}");
    let error = fails(&["copy", "--target", "target.yaml", "--all", "--modifiers", "expver"]);
    assert!(error.contains("a modifier is key=value"), "{error}");
}

/// A copy from each backend into the next (POSIX, S3 with a POSIX catalogue, RADOS, the
/// libdaos emulation, POSIX again), each verified and each the same bytes; a backend whose
/// service is not there is passed over (`fieldstore_testing` says so; CI requires them).
#[test]
fn copies_run_between_every_backend() {
    let pair = Pair::new();
    let fields = pair.fill_source("0/6/12") as u64;
    let source = pair.messages("source.yaml");
    let mut from = "source.yaml";
    for (name, text) in &every_backend(&pair, "copy") {
        std::fs::write(pair.path(name), text).unwrap();
        let summary: serde_json::Value =
            serde_json::from_slice(&pair.ok(from, &["copy", "--target", name, "--all", "--json", "--read-back"])).unwrap();
        assert_eq!(
            (count(&summary, "copied"), count(&summary, "verified"), count(&summary, "read_back")),
            (fields, fields, fields),
            "{from} to {name}"
        );
        assert_eq!(pair.messages(name), source, "{from} to {name}: the same bytes");
        from = name;
    }
}

/// A move (`--target`) from each backend into the next, as the copies above: each data set
/// arrives whole and is gone from the store it left.
#[test]
fn moves_run_between_every_backend() {
    let pair = Pair::new();
    let fields = pair.fill_source("0/6/12") as u64;
    let source = pair.messages("source.yaml");
    let mut from = "source.yaml";
    for (name, text) in &every_backend(&pair, "move") {
        std::fs::write(pair.path(name), text).unwrap();
        let summary: serde_json::Value = serde_json::from_slice(
            &pair.ok(from, &["move", "--target", name, "class=od,expver=1", "--minimum-keys", "class,expver", "--json"]),
        )
        .unwrap();
        let moved: u64 = summary["datasets"].as_array().unwrap().iter().map(|d| count(&d["copy"], "fields")).sum();
        assert_eq!(moved, fields, "{from} to {name}: {summary}");
        assert_eq!(pair.messages(name), source, "{from} to {name}: the same bytes");
        let left = pair.ok(from, &["list", "--all", "--depth", "1"]);
        assert!(left.is_empty(), "{from} to {name}: left {}", String::from_utf8_lossy(&left));
        from = name;
    }
}

/// A config of each backend whose service is there (S3 with a POSIX catalogue, RADOS, the
/// libdaos emulation), then POSIX, by file name; `what` names their containers apart.
fn every_backend(pair: &Pair, what: &str) -> Vec<(&'static str, String)> {
    let unique =
        format!("{what}-{}-{}", std::process::id(), std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos());
    let mut configs: Vec<(&str, String)> = Vec::new();
    if let Some(s3) = fieldstore_testing::s3_server("FIELDSTORE_TEST_S3_") {
        let store = format!(
            "{{type: s3, endpoint: '{}', bucket: {}, prefix: {unique}/, access_key_id: {}, secret_access_key: '{}'}}",
            s3.endpoint,
            fieldstore_testing::S3_TEST_BUCKET,
            s3.access_key,
            s3.secret_key
        );
        configs.push((
            "s3.yaml",
            format!("catalogue: {{type: posix, root: {}, create: true}}\nstore: {store}\n", pair.path("s3-catalogue").display()),
        ));
    }
    if let Some(conf) = fieldstore_testing::ceph_conf() {
        let pool = fieldstore_testing::rados_pool("FIELDSTORE_TEST_RADOS_POOL", "fieldstore");
        let section = format!("{{type: rados, pool: {pool}, ceph_conf: {}, namespace_prefix: {unique}-}}", conf.display());
        configs.push(("rados.yaml", format!("catalogue: {section}\nstore: {section}\n")));
    }
    if let Some((library, root)) = fieldstore_testing::daos_emulation() {
        std::fs::create_dir_all(root.join("cli")).unwrap();
        let section = format!("{{type: daos, pool: cli, root_container: {}, library: {library}}}", unique.replace('-', ""));
        configs.push(("daos.yaml", format!("catalogue: {section}\nstore: {section}\n")));
    }
    let last = pair.path("last");
    configs.push((
        "last.yaml",
        format!("catalogue: {{type: posix, root: {0}, create: true}}\nstore: {{type: posix, root: {0}, create: true}}\n", last.display()),
    ));
    configs
}
