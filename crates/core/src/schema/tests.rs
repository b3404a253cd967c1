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
    // Optional with default: domain?g
    let wave = schema.split(&key("class=od,expver=1,stream=oper,date=20231201,time=0,type=fc,levtype=sfc,step=6,param=167")).unwrap();
    assert_eq!(wave.dataset.get("domain"), Some("g"));
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
    assert_eq!(an.dataset.to_string(), "class=od,expver=0001,stream=oper,date=20231201,time=0000,domain=g");
    assert_eq!(an.element.to_string(), "step=0,levelist=,param=167");
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
