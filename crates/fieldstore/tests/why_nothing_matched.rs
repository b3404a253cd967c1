//! "Why nothing matched" never denies what is stored: over random stores and requests, every
//! reason that says a value is absent from a level (the store's data sets, a data set, an
//! index's axis) is checked against the identifiers archived.

mod common;

use common::*;
use fieldstore::{Key, ListOptions};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// Per keyword varied, the values stored and the values only asked.
const VARIED: [(&str, &[&str], &[&str]); 5] = [
    ("class", &["od", "rd"], &["mc"]),
    ("expver", &["0001", "0002"], &["0003"]),
    ("date", &["20231201", "20231202"], &["20231203"]),
    ("step", &["0", "6"], &["12"]),
    ("param", &["167", "130"], &["131"]),
];

fn identifier(values: &[&str]) -> Key {
    let [class, expver, date, step, param] = values else { unreachable!() };
    Key::parse(&format!("class={class},expver={expver},stream=oper,date={date},time=1200,type=fc,levtype=sfc,step={step},param={param}"))
        .unwrap()
}

/// Whether a stored identifier has every pair of `within` and, for each asked keyword, one of
/// its values.
fn holds(stored: &[Key], within: &[(String, String)], asked: &[(String, String)]) -> bool {
    stored.iter().any(|id| {
        within.iter().all(|(k, v)| id.get(k) == Some(v))
            && asked.iter().all(|(keyword, values)| values.split('/').any(|v| id.get(keyword) == Some(v)))
    })
}

/// `keyword=value` pairs.
type Pairs = Vec<(String, String)>;

fn pairs(text: &str) -> Pairs {
    text.split(',').filter(|p| !p.is_empty()).map(|p| p.split_once('=').map(|(k, v)| (k.into(), v.into())).unwrap()).collect()
}

/// A place written `{data set}{collocation}`, as its pairs.
fn place(text: &str) -> Pairs {
    pairs(&text.trim_matches(|c| c == '{' || c == '}').replace("}{", ","))
}

/// The claim of absence a reason makes: (where, asked values), or `None` for a reason of
/// another kind.
fn claim(reason: &str) -> Option<(Pairs, Pairs)> {
    let first_word = |s: &str| s.split(' ').next().unwrap().to_string();
    if let Some(rest) = reason.strip_prefix("no data set has ") {
        return Some((Vec::new(), pairs(&first_word(rest))));
    }
    if let Some(rest) = reason.strip_prefix("no data set of ") {
        let (within, rest) = rest.split_once(" has ").unwrap();
        return Some((pairs(within), pairs(&first_word(rest))));
    }
    if let Some(rest) = reason.strip_prefix("no field of ") {
        let (within, rest) = rest.split_once(" has ").unwrap();
        return Some((place(within), pairs(&first_word(rest))));
    }
    if let Some((asked, rest)) = reason.split_once(" is not on the axis ") {
        return Some((place(rest.split_once(" in ").unwrap().1), pairs(asked)));
    }
    if let Some((asked, rest)) = reason.split_once(" is not stored in data set ") {
        return Some((place(rest.split_once(' ').unwrap().0), pairs(asked)));
    }
    None
}

#[test]
fn no_reason_claims_a_stored_value_is_absent() {
    let mut rng = StdRng::seed_from_u64(38);
    let mut claims_checked = 0;
    for store in 0..12 {
        let dir = tempfile::tempdir().unwrap();
        let fs = open_at(dir.path());
        let mut stored = Vec::new();
        for _ in 0..rng.gen_range(1..12) {
            let values: Vec<&str> = VARIED.iter().map(|(_, kept, _)| *kept.choose(&mut rng).unwrap()).collect();
            let id = identifier(&values);
            fs.archive(&id, id.to_string().as_bytes()).unwrap();
            stored.push(id);
        }
        fs.flush().unwrap();
        for _ in 0..40 {
            let mut asked = Vec::new();
            for (keyword, kept, only_asked) in VARIED {
                if rng.gen_bool(0.6) {
                    let all: Vec<&str> = kept.iter().chain(only_asked).copied().collect();
                    let count = rng.gen_range(1..=2);
                    let picked: Vec<&str> = all.choose_multiple(&mut rng, count).copied().collect();
                    asked.push(format!("{keyword}={}", picked.join("/")));
                }
            }
            let text = asked.join(",");
            let matches = fs.list(&request(&text), ListOptions::default()).unwrap();
            let Some(why) = matches.explanation else {
                assert!(!matches.fields.is_empty(), "store {store}, {text}: nothing matched and no reason");
                continue;
            };
            assert!(matches.fields.is_empty(), "store {store}, {text}: fields and a reason");
            for reason in why.trim_start_matches("for these reasons:").lines().map(str::trim).filter(|l| !l.is_empty()) {
                if let Some((within, asked)) = claim(reason) {
                    claims_checked += 1;
                    assert!(
                        !holds(&stored, &within, &asked),
                        "store {store} ({}), request {text}: the reason '{reason}' denies a stored value",
                        stored.iter().map(Key::to_string).collect::<Vec<_>>().join("; ")
                    );
                }
            }
        }
    }
    assert!(claims_checked > 100, "only {claims_checked} claims were checked");
}
