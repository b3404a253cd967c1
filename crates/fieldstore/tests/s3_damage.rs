//! Damage on the S3 catalogue is detected and named: one changed byte anywhere in an index
//! object or a log slot is a corrupt object, by name, never a field that vanishes from `list`
//! while a retrieve of it "succeeds" with nothing (index objects carried no checksum).

mod common;

use common::*;
use fieldstore::s3::client::S3Client;
use fieldstore::s3::config::S3Config;
use fieldstore::{Key, ListOptions};
use object_store::path::Path;
use object_store::{ObjectStoreExt, PutPayload};

/// The client of the S3 catalogue section of `site`'s config.
fn catalogue_client(site: &Site) -> S3Client {
    let config = fieldstore::Config::from_file(site.config()).unwrap();
    let section: S3Config = serde_yaml::from_value(serde_yaml::Value::Mapping(config.catalogue.options.clone())).unwrap();
    S3Client::unchecked(&section, section.bucket.as_deref().unwrap(), "catalogue").unwrap()
}

fn put(client: &S3Client, path: &Path, bytes: Vec<u8>) {
    let (store, path) = (client.store().clone(), path.clone());
    client.run(async move { store.put(&path, PutPayload::from(bytes)).await.map(drop) }).unwrap();
}

fn get(client: &S3Client, path: &Path) -> Vec<u8> {
    client.start_get(path.clone()).unwrap().wait().unwrap().unwrap().0.to_vec()
}

#[test]
fn a_changed_byte_in_an_index_object_or_a_log_slot_is_named_never_a_vanished_field() {
    let Some(site) = pairing("s3", "posix") else { return };
    let fs = site.open();
    for step in 0..3 {
        let id =
            Key::parse(&format!("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step={step},param=167")).unwrap();
        fs.archive(&id, &payload(&id, 100)).unwrap();
    }
    fs.flush().unwrap();
    let client = catalogue_client(&site);
    let objects = client.list_meta(client.path(&[]), None).unwrap();
    let named = |part: &str| -> Vec<Path> {
        objects.iter().map(|o| o.location.clone()).filter(|p| p.parts().any(|segment| segment.as_ref() == part)).collect()
    };
    let (indexes, slots) = (named("index"), named("log"));
    assert_eq!((indexes.len(), slots.len()), (1, 1), "one flush: one index object, one log slot");
    let mut checked = 0;
    for path in indexes.iter().chain(&slots) {
        let original = get(&client, path);
        // Every third byte (each field of the objects spans several): a new reader costs a round trip.
        for at in (0..original.len()).step_by(3) {
            let mut damaged = original.clone();
            damaged[at] ^= 0x04;
            put(&client, path, damaged);
            // A new reader each time: readers keep index objects they read (they never change).
            let outcome = site.open().list(&request("class=od,expver=1"), ListOptions::default()).map(|m| m.fields.len());
            match outcome {
                Err(e) => assert!(e.to_string().contains(path.as_ref()) || e.to_string().contains("log"), "byte {at} of {path}: {e}"),
                Ok(n) => panic!("byte {at} of {path} changed, and a listing read {n} fields without a word"),
            }
            checked += 1;
        }
        put(&client, path, original);
    }
    assert!(checked > 40, "{checked}");
    assert_eq!(site.open().list(&request("class=od,expver=1"), ListOptions::default()).unwrap().fields.len(), 3, "restored");
}
