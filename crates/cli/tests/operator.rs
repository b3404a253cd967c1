//! What an operator meets on day one (issue 25): safe defaults (minimum keys, `--key` on
//! several messages), honest output (purge's report agrees with `stats`; a store that is not
//! there is not an empty one), Unix manners (exit status, closed pipes, no partial output
//! file, progress only on a terminal), and FDB5's `fdb-write` options.

use std::path::PathBuf;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_fieldstore");
/// The data set the samples below archive into.
const DATASET: &str = "class=od,expver=0001,stream=oper,date=20231201,time=1200";

struct Store {
    _dir: tempfile::TempDir,
    root: PathBuf,
    work: PathBuf,
}

impl Store {
    fn new() -> Store {
        let dir = tempfile::tempdir().unwrap();
        let (root, work) = (dir.path().join("root"), dir.path().join("work"));
        std::fs::create_dir_all(&work).unwrap();
        Store { _dir: dir, root, work }
    }

    /// A program run in the work directory with `$F` the binary, this store's root, and no
    /// config from the environment.
    fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command.current_dir(&self.work).env("F", BIN).env("FIELDSTORE_ROOT", &self.root);
        for variable in ["FIELDSTORE_CONFIG", "FDB5_CONFIG_FILE", "FDB5_CONFIG", "FDB_HOME"] {
            command.env_remove(variable);
        }
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(BIN).args(args).output().unwrap()
    }

    /// Runs a bash script.
    fn shell(&self, script: &str) -> Output {
        self.command("bash").args(["-c", script]).output().unwrap()
    }

    /// Runs and requires success; returns standard output.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    /// Runs and requires exit status 1; returns standard error.
    fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
        String::from_utf8(out.stderr).unwrap()
    }

    fn path(&self, name: &str) -> PathBuf {
        self.work.join(name)
    }

    /// Writes four sample fields (steps 0 and 6, params 130 and 131) to `four.grib` and
    /// archives them.
    fn archive_sample(&self) {
        self.ok(&["sample", "--steps", "0/6", "--params", "130/131", "-o", "four.grib"]);
        self.ok(&["archive", "four.grib"]);
    }
}

#[test]
fn key_refuses_several_messages_and_modifiers_and_filters_set_and_pick_them() {
    let store = Store::new();
    store.archive_sample();
    let key = format!("{DATASET},type=fc,levtype=pl,levelist=500,step=12,param=130");
    let err = store.fails(&["archive", "--key", &key, "four.grib"]);
    assert!(err.contains("four.grib holds 4 GRIB messages") && err.contains("--modifiers"), "{err}");
    assert_eq!(store.ok(&["list", "class=od,expver=0001,step=12"]), "", "nothing was archived under the key");
    // Raw bytes, or one message, under a key of one's own.
    std::fs::write(store.path("raw.bin"), b"not grib").unwrap();
    assert!(String::from_utf8_lossy(&store.run(&["archive", "--key", &key, "raw.bin"]).stderr).contains("as they are"));
    // Modifiers are set in the messages themselves: the retrieved bytes say what the keys say.
    store.ok(&["archive", "--modifiers", "expver=0042,step=24", "--include-filter", "param=t", "--exclude-filter", "step=6", "four.grib"]);
    assert_eq!(store.ok(&["list", "--flat", "class=od,expver=0042"]).lines().count(), 1);
    store.ok(&["retrieve", "class=od,expver=0042", "-o", "modified.grib"]);
    let keys = Command::new("grib_get").args(["-p", "expver,step,paramId"]).arg(store.path("modified.grib")).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&keys.stdout).trim(), "0042 24 130");
    assert!(store.fails(&["archive", "--modifiers", "nosuchkey=1", "four.grib"]).contains("nosuchkey"));
    assert!(store.fails(&["archive", "--modifiers", "expver", "four.grib"]).contains("a modifier is key=value"));
    assert!(store.fails(&["archive", "--include-filter", "parma=t", "four.grib"]).contains("unknown keyword 'parma'"));
}

#[test]
fn commands_need_the_minimum_keys_or_all() {
    let store = Store::new();
    store.archive_sample();
    let no_request = store.fails(&["list"]);
    assert!(no_request.contains("no request was given") && no_request.contains("class, expver") && no_request.contains("--all"));
    assert!(store.fails(&["list", "stream=oper"]).contains("names no class, expver"));
    assert!(store.fails(&["retrieve", "-o", "all.grib"]).contains("no request was given"));
    assert!(!store.path("all.grib").exists());
    // Removing and locking need the data set's keys.
    let wipe = store.fails(&["wipe", "class=od,expver=0001", "--doit"]);
    assert!(wipe.contains("names no stream, date, time"), "{wipe}");
    assert!(store.fails(&["lock"]).contains("no request was given"));
    assert!(store.fails(&["purge", "--doit"]).contains("no request was given"));
    assert_eq!(store.ok(&["list", "--all"]).lines().count(), 4, "nothing was wiped");
    assert!(store.ok(&["status", "--all"]).contains("locked: none"), "nothing was locked");
    // --all and --minimum-keys say otherwise explicitly.
    assert_eq!(store.ok(&["list", "--minimum-keys=", "step=0"]).lines().count(), 2);
    assert_eq!(store.ok(&["list", "--minimum-keys", "step", "step=0"]).lines().count(), 2);
    assert!(store.fails(&["list", "--minimum-keys", "step", "class=od"]).contains("names no step"));
    assert!(store.run(&["list", "--all", "class=od"]).status.code() == Some(1), "--all takes no request");
    assert_eq!(store.ok(&["list", "--all", "--minimum-keys="]).lines().count(), 4, "FDB5's idiom");
    assert!(store.fails(&["wipe", "--all", "--doit"]).contains("takes no --all"));
}

#[test]
fn purge_reports_what_it_reclaimed_in_the_words_of_stats() {
    let store = Store::new();
    store.archive_sample();
    // Step 0 archived again: the old step-0 fields share their index with live step-6 ones.
    store.ok(&["sample", "--steps", "0", "--params", "130/131", "-o", "step0.grib"]);
    store.ok(&["archive", "step0.grib"]);
    let dataset = format!("{DATASET},domain=g");
    let stats =
        |store: &Store| -> serde_json::Value { serde_json::from_str(&store.ok(&["stats", "--json", "class=od,expver=0001"])).unwrap() };
    assert_eq!(stats(&store)["superseded_fields"], 2);
    let report = store.ok(&["purge", &dataset, "--doit"]);
    assert!(report.starts_with("purged 0 of 2 superseded fields") && report.contains("2 stay"), "{report}");
    assert!(report.contains("freed 0 B of 392 B") && report.contains("392 B stay on disk"), "{report}");
    assert_eq!(stats(&store)["superseded_fields"], 2, "the report said they stay: stats counts them");
    // Everything archived again: both older indexes hold only superseded fields and go.
    store.ok(&["archive", "four.grib"]);
    let json: serde_json::Value = serde_json::from_str(&store.ok(&["purge", &dataset, "--doit", "--json"])).unwrap();
    assert_eq!(
        (json["fields_hidden"].as_u64(), json["fields_kept"].as_u64(), json["indexes_masked"].as_u64()),
        (Some(6), Some(0), Some(2)),
        "{json}"
    );
    assert_eq!((json["bytes_freed"].as_u64(), json["unreclaimable_bytes"].as_u64()), (Some(6 * 196), Some(0)), "{json}");
    assert_eq!(stats(&store)["superseded_fields"].as_u64(), json["fields_kept"].as_u64(), "stats counts what the report says stays");
}

#[test]
fn a_store_that_is_not_there_is_an_error_naming_it() {
    let store = Store::new();
    for args in
        [&["list", "--all"][..], &["info"], &["stats", "class=od,expver=0001"], &["retrieve", "class=od,expver=0001", "-o", "x.grib"]]
    {
        let err = store.fails(args);
        assert!(err.contains("find a store at") && err.contains(store.root.to_str().unwrap()), "{args:?}: {err}");
    }
    assert!(!store.root.exists() && !store.path("x.grib").exists(), "reading made nothing");
    store.archive_sample();
    assert!(store.ok(&["info"]).contains("data sets: 1"));
}

#[test]
fn exit_status_is_one_for_every_error_and_zero_when_a_list_matches_nothing() {
    let store = Store::new();
    store.archive_sample();
    let unknown = store.fails(&["list", "class=od,expver=0001,setp=6"]);
    assert!(unknown.starts_with("fieldstore: error: ") && unknown.contains("unknown keyword 'setp'"), "{unknown}");
    assert!(store.fails(&["axes", "class=od,expver=0001,setp=6"]).contains("unknown keyword 'setp'"));
    let nothing = store.run(&["list", "class=od,expver=0001,step=99"]);
    assert!(nothing.status.success() && String::from_utf8_lossy(&nothing.stderr).contains("nothing matched"), "{nothing:?}");
    assert!(store.fails(&["retrieve", "class=od,expver=0001,step=99", "-o", "x.grib"]).contains("nothing matched"));
    assert!(store.fails(&["lst"]).contains("unrecognized subcommand"), "a wrong argument exits 1 too");
    assert!(store.fails(&["list", "--depth", "7", "--all"]).contains("--depth"));
    assert!(store.run(&["--help"]).status.success() && store.run(&["--version"]).status.success());
}

#[test]
fn closed_pipes_end_quietly_and_a_failed_retrieve_leaves_no_file() {
    let store = Store::new();
    store.archive_sample();
    // Far more than a pipe holds (64 KiB, 1 MiB on kernels of 64 KiB pages), so the reader's
    // end closes while the command writes: 50 requests of 420 fields each (about 4 MiB).
    store.ok(&["sample", "--steps", "0/to/240", "--levtype", "ml", "--levels", "1/to/20", "-o", "many.grib"]);
    store.ok(&["archive", "many.grib"]);
    std::fs::write(store.path("many.req"), "retrieve,class=od,expver=0001,levtype=ml\n".repeat(50)).unwrap();
    for command in ["$F list --location --request-file many.req | head -1", "$F retrieve --request-file many.req -o - | head -c 1"] {
        let out = store.shell(&format!("{command} >/dev/null; echo \"${{PIPESTATUS[0]}}\""));
        let status = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert_eq!(status, "141", "{command}: ended by SIGPIPE, as any tool");
        assert!(out.stderr.is_empty(), "{command}: {}", String::from_utf8_lossy(&out.stderr));
    }
    // A failed retrieve leaves no file, and an earlier one as it was.
    std::fs::write(store.path("kept.grib"), b"earlier").unwrap();
    store.fails(&["retrieve", "class=od,expver=0001,step=99", "-o", "kept.grib"]);
    store.fails(&["retrieve", "class=od,expver=0001,step=99", "-o", "new.grib"]);
    assert_eq!(std::fs::read(store.path("kept.grib")).unwrap(), b"earlier");
    let left: Vec<_> = std::fs::read_dir(&store.work).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert!(!left.iter().any(|n| n == "new.grib" || n.starts_with(".fieldstore-retrieve")), "{left:?}");
    // A complete one replaces it; devices and links are written through.
    store.ok(&["retrieve", "class=od,expver=0001,levtype=pl", "-o", "kept.grib"]);
    assert_eq!(std::fs::read(store.path("kept.grib")).unwrap(), std::fs::read(store.path("four.grib")).unwrap());
    std::os::unix::fs::symlink("kept.grib", store.path("link.grib")).unwrap();
    store.ok(&["retrieve", "class=od,expver=0001,levtype=pl,step=0", "-o", "link.grib"]);
    assert!(std::fs::symlink_metadata(store.path("link.grib")).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(store.path("kept.grib")).unwrap().len(), 392);
    let through = store.shell("$F retrieve class=od,expver=0001,levtype=pl -o /dev/stdout 2>/dev/null | wc -c");
    assert_eq!(String::from_utf8_lossy(&through.stdout).trim(), "784");
}

/// Progress covers the work waited for (reading keys, archiving, retrieving) with sizes
/// people read, and only on a terminal (`script` gives the command one).
#[test]
fn progress_shows_on_a_terminal_only() {
    let store = Store::new();
    store.ok(&["sample", "--steps", "0/to/240", "--levtype", "ml", "--levels", "1/to/20", "-o", "many.grib"]);
    let plain = String::from_utf8(store.run(&["archive", "many.grib"]).stderr).unwrap();
    assert!(
        plain.starts_with("archived 420 fields (") && plain.ends_with(" KiB) from 1 input(s)\n") && plain.lines().count() == 1,
        "{plain}"
    );
    let tty = store
        .shell("script -qec \"$F retrieve class=od,expver=0001 -o back.grib\" /dev/null; script -qec \"$F archive many.grib\" /dev/null");
    let shown = String::from_utf8_lossy(&tty.stdout);
    for part in ["reading keys [", "archiving [", "KiB", "left)", "retrieved 420 fields ("] {
        assert!(shown.contains(part), "{part:?} not in {shown:?}");
    }
}

#[test]
fn small_things_an_operator_trips_over() {
    let store = Store::new();
    // Actions as status prints them.
    store.ok(&["sample", "--stream", "enfo", "--type", "pf", "--numbers", "1/to/3", "-o", "ens.grib"]);
    let numbers = Command::new("grib_get").args(["-p", "number"]).arg(store.path("ens.grib")).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&numbers.stdout).split_whitespace().collect::<Vec<_>>(), ["1", "2", "3"]);
    assert!(store.fails(&["sample", "--numbers", "1-3", "-o", "bad.grib"]).contains("--numbers 1-3"));
    store.ok(&["sample", "--stream", "enfo", "--type", "cf", "-o", "cf.grib"]);
    store.ok(&["archive", "ens.grib", "cf.grib"]);
    let dataset = "class=od,expver=0001,stream=enfo,date=20231201,time=1200";
    assert!(store.ok(&["lock", dataset, "--action", "retrieve,list"]).contains("locked: retrieve,list"));
    store.ok(&["unlock", dataset, "--action", "retrieve,list"]);
    // A collocation not there is not wiped in silence.
    assert!(store.fails(&["wipe", &format!("{dataset},type=fc"), "--doit"]).contains("nothing to wipe"));
    // Why nothing matched: a line per collocation, each once.
    store.ok(&["sample", "--stream", "enfo", "--type", "pf", "--numbers", "4", "-o", "more.grib"]);
    store.ok(&["archive", "more.grib"]);
    let why = String::from_utf8(store.run(&["list", "class=od,expver=0001,number=77"]).stderr).unwrap();
    let lines: Vec<&str> = why.lines().collect();
    assert_eq!(lines.len(), 3, "{why}");
    assert!(lines[1].contains("no field of") && lines[1].contains("type=cf") && lines[2].contains("(stored: 1,2,3,4)"), "{why}");
}

/// An FDB5 user's config works unchanged: by `--config`, `$FIELDSTORE_CONFIG`, or FDB5's own
/// variables (`FDB5_CONFIG_FILE`, `FDB5_CONFIG`, `FDB_HOME`).
#[test]
fn fdb5_configs_and_variables_are_read() {
    let store = Store::new();
    std::fs::write(store.path("schema"), store.ok(&["schema"])).unwrap();
    let fdb_root = store.path("fdb-root");
    let config = format!(
        "type: local\nengine: toc\nschema: schema\nspaces:\n- handler: Default\n  regex: \".*\"\n  roots:\n  - path: {}\n",
        fdb_root.display()
    );
    // FDB5 places new databases only in roots that exist, and so does fieldstore.
    std::fs::create_dir_all(&fdb_root).unwrap();
    std::fs::create_dir_all(store.path("home/etc/fdb")).unwrap();
    std::fs::write(store.path("home/etc/fdb/config.yaml"), config.replace("schema: schema", "schema: ../../../schema")).unwrap();
    std::fs::write(store.path("fdb.yaml"), &config).unwrap();
    store.ok(&["sample", "-o", "one.grib"]);
    // fieldstore's own variables come first: FIELDSTORE_ROOT (which every command here sets)
    // is unset for FDB5's to be read.
    let archived = store.shell("unset FIELDSTORE_ROOT; FDB5_CONFIG_FILE=fdb.yaml $F archive one.grib && FDB5_CONFIG_FILE=fdb.yaml $F info");
    let info = String::from_utf8_lossy(&archived.stdout);
    assert!(info.contains("fdb.yaml (FDB5 config: fieldstore's store in") && info.contains("data sets: 1"), "{archived:?}");
    assert!(fdb_root.join("fieldstore").is_dir() && !store.root.exists(), "in the FDB5 root's subdirectory, not fieldstore's default");
    let text = config.replace("schema: schema", &format!("schema: {}", store.path("schema").display()));
    for variables in [format!("FDB5_CONFIG='{text}'"), format!("FDB_HOME={}", store.path("home").display())] {
        let listed = store.shell(&format!("unset FIELDSTORE_ROOT; {variables} $F list --all"));
        assert_eq!(String::from_utf8_lossy(&listed.stdout).lines().count(), 1, "{variables}: {listed:?}");
    }
    // fieldstore's own variables come first.
    let own = store.shell("FIELDSTORE_CONFIG=/no/such.yaml FDB5_CONFIG_FILE=fdb.yaml $F info 2>&1");
    assert!(String::from_utf8_lossy(&own.stdout).contains("/no/such.yaml"), "{own:?}");
    let root = store.shell("FDB5_CONFIG_FILE=fdb.yaml $F info 2>&1");
    assert!(String::from_utf8_lossy(&root.stdout).contains("find a store at") && !store.root.exists(), "FIELDSTORE_ROOT wins: {root:?}");
}

/// FDB5 names its databases' directories as fieldstore names its data sets': given an FDB5
/// root, fieldstore writes nothing into FDB5's databases.
#[test]
fn an_fdb5_database_is_never_written_into() {
    let store = Store::new();
    store.ok(&["sample", "-o", "one.grib"]);
    let database = store.root.join("od:0001:oper:20231201:1200:g");
    std::fs::create_dir_all(&database).unwrap();
    // FDB5's TOC begins with a record tag, not fieldstore's magic.
    std::fs::write(database.join("toc"), b"t\0\0\0\x03\0\0\0 an FDB5 TOC").unwrap();
    std::fs::write(database.join("schema"), b"FDB5's schema").unwrap();
    let err = store.fails(&["archive", "one.grib"]);
    assert!(err.contains("holds a TOC that is not fieldstore's") && err.contains("od:0001:oper:20231201:1200:g"), "{err}");
    let mut names: Vec<String> = std::fs::read_dir(&database).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["schema", "toc"], "nothing was added");
    assert_eq!(std::fs::read(database.join("toc")).unwrap(), b"t\0\0\0\x03\0\0\0 an FDB5 TOC");
}

/// MARS request files as users write them: several requests, verbs, continuation lines,
/// quoted values, `target=` naming the output, routing keywords passed over (and said so),
/// post-processing refused with the reason.
#[test]
fn mars_request_files_work_as_fdb_read_reads_them() {
    let store = Store::new();
    store.archive_sample();
    let requests = "retrieve,\n  class=od, expver=0001, stream=oper, date=20231201, time=12,\n  type=fc, levtype=pl,\n  \
                    step=0/\n    6,          # a list continued\n  param=t,\n  database=fdb,\n  target=\"out dir/t.grib\"\n\
                    retrieve, class=od, expver=0001, step=6, param=131, target=\"out dir/t.grib\"\n\
                    retrieve, class=od, expver=0001, step=0, param=131, target=u.grib\n";
    std::fs::create_dir_all(store.path("out dir")).unwrap();
    std::fs::write(store.path("mars.req"), requests).unwrap();
    let out = store.run(&["retrieve", "--request-file", "mars.req"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("passed over database=fdb") && stderr.contains("into out dir/t.grib"), "{stderr}");
    let keys = |file: &str| {
        let out = Command::new("grib_get").args(["-p", "step,paramId"]).arg(store.path(file)).output().unwrap();
        String::from_utf8_lossy(&out.stdout).lines().map(str::trim).map(String::from).collect::<Vec<_>>()
    };
    assert_eq!(keys("out dir/t.grib"), ["0 130", "6 130", "6 131"], "both requests naming the target, in order");
    assert_eq!(keys("u.grib"), ["0 131"]);
    // -o wins over target=; the list command reads the same file.
    let all = String::from_utf8(store.run(&["retrieve", "--request-file", "mars.req", "-o", "all.grib"]).stderr).unwrap();
    assert!(all.contains("target= in the requests passed over") && all.contains("retrieved 4 fields"), "{all}");
    assert_eq!(store.ok(&["list", "--request-file", "mars.req"]).lines().count(), 4);
    // Interpolation is refused, naming it; a request without an output says how to give one.
    std::fs::write(store.path("grid.req"), "retrieve,class=od,expver=0001,grid=1/1,area=90/0/-90/360,target=g.grib\n").unwrap();
    let refused = store.fails(&["retrieve", "--request-file", "grid.req"]);
    assert!(refused.contains("grid=1/1 asks for the fields transformed") && !store.path("g.grib").exists(), "{refused}");
    assert!(store.fails(&["retrieve", "class=od,expver=0001"]).contains("give -o FILE"));
}

/// Files and directories follow the user's umask: private with 077, shared by a group's
/// writers with 002 (the TOC, which every writer of a data set appends to, group-writable).
#[test]
fn the_store_follows_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    for (umask, expect_file, expect_dir) in [("077", 0o600, 0o700), ("002", 0o664, 0o775)] {
        let store = Store::new();
        store.ok(&["sample", "-o", "one.grib"]);
        let out = store.shell(&format!("umask {umask} && $F archive one.grib"));
        assert!(out.status.success(), "{out:?}");
        let mut checked = 0;
        let mut dirs = vec![store.root.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
                let expected = if path.is_dir() { expect_dir } else { expect_file };
                assert_eq!(mode, expected, "umask {umask}: {} is {mode:o}", path.display());
                if path.is_dir() {
                    dirs.push(path);
                }
                checked += 1;
            }
        }
        assert!(checked >= 6, "umask {umask}: {checked} files and directories");
    }
}

/// Completions and man pages come from the command-line definition, and
/// `scripts/install-shell-files.sh` puts them where shells and `man` look; every subcommand's
/// help ends with examples; `--quiet` and `--verbose` apply everywhere.
#[test]
fn completions_man_pages_help_and_verbosity() {
    let store = Store::new();
    let prefix = store.path("prefix");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/install-shell-files.sh");
    let out = store.shell(&format!("FIELDSTORE_BIN=$F bash {} {}", script.display(), prefix.display()));
    assert!(out.status.success(), "{out:?}");
    for file in ["bash-completion/completions/fieldstore", "zsh/site-functions/_fieldstore", "fish/vendor_completions.d/fieldstore.fish"] {
        assert!(std::fs::read_to_string(prefix.join("share").join(file)).unwrap().contains("archive"), "{file}");
    }
    // bash completes a subcommand and an option from the installed file.
    let completed = store.shell(&format!(
        "source {}; COMP_WORDS=(fieldstore li); COMP_CWORD=1; _fieldstore fieldstore li fieldstore; echo \"${{COMPREPLY[@]}}\"; \
         COMP_WORDS=(fieldstore list --po); COMP_CWORD=2; _fieldstore fieldstore --po list; echo \"${{COMPREPLY[@]}}\"",
        prefix.join("share/bash-completion/completions/fieldstore").display()
    ));
    assert_eq!(String::from_utf8_lossy(&completed.stdout), "list\n--porcelain\n", "{completed:?}");
    // FDB5's tools' names, linked to the binary, run as those tools.
    let link = prefix.join("bin/fdb-list");
    assert_eq!(std::fs::canonicalize(&link).unwrap(), std::fs::canonicalize(env!("CARGO_BIN_EXE_fieldstore")).unwrap());
    let usage = Command::new(&link).arg("--bogus").output().unwrap();
    assert!(String::from_utf8_lossy(&usage.stdout).starts_with("Invalid option --bogus\nUsage: fdb-list [options]"), "{usage:?}");
    let man = std::fs::read_to_string(prefix.join("share/man/man1/fieldstore-list.1")).unwrap();
    assert!(man.contains("fieldstore\\-list") && man.contains("Examples:") && man.contains("\\-\\-porcelain"), "{man}");
    // Every command but the benchmarks' ends its help with examples.
    let help = store.ok(&["--help"]);
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| !["bench", "help"].contains(c))
        .collect();
    assert!(commands.len() >= 16, "{commands:?}");
    for command in commands {
        assert!(store.ok(&[command, "--help"]).contains("Examples:\n  fieldstore "), "{command} --help has no examples");
    }
    store.ok(&["sample", "-o", "one.grib"]);
    let quiet = store.run(&["archive", "--quiet", "one.grib"]);
    assert!(quiet.status.success() && quiet.stderr.is_empty(), "{quiet:?}");
    let verbose = String::from_utf8(store.run(&["-v", "archive", "one.grib"]).stderr).unwrap();
    assert!(
        verbose.contains("config: default (posix root") && verbose.contains("flushed in") && verbose.contains("archived 1 fields"),
        "{verbose}"
    );
    assert!(store.fails(&["-q", "list", "class=od,expver=0001,setp=1"]).contains("unknown keyword"), "errors stay with --quiet");
}
