//! The properties every catalogue/store pairing must have: FDB5's semantics
//! (docs/consistency.md) as fieldstore promises them. Each is a function of a [`Site`] (fresh storage
//! of one pairing) that panics, naming what failed, when the pairing lacks the property.

use std::io::Read;

use fieldstore::api::OverlayOptions;
use fieldstore::{ControlAction, ErrorKind, Key, ListOptions};

use crate::support::*;
use crate::{Grouping, Site};

/// Every message of a GRIB corpus (GRIB1 and 2; sfc, pl, ml; deterministic and ensemble)
/// archived from one file comes back byte for byte under its MARS keys.
pub fn grib_corpus_round_trips_byte_for_byte(site: &Site) {
    let fs = site.open();
    let corpus = corpus();
    let mut all = Vec::new();
    for f in &corpus {
        all.extend_from_slice(&f.bytes);
    }
    assert_eq!(fieldstore::archive_grib(&fs, &all, "corpus", |_| {}).unwrap(), corpus.len());
    fs.flush().unwrap();
    let reader = site.open();
    for f in &corpus {
        let id = fieldstore::grib::mars_keys(&f.bytes).unwrap();
        let got = retrieve(&reader, &id.to_string()).unwrap_or_else(|e| panic!("{}: {e}", f.what));
        assert!(got == f.bytes, "{}: retrieved bytes differ", f.what);
    }
    let listed = reader.list(&request(""), ListOptions::default()).unwrap();
    assert_eq!(listed.fields.len(), corpus.len());
}

/// Nothing archived is visible before the flush; a field archived again replaces the old one
/// only at its flush; purge then hides and reclaims what it can.
pub fn nothing_is_visible_before_flush_and_replacement_waits_for_it(site: &Site) {
    let key = Key::parse("class=od,expver=0001,stream=oper,date=20231201,time=1200,type=fc,levtype=sfc,step=6,param=167").unwrap();
    let writer = site.open();
    writer.archive(&key, b"first").unwrap();
    let reader = site.open();
    assert!(retrieve(&reader, "class=od").is_err(), "unflushed data must not be visible");
    writer.flush().unwrap();
    assert_eq!(retrieve(&reader, "class=od,step=6").unwrap(), b"first");

    writer.archive(&key, b"second").unwrap();
    assert_eq!(retrieve(&reader, "class=od,step=6").unwrap(), b"first", "old field stays until the new one is flushed");
    writer.flush().unwrap();
    assert_eq!(retrieve(&reader, "class=od,step=6").unwrap(), b"second");

    let full = reader.list(&request("class=od"), ListOptions { include_superseded: true, ..ListOptions::default() }).unwrap();
    assert_eq!(full.fields.iter().map(|f| f.superseded).collect::<Vec<_>>(), [false, true]);
    let dry = reader.purge(&request("class=od"), false).unwrap();
    // A data file shares both versions, so the old bytes cannot be removed alone; an
    // object per field, or per flush, can be.
    let reclaimable = if site.grouping == Grouping::Writer { (1, 0, 5) } else { (1, 1, 0) };
    assert_eq!((dry.superseded_fields, dry.removed.len(), dry.unreclaimable_bytes), reclaimable, "{}", site.name);
    assert_eq!(reader.stats(&request("class=od")).unwrap().superseded_fields, 1, "a dry run changes nothing");
    let done = reader.purge(&request("class=od"), true).unwrap();
    assert_eq!(done.indexes_masked, 1);
    let stats = reader.stats(&request("class=od")).unwrap();
    assert_eq!((stats.fields, stats.superseded_fields, stats.indexes), (1, 0, 1));
    assert_eq!(retrieve(&reader, "class=od,step=6").unwrap(), b"second");
}

/// Lists come in numeric order of values, and requests are read as MARS reads them.
pub fn results_come_in_numeric_order_and_requests_canonicalise(site: &Site) {
    let fs = site.open();
    for step in ["12", "6", "120", "0"] {
        for level in ["1000", "50", "500"] {
            let id = Key::parse(&format!(
                "class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=pl,step={step},levelist={level},param=130.128"
            ))
            .unwrap();
            fs.archive(&id, &payload(&id, 32)).unwrap();
        }
    }
    fs.flush().unwrap();
    let listed = fs.list(&request("class=od,param=t"), ListOptions::default()).unwrap();
    let order: Vec<(String, String)> =
        listed.fields.iter().map(|f| (f.element.get("step").unwrap().into(), f.element.get("levelist").unwrap().into())).collect();
    let expected: Vec<(String, String)> =
        ["0", "6", "12", "120"].iter().flat_map(|s| ["50", "500", "1000"].iter().map(move |l| (s.to_string(), l.to_string()))).collect();
    assert_eq!(order, expected);
    let some = fs
        .list(
            &request("retrieve,class=od,expver=0001,time=1200,date=2023-12-01,step=0/to/12/by/6,levelist=500.0,param=130"),
            ListOptions::default(),
        )
        .unwrap();
    assert_eq!(some.fields.len(), 3);
    let (axes, _) = fs.axes(&request("class=od")).unwrap();
    assert_eq!(axes["step"], ["0", "6", "12", "120"]);
    assert_eq!(axes["levelist"], ["50", "500", "1000"]);
    // Retrieve gives the request's order (FDB5's): steps outside levels, each as written.
    let (reader, _) = fs.retrieve(&request("class=od,param=t,step=120/0,levelist=500/to/50/by/-450")).unwrap();
    let order: Vec<String> = reader.fields().iter().map(|f| f.element.display_non_empty()).collect();
    let expected = ["step=120,levelist=500", "step=120,levelist=50", "step=0,levelist=500", "step=0,levelist=50"];
    assert_eq!(order, expected.map(|e| format!("{e},param=130")));
}

/// A request that matches nothing says why (unknown keyword, no such data set, value).
pub fn empty_results_say_why(site: &Site) {
    let mut fs = site.open();
    let why = |fs: &fieldstore::FieldStore, r: &str| fs.list(&request(r), ListOptions::default()).unwrap().explanation.unwrap_or_default();
    assert!(why(&mut fs, "class=od").contains("no data sets"));
    let id = Key::parse("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step=6,param=167").unwrap();
    fs.archive(&id, b"x").unwrap();
    fs.flush().unwrap();
    let typo = fs.list(&request("clas=od"), ListOptions::default()).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(typo.contains("unknown keyword 'clas'"), "{typo}");
    assert!(why(&mut fs, "class=rd").contains("no data set has class=rd"));
    assert!(why(&mut fs, "class=od,step=99").contains("step=99 is not on the axis (stored: 6)"));
    assert!(why(&mut fs, "class=od,number=3").contains("keyword 'number' is not used"));
    assert!(why(&mut fs, "class=od,levtype=pl").contains("levtype=pl is not stored"));
    // A value no data set's type can read is an error naming it, as in FDB5.
    let unreadable = fs.list(&request("class=od,date=notadate"), ListOptions::default()).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(unreadable.contains("bad value \"notadate\" for keyword 'date'"), "{unreadable}");
    assert!(fs.list(&request("class=od,step=6"), ListOptions::default()).unwrap().explanation.is_none());
}

/// Every key value `archive` accepts round-trips: printable ASCII but MARS' separators and
/// quotes (a few characters a value, so each character is in some data set's name), upper case
/// and the longest value, each through archive, list, retrieve, purge and wipe, where object
/// stores escape some of them in object names (`~` as `%7E` on S3 lost every field); values it
/// refuses (Unicode, separators, spaces, too long) are refused by keyword.
pub fn every_value_archive_accepts_round_trips(site: &Site) {
    let fs = site.open();
    let storable: Vec<u8> = (0x21u8..0x7f).filter(|c| !b",=/\\\"'`".contains(c)).collect();
    let mut values: Vec<String> = storable.chunks(12).map(|chunk| format!("v{}", String::from_utf8_lossy(chunk))).collect();
    values.push("l".repeat(fieldstore::key::MAX_VALUE_LEN));
    for value in &values {
        let dataset = format!("class=\"{value}\",expver=1,stream=oper,date=20231201,time=12");
        let id =
            Key::parse(&format!("class={value},expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step=0,param=167")).unwrap();
        fs.archive(&id, b"first").unwrap_or_else(|e| panic!("{}: archive {value:?}: {e}", site.name));
        fs.flush().unwrap();
        fs.archive(&id, b"second").unwrap();
        fs.flush().unwrap();
        let context = format!("{}: class={value:?}", site.name);
        let listed = fs.list(&request(&dataset), ListOptions::default()).unwrap();
        assert_eq!(listed.fields.len(), 1, "{context}: {:?}", listed.explanation);
        assert_eq!(retrieve(&fs, &dataset).as_deref(), Ok(&b"second"[..]), "{context}");
        fs.purge(&request(&dataset), true).unwrap_or_else(|e| panic!("{context}: purge: {e}"));
        assert_eq!(retrieve(&fs, &dataset).as_deref(), Ok(&b"second"[..]), "{context}: after the purge");
        let wiped = fs.wipe(&request(&dataset), true).unwrap_or_else(|e| panic!("{context}: wipe: {e}"));
        assert_eq!(wiped.datasets.len(), 1, "{context}");
        assert!(site.open().list(&request(&dataset), ListOptions::default()).unwrap().fields.is_empty(), "{context}: after the wipe");
    }
    for refused in ["é", "a b", "a\tb", "a\"b", &"l".repeat(fieldstore::key::MAX_VALUE_LEN + 1)] {
        let id = Key::from_pairs(
            [("class", refused), ("expver", "1"), ("stream", "oper"), ("date", "20231201"), ("time", "12")].into_iter().chain([
                ("type", "fc"),
                ("levtype", "sfc"),
                ("step", "0"),
                ("param", "167"),
            ]),
        );
        let err = fs.archive(&id, b"x").unwrap_err().to_string();
        assert!(err.contains("'class'"), "{}: {refused:?}: {err}", site.name);
    }
}

/// Archive errors name the keyword at fault, and key values never escape their place in
/// paths or object names.
pub fn archive_errors_name_the_culprit_and_keep_values_in_their_place(site: &Site) {
    let fs = site.open();
    let err = |k: &str| fs.schema().split(&Key::parse(k).unwrap()).unwrap_err().to_string();
    assert!(err("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,param=167").contains("keyword 'step' is missing"));
    assert!(err("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step=1,param=167,bogus=1").contains("bogus"));
    assert!(err("class=..\\x,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step=1,param=167").contains("class"));
    let dots = Key::parse("class=..,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step=1,param=167").unwrap();
    fs.archive(&dots, b"dots").unwrap();
    fs.flush().unwrap();
    for entry in std::fs::read_dir(site.dir()).unwrap().chain(std::fs::read_dir(site.dir().join("root")).into_iter().flatten()) {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.starts_with('.') || name.starts_with(".wiped"), "{name}");
    }
    assert_eq!(retrieve(&fs, "class=..").unwrap(), b"dots");
    assert!(site.dir().parent().unwrap().read_dir().unwrap().all(|e| e.unwrap().file_name() != "0001"));
}

/// Locks refuse the actions they lock; wipe removes exactly the data sets or collocations
/// named; `where` describes where a data set lives.
pub fn locks_wipe_and_where(site: &Site) {
    let fs = site.open();
    for (stream, levtype) in [("oper", "sfc"), ("oper", "pl"), ("wave", "sfc")] {
        let id = Key::parse(&format!(
            "class=od,expver=1,stream={stream},date=20231201,time=12,type=fc,levtype={levtype},step=0,levelist=1,param=167"
        ))
        .unwrap();
        let id = if levtype == "sfc" { Key::from_pairs(id.iter().filter(|(k, _)| *k != "levelist")) } else { id };
        fs.archive(&id, &payload(&id, 100)).unwrap();
    }
    fs.flush().unwrap();
    fs.control(&request("class=od,stream=oper"), &[ControlAction::Archive, ControlAction::List], Some(true)).unwrap();
    let other = site.open();
    let id = Key::parse("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step=6,param=167").unwrap();
    assert!(other.archive(&id, b"x").unwrap_err().to_string().contains("locked for archive"));
    let listed = other.list(&request("class=od"), ListOptions::default()).unwrap();
    assert_eq!(listed.fields.len(), 1, "the locked data set is not listed");
    assert!(other.list(&request("class=od,stream=oper"), ListOptions::default()).unwrap().explanation.unwrap().contains("locked for list"));
    assert_eq!(retrieve(&other, "class=od,stream=oper,levtype=pl").unwrap().len(), 100, "retrieve is not locked");
    other.control(&request("class=od,stream=oper"), &ControlAction::ALL, Some(false)).unwrap();

    assert!(other.wipe(&request("stream=oper"), true).unwrap_err().to_string().contains("class"));
    let dry = other.wipe(&request("class=od,expver=1,stream=oper,levtype=pl"), false).unwrap();
    assert_eq!((dry.collocations.len(), dry.removed.len(), dry.done), (1, 1, false));
    assert_eq!(other.list(&request("class=od"), ListOptions::default()).unwrap().fields.len(), 3);
    other.wipe(&request("class=od,expver=1,stream=oper,levtype=pl"), true).unwrap();
    assert_eq!(other.list(&request("class=od"), ListOptions::default()).unwrap().fields.len(), 2);
    let wiped = other.wipe(&request("class=od,expver=1,stream=wave"), true).unwrap();
    assert_eq!(wiped.datasets.len(), 1);
    assert_eq!(other.list(&request("class=od"), ListOptions::default()).unwrap().fields.len(), 1);
    assert!(other.wipe(&request("class=od,expver=1,step=0"), false).unwrap_err().to_string().contains("element keyword 'step'"));
    let w = other.where_is(&request("class=od")).unwrap();
    assert_eq!(w.len(), 1);
    for expected in &site.catalogue_described_by {
        assert!(w[0].catalogue.contains(expected.as_str()), "{}: {}", site.name, w[0].catalogue);
    }
}

/// A data set is read and written with the schema it was created with, whatever the
/// configured one.
pub fn datasets_keep_the_schema_they_were_created_with(site: &Site) {
    let schema_a = site.dir().join("a.schema");
    std::fs::write(&schema_a, "param: Param; step: Step;\n[ class, expver, stream, date, time [ type, levtype [ step, param ]]]\n")
        .unwrap();
    let fs = site.open_with_schema(&schema_a);
    let id = Key::parse("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step=6,param=167").unwrap();
    fs.archive(&id, b"a").unwrap();
    fs.flush().unwrap();
    // Opened later with the default schema (which adds domain?g), the data set is still read
    // with its own schema.
    let default = site.open();
    let listed = default.list(&request("class=od,step=6"), ListOptions::default()).unwrap();
    assert_eq!(listed.fields.len(), 1, "{:?}", listed.explanation);
    assert_eq!(listed.fields[0].dataset.get("domain"), None);
}

/// A handle kept open sees a data set wiped, and created again, as a new handle would.
pub fn a_long_lived_reader_follows_wipes_and_recreation(site: &Site) {
    let id = |step: u32| {
        Key::parse(&format!("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step={step},param=167")).unwrap()
    };
    let writer = site.open();
    writer.archive(&id(0), b"old").unwrap();
    writer.flush().unwrap();
    let reader = site.open();
    assert_eq!(retrieve(&reader, "class=od").unwrap(), b"old");
    reader.wipe(&request("class=od,expver=1"), true).unwrap();
    assert!(retrieve(&reader, "class=od").is_err());
    let again = site.open();
    again.archive(&id(6), b"new").unwrap();
    again.flush().unwrap();
    assert_eq!(retrieve(&reader, "class=od").unwrap(), b"new", "the reader's cached view must notice the new TOC");
}

/// A handle that wipes a data set it wrote into archives into it again: what it archived
/// before the wipe is wiped too, what it archives after is stored.
pub fn a_handle_archives_again_into_a_data_set_it_wiped(site: &Site) {
    let id = |step: u32| {
        Key::parse(&format!("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step={step},param=167")).unwrap()
    };
    let fs = site.open();
    fs.archive(&id(0), b"flushed").unwrap();
    fs.flush().unwrap();
    fs.archive(&id(6), b"not flushed").unwrap();
    fs.wipe(&request("class=od,expver=1,stream=oper,date=20231201,time=12"), true).unwrap();
    assert!(retrieve(&fs, "class=od").is_err(), "{}: the wipe removed what the handle archived, flushed or not", site.name);
    fs.archive(&id(12), b"after").unwrap();
    fs.flush().unwrap();
    assert_eq!(retrieve(&fs, "class=od").unwrap(), b"after", "{}", site.name);
    assert_eq!(retrieve(&site.open(), "class=od").unwrap(), b"after", "{}", site.name);
}

/// Retrieve and wipe locks hold; adjacent fields are read in merged reads.
pub fn retrieve_and_wipe_locks_and_merged_reads(site: &Site) {
    let fs = site.open();
    for step in 0..10 {
        for param in [130, 131, 132] {
            let id = Key::parse(&format!(
                "class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=pl,step={step},levelist=500,param={param}"
            ))
            .unwrap();
            fs.archive(&id, &payload(&id, 4096)).unwrap();
        }
    }
    fs.flush().unwrap();
    // Fields archived in key order sit back to back in one data file or pack: one read for
    // all (one read per field where each has an object of its own).
    let (reader, _) = fs.retrieve(&request("class=od")).unwrap();
    let reads = if site.grouping == Grouping::Field { 30 } else { 1 };
    assert_eq!((reader.fields().len(), reader.storage_reads()), (30, reads), "{}", site.name);
    drop(reader);
    let (reader, _) = fs.retrieve(&request("class=od,param=131")).unwrap();
    assert_eq!((reader.fields().len(), reader.storage_reads()), (10, 10), "gaps between fields split reads");
    drop(reader);

    fs.control(&request("class=od"), &[ControlAction::Retrieve, ControlAction::Wipe], Some(true)).unwrap();
    let other = site.open();
    assert!(retrieve(&other, "class=od").unwrap_err().contains("locked for retrieve"));
    assert_eq!(other.list(&request("class=od"), ListOptions::default()).unwrap().fields.len(), 30, "list is not locked");
    assert!(other.wipe(&request("class=od,expver=1"), true).unwrap_err().to_string().contains("locked for wipe"));
    other.control(&request("class=od"), &[ControlAction::Retrieve, ControlAction::Wipe], Some(false)).unwrap();
    assert_eq!(retrieve(&other, "class=od").unwrap().len(), 30 * 4096);

    // A dataset locked for everything can still be found, shown and unlocked.
    other.control(&request("class=od"), &ControlAction::ALL, Some(true)).unwrap();
    let status = other.control(&request("class=od"), &[], None).unwrap();
    assert_eq!(status.len(), 1);
    assert_eq!(status[0].1.len(), 4);
    other.control(&request("class=od"), &ControlAction::ALL, Some(false)).unwrap();
    assert!(other.control(&request("class=od"), &[], None).unwrap()[0].1.is_empty());
    assert_eq!(other.where_is(&request("class=od")).unwrap().len(), 1);
}

/// Many requests resolved at once (`resolve_each`, one pass over the catalogue; one-field
/// requests of the same keywords as their union) answer each as resolving it alone does: the
/// same fields in the same order, the same data sets, reasons where nothing matched and values
/// not found, locks and overlays included, at every depth; a request that cannot be read fails
/// alone, naming what is wrong.
pub fn many_requests_resolved_at_once_answer_as_each_alone(site: &Site) {
    let fs = site.open();
    for (expver, date) in [(1, 20231201), (1, 20231202), (2, 20231201)] {
        for step in [0, 6, 12] {
            for param in [130, 131] {
                let id = Key::parse(&format!(
                    "class=od,expver={expver},stream=oper,date={date},time=12,type=fc,levtype=pl,step={step},levelist=500,param={param}"
                ))
                .unwrap();
                fs.archive(&id, &payload(&id, 100)).unwrap();
            }
        }
    }
    fs.flush().unwrap();
    fs.control(&request("class=od,expver=2"), &[ControlAction::Retrieve], Some(true)).unwrap();
    let source = fs.list(&request("class=od,expver=1,date=20231202"), ListOptions { depth: 1, ..ListOptions::default() }).unwrap().datasets
        [0]
    .clone();
    let target = Key::from_pairs(source.iter().map(|(k, v)| (k, if k == "expver" { "0003" } else { v })));
    fs.overlay(&source, &target, &OverlayOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", site.name));
    let texts = [
        "class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=pl,step=6,levelist=500,param=131",
        "class=od,expver=1,date=20231202/20231201,step=12/0,param=131/130",
        "class=od,expver=2,step=0",
        "class=od,expver=3,step=6",
        "class=od,expver=1,step=18",
        "class=rd",
        "class=od,param=130,step=0/to/12/by/6",
        "class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=pl,step=0,levelist=500,param=130",
        "class=od,stpe=0",
    ];
    // One-field requests of the same keywords (gribjump's callers give such lists), resolved
    // as their union: every field, a locked data set, an overlay, a step spelled otherwise,
    // one never stored; with and without the date (a request's fields in two data sets).
    let one_field = |date: &str| {
        let mut texts = Vec::new();
        for expver in [1, 2, 3] {
            for step in ["0", "06", "12", "18"] {
                for param in [130, 131] {
                    texts.push(format!(
                        "class=od,expver={expver},stream=oper,{date}time=12,type=fc,levtype=pl,step={step},levelist=500,param={param}"
                    ));
                }
            }
        }
        texts
    };
    let batches = [texts.iter().map(|t| t.to_string()).collect(), one_field("date=20231201,"), one_field("date=20231202,"), one_field("")];
    for texts in &batches {
        each_as_alone(site, texts);
    }
    // The requests reach what the property is about: an overlay, a lock, a value never stored,
    // a keyword no schema names (an error of that request alone).
    let requests: Vec<_> = texts.iter().map(|t| request(t)).collect();
    let at_once: Vec<_> = fs.resolve_each(&requests[2..], ListOptions::default(), Some(ControlAction::Retrieve)).unwrap();
    let [locked, overlaid, never, .., typo] = &at_once[..] else { panic!("{}: {} answers", site.name, at_once.len()) };
    let locked = locked.as_ref().unwrap();
    assert!(locked.explanation.as_deref().is_some_and(|why| why.contains("locked")), "{}: {:?}", site.name, locked.explanation);
    assert_eq!(overlaid.as_ref().unwrap().fields.len(), 2, "{}: the overlaid data set's fields", site.name);
    assert!(never.as_ref().unwrap().explanation.is_some(), "{}: step 18 is not stored", site.name);
    assert!(typo.as_ref().is_err_and(|e| e.to_string().contains("stpe")), "{}: {:?}", site.name, typo.as_ref().map(|_| ()));
    assert!(at_once[..at_once.len() - 1].iter().all(Result::is_ok), "{}: only the typo fails", site.name);
    let [.., without_date] = &batches;
    let found = fs.resolve_each(&without_date.iter().map(|t| request(t)).collect::<Vec<_>>(), ListOptions::default(), None).unwrap();
    assert!(found.iter().any(|m| m.as_ref().is_ok_and(|m| m.fields.len() == 2)), "{}: a request's fields in two data sets", site.name);
}

/// Resolves `texts` at once and each alone, at every depth, with and without an action, and
/// checks the answers equal.
fn each_as_alone(site: &Site, texts: &[String]) {
    let requests: Vec<_> = texts.iter().map(|t| request(t)).collect();
    let answer = |m: fieldstore::Result<fieldstore::api::Matches>| {
        m.map(|m| {
            let fields: Vec<_> = m.fields.iter().map(|f| (f.identifier(), f.location.clone())).collect();
            (fields, m.datasets, m.collocations, m.explanation, m.not_found)
        })
        .map_err(|e| e.to_string())
    };
    for action in [Some(ControlAction::Retrieve), None] {
        for (depth, in_request_order) in [(3, false), (3, true), (2, false), (1, false)] {
            let options = ListOptions { depth, in_request_order, ..ListOptions::default() };
            let reader = site.open();
            let at_once = reader.resolve_each(&requests, options, action).unwrap_or_else(|e| panic!("{}: {e}", site.name));
            assert_eq!(at_once.len(), requests.len());
            for ((text, request), together) in texts.iter().zip(&requests).zip(at_once) {
                let alone = reader.resolve(request, options, action);
                let what = format!("{}: {text} ({action:?}, depth {depth}, in request order: {in_request_order})", site.name);
                assert_eq!(answer(together), answer(alone), "{what}");
            }
        }
    }
}

/// Two flushes sharing some fields supersede exactly those, and nothing else.
pub fn partly_overlapping_flushes_supersede_exactly_the_shared_fields(site: &Site) {
    let fs = site.open();
    let id = |step: u32, param: u32| {
        Key::parse(&format!("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step={step},param={param}")).unwrap()
    };
    // Flush 1: steps 0-1 x params 1-2. Flush 2: steps 2-3 (disjoint). Flush 3: step 1 and 2, param 2 only.
    for (flush, fields) in [(1, vec![(0, 1), (0, 2), (1, 1), (1, 2)]), (2, vec![(2, 1), (3, 1)]), (3, vec![(1, 2), (2, 2)])] {
        for (s, p) in fields {
            fs.archive(&id(s, p), format!("flush{flush}").as_bytes()).unwrap();
        }
        fs.flush().unwrap();
    }
    let reader = site.open();
    let live = reader.list(&request("class=od"), ListOptions::default()).unwrap();
    let shown: Vec<String> =
        live.fields.iter().map(|f| format!("{}/{}", f.element.get("step").unwrap(), f.element.get("param").unwrap())).collect();
    assert_eq!(shown, ["0/1", "0/2", "1/1", "1/2", "2/1", "2/2", "3/1"]);
    assert_eq!(retrieve(&reader, "class=od,step=1,param=2").unwrap(), b"flush3");
    assert_eq!(retrieve(&reader, "class=od,step=2,param=2").unwrap(), b"flush3");
    assert_eq!(retrieve(&reader, "class=od,step=2,param=1").unwrap(), b"flush2");
    let full = reader.list(&request("class=od"), ListOptions { include_superseded: true, ..ListOptions::default() }).unwrap();
    let superseded: Vec<String> = full
        .fields
        .iter()
        .filter(|f| f.superseded)
        .map(|f| format!("{}/{}", f.element.get("step").unwrap(), f.element.get("param").unwrap()))
        .collect();
    assert_eq!(superseded, ["1/2"]);
}

/// A damaged message deep in a large GRIB file is named (offset), and nothing of the file
/// is archived.
pub fn a_bad_message_deep_in_a_large_file_is_named_and_nothing_is_archived(site: &Site) {
    let fs = site.open();
    let base: Vec<u8> = corpus().into_iter().take(2).flat_map(|f| f.bytes).collect();
    let good = &corpus()[0].bytes;
    let no_mars = fieldstore::grib::sample_message("GRIB2", &[("step", "6")]).unwrap();
    let mut file = Vec::new();
    let mut offsets = Vec::new();
    for i in 0..300 {
        offsets.push(file.len());
        file.extend_from_slice(if i == 237 {
            &no_mars
        } else if i % 2 == 0 {
            good
        } else {
            &base[good.len()..]
        });
    }
    let err = fieldstore::archive_grib(&fs, &file, "big.grib", |_| {}).unwrap_err().to_string();
    assert!(err.contains(&format!("big.grib, message 238 at byte {}", offsets[237])), "{err}");
    fs.flush().unwrap();
    assert!(fs.list(&request(""), ListOptions::default()).unwrap().fields.is_empty());
}

/// Every backend's errors carry the kind callers decide on (issue 18: typed errors).
pub fn errors_carry_their_kind(site: &Site) {
    let fs = site.open();
    let id = Key::parse("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step=6,param=167").unwrap();
    fs.archive(&id, b"x").unwrap();
    fs.flush().unwrap();
    let kind = |result: fieldstore::Result<()>| result.unwrap_err().kind();
    assert_eq!(kind(fs.list(&request("class=od,setp=1"), ListOptions::default()).map(drop)), ErrorKind::BadRequest, "{}", site.name);
    assert_eq!(kind(fs.wipe(&request("class=rd,expver=1,stream=oper,date=20231201,time=12"), true).map(drop)), ErrorKind::NotFound);
    assert_eq!(kind(fs.purge(&request("class=rd,expver=1,stream=oper,date=20231201,time=12"), true).map(drop)), ErrorKind::NotFound);
    let dataset = request("class=od,expver=1,stream=oper,date=20231201,time=12");
    fs.control(&dataset, &[fieldstore::ControlAction::Archive], Some(true)).unwrap();
    let other = site.open();
    assert_eq!(kind(other.archive(&id, b"y")), ErrorKind::Locked, "{}", site.name);
    fs.control(&dataset, &[fieldstore::ControlAction::Archive], Some(false)).unwrap();
    assert_eq!(kind(fs.archive(&Key::parse("class=od,expver=1").unwrap(), b"z")), ErrorKind::BadRequest, "{}", site.name);
}

/// A hide takes every field of a data set from readers at once, another handle's included
/// (the files kept are checked against FDB5's in `crates/cli/tests/fdb5_tools.rs`); fields
/// archived afterwards are seen as usual. A dry run changes nothing.
pub fn hide_takes_a_data_set_s_fields_from_readers_and_keeps_their_bytes(site: &Site) {
    let fs = site.open();
    let ids: Vec<Key> = (0..3)
        .map(|step| {
            Key::parse(&format!("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step={step},param=167")).unwrap()
        })
        .collect();
    for id in &ids {
        fs.archive(id, &payload(id, 100)).unwrap();
    }
    fs.flush().unwrap();
    let reader = site.open();
    let dataset = request("class=od,expver=1,stream=oper,date=20231201,time=12");
    assert!(reader.hide(&request("class=od"), true).unwrap_err().to_string().contains("hide needs 'expver'"), "{}", site.name);
    // A data set locked for wipe is not changed by a hide either.
    reader.control(&dataset, &[ControlAction::Wipe], Some(true)).unwrap();
    let locked = reader.hide(&dataset, true).unwrap_err();
    assert!(locked.to_string().contains("locked for wipe"), "{}: {locked}", site.name);
    reader.control(&dataset, &[ControlAction::Wipe], Some(false)).unwrap();
    let dry = reader.hide(&dataset, false).unwrap();
    assert_eq!((dry.len(), dry[0].fields, dry[0].done), (1, 3, false), "{}: {dry:?}", site.name);
    assert_eq!(retrieve(&reader, "class=od,step=1").unwrap().len(), 100, "a dry run hides nothing");
    let hidden = fs.hide(&dataset, true).unwrap();
    assert_eq!((hidden[0].fields, hidden[0].done), (3, true));
    assert_eq!(reader.list(&request("class=od,expver=1"), ListOptions::default()).unwrap().fields.len(), 0, "{}: hidden", site.name);
    assert!(retrieve(&reader, "class=od,step=1").is_err(), "{}: hidden from retrieve", site.name);
    assert_eq!(fs.hide(&dataset, true).unwrap()[0].fields, 0, "{}: hidden once", site.name);
    fs.archive(&ids[2], &payload(&ids[2], 150)).unwrap();
    fs.flush().unwrap();
    let listed = reader.list(&request("class=od,expver=1"), ListOptions::default()).unwrap();
    assert_eq!(listed.fields.len(), 1, "{}: archived after the hide, seen", site.name);
    assert_eq!(retrieve(&reader, "class=od,step=2").unwrap().len(), 150);
}

/// An overlay shows one data set's fields under another's key (`expver` changed), to every
/// reader at once and without copying them: fields archived into the source later are seen
/// too, the target's own fields hide the source's, a removal hides them again, and a wipe of
/// the target keeps the source whole (its files are not the target's).
pub fn overlay_shows_a_data_set_under_another_key_and_its_wipe_keeps_the_source(site: &Site) {
    let fs = site.open();
    let id = |expver: u32, step: u32| {
        Key::parse(&format!("class=od,expver={expver},stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step={step},param=167"))
            .unwrap()
    };
    for step in 0..3 {
        fs.archive(&id(1, step), &payload(&id(1, step), 100)).unwrap();
    }
    fs.flush().unwrap();
    let reader = site.open();
    let fields_of = |expver: u32| reader.list(&request(&format!("class=od,expver={expver}")), ListOptions::default()).unwrap().fields;
    // Keys as stored (canonical values).
    let source = fields_of(1)[0].dataset.as_ref().clone();
    let target = Key::from_pairs(source.iter().map(|(k, v)| (k, if k == "expver" { v.replace('1', "2") } else { v.to_string() })));
    let admin = site.open();
    let options = OverlayOptions::default();
    let stream_differs = Key::from_pairs(source.iter().map(|(k, v)| (k, if k == "stream" { "enfo" } else { v })));
    let refused = admin.overlay(&source, &stream_differs, &options).unwrap_err();
    assert!(refused.to_string().contains("key stream not allowed to differ"), "{}: {refused}", site.name);
    let done = admin.overlay(&source, &target, &options).unwrap();
    assert!(done.target_created && done.shown && done.overlaid == [source.clone()], "{}: {done:?}", site.name);
    let shown = fields_of(2);
    assert_eq!(shown.len(), 3, "{}: the source's fields under the target's key", site.name);
    assert_eq!(admin.dump(&request("class=od,expver=2"), false).unwrap()[0].overlaid, std::slice::from_ref(&source), "{}", site.name);
    assert!(shown.iter().all(|f| *f.dataset == target), "{}", site.name);
    assert_eq!(retrieve(&reader, "class=od,expver=2,step=1").unwrap(), payload(&id(1, 1), 100), "{}", site.name);
    let again = admin.overlay(&source, &target, &options).unwrap_err();
    assert_eq!(again.kind(), ErrorKind::Conflict, "{}: the target exists now: {again}", site.name);
    let forced = admin.overlay(&source, &target, &OverlayOptions { force: true, ..OverlayOptions::default() }).unwrap();
    assert_eq!(forced.overlaid, std::slice::from_ref(&source), "{}: overlaid once", site.name);
    // A collocation the target only shows is the source's to wipe.
    let shown_only = admin.wipe(&request("class=od,expver=2,stream=oper,date=20231201,time=12,type=fc,levtype=sfc"), true).unwrap_err();
    assert!(shown_only.to_string().contains("shown through an overlay"), "{}: {shown_only}", site.name);
    assert_eq!(fields_of(2).len(), 3, "{}", site.name);
    // Live: archived into the source afterwards, seen through the target; the target's own
    // fields come first.
    fs.archive(&id(1, 3), &payload(&id(1, 3), 100)).unwrap();
    fs.archive(&id(2, 0), &payload(&id(2, 0), 120)).unwrap();
    fs.flush().unwrap();
    assert_eq!(fields_of(2).len(), 4, "{}", site.name);
    assert_eq!(retrieve(&reader, "class=od,expver=2,step=0").unwrap(), payload(&id(2, 0), 120), "{}: its own field", site.name);
    let wiped = admin.wipe(&request("class=od,expver=2"), true).unwrap();
    assert_eq!(wiped.datasets, std::slice::from_ref(&target), "{}", site.name);
    assert_eq!(fields_of(1).len(), 4, "{}: a wipe of the target keeps the source", site.name);
    assert_eq!(retrieve(&reader, "class=od,expver=1,step=3").unwrap(), payload(&id(1, 3), 100), "{}", site.name);
    admin.overlay(&source, &target, &options).unwrap();
    assert_eq!(fields_of(2).len(), 4, "{}", site.name);
    let removed = admin.overlay(&source, &target, &OverlayOptions { remove: true, ..OverlayOptions::default() }).unwrap();
    assert!(!removed.shown && removed.overlaid.is_empty(), "{}: {removed:?}", site.name);
    assert_eq!(fields_of(2).len(), 0, "{}: removed", site.name);
    let not_there = admin.overlay(&source, &target, &OverlayOptions { remove: true, ..OverlayOptions::default() }).unwrap_err();
    assert!(not_there.to_string().contains("not overlaid onto it"), "{}: {not_there}", site.name);
}

/// A dump shows each data set's visible indexes, newest first, with their fields and axes
/// and, when asked, every entry with the location a retrieve reads.
pub fn dump_shows_the_indexes_readers_see(site: &Site) {
    let fs = site.open();
    for (flush, steps) in [(0, [0, 1]), (1, [1, 2])] {
        for step in steps {
            let id = Key::parse(&format!("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step={step},param=167"))
                .unwrap();
            fs.archive(&id, &payload(&id, 100 + flush)).unwrap();
        }
        fs.flush().unwrap();
    }
    let dumps = site.open().dump(&request("class=od,expver=1"), true).unwrap();
    assert_eq!(dumps.len(), 1, "{}", site.name);
    let indexes = &dumps[0].indexes;
    assert_eq!(indexes.iter().map(|i| i.fields).sum::<u64>(), 4, "{}: {indexes:?}", site.name);
    let newest = &indexes[0];
    assert_eq!(newest.axes["step"], ["1", "2"], "{}: newest first", site.name);
    let entries = newest.entries.as_ref().unwrap();
    assert!(entries.iter().all(|(_, location)| location.length == 101), "{}: {entries:?}", site.name);
    assert!(site.open().dump(&request("class=od,expver=1"), false).unwrap()[0].indexes[0].entries.is_none());
}

/// A superseded field that shares an index with live ones stays listed (`--full`), so purge
/// keeps its bytes too, on every store (with an object per field it once removed them) and the
/// report says so in the words of `stats`.
pub fn purge_keeps_the_bytes_of_what_stays_listed(site: &Site) {
    let fs = site.open();
    let key = |step: u32| {
        Key::parse(&format!("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step={step},param=167")).unwrap()
    };
    fs.archive(&key(0), b"first 0").unwrap();
    fs.archive(&key(6), b"first 6").unwrap();
    fs.flush().unwrap();
    fs.archive(&key(0), b"second 0").unwrap();
    fs.flush().unwrap();
    let report = fs.purge(&request("class=od,expver=1,stream=oper,date=20231201,time=12"), true).unwrap();
    assert_eq!((report.fields_hidden, report.fields_kept, report.removed.len(), report.bytes_freed), (0, 1, 0, 0), "{}", site.name);
    assert_eq!(report.unreclaimable_bytes, b"first 0".len() as u64, "{}", site.name);
    let full = fs.list(&request("class=od,expver=1"), ListOptions { include_superseded: true, ..ListOptions::default() }).unwrap();
    assert_eq!(full.fields.len(), 3, "{}", site.name);
    assert_eq!(fs.stats(&request("class=od,expver=1")).unwrap().superseded_fields, 1, "{}", site.name);
    assert_eq!(retrieve(&fs, "class=od,expver=1,step=6").unwrap(), b"first 6", "{}", site.name);
}

/// Compaction merges indexes and changes nothing a reader sees: the same fields, superseded
/// ones too, from the same bytes, for a reader opened before it and one opened after; a purge
/// and an archive after it work as before. Object-store catalogues merge the adjacent flushes of
/// one collocation whose fields do not overlap (docs/consistency.md, "Compaction"); POSIX has
/// nothing to merge.
pub fn compaction_changes_nothing_a_reader_sees(site: &Site) {
    let dataset = "class=od,expver=1,stream=oper,date=20231201,time=12";
    let id = |kind: &str, step: u32, param: u32| {
        let levtype = if kind == "fc" { "sfc" } else { "pl,levelist=500" };
        Key::parse(&format!("{dataset},type={kind},levtype={levtype},step={step},param={param}")).unwrap()
    };
    let fs = site.open();
    // Six flushes of type=fc (the fourth writes step 1 again), two of type=an between them.
    for flush in 0..6u32 {
        let step = if flush == 3 { 1 } else { flush };
        for param in [167, 165] {
            fs.archive(&id("fc", step, param), format!("fc{step}/{param} of flush {flush}").as_bytes()).unwrap();
        }
        if flush % 3 == 0 {
            fs.archive(&id("an", flush, 130), format!("an{flush}").as_bytes()).unwrap();
        }
        fs.flush().unwrap();
    }
    let early = site.open();
    let seen = |reader: &fieldstore::FieldStore| {
        let full = reader.list(&request(dataset), ListOptions { include_superseded: true, ..ListOptions::default() }).unwrap();
        let bytes = |f: &fieldstore::FieldEntry| {
            let mut out = Vec::new();
            reader.read_fields(vec![f.clone()]).unwrap().read_to_end(&mut out).unwrap();
            out
        };
        let mut fields: Vec<(String, bool, Vec<u8>)> =
            full.fields.iter().map(|f| (f.identifier().to_string(), f.superseded, bytes(f))).collect();
        fields.sort();
        let stats = reader.stats(&request(dataset)).unwrap();
        (fields, stats.fields, stats.superseded_fields, retrieve(reader, &format!("{dataset},type=fc,step=1,param=167")).unwrap())
    };
    let purge_report = |reader: &fieldstore::FieldStore| {
        let r = reader.purge(&request(dataset), false).unwrap();
        (r.superseded_fields, r.fields_hidden, r.fields_kept, r.indexes_masked, r.removed.len(), r.bytes_freed, r.unreclaimable_bytes)
    };
    // What `axes` shows for requests naming a step and a parameter (the compacted index's axes
    // hold values of several flushes: readers must still show only what the request finds).
    let axes_of = |reader: &fieldstore::FieldStore| {
        ["step=2", "step=1/4,param=165", "step=0/1,param=130"].map(|asked| reader.axes(&request(&format!("{dataset},{asked}"))).unwrap())
    };
    let axes_before = axes_of(&early);
    let would_purge = purge_report(&early);
    assert_eq!(would_purge.1, 2, "{}: flush 1's two fields are all superseded", site.name);
    let before = seen(&early);
    assert_eq!(before.0.len(), 14, "{}: 12 fc fields (2 superseded) and 2 an", site.name);
    assert_eq!(before.3, b"fc1/167 of flush 3", "{}", site.name);
    let report = site.open().compact(&request(dataset)).unwrap();
    let [compacted] = report.datasets.as_slice() else { panic!("{}: one data set compacted, not {:?}", site.name, report.datasets) };
    let c = &compacted.compaction;
    if site.name.trim_start_matches("served ").starts_with("posix") {
        assert_eq!((c.indexes_written, c.indexes_after), (0, c.indexes_before), "{}: {c:?}", site.name);
    } else {
        // fc, newest first: flushes 5, 4, 3 and 2 merge; flush 3 superseded all of flush 1,
        // which stays whole (for a purge to hide), and flush 0 is left alone. an: flushes 3, 0.
        assert_eq!((c.indexes_before, c.indexes_after, c.indexes_written, c.entries_written), (8, 4, 2, 10), "{}: {c:?}", site.name);
    }
    assert!(seen(&early) == before, "{}: a reader opened before the compaction sees something else after it", site.name);
    assert!(seen(&site.open()) == before, "{}: a new reader sees something else after the compaction", site.name);
    assert_eq!(purge_report(&site.open()), would_purge, "{}: a purge would reclaim something else after the compaction", site.name);
    assert_eq!(axes_of(&site.open()), axes_before, "{}: the values stored per keyword differ after the compaction", site.name);
    let again = site.open().compact(&request(dataset)).unwrap();
    assert_eq!(again.datasets[0].compaction.indexes_written, 0, "{}: a second compaction has nothing to merge", site.name);
    fs.archive(&id("fc", 2, 167), b"after").unwrap();
    fs.flush().unwrap();
    fs.purge(&request(dataset), true).unwrap();
    assert_eq!(retrieve(&early, &format!("{dataset},type=fc,step=2,param=167")).unwrap(), b"after", "{}", site.name);
    assert_eq!(retrieve(&site.open(), &format!("{dataset},type=fc,step=4,param=165")).unwrap(), b"fc4/165 of flush 4", "{}", site.name);
    assert_eq!(site.open().stats(&request(dataset)).unwrap().fields, 12, "{}", site.name);
}

/// One handle serves many threads at once (the seam the bindings rely on): writers with an
/// archiver each flush step by step while readers retrieve and a compactor compacts through
/// the same handle. Every field a reader gets is whole and checked, what a reader sees never
/// shrinks, and at the end every field of every writer is there.
pub fn one_handle_serves_writing_and_reading_threads_at_once(site: &Site) {
    const WRITERS: usize = 4;
    const STEPS: usize = 5;
    const PARAMS: [&str; 3] = ["167", "151", "165"];
    const ALL: usize = WRITERS * STEPS * PARAMS.len();
    /// A field's bytes, from its keyword values in any order.
    fn bytes_of(identifier: &Key) -> Vec<u8> {
        let mut pairs: Vec<String> = identifier.iter().map(|(k, v)| format!("{k}={v}")).collect();
        pairs.sort();
        payload(&Key::parse(&pairs.join(",")).unwrap(), 3000)
    }
    let base = "class=od,expver=0001,stream=enfo,date=20231201,time=1200,type=pf,levtype=sfc";
    let fs = site.open();
    let writing = std::sync::atomic::AtomicUsize::new(WRITERS);
    std::thread::scope(|scope| {
        for writer in 0..WRITERS {
            let mut archiver = fs.archiver().unwrap();
            let writing = &writing;
            scope.spawn(move || {
                for step in 0..STEPS {
                    for param in PARAMS {
                        let key = Key::parse(&format!("{base},number={writer},step={step},param={param}")).unwrap();
                        archiver.archive(&key, &bytes_of(&key)).unwrap();
                    }
                    archiver.flush().unwrap();
                }
                writing.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            });
        }
        // A compactor merges indexes while the writers publish and the readers read: the
        // readers' checks hold throughout. Bounded: it stops when the writers have.
        scope.spawn(|| {
            for _ in 0..200 {
                if writing.load(std::sync::atomic::Ordering::SeqCst) == 0 {
                    break;
                }
                match fs.compact(&request(base)) {
                    Ok(_) => {}
                    // Before the first flush there is no data set to compact.
                    Err(e) if e.kind() == fieldstore::error::ErrorKind::NotFound => {}
                    Err(e) => panic!("{}: compacting while writers write: {e}", site.name),
                }
            }
        });
        for _ in 0..3 {
            scope.spawn(|| {
                let mut seen = 0;
                // Bounded: the writers are done long before, and the last rounds see all.
                for _ in 0..200 {
                    let (mut reader, _) = fs.retrieve(&request(base)).unwrap();
                    let mut count = 0;
                    while let Some((entry, bytes)) = reader.next_field().unwrap() {
                        assert!(bytes == bytes_of(&entry.identifier()), "{}: {} differs", site.name, entry.identifier());
                        count += 1;
                    }
                    assert!(count >= seen, "{}: a reader saw {seen} fields, then {count}", site.name);
                    seen = count;
                    if seen == ALL {
                        break;
                    }
                }
            });
        }
    });
    assert_eq!(fs.list(&request(base), ListOptions::default()).unwrap().fields.len(), ALL, "{}", site.name);
    let fresh = site.open();
    assert_eq!(fresh.list(&request(base), ListOptions::default()).unwrap().fields.len(), ALL, "{}", site.name);
}

/// A store keeps side objects per data set whole under their names, refuses names that could
/// leave their place, and drops them with the data set's wipe (a server's clients keep none).
pub fn side_objects_are_kept_whole_and_go_with_their_wipe(site: &Site) {
    use fieldstore::unique::unique_object_name;
    let fs = site.open();
    let id = Key::parse("class=od,expver=0001,stream=oper,date=20231201,time=1200,type=fc,levtype=sfc,step=0,param=167").unwrap();
    fs.archive(&id, &payload(&id, 1000)).unwrap();
    fs.flush().unwrap();
    let side = match fs.side_objects() {
        Err(e) if site.is_served() => return assert_eq!(e.kind(), ErrorKind::Unsupported, "{}: {e}", site.name),
        other => other.unwrap_or_else(|e| panic!("{}: {e}", site.name)),
    };
    let dataset = fs.list(&request("class=od"), ListOptions::default()).unwrap().fields[0].dataset.clone();
    assert_eq!(side.side_object_names(&dataset).unwrap(), Vec::<String>::new(), "{}: none yet", site.name);
    let (a, b) = (unique_object_name("side a"), unique_object_name("side b"));
    let large: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    side.put_side_object(&dataset, &a, b"first").unwrap();
    side.put_side_object(&dataset, &b, &large).unwrap();
    for bad in ["../x", "", "0123456789abcdef0123456789abcdeg", "side/../../escape"] {
        let e = side.put_side_object(&dataset, bad, b"x").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BadRequest, "{}: {bad:?}: {e}", site.name);
        assert_eq!(side.get_side_object(&dataset, bad).unwrap_err().kind(), ErrorKind::BadRequest);
    }
    let reader = site.open();
    let read = reader.side_objects().unwrap();
    let mut names = read.side_object_names(&dataset).unwrap();
    names.sort();
    let mut expected = vec![a.clone(), b.clone()];
    expected.sort();
    assert_eq!(names, expected, "{}", site.name);
    assert_eq!(read.get_side_object(&dataset, &a).unwrap().as_deref(), Some(&b"first"[..]), "{}", site.name);
    assert!(read.get_side_object(&dataset, &b).unwrap().as_ref() == Some(&large), "{}: the large one whole", site.name);
    assert_eq!(read.get_side_object(&dataset, &unique_object_name("never")).unwrap(), None, "{}", site.name);
    // Lent (mapped on POSIX) or read, the same bytes.
    let lent = |name: &str| read.map_side_object(&dataset, name).unwrap().map(|bytes| (*bytes).as_ref().to_vec());
    assert_eq!((lent(&a), lent(&b)), (Some(b"first".to_vec()), Some(large.clone())), "{}: lent", site.name);
    assert!(lent(&unique_object_name("never")).is_none(), "{}", site.name);
    assert_eq!(read.map_side_object(&dataset, "../x").err().map(|e| e.kind()), Some(ErrorKind::BadRequest), "{}", site.name);

    reader.wipe(&request("class=od,expver=0001,stream=oper,date=20231201,time=1200"), true).unwrap();
    assert_eq!(read.side_object_names(&dataset).unwrap(), Vec::<String>::new(), "{}: wiped with the data set", site.name);
    assert_eq!(read.get_side_object(&dataset, &a).unwrap(), None, "{}", site.name);
}

/// Packings kept beside the data (`fieldstore scan`) let a new reader extract points with
/// ecCodes' values reading only a part of each field. Through a server, the server scans and
/// extracts.
pub fn kept_packings_let_a_new_reader_extract_reading_little(site: &Site) {
    a_new_reader_extracts_reading_little(site, false);
}

/// Packings kept as fields are archived (`extract: {keep_packings: true}`) do the same without
/// a scan; a message that is not GRIB is archived, its packing counted as not kept. A server
/// whose own config keeps none (a client's config does not reach it) reads each field whole
/// once, then only a part of it, for any client.
pub fn packings_kept_at_archive_let_a_new_reader_extract_reading_little(site: &Site) {
    a_new_reader_extracts_reading_little(site, true);
}

/// Two fields (simple and CCSDS packing) archived, their packings kept by `fieldstore scan` or
/// (`at_archive`) by the archiver, then extracted by a new reader.
fn a_new_reader_extracts_reading_little(site: &Site, at_archive: bool) {
    use fieldstore::extract::{Extractor, KeepPackings, Range};
    use fieldstore::grib::Handle;
    let fs = if at_archive { site.open().with_archive_hooks(std::sync::Arc::new(KeepPackings)) } else { site.open() };
    let mut messages = Vec::new();
    for (param, packing) in [("167", "grid_simple"), ("165", "grid_ccsds")] {
        let mut h = Handle::from_message_copy(&fieldstore::grib::sample_message("reduced_gg_pl_320_grib2", &[]).unwrap()).unwrap();
        let n = h.get_long("numberOfDataPoints").unwrap() as usize;
        h.set_long("bitsPerValue", 16).unwrap();
        h.set_double_array("values", &(0..n).map(|i| 270.0 + (i as f64 * 0.1).sin()).collect::<Vec<_>>()).unwrap();
        h.set_string("packingType", packing).unwrap();
        let message = h.message().unwrap();
        let id = Key::parse(&format!("class=od,expver=0001,stream=oper,date=20240101,time=0000,type=fc,levtype=sfc,step=0,param={param}"))
            .unwrap();
        fs.archive(&id, &message).unwrap();
        messages.push((param, message));
    }
    if at_archive {
        let raw = Key::parse("class=od,expver=0001,stream=oper,date=20240101,time=0000,type=fc,levtype=sfc,step=1,param=167").unwrap();
        fs.archive(&raw, b"not a GRIB message").unwrap();
    }
    fs.flush().unwrap();
    let request = request("class=od,expver=0001,stream=oper,date=20240101,time=0000,type=fc,levtype=sfc,step=0,param=167/165");
    if at_archive {
        // A server's client archives through the server, whose own config keeps packings.
        let kept = fs.archive_stats().kept_beside;
        let expected = if site.is_served() { (0, 0) } else { (2, 1) };
        assert_eq!((kept.fields, kept.not_kept), expected, "{}: {kept:?}", site.name);
        assert!(site.is_served() || kept.first_reason.is_some(), "{}: the field not kept says why", site.name);
    } else {
        let kept = Extractor::new().keep_packings(&fs, &request, &mut |_, _| {}).unwrap();
        assert_eq!((kept.fields, kept.learnt, kept.side_objects), (2, 2, 1), "{}: {kept:?}", site.name);
        let again = Extractor::new().keep_packings(&site.open(), &request, &mut |_, _| {}).unwrap();
        assert_eq!((again.already_kept, again.side_objects), (2, 0), "{}: {again:?}", site.name);
    }
    let ranges = [Range::new(0, 2), Range::new(300_000, 300_003)];
    let reader = site.open();
    let extractor = Extractor::new();
    let extracted = extractor.extract(&reader, &request, &ranges).unwrap();
    assert_eq!(extracted.len(), 2, "{}", site.name);
    for field in extracted {
        let (_, message) = messages.iter().find(|(p, _)| Some(*p) == field.field.element.get("param")).unwrap();
        let h = Handle::from_message(message).unwrap();
        let mut all = vec![0.0; h.get_size("values").unwrap()];
        h.get_double_array("values", &mut all).unwrap();
        assert_eq!(field.extraction.values, vec![all[0..2].to_vec(), all[300_000..300_003].to_vec()], "{}", site.name);
        let whole = message.len() as u64;
        let read = field.extraction.bytes_read;
        // The two ranges' spans, and what lies between them where the store reads a gap
        // rather than make another request (S3: half a megabyte; through a server, its store's).
        let at_most = whole / 20 + site.reading_merge_gap();
        let learnt_first = site.is_served() && at_archive;
        assert!(if learnt_first { read >= whole } else { read < at_most }, "{}: {read} of {whole} bytes read", site.name);
    }
    if site.is_served() {
        // Another client: the server knows the packings now.
        for field in Extractor::new().extract(&site.open(), &request, &ranges).unwrap() {
            let (whole, read) = (field.field.location.length, field.extraction.bytes_read);
            assert!(read < whole / 20 + site.reading_merge_gap(), "{}: {read} of {whole} bytes read", site.name);
        }
    }
    if at_archive && !site.is_served() {
        // A field archived later: the same extractor finds its packing in the side object the
        // writer's next flush wrote, once its listing of them is a second old.
        let (param, message) = &messages[0];
        let later =
            Key::parse(&format!("class=od,expver=0001,stream=oper,date=20240101,time=0000,type=fc,levtype=sfc,step=2,param={param}"))
                .unwrap();
        fs.archive(&later, message).unwrap();
        fs.flush().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1100));
        let later = crate::support::request(&later.to_string());
        let read = extractor.extract(&reader, &later, &ranges).unwrap()[0].extraction.bytes_read;
        assert!(read < message.len() as u64 / 20 + reader.merge_gap(), "{}: {read} bytes read for a field archived later", site.name);
    }
}

/// The web catalogue (`fieldstore serve`'s `/web/`) counts, per keyword and value, exactly the
/// fields a listing lists (a superseded field not among them), pages each keyword's values in
/// its type's order, and lists the fields themselves when they are few.
pub fn the_web_catalogue_counts_what_a_listing_lists(site: &Site) {
    use fieldstore_server::web::{catalogue, BrowseQuery};
    let fs = site.open();
    let mut identifiers = Vec::new();
    for date in ["20231201", "20231202"] {
        for step in ["12", "6", "0"] {
            for (levtype, level) in [("pl", ",levelist=500"), ("pl", ",levelist=850"), ("sfc", "")] {
                let text =
                    format!("class=od,expver=1,stream=oper,date={date},time=12,type=fc,levtype={levtype},step={step}{level},param=130");
                identifiers.push(Key::parse(&text).unwrap());
            }
        }
    }
    for id in &identifiers {
        fs.archive(id, &payload(id, 64)).unwrap();
    }
    fs.flush().unwrap();
    // One field archived again: one field, counted once.
    fs.archive(&identifiers[0], &payload(&identifiers[0], 80)).unwrap();
    fs.flush().unwrap();
    let browse = |request: &str, keyword: Option<&str>, offset: usize, limit: usize| {
        let query = BrowseQuery { request: request.into(), keyword: keyword.map(String::from), offset, limit: Some(limit) };
        catalogue(&fs, None, &query).unwrap_or_else(|e| panic!("{}: browse '{request}': {e}", site.name))
    };
    for text in ["", "class=od,levtype=pl", "class=od,date=20231202,step=6/12"] {
        let listed = fs.list(&request(text), ListOptions::default()).unwrap().fields;
        let whole = browse(text, None, 0, 1000);
        assert_eq!(whole.fields, listed.len() as u64, "{}: '{text}'", site.name);
        assert_eq!(whole.bytes, listed.iter().map(|f| f.location.length).sum::<u64>(), "{}: '{text}'", site.name);
        assert_eq!(whole.listed.len(), listed.len(), "{}: '{text}'", site.name);
        for choices in &whole.keywords {
            for choice in &choices.values {
                let having = listed.iter().filter(|f| f.identifier().get(&choices.keyword) == Some(choice.value.as_str())).count();
                assert_eq!(choice.fields, having as u64, "{}: '{text}': {}={}", site.name, choices.keyword, choice.value);
            }
        }
    }
    let whole = browse("", None, 0, 1000);
    assert_eq!((whole.fields, whole.datasets), (18, 2), "{}", site.name);
    let step = whole.keywords.iter().find(|k| k.keyword == "step").expect("step offered");
    let values = |c: &fieldstore_server::web::Choices| c.values.iter().map(|v| v.value.clone()).collect::<Vec<_>>();
    assert_eq!((values(step), step.level), (vec!["0".to_string(), "6".into(), "12".into()], 2), "{}", site.name);
    // Paged: the first two steps, then the rest asked for by keyword.
    let first = browse("", None, 0, 2);
    let page = first.keywords.iter().find(|k| k.keyword == "step").unwrap();
    assert_eq!((values(page), page.total), (vec!["0".to_string(), "6".into()], 3), "{}", site.name);
    let rest = browse("", Some("step"), 2, 2);
    assert_eq!(rest.keywords.len(), 1);
    assert_eq!(values(&rest.keywords[0]), ["12"], "{}", site.name);
    assert_eq!(rest.keywords[0].values[0].fields, 6, "{}", site.name);
}
