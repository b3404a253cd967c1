//! Extraction from a store's fields: every value as ecCodes decodes the field retrieved
//! whole; a field's packing read once, later extractions reading only what they need.

use fieldstore_core::config::Config;
use fieldstore_core::{Key, Request};
use fieldstore_extract::{Extractor, Range};
use fieldstore_grib::Handle;

fn field(packing_type: &str, step: usize) -> Vec<u8> {
    let mut h = Handle::from_message_copy(&fieldstore_grib::sample_message("reduced_gg_pl_320_grib2", &[]).unwrap()).unwrap();
    let n = h.get_long("numberOfDataPoints").unwrap() as usize;
    let values: Vec<f64> = (0..n).map(|i| 250.0 + step as f64 + 30.0 * (i as f64 * 0.01).sin()).collect();
    h.set_long("bitsPerValue", 16).unwrap();
    h.set_double_array("values", &values).unwrap();
    h.set_string("packingType", packing_type).unwrap();
    h.message().unwrap()
}

fn key(step: usize, param: &str) -> Key {
    Key::parse(&format!("class=od,expver=0001,stream=oper,date=20240101,time=0000,domain=g,type=fc,levtype=sfc,step={step},param={param}"))
        .unwrap()
}

/// A POSIX catalogue and store under `root`.
fn posix_store(root: &std::path::Path) -> fieldstore::FieldStore {
    let yaml =
        format!("catalogue: {{type: posix, root: {0}, create: true}}\nstore: {{type: posix, root: {0}, create: true}}\n", root.display());
    fieldstore::open(&Config::parse("test", &yaml).unwrap()).unwrap()
}

#[test]
fn a_request_s_fields_give_ecodes_values_reading_little_once_their_packing_is_known() {
    let root = tempfile::tempdir().unwrap();
    let fs = posix_store(root.path());
    let mut messages = Vec::new();
    for step in 0..4 {
        for (param, packing) in [("167", "grid_simple"), ("165", "grid_ccsds")] {
            let message = field(packing, step);
            fs.archive(&key(step, param), &message).unwrap();
            messages.push(((step, param), message));
        }
    }
    fs.flush().unwrap();
    let request =
        Request::parse("class=od,expver=0001,stream=oper,date=20240101,time=0000,domain=g,type=fc,levtype=sfc,step=0/1/2/3,param=167/165")
            .unwrap();
    let ranges = [Range::new(0, 3), Range::new(300_000, 300_001)];
    let extractor = Extractor::new();
    let first = extractor.extract(&fs, &request, &ranges).unwrap();
    let again = extractor.extract(&fs, &request, &ranges).unwrap();
    let listed: Vec<String> = first.iter().map(|f| f.field.identifier().to_string()).collect();
    assert_eq!(first.len(), 8, "{listed:?}");
    for (one, two) in first.iter().zip(&again) {
        let step: usize = one.field.element.get("step").unwrap().parse().unwrap();
        let param = one.field.element.get("param").unwrap();
        let message = &messages.iter().find(|((s, p), _)| *s == step && *p == param).unwrap().1;
        let h = Handle::from_message(message).unwrap();
        let mut all = vec![0.0; h.get_size("values").unwrap()];
        h.get_double_array("values", &mut all).unwrap();
        assert_eq!(one.extraction.values, vec![all[0..3].to_vec(), all[300_000..300_001].to_vec()], "step {step} param {param}");
        assert_eq!(two.extraction.values, one.extraction.values);
        // The first read the whole field for its packing; the second only the values' bytes.
        assert!(one.extraction.bytes_read >= message.len() as u64);
        assert!(two.extraction.bytes_read < message.len() as u64 / 20, "step {step} param {param}: {} bytes", two.extraction.bytes_read);
    }
    let none = extractor.extract(&fs, &Request::parse("class=od,expver=0002").unwrap(), &ranges).unwrap_err();
    assert_eq!(none.kind(), fieldstore_core::ErrorKind::NotFound, "{none}");
}

#[test]
fn kept_packings_let_a_new_extractor_read_little_and_stale_or_damaged_ones_cost_only_time() {
    let root = tempfile::tempdir().unwrap();
    let fs = posix_store(root.path());
    let simple = field("grid_simple", 0);
    fs.archive(&key(0, "167"), &simple).unwrap();
    fs.archive(&key(0, "165"), &field("grid_ccsds", 0)).unwrap();
    fs.flush().unwrap();
    let request = Request::parse("class=od,expver=0001,stream=oper,date=20240101,time=0000,domain=g,type=fc,levtype=sfc,step=0").unwrap();
    let ranges = [Range::new(10, 12)];

    // Packings learnt by an extraction are held in memory only: a scan still keeps them.
    let extractor = Extractor::new();
    extractor.extract(&fs, &request, &ranges).unwrap();
    let kept = extractor.keep_packings(&fs, &request, &mut |_, _| {}).unwrap();
    assert_eq!((kept.fields, kept.learnt, kept.already_kept, kept.side_objects), (2, 2, 0, 1), "{kept:?}");
    assert_eq!(extractor.keep_packings(&fs, &request, &mut |_, _| {}).unwrap().already_kept, 2, "kept now");
    let again = Extractor::new().keep_packings(&fs, &request, &mut |_, _| {}).unwrap();
    assert_eq!((again.learnt, again.already_kept, again.side_objects, again.bytes_read), (0, 2, 0, 0), "{again:?}");

    // A damaged side object beside the good one is passed over.
    let dataset = fs.list(&request, Default::default()).unwrap().fields[0].dataset.clone();
    let side = fs.side_objects().unwrap();
    side.put_side_object(&dataset, &fieldstore_core::unique::unique_object_name("damaged"), b"FSPI\x01 not packings").unwrap();
    let first = Extractor::new().extract(&fs, &request, &ranges).unwrap();
    for f in &first {
        // Simple packing: the points' bytes; CCSDS: the RSI holding them (8 KiB).
        assert!(f.extraction.bytes_read < 10_000, "{}: {} bytes for 2 points", f.field.identifier(), f.extraction.bytes_read);
    }

    // The field archived again is at another location: its kept packing no longer applies.
    fs.archive(&key(0, "167"), &field("grid_simple", 7)).unwrap();
    fs.flush().unwrap();
    let after = Extractor::new().extract(&fs, &Request::parse(&format!("{request},param=167")).unwrap(), &ranges).unwrap();
    assert!(after[0].extraction.bytes_read >= simple.len() as u64, "learnt again from the new message");
    assert_ne!(after[0].extraction.values, first.iter().find(|f| f.field.element.get("param") == Some("167")).unwrap().extraction.values);
}

#[test]
fn several_requests_are_answered_in_their_order_as_one_by_one() {
    let root = tempfile::tempdir().unwrap();
    let fs = posix_store(root.path());
    for step in 0..12 {
        fs.archive(&key(step, "167"), &field("grid_simple", step)).unwrap();
    }
    fs.flush().unwrap();
    let dataset = "class=od,expver=0001,stream=oper,date=20240101,time=0000,domain=g,type=fc,levtype=sfc";
    let requests: Vec<(Request, Vec<Range>)> = [("11", 0), ("3", 100), ("0/1/2/3/4/5/6/7/8/9/10/11", 7), ("5", 421_119)]
        .into_iter()
        .map(|(steps, first)| (Request::parse(&format!("{dataset},step={steps},param=167")).unwrap(), vec![Range::new(first, first + 1)]))
        .collect();
    let extractor = Extractor::new();
    let together = extractor.extract_each(&fs, &requests).unwrap();
    assert_eq!(together.iter().map(Vec::len).collect::<Vec<_>>(), [1, 1, 12, 1]);
    for ((request, ranges), answer) in requests.iter().zip(&together) {
        let alone = Extractor::new().extract(&fs, request, ranges).unwrap();
        let values = |fields: &[fieldstore_extract::FieldExtraction]| -> Vec<(String, Vec<Vec<f64>>)> {
            fields.iter().map(|f| (f.field.identifier().to_string(), f.extraction.values.clone())).collect()
        };
        assert_eq!(values(answer), values(&alone), "{request}");
    }
    let mut with_missing = requests.clone();
    with_missing.insert(1, (Request::parse(&format!("{dataset},step=99,param=167")).unwrap(), vec![Range::new(0, 1)]));
    let e = extractor.extract_each(&fs, &with_missing).unwrap_err();
    assert_eq!(e.kind(), fieldstore_core::ErrorKind::NotFound, "{e}");
}
