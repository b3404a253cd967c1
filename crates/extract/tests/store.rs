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

#[test]
fn a_request_s_fields_give_ecodes_values_reading_little_once_their_packing_is_known() {
    let root = tempfile::tempdir().unwrap();
    let yaml = format!(
        "catalogue: {{type: posix, root: {0}, create: true}}\nstore: {{type: posix, root: {0}, create: true}}\n",
        root.path().display()
    );
    let fs = fieldstore::open(&Config::parse("test", &yaml).unwrap()).unwrap();
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
