//! FDB5 itself as the oracle: the corpus archived into FDB5 5.25 and into fieldstore with
//! FDB5's schema, every case sent to both (see `fieldstore_parity` and docs/fdb5.md). Any
//! difference docs/fdb5.md does not list fails, and so does a listed one that no longer
//! occurs.

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

/// The tests install FDB5 into one place on first use: one at a time.
static FDB5: Mutex<()> = Mutex::new(());

#[test]
fn fieldstore_answers_as_fdb5_does_on_real_shaped_data() {
    let _fdb5 = FDB5.lock().unwrap_or_else(|p| p.into_inner());
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let documented = fieldstore_parity::documented_differences(&std::fs::read_to_string(project.join("docs/fdb5.md")).unwrap());
    for case in fieldstore_parity::cases::all() {
        if let Some(name) = case.differs {
            assert!(documented.contains(name), "{case} expects difference '{name}', which docs/fdb5.md does not list");
        }
    }
    let work = tempfile::tempdir().unwrap();
    let setup = fieldstore_parity::Setup {
        fieldstore: env!("CARGO_BIN_EXE_fieldstore").into(),
        schema: project.join("../shared/fdb5/schema"),
        install_script: project.join("scripts/fdb5-install.sh"),
        work: work.path().to_path_buf(),
    };
    let report = fieldstore_parity::compare(&setup).unwrap();
    let unexpected: Vec<String> = report.unexpected.iter().map(|d| format!("{}\n    {}", d.case, d.detail)).collect();
    assert!(unexpected.is_empty(), "answers differ from FDB5's in {} cases:\n{}", unexpected.len(), unexpected.join("\n"));
    let same: Vec<String> = report.no_longer_different.iter().map(|c| format!("{c} ({})", c.differs.unwrap_or(""))).collect();
    assert!(same.is_empty(), "documented differences no longer occur (update docs/fdb5.md and the cases):\n{}", same.join("\n"));
    assert!(report.cases >= 200 && report.fields >= 880, "{} cases over {} fields", report.cases, report.fields);
    // The same cases (all but wipes and purges) answered by fieldstore from FDB5's own
    // databases, read in place.
    let in_place: Vec<String> = report.in_place_unexpected.iter().map(|d| format!("{}\n    {}", d.case, d.detail)).collect();
    assert!(in_place.is_empty(), "read in place, FDB5's databases answer otherwise in {} cases:\n{}", in_place.len(), in_place.join("\n"));
    assert!(report.in_place_cases >= 150, "{} cases read in place", report.in_place_cases);
    assert!(!report.expected.is_empty(), "the documented differences are exercised");
}

/// `scripts/fdb5-import.sh` (docs/fdb5-users.md) copies an FDB5 store into fieldstore: the
/// same fields listed, the same bytes retrieved.
#[test]
fn the_import_script_copies_an_fdb5_store_field_for_field() {
    let _fdb5 = FDB5.lock().unwrap_or_else(|p| p.into_inner());
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (fdb_root, fs_root) = (work.path().join("fdb"), work.path().join("fieldstore"));
    let tool = format!("bash {} {}", project.join("scripts/fdb5-tool.sh").display(), fdb_root.display());
    let run = |script: &str| {
        let out = shell(work.path(), env!("CARGO_BIN_EXE_fieldstore"), &tool)
            .env("FIELDSTORE_ROOT", &fs_root)
            .args(["-c", script])
            .output()
            .unwrap();
        assert!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
        out
    };
    run("$F sample --stream enfo --type pf --numbers 1/to/3 --steps 0/6 -o ens.grib && \
         $F sample --steps 0/to/24/by/12 --params 130/131 --levels 500/850 -o oper.grib && \
         $F sample --levtype sfc --params 167 --date 20231202 -o sfc.grib && $FDB fdb-write ens.grib oper.grib sfc.grib");
    let import = run(&format!("FDB5_TOOL_PREFIX=\"$FDB\" FIELDSTORE_BIN=$F bash {}", project.join("scripts/fdb5-import.sh").display()));
    assert!(String::from_utf8_lossy(&import.stderr).contains("archived 19 of 19 fields"), "{import:?}");
    let sorted = |out: std::process::Output| {
        let mut lines: Vec<String> =
            String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.starts_with('{')).map(String::from).collect();
        lines.sort();
        lines
    };
    assert_eq!(sorted(run("$F list --all --porcelain")), sorted(run("$FDB fdb-list --all --minimum-keys= --porcelain")));
    let imported = run("$F retrieve --all -o -").stdout;
    let written: Vec<u8> = ["ens.grib", "oper.grib", "sfc.grib"].iter().flat_map(|f| std::fs::read(work.path().join(f)).unwrap()).collect();
    assert_eq!(messages(&imported), messages(&written), "the same bytes, message for message");
}

/// `fieldstore copy --source` an FDB5 config brings its databases, read in place, into
/// another store: the same bytes, message for message; run again, it copies nothing; FDB5's
/// files are left as they were.
#[test]
fn copy_brings_fdb5_databases_read_in_place_into_another_store() {
    let _fdb5 = FDB5.lock().unwrap_or_else(|p| p.into_inner());
    let (work, fdb_root, tool) = fdb5_work();
    let own = work.path().join("own");
    std::fs::write(
        work.path().join("own.yaml"),
        format!("catalogue: {{type: posix, root: {0}, create: true}}\nstore: {{type: posix, root: {0}, create: true}}\n", own.display()),
    )
    .unwrap();
    let run = |script: &str| {
        let out = shell(work.path(), env!("CARGO_BIN_EXE_fieldstore"), &tool).args(["-c", script]).output().unwrap();
        assert!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    };
    run("$F sample --stream enfo --type pf --numbers 1/to/3 --steps 0/6 --fill-bits 12 -o ens.grib && \
         $F sample --steps 0/to/24/by/12 --params 130/131 --levels 500/850 -o oper.grib && $FDB fdb-write ens.grib oper.grib");
    let written = fdb5_files(&fdb_root);
    let summary = |stdout: Vec<u8>| -> serde_json::Value { serde_json::from_slice(&stdout).unwrap() };
    let copied = summary(run("$F copy --source fdb5.yaml --target own.yaml --all --json"));
    assert_eq!((copied["fields"].as_u64(), copied["copied"].as_u64(), copied["verified"].as_u64()), (Some(18), Some(18), Some(18)));
    let written_bytes: Vec<u8> = ["ens.grib", "oper.grib"].iter().flat_map(|f| std::fs::read(work.path().join(f)).unwrap()).collect();
    assert_eq!(messages(&run("$F --config own.yaml retrieve --all -o -")), messages(&written_bytes), "the same bytes, message for message");
    let again = summary(run("$F copy --source fdb5.yaml --target own.yaml --all --json"));
    assert_eq!((again["copied"].as_u64(), again["already_there"].as_u64()), (Some(0), Some(18)), "{again}");
    assert_eq!(fdb5_files(&fdb_root), written, "no file of FDB5's databases was changed, made or removed");
}

/// A work directory with an FDB5 root `fdb` in it, FDB5's config `fdb5.yaml` for that root
/// ([`fdb5_config`]), and the command that runs FDB5's tools on it (`$FDB` in the scripts).
fn fdb5_work() -> (tempfile::TempDir, std::path::PathBuf, String) {
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let work = tempfile::tempdir().unwrap();
    let fdb_root = work.path().join("fdb");
    let tool = format!("bash {} {}", project.join("scripts/fdb5-tool.sh").display(), fdb_root.display());
    fdb5_config(work.path(), &fdb_root, "fdb5.yaml");
    (work, fdb_root, tool)
}

/// bash in `work`, with `$F` running fieldstore (`fieldstore`: the command) and `$FDB` FDB5's
/// tools (`tool`), and no config from the environment; add `-c SCRIPT`.
fn shell(work: &Path, fieldstore: &str, tool: &str) -> Command {
    let mut command = Command::new("bash");
    command.current_dir(work).env("F", fieldstore).env("FDB", tool).env_remove("FIELDSTORE_CONFIG");
    command
}

/// The GRIB messages in `bytes`, sorted: what two stores hold compared whatever their order.
fn messages(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut all: Vec<Vec<u8>> =
        fieldstore::grib::scan(bytes, "output").unwrap().iter().map(|m| bytes[m.offset..m.offset + m.length].to_vec()).collect();
    all.sort();
    all
}

/// Every file of FDB5's databases under `root` (fieldstore's own subdirectory left out): its
/// path, size and modification time, to show fieldstore changed none.
fn fdb5_files(root: &Path) -> Vec<(std::path::PathBuf, u64, std::time::SystemTime)> {
    let mut files = Vec::new();
    for db in std::fs::read_dir(root).unwrap().map(|e| e.unwrap().path()).filter(|p| p.join("toc").exists()) {
        for file in std::fs::read_dir(&db).unwrap().map(|e| e.unwrap()) {
            let meta = file.metadata().unwrap();
            files.push((file.path(), meta.len(), meta.modified().unwrap()));
        }
    }
    files.sort();
    files
}

/// Writes, in `work`, FDB5's config `name` for `root` with the schema of
/// scripts/fdb5-tool.sh and ../shared/peer/fdb5-peer.sh (beside it, as `schema`).
fn fdb5_config(work: &Path, root: &Path, name: &str) -> std::path::PathBuf {
    let schema = "param: Param; step: Step; date: Date; levelist: Double; expver: Expver; time: Time; number: Integer;\n\
                  [ class, expver, stream, date, time, domain? [ type, levtype [ step, number?, levelist?, param ]]]\n";
    std::fs::write(work.join("schema"), schema).unwrap();
    let roots = format!("spaces:\n- handler: Default\n  regex: \".*\"\n  roots:\n  - path: {}\n", root.display());
    let config = work.join(name);
    std::fs::write(&config, format!("type: local\nengine: toc\nschema: {}\n{roots}", work.join("schema").display())).unwrap();
    config
}

/// An FDB5 config names FDB5's roots: its databases are read in place, field for field as
/// FDB5 lists and retrieves them, beside fieldstore's own data sets (kept in the roots'
/// `fieldstore` subdirectory), whose fields are the newer; nothing in FDB5's databases is
/// ever changed, and a wipe of one is refused.
#[test]
fn an_fdb5_config_reads_fdb5_databases_in_place_beside_fieldstores_own() {
    let _fdb5 = FDB5.lock().unwrap_or_else(|p| p.into_inner());
    let (work, fdb_root, tool) = fdb5_work();
    let fieldstore = format!("{} --config fdb5.yaml", env!("CARGO_BIN_EXE_fieldstore"));
    let run = |script: &str, ok: bool| {
        let out = shell(work.path(), &fieldstore, &tool).args(["-c", script]).output().unwrap();
        assert_eq!(out.status.success(), ok, "{script}: {}", String::from_utf8_lossy(&out.stderr));
        out
    };
    run("$F sample --steps 0/to/24/by/12 --params 130/131 --levels 500/850 -o oper.grib && $FDB fdb-write oper.grib", true);
    let written = fdb5_files(&fdb_root);
    let sorted = |out: std::process::Output| {
        let mut lines: Vec<String> =
            String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.starts_with('{')).map(String::from).collect();
        lines.sort();
        lines
    };
    let listed = sorted(run("$F list --all --porcelain", true));
    assert_eq!(listed.len(), 12);
    assert_eq!(listed, sorted(run("$FDB fdb-list --all --minimum-keys= --porcelain", true)));
    assert_eq!(messages(&run("$F retrieve --all -o -", true).stdout), messages(&std::fs::read(work.path().join("oper.grib")).unwrap()));

    // One field archived again through fieldstore: its own, the newer.
    run("$F sample --steps 12 --params 131 --levels 850 --fill-bits 12 -o new.grib && $F archive new.grib", true);
    assert!(fdb_root.join("fieldstore").is_dir(), "fieldstore's own data set is in the root's subdirectory");
    assert_eq!(sorted(run("$F list --all --porcelain", true)), listed, "the same fields");
    let full = String::from_utf8(run("$F list --all --full", true).stdout).unwrap();
    assert_eq!(full.lines().filter(|l| l.ends_with("(superseded)")).count(), 1, "{full}");
    let request = "class=od,expver=0001,stream=oper,date=20231201,time=1200,type=fc,levtype=pl,step=12,levelist=850,param=131";
    let read = run(&format!("$F retrieve {request} -o -"), true).stdout;
    assert_eq!(read, std::fs::read(work.path().join("new.grib")).unwrap(), "fieldstore's own field wins");
    assert_eq!(fdb5_files(&fdb_root), written, "reading and archiving beside changed no file of FDB5's databases");

    // FDB5's own locks are honoured: a database its fdb-lock closed to retrieves is not read.
    let dataset = "class=od,expver=0001,stream=oper,date=20231201,time=1200";
    run(&format!("$FDB fdb-lock --retrieve {dataset}"), true);
    let locked = run(&format!("$F retrieve {request} -o -"), false);
    assert!(String::from_utf8_lossy(&locked.stderr).contains("is locked for retrieve"), "{locked:?}");
    run(&format!("$FDB fdb-unlock --retrieve {dataset}"), true);
    // And the flags of FDB5's roots: a root closed to listing is passed over.
    let text = std::fs::read_to_string(work.path().join("fdb5.yaml")).unwrap();
    let path_line = format!("  - path: {}\n", fdb_root.display());
    std::fs::write(work.path().join("no-list.yaml"), text.replace(&path_line, &format!("{path_line}    list: false\n"))).unwrap();
    let closed = run(&format!("{} --config no-list.yaml list {dataset}", env!("CARGO_BIN_EXE_fieldstore")), true);
    assert!(String::from_utf8_lossy(&closed.stderr).contains("is locked for list"), "{closed:?}");
    let before = fdb5_files(&fdb_root);

    let refused = run("$F wipe class=od,expver=0001,stream=oper,date=20231201,time=1200 --doit", false);
    assert!(String::from_utf8_lossy(&refused.stderr).contains("never changes"), "{refused:?}");
    // A wipe of part of the data set would hide FDB5's index with fieldstore's own: refused
    // before either is hidden.
    let refused = run(&format!("$F wipe {dataset},type=fc,levtype=pl --doit"), false);
    assert!(String::from_utf8_lossy(&refused.stderr).contains("nothing was hidden"), "{refused:?}");
    assert_eq!(String::from_utf8(run("$F list --all --full", true).stdout).unwrap(), full, "fieldstore's own index is still there");
    assert_eq!(fdb5_files(&fdb_root), before, "no file of FDB5's databases was changed, made or removed");
    // Archiving into a database FDB5 made, with a config whose schema has changed since: the
    // database's own schema is used, so that the two are read as one data set.
    run("$F sample --date 20231202 -o other-day.grib && $FDB fdb-write other-day.grib", true);
    let before = fdb5_files(&fdb_root);
    let schema = std::fs::read_to_string(work.path().join("schema")).unwrap();
    std::fs::write(work.path().join("schema2"), format!("# changed since\n{schema}")).unwrap();
    std::fs::write(work.path().join("schema2.yaml"), text.replace("/schema\n", "/schema2\n")).unwrap();
    run(&format!("{} --config schema2.yaml archive other-day.grib", env!("CARGO_BIN_EXE_fieldstore")), true);
    let listed = run(&format!("$F list --full {}", dataset.replace("20231201", "20231202")), true);
    let listed = String::from_utf8(listed.stdout).unwrap();
    assert_eq!(listed.lines().filter(|l| l.ends_with("(superseded)")).count(), 1, "FDB5's field and fieldstore's: {listed}");
    assert_eq!(fdb5_files(&fdb_root), before, "no file of FDB5's databases was changed, made or removed");
}

/// While FDB5 writes a database (its C API, one flush per step of 100 fields), fieldstore
/// reads it in place: every listing holds whole flushed steps, never fewer fields than the
/// one before, and at the end all of them.
#[test]
fn a_database_fdb5_is_writing_is_read_in_whole_flushed_steps() {
    let _fdb5 = FDB5.lock().unwrap_or_else(|p| p.into_inner());
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let work = tempfile::tempdir().unwrap();
    let fdb_root = work.path().join("fdb");
    std::fs::create_dir_all(&fdb_root).unwrap();
    let config = fdb5_config(work.path(), &fdb_root, "fdb5.yaml");
    let (steps, per_step) = (300, 100);
    let mut writer = Command::new("bash")
        .arg(project.join("../shared/peer/fdb5-peer.sh"))
        .arg(&fdb_root)
        .args([steps.to_string(), "10".into(), "10".into(), "1024".into(), "1".into()])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let listed = || {
        let out = Command::new(env!("CARGO_BIN_EXE_fieldstore"))
            .arg("--config")
            .arg(&config)
            .args(["list", "class=od,expver=0001,stream=enfo,date=20231201,time=1200", "--porcelain"])
            .env_remove("FIELDSTORE_CONFIG")
            .output()
            .unwrap();
        // Before FDB5 made the database, nothing matches: not an error either.
        assert!(out.status.success(), "list while FDB5 writes: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.starts_with('{')).count()
    };
    let (mut last, mut midway) = (0, 0);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while writer.try_wait().unwrap().is_none() && std::time::Instant::now() < deadline {
        let count = listed();
        assert!(count % per_step == 0 && count >= last, "{count} fields listed after {last}: not whole flushed steps");
        midway += usize::from(count > 0 && count < steps * per_step);
        last = count;
    }
    if writer.try_wait().unwrap().is_none() {
        let _ = writer.kill();
        panic!("FDB5's writer did not end within the deadline");
    }
    assert!(writer.wait().unwrap().success(), "FDB5's writer failed");
    assert_eq!(listed(), steps * per_step);
    assert!(midway > 0, "no listing while FDB5 was writing");
}

/// The web catalogue on FDB5's databases read in place: per keyword and value, the number of
/// fields FDB5's own `fdb-list` lists; a field FDB5 wrote drawn as a map; nothing of FDB5's
/// changed.
#[test]
fn the_web_catalogue_counts_fdb5_databases_as_fdb5_lists_them() {
    let _fdb5 = FDB5.lock().unwrap_or_else(|p| p.into_inner());
    let (work, fdb_root, tool) = fdb5_work();
    let fieldstore = format!("{} --config fdb5.yaml", env!("CARGO_BIN_EXE_fieldstore"));
    let run = |script: &str| {
        let out = shell(work.path(), &fieldstore, &tool).args(["-c", script]).output().unwrap();
        assert!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    };
    run("$F sample --stream enfo --type pf --numbers 1/to/3 --steps 0/6 --fill-bits 12 -o ens.grib && \
         $F sample --steps 0/to/24/by/12 --params 130/131 --levels 500/850 --fill-bits 12 -o oper.grib && $FDB fdb-write ens.grib oper.grib");
    let written = fdb5_files(&fdb_root);
    let one = "class=od,expver=0001,stream=enfo,date=20231201,time=1200,type=pf,levtype=pl,step=6,number=2,levelist=500,param=130";
    run(&format!(
        "(timeout 120 $F serve --listen 127.0.0.1:0 > listening.txt 2> serve.log & echo $! > serve.pid); \
         for i in $(seq 200); do [ -s listening.txt ] && break; sleep 0.05; done; a=$(cut -d' ' -f3 listening.txt); \
         curl -fsS \"http://$a/v1/web/browse?limit=1000\" -o browse.json && curl -fsS \"http://$a/v1/web/map?request={one}\" -o map.png; \
         status=$?; kill $(cat serve.pid); exit $status"
    ));
    let catalogue: serde_json::Value = serde_json::from_slice(&std::fs::read(work.path().join("browse.json")).unwrap()).unwrap();
    // FDB5's listing, counted per keyword and value.
    let listed = String::from_utf8(run("$FDB fdb-list --all --minimum-keys= --porcelain")).unwrap();
    let mut counts: std::collections::BTreeMap<(String, String), u64> = std::collections::BTreeMap::new();
    let mut fields = 0;
    for line in listed.lines().filter(|l| l.starts_with('{')) {
        fields += 1;
        for pair in line.split(['{', '}', ',']).filter(|p| p.contains('=')) {
            let (k, v) = pair.split_once('=').unwrap();
            if !v.is_empty() {
                *counts.entry((k.to_string(), v.to_string())).or_default() += 1;
            }
        }
    }
    assert_eq!((catalogue["fields"].as_u64(), fields), (Some(18), 18), "{catalogue}");
    let mut shown = std::collections::BTreeMap::new();
    for keyword in catalogue["keywords"].as_array().unwrap() {
        for value in keyword["values"].as_array().unwrap() {
            shown.insert(
                (keyword["keyword"].as_str().unwrap().to_string(), value["value"].as_str().unwrap().to_string()),
                value["fields"].as_u64().unwrap(),
            );
        }
    }
    assert_eq!(shown, counts, "the catalogue's counts are FDB5's listing's");
    assert!(std::fs::read(work.path().join("map.png")).unwrap().starts_with(b"\x89PNG"));
    assert_eq!(fdb5_files(&fdb_root), written, "no file of FDB5's databases was changed, made or removed");
}
