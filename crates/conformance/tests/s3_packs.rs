//! The S3 store's packs (`pack: true`) at their edges, on Ceph's RADOS gateway: empty fields
//! (a pack holding only those is still written; reading one asks the server nothing), fields
//! larger than a pack, and reads of a whole pack run into one large buffer with one read in
//! flight (the reader then splits a run and reads its empty tail).

use std::io::Read;

use fieldstore::{Config, Key, ListOptions};
use fieldstore_conformance::support::{payload, request};

#[test]
fn packs_hold_empty_and_large_fields_and_read_back_whole() {
    let Some(server) = fieldstore_testing::s3_server("FIELDSTORE_TEST_S3_") else { return };
    let s3 = format!(
        "type: s3, endpoint: '{}', bucket: {}, prefix: 'packs-{}/', access_key_id: '{}', secret_access_key: '{}'",
        server.endpoint,
        fieldstore_testing::S3_TEST_BUCKET,
        fieldstore_core::unique::unique_object_name(&fieldstore_core::unique::unique_suffix()),
        server.access_key,
        server.secret_key
    );
    let yaml = format!("catalogue: {{{s3}}}\nstore: {{{s3}, pack: true, reads_in_flight: 1}}\n");
    let fs = fieldstore::open(&Config::parse("packs", &yaml).unwrap()).unwrap();
    let id = |kind: &str, step: u32| {
        Key::parse(&format!("class=od,expver=1,stream=oper,date=20231201,time=12,type={kind},levtype=sfc,step={step},param=167")).unwrap()
    };
    // type=an: empty fields only; type=fc: an empty field, then fields of 6 MiB (a pack rolls
    // over at 16 MiB) and one of 17 MiB (a pack alone).
    let sizes = [0, 6 << 20, 6 << 20, 6 << 20, 17 << 20, 1000];
    for step in 0..2 {
        fs.archive(&id("an", step), b"").unwrap();
    }
    for (step, size) in sizes.iter().enumerate() {
        let key = id("fc", step as u32);
        fs.archive(&key, &if *size == 0 { Vec::new() } else { payload(&key, *size) }).unwrap();
    }
    fs.flush().unwrap();
    let listed = fs.list(&request("class=od"), ListOptions::default()).unwrap();
    assert_eq!(listed.fields.len(), 8);
    assert!(listed.fields.iter().all(|f| f.location.uri.contains("/packs/")), "every field is in a pack");

    let mut whole = Vec::new();
    for (step, size) in sizes.iter().enumerate() {
        let key = id("fc", step as u32);
        whole.extend(if *size == 0 { Vec::new() } else { payload(&key, *size) });
    }
    let (mut reader, _) = fs.retrieve(&request("class=od,type=fc")).unwrap();
    let (mut got, mut buffer) = (Vec::new(), vec![0u8; 32 << 20]);
    loop {
        let n = reader.read(&mut buffer).unwrap();
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buffer[..n]);
    }
    assert!(got == whole, "read {} bytes of {}", got.len(), whole.len());
    let (mut reader, _) = fs.retrieve(&request("class=od,type=an")).unwrap();
    let mut empty = Vec::new();
    assert_eq!((reader.read_to_end(&mut empty).unwrap(), reader.fields().len()), (0, 2));
    fs.wipe(&request("class=od,expver=1,stream=oper,date=20231201,time=12"), true).unwrap();
}
