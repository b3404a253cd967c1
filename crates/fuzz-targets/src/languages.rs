//! Targets for the text users write: schemas, MARS requests (parsed, expanded and answered by a
//! real store), configs and keys.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::Read;

use fieldstore_core::factory::Section;
use fieldstore_core::types::KeywordType;
use fieldstore_core::{Config, FieldStore, Key, ListOptions, Request, Schema};
use fieldstore_posix::{naming, PosixCatalogue, PosixStore};

/// The schema parser; a schema it accepts can split keys made of its own keywords.
pub fn schema(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(schema) = Schema::parse("fuzz", text) else { return };
    let keywords: Vec<&str> = schema.keywords().into_iter().collect();
    let key = Key::from_pairs(keywords.iter().map(|k| (*k, "1")));
    if let Ok(split) = schema.split(&key) {
        let parts = [&*split.dataset, &*split.collocation, &split.element];
        for (keyword, _) in parts.iter().flat_map(|part| part.iter()) {
            assert!(keywords.contains(&keyword), "split gave keyword {keyword} the schema does not name");
        }
    }
    let _ = schema.paths().count();
}

/// A small store every request is asked against: the default schema, with `FIELDS` fields.
struct Fixture {
    _root: tempfile::TempDir,
    fs: FieldStore,
    /// Each field's identifier (as printed) and bytes.
    stored: BTreeMap<String, Vec<u8>>,
}

const FIELDS: &[&str] = &[
    "class=od,expver=0001,stream=oper,date=20231201,time=1200,type=fc,levtype=sfc,step=0,param=167",
    "class=od,expver=0001,stream=oper,date=20231201,time=1200,type=fc,levtype=sfc,step=6,param=167",
    "class=od,expver=0001,stream=oper,date=20231201,time=1200,type=fc,levtype=pl,step=6,levelist=500,param=130",
    "class=od,expver=0001,stream=oper,date=20231202,time=0000,type=an,levtype=sfc,step=0,param=2t",
    "class=od,expver=abcd,stream=enfo,date=20231201,time=1200,type=pf,levtype=sfc,step=12,number=3,param=167",
];

impl Fixture {
    fn new() -> Fixture {
        fieldstore_grib::install_param_resolver();
        let root = tempfile::tempdir().expect("a temporary directory");
        let catalogue = Box::new(PosixCatalogue::new(root.path()));
        let store = Box::new(PosixStore::new(root.path()));
        let fs = FieldStore::new(Schema::default_schema(), catalogue, store);
        for (i, text) in FIELDS.iter().enumerate() {
            fs.archive(&Key::parse(text).expect("fixture keys parse"), format!("field {i}").as_bytes()).expect("fixture fields archive");
        }
        fs.flush().expect("fixture flushes");
        // Identifiers as the store answers them (canonical values: param=2t is 167).
        let stored = FIELDS
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let matches =
                    fs.list(&Request::parse(text).expect("fixture keys are requests"), ListOptions::default()).expect("fixture lists");
                let [field] = matches.fields.as_slice() else { panic!("{text} lists {} fields", matches.fields.len()) };
                (field.identifier().to_string(), format!("field {i}").into_bytes())
            })
            .collect();
        Fixture { _root: root, fs, stored }
    }
}

thread_local! {
    static FIXTURE: RefCell<Option<Fixture>> = const { RefCell::new(None) };
}

/// The request parser and expander, and every command a request drives (dry-run for the
/// destructive ones): whatever they answer names only stored fields, with their own bytes.
pub fn request(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(requests) = Request::parse_many(text) else { return };
    let types: Vec<KeywordType> = KeywordType::known_names().split(", ").filter_map(KeywordType::from_name).collect();
    FIXTURE.with_borrow_mut(|fixture| {
        let Fixture { fs, stored, .. } = fixture.get_or_insert_with(Fixture::new);
        for request in &requests {
            for keyword in request.keywords() {
                for ty in &types {
                    let _ = request.values(keyword, *ty);
                }
            }
            if let Ok(matches) = fs.list(request, ListOptions::default()) {
                for field in &matches.fields {
                    assert!(stored.contains_key(&field.identifier().to_string()), "listed {} which was never stored", field.identifier());
                }
            }
            let _ = fs.axes(request);
            let _ = fs.stats(request);
            let _ = fs.where_is(request);
            let _ = fs.wipe(request, false);
            let _ = fs.purge(request, false);
            retrieved_fields_are_the_stored_ones(fs, stored, request);
        }
    });
}

fn retrieved_fields_are_the_stored_ones(fs: &FieldStore, stored: &BTreeMap<String, Vec<u8>>, request: &Request) {
    let Ok((mut reader, _)) = fs.retrieve(request) else { return };
    let expected: Vec<u8> = reader.fields().iter().flat_map(|f| stored[&f.identifier().to_string()].clone()).collect();
    let mut got = Vec::new();
    reader.read_to_end(&mut got).expect("stored fields read back");
    assert!(got == expected, "retrieve returned other bytes than were stored");
}

/// The config loader, and every backend's typed sections read from what it loaded.
pub fn config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(config) = Config::parse("fuzz", text) else { return };
    for (name, backend) in [("catalogue", &config.catalogue), ("store", &config.store)] {
        let section = Section { name, config: backend, source: "fuzz" };
        if let Ok(posix) = section.typed::<fieldstore_posix::config::PosixCatalogueConfig>() {
            assert!(section.typed::<fieldstore_posix::config::PosixStoreConfig>().is_ok() || backend.options.contains_key("commit"));
            if let Some(root) = &posix.root {
                let _ = posix.commit.mode(root);
            }
            if let Some(spaces) = posix.spaces {
                let _ = fieldstore_posix::placement::Placement::from_spaces(spaces, posix.subdirectory.as_deref());
            }
        }
        if let Ok(rados) = section.typed::<fieldstore_rados::config::RadosConfig>() {
            assert!(rados.timeout_seconds.get() > 0, "a zero timeout is refused when read");
        }
        if let Ok(daos) = section.typed::<fieldstore_daos::config::DaosConfig>() {
            assert!(daos.oid_batch.get() > 0, "an empty batch is refused when read");
        }
    }
}

/// Keys as given on the command line, and the file names made of their values: a name never
/// leaves its directory, and keys with different values never share one (but for `_`, the
/// name of both an empty key and the value `_`: a data set directory's key file tells them
/// apart).
pub fn key(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (a, b) = text.split_once('\n').unwrap_or((text, ""));
    let names: Vec<(Key, String)> =
        [a, b].iter().filter_map(|t| Key::parse(t).ok()).filter_map(|k| naming::dataset_dir_name(&k).ok().map(|n| (k, n))).collect();
    for (_, name) in &names {
        assert!(!name.is_empty() && !name.contains('/') && !name.starts_with('.') && !name.contains('\0'), "escaping name {name:?}");
    }
    if let [(ka, na), (kb, nb)] = names.as_slice().iter().filter(|(_, n)| n != "_").collect::<Vec<_>>().as_slice() {
        let (va, vb): (Vec<&str>, Vec<&str>) = (ka.values().collect(), kb.values().collect());
        assert!((na == nb) == (va == vb), "keys {ka} and {kb} named {na} and {nb}");
    }
}
