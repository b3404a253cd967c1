use super::*;

fn key(s: &str) -> Key {
    Key::parse(s).unwrap()
}

/// FDB5's own test schema, from `../shared/fdb5/` beside the project (never copied in).
pub(crate) fn fdb5_schema_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fdb5/schema")
}

#[test]
fn fdb5_schema_file_parses_unchanged() {
    let path = fdb5_schema_path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("FDB5 test schema at {}: {e}", path.display()));
    let schema = Schema::parse(&path.display().to_string(), &text).unwrap();
    assert!(schema.rules().len() > 50, "{} rules", schema.rules().len());
    assert_eq!(schema.type_of(&[], "levelist"), KeywordType::Double);
    // A per-rule type: `date: ClimateMonthly` inside the mnth/cl rule.
    let mnth = schema.paths().find(|p| p.levels[1].predicates.iter().any(|q| q.matcher == Matcher::AnyOf(vec!["cl".into()]))).unwrap();
    assert_eq!(schema.type_of(&mnth.levels, "date"), KeywordType::ClimateMonthly);
    assert_eq!(schema.type_of(&mnth.levels[..1], "date"), KeywordType::Date);
}

#[test]
fn fdb5_schema_splits_operational_identifiers() {
    let text = std::fs::read_to_string(fdb5_schema_path()).unwrap();
    let schema = Schema::parse("fdb5", &text).unwrap();
    let split = schema
        .split(&key(
            "class=od,expver=1,stream=enfo,date=20231201,time=12,domain=g,type=pf,levtype=pl,step=12,number=13,levelist=500,param=130.128",
        ))
        .unwrap();
    assert_eq!(split.dataset.to_string(), "class=od,expver=0001,stream=enfo,date=20231201,time=1200,domain=g");
    assert_eq!(split.collocation.to_string(), "type=pf,levtype=pl");
    assert_eq!(split.element.to_string(), "step=12,quantile=,number=13,levelist=500,param=130");
    // Hidden keyword `number-` (type=me, levtype=ml) is consumed but not indexed.
    let me = schema
        .split(&key("class=od,expver=1,stream=oper,date=20231201,time=0,domain=g,type=me,levtype=ml,step=0,number=3,levelist=1,param=138"))
        .unwrap();
    assert_eq!(me.element.to_string(), "step=0,levelist=1,param=138,coeffindex=");
    // Optional with default (domain?g, timespan?none): absent is empty, as in FDB5.
    let wave = schema.split(&key("class=od,expver=1,stream=oper,date=20231201,time=0,type=fc,levtype=sfc,step=6,param=167")).unwrap();
    assert_eq!(wave.dataset.get("domain"), Some(""));
    assert_eq!(wave.collocation.get("timespan"), Some(""));
}

const SMALL: &str = "
param: Param; step: Step; time: Time; expver: Expver;
[ class=od/rd, expver, stream=!test, date, time, domain?g
    [ type=an, levtype
        [ step?0, levelist?, param, grid- ]]
    [ type, levtype
        [ date: ClimateMonthly, step, param ]]
]
";

#[test]
fn predicates_values_exclusions_defaults_hidden_and_rule_types() {
    let s = Schema::parse("small", SMALL).unwrap();
    let an = s.split(&key("class=od,expver=1,stream=oper,date=20231201,time=0,type=an,levtype=sfc,param=167,grid=1/1")).unwrap();
    assert_eq!(an.dataset.to_string(), "class=od,expver=0001,stream=oper,date=20231201,time=0000,domain=");
    assert_eq!(an.element.to_string(), "step=,levelist=,param=167");
    let err = s.split(&key("class=xx,expver=1,stream=oper,date=1,time=0,type=an,levtype=sfc,param=1")).unwrap_err();
    assert!(err.to_string().contains("class=xx is not one of od/rd"), "{err}");
    let err = s.split(&key("class=od,expver=1,stream=test,date=1,time=0,type=an,levtype=sfc,param=1")).unwrap_err();
    assert!(err.to_string().contains("stream=test is excluded"), "{err}");
    let err = s.split(&key("class=od,expver=1,stream=oper,date=1,time=0,type=fc,levtype=sfc,step=1,param=1,extra=1")).unwrap_err();
    assert!(err.to_string().contains("does not use keyword 'extra'"), "{err}");
    let err = s.split(&key("class=od,expver=1,stream=oper,date=1,time=0,type=fc,levtype=sfc,param=1")).unwrap_err();
    assert!(err.to_string().contains("keyword 'step' is missing"), "{err}");
}

#[test]
fn values_that_would_escape_a_path_are_refused_on_archive() {
    let s = Schema::parse("small", SMALL).unwrap();
    for bad in ["../etc", "a\\b", "x y"] {
        let ident = key(&format!("class=od,expver=1,stream={bad},date=1,time=0,type=an,levtype=sfc,param=1"));
        let err = s.split(&ident).unwrap_err().to_string();
        assert!(err.contains("stream"), "{bad}: {err}");
    }
}

#[test]
fn syntax_errors_give_line_and_column() {
    for (text, line, column, needle) in [
        ("[ a, b [ c [ d ]]", 1, 1, "never closed"),
        ("x: Date;\n[ a [ b [ c ]]]\n  [ d, e=]\n", 3, 10, "expected a value, found ']'"),
        ("k: NoSuchType;", 1, 4, "unknown type 'NoSuchType'"),
        ("[ a [ b [ c [ d ]]]]", 1, 13, "three levels"),
        ("[ a [ b ]]", 1, 5, "exactly one element rule"),
        ("[ a, a [ b [ c ]]]", 1, 6, "appears twice"),
        ("", 1, 1, "no rules"),
    ] {
        match Schema::parse("t", text) {
            Err(Error::SchemaSyntax { line: l, column: c, message, .. }) => {
                assert!(message.contains(needle), "{text:?}: {message}");
                assert_eq!((l, c), (line, column), "{text:?}: {message}");
            }
            other => panic!("{text:?}: expected a syntax error, got {other:?}"),
        }
    }
}

#[test]
fn default_schema_covers_common_streams_and_levtypes() {
    let s = Schema::default_schema();
    for (stream, extra) in [
        ("oper", ""),
        ("wave", ""),
        ("scda", ""),
        ("enfo", ",number=3"),
        ("waef", ",number=3"),
        ("elda", ",number=3"),
        ("mmsf", ",number=3"),
        ("xyz", ""),
    ] {
        for (levtype, level) in [
            ("sfc", ""),
            ("pl", ",levelist=500"),
            ("ml", ",levelist=137"),
            ("pv", ",levelist=2000"),
            ("pt", ",levelist=320"),
            ("sol", ",levelist=1"),
            ("o2d", ""),
        ] {
            let id =
                format!("class=od,expver=1,stream={stream},date=20231201,time=0,type=fc,levtype={levtype},step=6,param=130{level}{extra}");
            let split = s.split(&key(&id)).unwrap_or_else(|e| panic!("{id}: {e}"));
            assert_eq!(split.collocation.get("levtype"), Some(levtype));
        }
    }
}

#[test]
fn stored_keys_find_their_rule_paths() {
    let s = Schema::parse("small", SMALL).unwrap();
    let ds = key("class=od,expver=0001,stream=oper,date=20231201,time=0000,domain=g");
    assert_eq!(s.paths_for(&ds, Some(&key("type=an,levtype=sfc"))).len(), 2);
    assert_eq!(s.paths_for(&ds, Some(&key("type=fc,levtype=sfc"))).len(), 1);
    assert!(s.paths_for(&key("class=zz,expver=0001,stream=oper,date=20231201,time=0000,domain=g"), None).is_empty());
}

/// A schema where paths are chosen by element values: the first collocation rule refuses any
/// param but 130/131 at the element level, so a later path takes the rest.
const BY_ELEMENT: &str = "
step: Step; levelist: Double;
[ class, stream
    [ type=fc [ param=130/131, step, levelist?, number? ]]
    [ type [ param=!999, step, levelist?, number- ]]
    [ type [ param, step, levelist?, number ]]
]
";

#[test]
fn remembered_splits_are_exactly_the_full_splits() {
    let fdb5 = Schema::parse("fdb5", &std::fs::read_to_string(fdb5_schema_path()).unwrap()).unwrap();
    // Each schema with the keywords its identifiers carry.
    let all = "class,expver,stream,date,time,domain,type,levtype,step,levelist,param,number";
    let schemas = [
        (Schema::parse("small", SMALL).unwrap(), "class,expver,stream,date,time,domain,type,levtype,step,param"),
        (Schema::parse("by-element", BY_ELEMENT).unwrap(), "class,stream,type,step,levelist,param,number"),
        (Schema::default_schema(), all),
        (fdb5, all),
    ];
    // Values per keyword, including ones refused by listed values, exclusions, types and
    // storage checks, and empty ones (taken as absent).
    // Per keyword: values that usually split, then values that make it fail.
    let pools: [(&str, &[&str], &[&str]); 12] = [
        ("class", &["od", "rd"], &["xx"]),
        ("expver", &["1", "0001"], &["abcd"]),
        ("stream", &["oper", "enfo"], &["test"]),
        ("date", &["20231201", "20231202"], &["2023-13-01"]),
        ("time", &["0", "1200"], &["25"]),
        ("domain", &["g"], &[""]),
        ("type", &["fc", "an", "pf", "me"], &[]),
        ("levtype", &["sfc", "pl", "ml"], &[]),
        ("step", &["0", "6", "12"], &["x", ""]),
        ("levelist", &["500", "850", "1"], &[]),
        ("param", &["130", "131", "132", "138"], &["999", "a/b"]),
        ("number", &["1", "13"], &[]),
    ];
    let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let mut reused = 0;
    for (i, (schema, keywords)) in schemas.iter().enumerate() {
        let mut memo = SplitMemo::default();
        let mut splits = 0;
        let mut value: Vec<&str> = pools.iter().map(|p| p.1[0]).collect();
        let present: Vec<bool> = pools.iter().map(|p| keywords.split(',').any(|k| k == p.0)).collect();
        for _ in 0..4000 {
            // Mostly the element values change, as an archive loop does; sometimes any value.
            let changes = if next(10) == 0 { 1 + next(4) } else { 1 };
            for _ in 0..changes {
                let k = if next(4) == 0 { next(pools.len()) } else { 8 + next(4) };
                value[k] = pools[k].1[next(pools[k].1.len())];
            }
            // Now and then, for this identifier only: a value that fails, a keyword missing
            // or extra, or the keywords in another order.
            let mut this = value.clone();
            let mut here = present.clone();
            match next(40) {
                0..=2 => {
                    let k = next(pools.len());
                    if let Some(bad) = pools[k].2.first() {
                        this[k] = bad;
                    }
                }
                3 | 4 => here[next(pools.len())] ^= true,
                _ => {}
            }
            let mut order: Vec<usize> = (0..pools.len()).filter(|&k| here[k]).collect();
            if next(50) == 0 {
                let last = order.len() - 1;
                order.swap(0, last);
            }
            let id = Key::from_pairs(order.iter().map(|&k| (pools[k].0, this[k])));
            let full = schema.split(&id).map_err(|e| e.to_string());
            let remembered = schema.split_remembering(&id, &mut memo).map_err(|e| e.to_string());
            assert_eq!(remembered, full, "{id}");
            splits += usize::from(full.is_ok());
        }
        eprintln!("schema {i}: {splits} of 4000 identifiers split, {} from the memo", memo.reused);
        assert!(memo.reused as usize * 3 >= splits, "schema {i}: the memo answers often: {} of {splits}", memo.reused);
        reused += memo.reused;
    }
    assert!(reused > 3000, "{reused}");
}
