//! FDB5's tools run by fieldstore under their own names, against FDB5 5.25's own: each command
//! line below runs on FDB5's tool (installed from PyPI, `scripts/fdb5-tool.sh`) and on
//! `fieldstore fdb-...` over the same FDB5 databases (fieldstore reads them in place, so the
//! paths it prints are FDB5's), and both must print the same standard output and exit with
//! the same code. Standard error is not compared: fieldstore explains its errors its own way.
//! The differences kept on purpose are listed in docs/fdb5-users.md.

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_fieldstore");

/// FDB5's tool runner and a work directory with an FDB5 root written by `fdb-write`: one data
/// set archived twice (every field superseded once), another once and locked by `fdb-lock`
/// for retrieve and wipe, fields of 2 steps, 2 levels and 2 parameters, and an FDB5 config
/// reading that root with the same schema.
struct Fdb5Site {
    work: tempfile::TempDir,
    tool: String,
}

impl Fdb5Site {
    fn new() -> Fdb5Site {
        let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
        let work = tempfile::tempdir().unwrap();
        let root = work.path().join("fdb");
        let tool = format!("bash {} {}", project.join("scripts/fdb5-tool.sh").display(), root.display());
        // The schema fdb5-tool.sh gives FDB5's tools.
        let schema = work.path().join("schema");
        std::fs::write(
            &schema,
            "param: Param; step: Step; date: Date; levelist: Double; expver: Expver; time: Time; number: Integer;\n\
             [ class, expver, stream, date, time, domain? [ type, levtype [ step, number?, levelist?, param ]]]\n",
        )
        .unwrap();
        let config = format!(
            "type: local\nengine: toc\nschema: {}\nspaces:\n- handler: Default\n  regex: \".*\"\n  roots:\n  - path: {}\n",
            schema.display(),
            root.display()
        );
        std::fs::write(work.path().join("fdb5.yaml"), config).unwrap();
        let site = Fdb5Site { work, tool };
        site.shell(
            "$F sample --steps 0/6 --params 130/131 --levels 500/850 -o a.grib && $F sample --date 20231202 --steps 12 --params 130 -o b.grib \
             && $FDB fdb-write a.grib && $FDB fdb-write a.grib && $FDB fdb-write b.grib \
             && $FDB fdb-lock class=od,expver=1,stream=oper,date=20231202,time=1200 --retrieve --wipe \
             && printf 'retrieve,class=od,expver=1,stream=oper,date=20231201,time=1200,domain=g,type=fc,levtype=pl,step=0/6,levelist=500,param=131/t\\n' > two.req \
             && printf 'retrieve,class=od,expver=1,stream=oper,date=20231201,time=1200,domain=g,type=fc,levtype=pl,step=99,param=130\\n' > none.req",
        );
        site
    }

    fn shell(&self, script: &str) -> std::process::Output {
        let out = Command::new("bash")
            .current_dir(self.work.path())
            .env("F", BIN)
            .env("FDB", &self.tool)
            .env_remove("FIELDSTORE_CONFIG")
            .args(["-c", script])
            .output()
            .unwrap();
        assert!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
        out
    }

    /// Standard output, exit code and the file `{out}` names of `command` (`fdb-list ARGS`) run
    /// by FDB5, then by fieldstore; rates and times (`fdb-read`'s last lines) left out.
    fn both(&self, command: &str) -> [(String, Option<i32>, Vec<u8>); 2] {
        let config = self.work.path().join("fdb5.yaml");
        let run = |script: String, out: &str| {
            let output = self.work.path().join(out);
            let _ = std::fs::remove_file(&output);
            let script = script.replace("{out}", out);
            let done =
                Command::new("bash").current_dir(self.work.path()).env_remove("FIELDSTORE_CONFIG").args(["-c", &script]).output().unwrap();
            let timed = ["Read  rate:", "Write rate:", "Save into:"];
            let stdout = String::from_utf8_lossy(&done.stdout);
            let kept: Vec<&str> = stdout.split_inclusive('\n').filter(|l| !timed.iter().any(|t| l.starts_with(t))).collect();
            (kept.concat(), done.status.code(), std::fs::read(output).unwrap_or_default())
        };
        [
            run(format!("{} {command}", self.tool), "fdb5.out"),
            run(format!("{BIN} --config {} {command}", config.display()), "fieldstore.out"),
        ]
    }
}

/// Each tool's options alone and in the combinations scripts use, several requests per call,
/// FDB5's option forms, requests it expands, and the command lines it refuses.
const COMMAND_LINES: &[&str] = &[
    "fdb-list class=od,expver=1",
    "fdb-list class=od,expver=1 --porcelain",
    "fdb-list class=od,expver=1 --json",
    "fdb-list class=od,expver=1 --location",
    "fdb-list class=od,expver=1 --length",
    "fdb-list class=od,expver=1 --location --length --porcelain",
    "fdb-list class=od,expver=1 --full",
    "fdb-list class=od,expver=1 --full --porcelain --location",
    "fdb-list class=od,expver=1 --only-duplicates",
    "fdb-list class=od,expver=1 --only-duplicates --json",
    "fdb-list class=od,expver=1 --depth=1",
    "fdb-list class=od,expver=1 --depth 2",
    "fdb-list class=od,expver=1 --depth=1 --json",
    "fdb-list class=od,expver=1 --depth=2 --json",
    "fdb-list class=od,expver=1 --depth=2 --length",
    "fdb-list class=od,expver=1 --compact",
    "fdb-list class=od,expver=1 --compact --porcelain",
    "fdb-list class=od,expver=1 --compact --depth=1",
    "fdb-list class=od,expver=1 --compact --json",
    "fdb-list class=od,expver=1,date=20231201 --compact",
    "fdb-list class=od,expver=1,step=0 class=od,expver=1,date=20231202 --porcelain",
    "fdb-list class=od,expver=1,step=0 class=od,expver=1,date=20231202",
    "fdb-list class=od,expver=1,step=0/to/12/by/6,param=t,date=20231201,levelist=500.0",
    "fdb-list class=od,expver=1,step=99",
    "fdb-list class=od,expver=1,step=99 --json",
    "fdb-list --minimum-keys= --all --depth=1",
    "fdb-list --minimum-keys=class class=od --depth=1 --porcelain",
    "fdb-list",
    "fdb-list class=od",
    "fdb-list --all",
    "fdb-list class=od,expver=1 --bogus",
    "fdb-list class=od,expver=1 --compact --full",
    "fdb-list class=od,expver=1 --compact --location",
    "fdb-list class=od,expver=1 --compact --only-duplicates",
    "fdb-list class=od,expver=1 --full --only-duplicates",
    "fdb-list class=od,expver=1 --json --timestamp",
    "fdb-axes class=od,expver=1",
    "fdb-axes class=od,expver=1 --json",
    "fdb-axes class=od,expver=1 --level=1",
    "fdb-axes class=od,expver=1 --level=2 --json",
    "fdb-axes class=od,expver=1,step=99",
    "fdb-axes class=od,expver=1,levtype=sfc",
    "fdb-axes class=od,expver=1,date=20231202",
    "fdb-axes class=od,expver=1,step=0 class=od,expver=1,date=20231202 --json",
    "fdb-axes class=od,expver=1,step=0,param=131,levelist=850",
    "fdb-axes class=od",
    "fdb-axes class=od,expver=1 --bogus",
    "fdb-where class=od,expver=1",
    "fdb-where class=od,expver=1 --porcelain",
    "fdb-where class=od,expver=1,step=99",
    "fdb-where class=od,expver=2",
    "fdb-where class=od,expver=2 --ignore-no-data",
    "fdb-where class=od",
    "fdb-status class=od,expver=1",
    "fdb-status class=od,expver=2",
    "fdb-status class=od,expver=1,date=20231202 class=od,expver=1,date=20231201",
    "fdb-status --minimum-keys= --all",
    "fdb-stats class=od,expver=1",
    "fdb-stats class=od,expver=1 --details",
    "fdb-stats class=od,expver=1 --json",
    "fdb-stats class=od,expver=1,date=20231202 --details --json",
    "fdb-stats class=od,expver=1,step=99",
    "fdb-stats class=od,expver=2",
    "fdb-stats class=od,expver=2 --ignore-no-data",
    "fdb-stats class=od,expver=1 class=od,expver=2",
    "fdb-root class=od,expver=1,stream=oper,date=20231201,time=1200,domain=g",
    "fdb-root class=od,expver=1,stream=oper,date=20231201,time=1200,type=fc class=rd,expver=1,stream=oper,date=20231201,time=1200",
    "fdb-root class=od,expver=1",
    "fdb-root --bogus",
    "fdb-read two.req {out}",
    "fdb-read none.req {out}",
    "fdb-read --extract b.grib {out}",
    "fdb-read --extract a.grib {out}",
    "fdb-read --raw two.req /dev/null",
    "fdb-read two.req",
    "fdb-read --bogus two.req {out}",
    "fdb-read two.req --bogus",
    "fdb-axes --minimum-keys= --all --level=2",
    "fdb-inspect class=od,expver=1,stream=oper,date=20231201,time=1200,domain=g,type=fc,levtype=pl,step=0/6,levelist=500,param=130",
    "fdb-inspect class=od,expver=1,stream=oper,date=20231201,time=1200,type=fc,levtype=pl,step=0,levelist=500,param=130",
    "fdb-inspect class=od,expver=1,stream=oper,date=20231201,time=1200,domain=g,type=fc,levtype=pl,step=0,levelist=500,param=130/131/999 \
     class=od,expver=1,stream=oper,date=20231201,time=1200,domain=g,type=fc,levtype=pl,step=6,levelist=850,param=130",
    "fdb-inspect class=od,expver=1,stream=oper,date=20231202,time=1200,domain=g,type=fc,levtype=pl,step=12,levelist=500,param=130",
    "fdb-inspect class=od,expver=1,stream=oper,date=20231201,time=1200,domain=g,type=fc,levtype=pl,step=0,levelist=500",
    "fdb-inspect class=od,expver=1,stream=oper,date=20231201,time=1200,domain=g,type=fc,levtype=pl,step=0,levelist=500,param=999",
    "fdb-inspect --ignore-no-data class=od,expver=2",
    "fdb-inspect",
    "fdb-inspect --all",
    "fdb-inspect --bogus",
    "fdb-which",
    "fdb-which class=od --bogus",
    "fdb-url two.req {out}",
    "fdb-url --uri two.req {out}",
    "fdb-url --extract a.grib {out}",
    "fdb-url none.req {out}",
    "fdb-url two.req",
    "fdb-url --bogus",
    "fdb-dump-toc fdb/od:0001:oper:20231201:1200:g/toc",
    "fdb-dump-toc --structure fdb/od:0001:oper:20231201:1200:g/toc fdb/od:0001:oper:20231202:1200:g/toc",
    "fdb-dump-toc fdb/none/toc",
    "fdb-dump-toc",
    "fdb-dump-toc --bogus",
    "fdb-dump-index fdb/od:0001:oper:20231201:1200:g/*.index fdb/od:0001:oper:20231202:1200:g/*.index",
    "fdb-dump-index fdb/none/x.index",
    "fdb-dump-index --bogus",
    "fdb-dump class=od,expver=1",
    "fdb-dump class=od,expver=1,date=20231202 --simple",
    "fdb-dump class=od,expver=9",
    "fdb-dump --ignore-no-data class=od,expver=9",
    "fdb-dump --bogus",
];

#[test]
fn fdb5_s_tools_print_what_fdb5_s_print_and_exit_as_they_do() {
    let site = Fdb5Site::new();
    let mut differences = Vec::new();
    // FDB5's real schema (124 lines printed) beside the configured one.
    let real_schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fdb5/schema").canonicalize().unwrap();
    let real_schema = format!("fdb-schema {}", real_schema.display());
    let commands: Vec<&str> = COMMAND_LINES.iter().copied().chain([real_schema.as_str(), "fdb-schema", "fdb-schema --bogus"]).collect();
    for command in &commands {
        let [fdb5, fieldstore] = site.both(command);
        if fdb5 != fieldstore {
            let [a, b] = [&fdb5, &fieldstore].map(|(stdout, code, file)| format!("exit {code:?}, {} bytes written:\n{stdout}", file.len()));
            differences.push(format!("{command}\n--- FDB5, {a}\n--- fieldstore, {b}"));
        }
    }
    assert!(differences.is_empty(), "{} of {} command lines differ:\n{}", differences.len(), commands.len(), differences.join("\n"));
}

#[test]
fn the_binary_runs_as_fdb_list_under_that_name() {
    let site = Fdb5Site::new();
    let link = site.work.path().join("fdb-list");
    std::os::unix::fs::symlink(BIN, &link).unwrap();
    let out = Command::new(&link)
        .env("FDB5_CONFIG_FILE", site.work.path().join("fdb5.yaml"))
        .env_remove("FIELDSTORE_CONFIG")
        .args(["class=od,expver=1,date=20231202", "--porcelain"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{class=od,expver=0001,stream=oper,date=20231202,time=1200,domain=g}{type=fc,levtype=pl}{step=12,levelist=500,param=130}\n"
    );
    let unknown = Command::new(BIN).args(["fdb-nothing"]).output().unwrap();
    assert_eq!(unknown.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("fdb-nothing is not one of FDB5's tools"));
}

/// `--ignore-errors`: a data set that cannot be read is left out with a warning, the others
/// listed (FDB5 5.25's `fdb-list` still stops at it, ignoring errors or not); without it the
/// request fails, naming the damage.
#[test]
fn ignore_errors_leaves_out_a_damaged_data_set_with_a_warning() {
    let site = Fdb5Site::new();
    let toc = site.work.path().join("fdb/od:0001:oper:20231202:1200:g/toc");
    let mut bytes = std::fs::read(&toc).unwrap();
    // Inside the TOC's second record, an index record.
    bytes[1300..1323].copy_from_slice(b"garbage-garbage-garbage");
    std::fs::write(&toc, bytes).unwrap();
    let run = |extra: &str| {
        let command = format!("{BIN} --config fdb5.yaml fdb-list class=od,expver=1 --porcelain {extra}");
        let out =
            Command::new("bash").current_dir(site.work.path()).env_remove("FIELDSTORE_CONFIG").args(["-c", &command]).output().unwrap();
        (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned(), out.status.code())
    };
    let failed = run("");
    assert_eq!((failed.0.as_str(), failed.2), ("", Some(1)));
    assert!(failed.1.contains("corrupt FDB5 TOC"), "{failed:?}");
    let (listed, warned, code) = run("--ignore-errors");
    assert_eq!((listed.lines().count(), code), (8, Some(0)), "{listed}");
    assert!(listed.lines().all(|l| l.contains("date=20231201")));
    assert!(
        warned
            .starts_with("Warning: data set class=od,expver=0001,stream=oper,date=20231202,time=1200,domain=g left out: corrupt FDB5 TOC"),
        "{warned}"
    );
}

/// `fdb-hammer` under its name (FDB5 5.25's own crashes at start, so there is nothing to
/// compare with: docs/fdb5.md): FDB5's required options and refusals, then a write, a read and
/// a list of one workload, each with FDB5's summary lines, the messages carrying the class and
/// expver given.
#[test]
fn fdb_hammer_writes_reads_and_lists_its_workload_with_fdb5_s_summary() {
    let work = tempfile::tempdir().unwrap();
    let config = format!(
        "catalogue: {{type: posix, root: {0}, create: true}}\nstore: {{type: posix, root: {0}, create: true}}\n",
        work.path().join("s").display()
    );
    std::fs::write(work.path().join("c.yaml"), config).unwrap();
    let run = |args: &str| {
        let out = Command::new("bash")
            .current_dir(work.path())
            .env_remove("FIELDSTORE_CONFIG")
            .args(["-c", &format!("{BIN} {args}")])
            .output()
            .unwrap();
        (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned(), out.status.code())
    };
    assert_eq!(run("sample -o t.grib").2, Some(0));
    let missing = run("fdb-hammer --config=c.yaml --expver=xxxx --nsteps=2 t.grib");
    assert_eq!(
        (missing.1.trim(), missing.2),
        ("Exception: UserError: --expver, --class, --nsteps and --nparams are required arguments", Some(1))
    );
    assert!(run("fdb-hammer --config=c.yaml --expver=xxxx --class=rd --nsteps=2 --nparams=2 --nlevels=3 --itt t.grib")
        .1
        .contains("--procs"));
    let workload = "fdb-hammer --config=c.yaml --expver=xxxx --class=rd --nsteps=2 --nparams=2 --levels=1,2,3 --nensembles=2";
    let lines = |out: &(String, String, Option<i32>)| {
        out.0.lines().map(|l| l.split(':').next().unwrap_or_default().to_string()).collect::<Vec<_>>()
    };
    let written = run(&format!("{workload} t.grib"));
    assert!(written.0.starts_with("Fields written: 24\n"), "{written:?}");
    assert_eq!(lines(&written)[1..5], ["Bytes written", "Total duration", "GRIB duration", "Writing duration"]);
    let read = run(&format!("{workload} --read t.grib"));
    assert!(read.0.contains("\nFields read: 24\n"), "{read:?}");
    assert_eq!(run(&format!("{workload} --list t.grib")).0.lines().next(), Some("fdb-hammer - Fields listed: 24"));
    assert_eq!(run("--config c.yaml retrieve class=rd,expver=xxxx,number=2,step=1,levelist=3 -o one.grib").2, Some(0));
    let keys = Command::new("grib_get").current_dir(work.path()).args(["-p", "class,expver", "one.grib"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&keys.stdout).lines().collect::<Vec<_>>(), ["rd xxxx"; 2]);
}

/// `fdb-write` into a new FDB5 root and, through an FDB5 config of another, into fieldstore:
/// the same lines printed, the same exit codes, and then the same fields listed by each; then
/// `fdb-lock` and `fdb-unlock` on each's own data sets print the same (each root's path read
/// as the other's).
#[test]
fn fdb_write_lock_and_unlock_change_as_fdb5_s_do() {
    let site = Fdb5Site::new();
    let (fdb5_root, ours) = (site.work.path().join("fdb5-new"), site.work.path().join("ours"));
    std::fs::create_dir_all(&ours).unwrap();
    let config = std::fs::read_to_string(site.work.path().join("fdb5.yaml")).unwrap();
    let ours_config = site.work.path().join("ours.yaml");
    std::fs::write(&ours_config, config.replace(&*site.work.path().join("fdb").to_string_lossy(), &ours.to_string_lossy())).unwrap();
    let fdb5_tool = site.tool.replace(&*site.work.path().join("fdb").to_string_lossy(), &fdb5_root.to_string_lossy());
    let ours_tool = format!("{BIN} --config {}", ours_config.display());
    let run = |prefix: &str, args: &str| {
        let out = Command::new("bash").current_dir(site.work.path()).args(["-c", &format!("{prefix} {args}")]).output().unwrap();
        (String::from_utf8_lossy(&out.stdout).into_owned(), out.status.code())
    };
    for args in [
        "a.grib b.grib",
        "--modifiers=expver=0042 --include-filter=step=6 a.grib",
        "--exclude-filter=param=131 a.grib",
        "missing.grib",
        "b.grib missing.grib",
        "--bogus a.grib",
    ] {
        assert_eq!(run(&fdb5_tool, &format!("fdb-write {args}")), run(&ours_tool, &format!("fdb-write {args}")), "fdb-write {args}");
    }
    let list = "fdb-list --minimum-keys= --all --porcelain --full | sort";
    let listed = run(&fdb5_tool, list);
    // a.grib and b.grib, step 6 of a.grib as expver 0042, then param 130 of a.grib again.
    // ... and b.grib again, before a file that is not there (kept, as FDB5 keeps it).
    assert_eq!(listed.0.lines().count(), 8 + 1 + 4 + 4 + 1, "{listed:?}");
    assert_eq!(run(&ours_tool, list), listed);
    let (theirs, ours_dir) = (fdb5_root.to_string_lossy().into_owned(), ours.join("fieldstore").to_string_lossy().into_owned());
    for args in [
        "fdb-lock class=od,expver=1,stream=oper,date=20231201,time=1200 --retrieve --wipe",
        "fdb-lock class=od,expver=42,stream=oper,date=20231201,time=1200 --list",
        "fdb-status class=od",
        "fdb-unlock class=od,expver=1,stream=oper,date=20231201,time=1200 --wipe",
        "fdb-unlock class=od,expver=42,stream=oper,date=20231201,time=1200 --list --archive",
        "fdb-status class=od",
        "fdb-lock class=od,expver=1",
        "fdb-lock class=od,expver=1,stream=oper,date=20231201,time=1200",
        "fdb-unlock class=od,expver=1,stream=oper,date=20231201,time=1200 --bogus",
    ] {
        let (stdout, code) = run(&ours_tool, args);
        assert_eq!(run(&fdb5_tool, args), (stdout.replace(&ours_dir, &theirs), code), "{args}");
    }
}

/// `fdb-wipe` of a database FDB5 wrote and of the same fields archived by fieldstore into a
/// store of its own: the same report (dry run, `--porcelain`, `--doit`), each root's path and
/// each index and data file's unique name read as the same. Kept apart, as docs/fdb5-users.md
/// says: fieldstore's data sets have a `key` file, and FDB5 locks a database while it wipes it
/// (its `--doit` names the lock files it made).
#[test]
fn fdb_wipe_reports_as_fdb5_s_does() {
    let stores = TwoStores::written_twice();
    let (fdb5_root, ours, fdb5_tool, ours_tool) = (&stores.fdb5_root, &stores.ours, &stores.fdb5_tool, &stores.ours_tool);
    let run = |prefix: &str, args: &str| stores.run(prefix, args);
    let normalised = |text: String, root: &Path| -> String {
        let text = text.replace(&*root.to_string_lossy(), "ROOT");
        let mut kept = Vec::new();
        let mut control = false;
        for line in text.lines() {
            control = (control && !line.is_empty()) || line == "Control URIs to delete:";
            if control || line.ends_with("/key") || line.ends_with(".lock") {
                continue;
            }
            let unique = line.rfind('/').filter(|_| line.ends_with(".data") || line.ends_with(".index"));
            kept.push(match unique {
                Some(at) => format!("{}/X.{}", &line[..at], line.rsplit('.').next().unwrap_or_default()),
                None => line.to_string(),
            });
        }
        kept.dedup_by(|a, b| a.is_empty() && b.is_empty());
        kept.join("\n")
    };
    let request = "class=od,expver=1,stream=oper,date=20231201,time=1200";
    for options in ["", "--porcelain", "--doit"] {
        let args = format!("fdb-wipe {request} {options}");
        let theirs = normalised(run(fdb5_tool, &args), fdb5_root);
        assert!(theirs.contains("Data URIs to delete:\n    ROOT/od:0001:oper:20231201:1200:g/X.data"), "{theirs}");
        assert_eq!(normalised(run(ours_tool, &args), ours), theirs, "{args}");
    }
    assert_eq!(std::fs::read_dir(ours).unwrap().count(), 0, "wiped");
}

/// `fdb-copy` from FDB5's databases into a new FDB5 root and, by fieldstore, into a store of
/// its own: the same lines and exit codes, the same fields copied; then `fdb-move` of each's
/// own copy to a second root: nothing printed, exit 0, the data sets in the second root.
#[test]
fn fdb_copy_and_fdb_move_copy_and_move_as_fdb5_s_do() {
    let site = Fdb5Site::new();
    let work = site.work.path();
    let source = work.join("fdb5.yaml");
    let config = std::fs::read_to_string(&source).unwrap();
    let fdb_root = work.join("fdb").to_string_lossy().into_owned();
    // A config of two roots, x1 then x2, for FDB5 and one for fieldstore, y1 then y2.
    let two_roots = |name: &str| {
        for n in ["1", "2"] {
            std::fs::create_dir_all(work.join(format!("{name}{n}"))).unwrap();
        }
        let roots = format!("  - path: {}/{name}1\n  - path: {}/{name}2\n", work.display(), work.display());
        std::fs::write(work.join(format!("{name}.yaml")), config.replace(&format!("  - path: {fdb_root}\n"), &roots)).unwrap();
    };
    two_roots("x");
    two_roots("y");
    // fdb5-tool.sh's own config names the first root; --source, --target and --config override it.
    let fdb5_tool = |tool: &str| format!("{} {tool}", site.tool);
    let run = |script: String| {
        let out = Command::new("bash").current_dir(work).args(["-c", &script]).output().unwrap();
        (String::from_utf8_lossy(&out.stdout).into_owned(), out.status.code())
    };
    let (x, y) = (work.join("x.yaml").display().to_string(), work.join("y.yaml").display().to_string());
    for args in ["--from-list class=od,expver=1,date=20231201", "two.req", "--from-list --modifiers=expver=0042 class=od,expver=1,step=0"] {
        let theirs = run(format!("{} --source={} --target={x} {args}", fdb5_tool("fdb-copy"), source.display()));
        let ours = run(format!("{BIN} fdb-copy --source={} --target={y} {args}", source.display()));
        assert_eq!(ours, theirs, "fdb-copy {args}");
    }
    let listing = |config: &str| run(format!("{BIN} --config {config} fdb-list --minimum-keys= --all --porcelain | sort"));
    let copied = listing(&x);
    assert_eq!(copied.0.lines().count(), 8 + 4, "{copied:?}");
    assert_eq!(listing(&y), copied);
    // FDB5's fdb-move reads its config from --config; its databases and fieldstore's own each move.
    let request = "class=od,expver=1,stream=oper,date=20231201,time=1200";
    let theirs = run(format!("{} --config={x} --dest={}/x2 {request}", fdb5_tool("fdb-move"), work.display()));
    let ours = run(format!("{BIN} fdb-move --config={y} --dest={}/y2 {request}", work.display()));
    assert_eq!((ours.clone(), theirs.clone()), ((String::new(), Some(0)), (String::new(), Some(0))));
    let located = |config: &str, root: &str| {
        run(format!("{BIN} --config {config} fdb-where {request}")).0.replace(&format!("{}/{root}", work.display()), "ROOT")
    };
    assert_eq!(located(&x, "x2"), "ROOT/od:0001:oper:20231201:1200:g\n");
    assert_eq!(located(&y, "y2/fieldstore"), "ROOT/od:0001:oper:20231201:1200:g\n");
    assert_eq!(listing(&y), copied, "read from the second root");
}

/// `fdb-purge` of a database FDB5 wrote twice and of the same fields archived twice by
/// fieldstore into a store of its own: the same report (dry run, `--porcelain`, `--doit`, and
/// a dry run after it), each root's path and each index and data file's unique name read as
/// the same, and the index report's blocks compared whatever their order (FDB5's varies from
/// one run to the next).
#[test]
fn fdb_purge_reports_as_fdb5_s_does() {
    let stores = TwoStores::written_twice();
    let (fdb5_root, ours, fdb5_tool, ours_tool) = (&stores.fdb5_root, &stores.ours, &stores.fdb5_tool, &stores.ours_tool);
    let run = |prefix: &str, args: &str| stores.run(prefix, args);
    let normalised = |text: String, root: &Path| -> String {
        let text = text.replace(&*root.to_string_lossy(), "ROOT");
        let mut lines: Vec<String> = Vec::new();
        for line in text.lines() {
            let mut line = line.to_string();
            for suffix in [".data", ".index"] {
                while let Some(end) = line.find(suffix) {
                    let start = line[..end].rfind('/').map_or(0, |s| s + 1);
                    line.replace_range(start..end + suffix.len(), &format!("X{}", suffix.replace('.', "_")));
                }
            }
            lines.push(line);
        }
        // The index report's blocks, sorted.
        let (Some(start), Some(end)) =
            (lines.iter().position(|l| l == "Index Report:"), lines.iter().position(|l| l.starts_with("Unreferenced owned")))
        else {
            return lines.join("\n");
        };
        let mut blocks: Vec<String> = Vec::new();
        // The blank line that ends the report is no part of its last block.
        for line in lines[start + 1..end].iter().filter(|l| !l.is_empty()) {
            match blocks.last_mut() {
                Some(block) if !line.starts_with("    Index ") => block.push_str(&format!("\n{line}")),
                _ => blocks.push(line.clone()),
            }
        }
        blocks.sort();
        [&lines[..=start], &blocks[..], &[String::new()], &lines[end..]].concat().join("\n")
    };
    let request = "class=od,expver=1,stream=oper,date=20231201,time=1200";
    for options in ["", "--porcelain", "--doit", ""] {
        let args = format!("fdb-purge {request} {options}");
        let theirs = normalised(run(fdb5_tool, &args), fdb5_root);
        assert!(theirs.contains("X_index"), "{theirs}");
        assert_eq!(normalised(run(ours_tool, &args), ours), theirs, "{args}");
    }
}

/// A new FDB5 root written by FDB5's tools and a store of fieldstore's own, each given
/// `a.grib` twice (every field superseded once), for the tools that change what they read.
struct TwoStores {
    site: Fdb5Site,
    fdb5_root: std::path::PathBuf,
    ours: std::path::PathBuf,
    /// FDB5's tools on `fdb5_root`, and fieldstore on `ours`: each followed by a tool's name.
    fdb5_tool: String,
    ours_tool: String,
}

impl TwoStores {
    fn written_twice() -> TwoStores {
        let site = Fdb5Site::new();
        let ours = site.work.path().join("ours");
        let ours_config = site.work.path().join("ours.yaml");
        std::fs::write(
            &ours_config,
            format!(
                "catalogue: {{type: posix, root: {0}, create: true}}\nstore: {{type: posix, root: {0}, create: true}}\n",
                ours.display()
            ),
        )
        .unwrap();
        let fdb5_root = site.work.path().join("fdb5-new");
        let fdb5_tool = site.tool.replace(&*site.work.path().join("fdb").to_string_lossy(), &fdb5_root.to_string_lossy());
        let ours_tool = format!("{BIN} --config {}", ours_config.display());
        let stores = TwoStores { site, fdb5_root, ours, fdb5_tool, ours_tool };
        for tool in [&stores.fdb5_tool, &stores.ours_tool] {
            stores.run(tool, "fdb-write a.grib");
            stores.run(tool, "fdb-write a.grib");
        }
        stores
    }

    /// Standard output and exit code of `prefix args` in the work directory.
    fn outcome(&self, prefix: &str, args: &str) -> (String, Option<i32>) {
        let out = Command::new("bash").current_dir(self.site.work.path()).args(["-c", &format!("{prefix} {args}")]).output().unwrap();
        (String::from_utf8_lossy(&out.stdout).into_owned(), out.status.code())
    }

    /// Standard output of `prefix args` in the work directory, which must succeed.
    fn run(&self, prefix: &str, args: &str) -> String {
        let out = Command::new("bash").current_dir(self.site.work.path()).args(["-c", &format!("{prefix} {args}")]).output().unwrap();
        assert!(out.status.success(), "{prefix} {args}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// A root that is not there is never made: FDB5's config over a root not there makes
/// `fdb-write` fail on FDB5 and on fieldstore alike ("No writable roots available"), the root
/// still not there; a config naming no schema, and no FDB5 home holding one, fails on both,
/// never falling back to another schema. fieldstore's own config makes its root only with
/// `create: true` or `fieldstore init`, and `info` says an empty store is empty.
#[test]
fn roots_not_there_are_never_made_and_no_schema_is_fallen_back_to_as_fdb5() {
    let site = Fdb5Site::new();
    let work = site.work.path();
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let fdb5_tool = |config: &Path| format!("bash {} --config {}", project.join("scripts/fdb5-tool.sh").display(), config.display());
    let run = |command: String| {
        let out = Command::new("bash")
            .current_dir(work)
            .env_remove("FIELDSTORE_CONFIG")
            .env_remove("FDB_HOME")
            .args(["-c", &command])
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
    };
    let missing = work.join("unmounted");
    let schema = work.join("schema");
    let spaces = format!("spaces:\n- handler: Default\n  roots:\n  - path: {}\n", missing.display());
    let with_schema = work.join("missing-root.yaml");
    std::fs::write(&with_schema, format!("type: local\nengine: toc\nschema: {}\n{spaces}", schema.display())).unwrap();
    for command in
        [format!("{} fdb-write a.grib", fdb5_tool(&with_schema)), format!("{BIN} --config {} fdb-write a.grib", with_schema.display())]
    {
        let (code, said) = run(command.clone());
        assert!(
            code == Some(1) && said.contains("No writable roots available") && said.contains(&*missing.to_string_lossy()),
            "{command}: {said}"
        );
        assert!(!missing.exists(), "{command} made the root");
    }
    let (code, said) = run(format!("{BIN} --config {} archive a.grib", with_schema.display()));
    assert!(code == Some(1) && said.contains("No writable roots available"), "{said}");
    assert!(!missing.exists());

    std::fs::create_dir(&missing).unwrap();
    let no_schema = work.join("no-schema.yaml");
    std::fs::write(&no_schema, format!("type: local\nengine: toc\n{spaces}")).unwrap();
    let (code, said) = run(format!("{} fdb-write a.grib", fdb5_tool(&no_schema)));
    assert!(code == Some(1) && said.contains("etc/fdb/schema"), "FDB5: {said}");
    for tool in ["fdb-write a.grib", "fdb-list class=od"] {
        let (code, said) = run(format!("FDB_HOME={} {BIN} --config {} {tool}", work.join("home").display(), no_schema.display()));
        assert!(code == Some(1) && said.contains(&*work.join("home/etc/fdb/schema").to_string_lossy()), "{tool}: {said}");
        let (code, said) = run(format!("{BIN} --config {} {tool}", no_schema.display()));
        assert!(code == Some(1) && said.contains("names no schema"), "{tool}: {said}");
    }
    assert_eq!(std::fs::read_dir(&missing).unwrap().count(), 0, "nothing archived");

    let own = work.join("own");
    let own_config =
        |create: &str| format!("catalogue: {{type: posix, root: {0}{create}}}\nstore: {{type: posix, root: {0}{create}}}\n", own.display());
    std::fs::write(work.join("own.yaml"), own_config("")).unwrap();
    let (code, said) = run(format!("{BIN} --config own.yaml archive a.grib"));
    assert!(code == Some(1) && said.contains("No writable roots available") && !own.exists(), "{said}");
    let (code, said) = run(format!("{BIN} --config own.yaml init --json"));
    assert_eq!((code, said.trim()), (Some(0), &*format!("[\n  \"{}\"\n]", own.display())));
    let (code, said) = run(format!("{BIN} --config own.yaml info"));
    assert!(code == Some(0) && said.contains("data sets: 0 (the store is empty)"), "{said}");
    assert_eq!(run(format!("{BIN} --config own.yaml init")), (Some(0), "every configured root is there: none made\n".into()));
    std::fs::remove_dir(&own).unwrap();
    std::fs::write(work.join("own.yaml"), own_config(", create: true")).unwrap();
    let (code, said) = run(format!("{BIN} --config own.yaml archive a.grib"));
    assert!(code == Some(0) && own.is_dir(), "{said}");
    assert!(run(format!("{BIN} --config own.yaml info")).1.contains("data sets: 1\n"));
}

/// `fdb-info` prints what FDB5's prints, item by item and with `--all`, under the same
/// `$FDB_HOME` and config file: the version is that of FDB5's interfaces fieldstore implements.
#[test]
fn fdb_info_prints_what_fdb5_s_prints() {
    let site = Fdb5Site::new();
    let work = site.work.path();
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let config = work.join("fdb5.yaml");
    let env = format!("FDB_HOME={} FDB5_CONFIG_FILE={}", work.join("home").display(), config.display());
    let fdb5 = format!(
        "FDB_HOME={} bash {} --config {}",
        work.join("home").display(),
        project.join("scripts/fdb5-tool.sh").display(),
        config.display()
    );
    for args in ["--all", "--version", "--home", "--schema", "--config-file", "--lustre-api", "", "--schema --version", "--bogus"] {
        let run = |command: String| {
            let out = Command::new("bash").current_dir(work).env_remove("FIELDSTORE_CONFIG").args(["-c", &command]).output().unwrap();
            (String::from_utf8_lossy(&out.stdout).into_owned(), out.status.code())
        };
        let theirs = run(format!("{fdb5} fdb-info {args}"));
        assert_eq!(run(format!("{env} {BIN} fdb-info {args}")), theirs, "fdb-info {args}");
        assert!(args.is_empty() || !theirs.0.is_empty());
    }
}

/// `fdb-hide` on a database FDB5 wrote and on the same fields archived by fieldstore: the
/// same lines (dry run, `--doit`, a request naming two data sets, one not there), usage and
/// exit codes; the fields hidden from `fdb-list` on both, their files kept, and fields
/// archived afterwards seen again.
#[test]
fn fdb_hide_hides_as_fdb5_s_does() {
    let stores = TwoStores::written_twice();
    let (fdb5_root, ours, fdb5_tool, ours_tool) = (&stores.fdb5_root, &stores.ours, &stores.fdb5_tool, &stores.ours_tool);
    let run = |prefix: &str, args: &str| stores.outcome(prefix, args);
    for tool in [fdb5_tool, ours_tool] {
        stores.run(tool, "fdb-write b.grib");
    }
    let files = |root: &Path| walk(root).len();
    let ours_files = files(ours);
    let list = "fdb-list class=od,expver=1 --porcelain";
    for args in [
        "fdb-hide class=od,expver=1,stream=oper,date=20231201,time=1200,domain=g",
        "fdb-hide class=od,expver=1,stream=oper,date=20231201/20231202,time=1200,domain=g",
        "fdb-hide class=od,expver=1,stream=oper,date=20231201,time=1200,domain=g --doit",
        list,
        "fdb-hide class=od,expver=1,stream=oper,date=20231203/20231201,time=1200,domain=g --doit",
        "fdb-hide class=od,expver=1,stream=oper,date=20231201,time=1200,domain=g --doit",
        "fdb-hide class=od,expver=1",
        "fdb-hide",
        "fdb-hide a b",
        "fdb-hide --bogus",
        list,
        "fdb-write a.grib",
        list,
    ] {
        let (stdout, code) = run(ours_tool, args);
        assert_eq!((stdout.replace(&*ours.to_string_lossy(), &fdb5_root.to_string_lossy()), code), run(fdb5_tool, args), "{args}");
    }
    assert_eq!(run(ours_tool, list).0.lines().count(), 8 + 1, "a.grib's fields again, and b.grib's");
    // FDB5's hide is a TOC_CLEAR record, which fdb-dump-toc prints as FDB5's does.
    let toc = format!("fdb-dump-toc --structure {}/od:0001:oper:20231201:1200:g/toc", fdb5_root.display());
    let dumped = run(fdb5_tool, &toc);
    assert!(dumped.0.contains("TOC_CLEAR") && dumped.0.contains("path: *, offset: 0"), "{dumped:?}");
    assert_eq!(run(ours_tool, &toc), dumped);
    assert_eq!(files(ours), ours_files + 2, "nothing removed; a data and an index file more");
}

/// `fdb-overlay` on a database FDB5 wrote and on the same fields archived by fieldstore: the
/// same lines, refusals and exit codes; the source's fields then listed under the target's
/// key, by both, until `--remove`. (FDB5 records an overlay applied again with `--force` a
/// second time, and then fails on reading it: not run here, docs/fdb5.md.)
#[test]
fn fdb_overlay_shows_a_database_under_another_key_as_fdb5_s_does() {
    let stores = TwoStores::written_twice();
    let source = "class=od,expver=1,stream=oper,date=20231201,time=1200,domain=g";
    let target = "class=od,expver=2,stream=oper,date=20231201,time=1200,domain=g";
    let other_stream = "class=od,expver=3,stream=enfo,date=20231201,time=1200,domain=g";
    let list = "fdb-list class=od,expver=2 --porcelain".to_string();
    let mut shown_once = false;
    for args in [
        format!("fdb-overlay {source} {target}"),
        list.clone(),
        format!("fdb-overlay {source} {target}"),
        format!("fdb-overlay {source} {other_stream}"),
        format!("fdb-overlay --variable-keys=expver,stream {source} {other_stream}"),
        "fdb-list class=od,expver=3 --porcelain".to_string(),
        format!("fdb-overlay class=od,expver=9,stream=oper,date=20231201,time=1200,domain=g {target}"),
        format!("fdb-overlay --remove {source} {target}"),
        list.clone(),
        format!("fdb-overlay --remove {source} {target}"),
        format!("fdb-overlay --remove {source} class=od,expver=4,stream=oper,date=20231201,time=1200,domain=g"),
        format!("fdb-overlay {source}"),
        "fdb-overlay --bogus a b".to_string(),
    ] {
        let ours = stores.outcome(&stores.ours_tool, &args);
        assert_eq!(ours, stores.outcome(&stores.fdb5_tool, &args), "{args}");
        if args == list && ours.0.lines().count() == 8 {
            shown_once = true;
            read_through_the_overlay_as_fdb5(&stores);
        }
    }
    assert!(shown_once, "the source's 8 fields listed under the target's key");
}

/// Fields read through an overlay carry the target's keys: the same bytes as FDB5's, which
/// sets them as it reads (the stored ones keep the source's).
fn read_through_the_overlay_as_fdb5(stores: &TwoStores) {
    let work = stores.site.work.path();
    std::fs::write(
        work.join("overlay.req"),
        "retrieve,class=od,expver=2,stream=oper,date=20231201,time=1200,domain=g,type=fc,levtype=pl,step=0/6,levelist=500,param=130/131\n",
    )
    .unwrap();
    stores.run(&stores.fdb5_tool, "fdb-read overlay.req fdb5-overlay.grib");
    stores.run(&stores.ours_tool, "fdb-read overlay.req ours-overlay.grib");
    let (fdb5, ours) = (std::fs::read(work.join("fdb5-overlay.grib")).unwrap(), std::fs::read(work.join("ours-overlay.grib")).unwrap());
    assert_eq!((fdb5.len(), ours.len()), (784, 784));
    assert!(fdb5 == ours, "the messages read through the overlay differ from FDB5's");
    let expvers = stores.run("grib_get -p expver", "ours-overlay.grib");
    assert_eq!(expvers.lines().collect::<Vec<_>>(), ["0002"; 4], "{expvers}");
    // Through fieldstore's own retrieve too.
    stores.run(&stores.ours_tool, "retrieve class=od,expver=2,step=0/6,levelist=500 -o retrieved.grib");
    assert_eq!(std::fs::read(work.join("retrieved.grib")).unwrap(), ours, "fieldstore retrieve");
    // FDB5's overlay, read in place by fieldstore: the same fields, the same bytes.
    let config = std::fs::read_to_string(work.join("fdb5.yaml"))
        .unwrap()
        .replace(&*work.join("fdb").to_string_lossy(), &stores.fdb5_root.to_string_lossy());
    std::fs::write(work.join("fdb5-new.yaml"), config).unwrap();
    let in_place = format!("{BIN} --config fdb5-new.yaml");
    let list = "fdb-list class=od,expver=2 --porcelain";
    assert_eq!(stores.outcome(&in_place, list), stores.outcome(&stores.fdb5_tool, list), "FDB5's overlay listed in place");
    stores.run(&in_place, "fdb-read overlay.req in-place-overlay.grib");
    assert!(std::fs::read(work.join("in-place-overlay.grib")).unwrap() == fdb5, "FDB5's overlay read in place");
    // ... and never changed by fieldstore.
    let toc = stores.fdb5_root.join("od:0002:oper:20231201:1200:g/toc");
    let before = std::fs::read(&toc).unwrap();
    let source = "class=od,expver=1,stream=oper,date=20231201,time=1200,domain=g";
    let refused =
        stores.outcome(&in_place, &format!("fdb-overlay --remove {source} class=od,expver=2,stream=oper,date=20231201,time=1200,domain=g"));
    assert_eq!(refused.1, Some(1), "{refused:?}");
    assert_eq!(std::fs::read(&toc).unwrap(), before, "FDB5's database unchanged");
    // A copy of the fields read through the overlay: verified with the keys set, and resumed.
    let copy = format!(
        "catalogue: {{type: posix, root: {0}, create: true}}\nstore: {{type: posix, root: {0}, create: true}}\n",
        work.join("copy").display()
    );
    std::fs::write(work.join("copy.yaml"), copy).unwrap();
    for copied in ["copied 4 of 4", "copied 0 of 4"] {
        let summary = stores.run(&stores.ours_tool, "copy --target copy.yaml class=od,expver=2,step=0/6,levelist=500 2>&1");
        assert!(summary.contains(copied), "{summary}");
    }
    stores.run(&format!("{BIN} --config copy.yaml"), "retrieve class=od,expver=2 -o copied.grib");
    assert!(std::fs::read(work.join("copied.grib")).unwrap() == ours, "the copies carry the target's keys");
}

/// `fdb-reindex` from a database FDB5 wrote into another root, and from fieldstore's store
/// into a catalogue of another root over the same store: the same (empty) output, refusals
/// and exit codes; the sink then lists the same fields, and reads the source's bytes.
#[test]
fn fdb_reindex_indexes_again_over_the_same_data_as_fdb5_s_does() {
    let stores = TwoStores::written_twice();
    let work = stores.site.work.path();
    let fdb5_config = std::fs::read_to_string(work.join("fdb5.yaml")).unwrap();
    let fdb5_root = work.join("fdb").to_string_lossy().into_owned();
    for (name, root) in [("fdb5-source.yaml", &stores.fdb5_root), ("fdb5-sink.yaml", &work.join("fdb5-sink"))] {
        std::fs::create_dir_all(root).unwrap();
        std::fs::write(work.join(name), fdb5_config.replace(&fdb5_root, &root.to_string_lossy())).unwrap();
    }
    let ours_sink = format!(
        "catalogue: {{type: posix, root: {}, create: true}}\nstore: {{type: posix, root: {}}}\n",
        work.join("ours-sink").display(),
        stores.ours.display()
    );
    std::fs::write(work.join("ours-sink.yaml"), ours_sink).unwrap();
    let ours_source = stores.ours_tool.split_once(" --config ").map(|(_, config)| config.to_string()).unwrap();
    let sides =
        [(stores.fdb5_tool.clone(), "fdb5-source.yaml".to_string(), "fdb5-sink.yaml"), (BIN.to_string(), ours_source, "ours-sink.yaml")];
    for args in [
        "fdb-reindex --source-config={source} --sink-config={sink} class=od,expver=1",
        "fdb-reindex --source-config={source} --sink-config={sink} class=od,expver=9",
        "fdb-reindex --source-config={source} --sink-config={sink}",
        "fdb-reindex --source-config={source} --sink-config={sink} class=od",
        "fdb-reindex --source-config={source} class=od,expver=1",
        "fdb-reindex --bogus",
    ] {
        let [fdb5, ours] =
            sides.clone().map(|(tool, source, sink)| stores.outcome(&tool, &args.replace("{source}", &source).replace("{sink}", sink)));
        assert_eq!(ours, fdb5, "{args}");
    }
    let list = "fdb-list class=od,expver=1 --porcelain";
    let fdb5_sink = stores.site.tool.replace(&fdb5_root, &work.join("fdb5-sink").to_string_lossy());
    let listed = stores.outcome(&fdb5_sink, list);
    assert_eq!(listed.0.lines().count(), 8, "{listed:?}");
    assert_eq!(stores.outcome(&format!("{BIN} --config ours-sink.yaml"), list), listed);
    stores.run(&format!("{BIN} --config ours-sink.yaml"), "retrieve class=od,expver=1 -o sink.grib");
    stores.run(&stores.ours_tool, "retrieve class=od,expver=1 -o source.grib");
    assert_eq!(std::fs::read(work.join("sink.grib")).unwrap(), std::fs::read(work.join("source.grib")).unwrap());
    assert!(
        !work.join("ours-sink").join("od:0001:oper:20231201:1200:g").read_dir().unwrap().any(|f| f
            .unwrap()
            .file_name()
            .to_string_lossy()
            .ends_with(".data")),
        "no data copied"
    );
    // The sink owns none of that data: its wipe is refused, and the source keeps every field.
    let wipe =
        stores.outcome(&format!("{BIN} --config ours-sink.yaml"), "wipe class=od,expver=1,stream=oper,date=20231201,time=1200 --doit");
    assert_eq!(wipe.1, Some(1), "{wipe:?}");
    stores.run(&stores.ours_tool, "retrieve class=od,expver=1 -o source-after.grib");
    assert_eq!(std::fs::read(work.join("source-after.grib")).unwrap(), std::fs::read(work.join("source.grib")).unwrap());
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        if entry.path().is_dir() {
            files.extend(walk(&entry.path()));
        } else {
            files.push(entry.path());
        }
    }
    files
}

/// `fdb-patch` on a database FDB5 wrote and on the same fields archived by fieldstore: the
/// same summary (rates and times left out), refusals and exit codes, and the same fields then
/// listed under the new `expver` and `class`.
#[test]
fn fdb_patch_archives_again_under_a_new_class_and_expver_as_fdb5_s_does() {
    let stores = TwoStores::written_twice();
    let (fdb5_tool, ours_tool) = (&stores.fdb5_tool, &stores.ours_tool);
    let run = |prefix: &str, args: &str| {
        let out = Command::new("bash").current_dir(stores.site.work.path()).args(["-c", &format!("{prefix} {args}")]).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let timed: Vec<&str> = stdout.split_inclusive('\n').filter(|l| !l.starts_with("Rates:") && !l.starts_with("fdb-patch:")).collect();
        (timed.concat(), out.status.code())
    };
    for args in [
        "fdb-patch class=od,expver=1,stream=oper,date=20231201,time=1200 --expver=42",
        "fdb-patch class=od,expver=1,stream=oper,date=20231201,time=1200,step=6 --expver=43 --class=rd",
        "fdb-patch class=od,expver=1,stream=oper,date=20231201,time=1200",
        "fdb-patch class=od,expver=1,stream=oper,date=20231209,time=1200 --class=rd",
        "fdb-patch class=od,expver=1 --class=rd",
        "fdb-patch --class=rd",
        "fdb-patch --bogus",
        "fdb-list --all --minimum-keys= --porcelain",
    ] {
        assert_eq!(run(ours_tool, args), run(fdb5_tool, args), "{args}");
    }
    assert_eq!(run(ours_tool, "fdb-list class=rd,expver=43 --porcelain").0.lines().count(), 4);
}

/// `fdb-compare` over FDB5's databases, by FDB5 and by fieldstore (reading them in place):
/// the same log lines, verdict and exit code, the same fields missing on either side, the same
/// fields whose headers or values differ, and the same GRIB keys named with both values. The
/// order of the mismatch lines is not compared (FDB5's follows its hash tables), nor the
/// lines FDB5 prints besides (`KEY-BY-KEY`), nor fieldstore's `values[i]` lines.
#[test]
fn fdb_compare_finds_what_fdb5_s_finds() {
    let site = Fdb5Site::new();
    let work = site.work.path();
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let fdb5_install = project.join("scripts/fdb5-tool.sh");
    for (name, grib) in [("ref", "a.grib"), ("extra", "a.grib b.grib"), ("header", "header.grib"), ("data", "data.grib")] {
        let config = format!(
            "type: local\nengine: toc\nschema: {}\nspaces:\n- handler: Default\n  roots:\n  - path: {}\n",
            work.join("schema").display(),
            work.join(name).display()
        );
        std::fs::write(work.join(format!("{name}.yaml")), config).unwrap();
        std::fs::create_dir(work.join(name)).unwrap();
        site.shell(&format!(
            "grib_set -s generatingProcessIdentifier=77 a.grib header.grib && grib_set -d 5 a.grib data.grib \
             && bash {} --config {name}.yaml fdb-write {grib} >/dev/null",
            fdb5_install.display()
        ));
    }
    let run = |prefix: String, args: &str| {
        let out = Command::new("bash")
            .current_dir(work)
            .env_remove("FIELDSTORE_CONFIG")
            .args(["-c", &format!("{prefix} {args}")])
            .output()
            .unwrap();
        (String::from_utf8_lossy(&out.stdout).into_owned(), out.status.code())
    };
    for args in [
        "--config1=ref.yaml --config2=ref.yaml",
        "--config1=ref.yaml --config2=extra.yaml",
        "--config1=extra.yaml --config2=ref.yaml --scope=header-only",
        "--config1=ref.yaml --config2=header.yaml --scope=header-only",
        "--config1=ref.yaml --config2=header.yaml --scope=header-only --mars-keys-ignore=step=6",
        "--config1=ref.yaml --config2=data.yaml --scope=all",
        "--config1=ref.yaml --config2=data.yaml --scope=all --grib-comparison-type=bit-identical",
        "--config1=ref.yaml --config2=header.yaml --scope=mars",
        "--config1=extra.yaml --request1=class=od,expver=1,date=20231201 --request2=class=od,expver=1,date=20231202",
        "--config1=ref.yaml --config2=extra.yaml --request1=class=od,expver=1,date=20231201",
        "--config1=ref.yaml --bogus",
    ] {
        let theirs = run(format!("bash {} --config ref.yaml fdb-compare", fdb5_install.display()), args);
        let ours = run(format!("{BIN} fdb-compare"), args);
        let keys_too = !args.contains("bit-identical");
        assert_eq!(
            compare_summary(&ours.0, keys_too),
            compare_summary(&theirs.0, keys_too),
            "fdb-compare {args}\n{}\n{}",
            ours.0,
            theirs.0
        );
        assert_eq!(ours.1, theirs.1, "fdb-compare {args}");
    }
    // fieldstore's own command: the same findings as JSON, exit 1 when they differ.
    let (json, code) =
        run(format!("{BIN} --config ref.yaml compare class=od,expver=1 --scope header-only --json --against"), "header.yaml");
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!((code, report["mismatches"].as_array().unwrap().len()), (Some(1), 8), "{report}");
    assert_eq!(report["mismatches"][0]["differences"][0]["key"], "generatingProcessIdentifier");
    let (text, code) = run(format!("{BIN} --config ref.yaml compare class=od,expver=1 --scope all --against"), "ref.yaml");
    assert_eq!((code, text.lines().last()), (Some(0), Some("same")));
}

/// What an `fdb-compare` run found, its order and FDB5's extra lines left out: the lines
/// compared as they are, each field key as its sorted pairs, each GRIB key difference (if
/// `keys_too`).
fn compare_summary(stdout: &str, keys_too: bool) -> (Vec<String>, std::collections::BTreeSet<String>) {
    let pairs = |text: &str| -> String {
        let mut pairs: Vec<&str> = text.split(['{', '}', ',', ' ']).filter(|p| !p.is_empty()).collect();
        pairs.sort();
        pairs.join(",")
    };
    let mut lines = Vec::new();
    let mut found = std::collections::BTreeSet::new();
    for line in stdout.lines() {
        if let Some((direction, key)) = line.strip_prefix("[MARS KEYS COMPARE] MISMATCH ").and_then(|l| l.split_once(": ")) {
            found.insert(format!("missing {direction} {}", pairs(key)));
        } else if let Some(key) = line.strip_prefix("[GRIB COMPARISON MISMATCH] Grib Comparison failed for MARS key ") {
            found.insert(format!("differs {}", pairs(key)));
        } else if let Some((kind, key)) = line.strip_prefix("[GRIB COMPARISON MISMATCH: BITEXACT: ").and_then(|l| l.split_once(" = ")) {
            found.insert(format!("bitexact {kind} {}", pairs(key)));
        } else if line.starts_with("[GRIB COMPARISON MISMATCH] Memory comparison failed") {
            found.insert(line.to_string());
        } else if line.starts_with("[GRIB COMPARISON MISMATCH] Key=") {
            if keys_too && !line.contains("Key=values[") {
                found.insert(line.to_string());
            }
        } else if !line.starts_with("[GRIB COMPARISON MISMATCH KEY-BY-KEY") && !line.is_empty() {
            lines.push(line.to_string());
        }
    }
    (lines, found)
}
