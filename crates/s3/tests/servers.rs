//! The S3 backend against the real servers `scripts/test-services.sh` starts (Ceph's RADOS
//! gateway and SeaweedFS): what a store opened on a bad section says, within bounded time,
//! and that no output ever holds the secret. The conformance suite covers the store itself
//! (crates/conformance/tests/pairings.rs).

use std::time::{Duration, Instant};

use fieldstore_core::error::ErrorKind;
use fieldstore_core::factory::Section;
use fieldstore_testing::{s3_server, S3Server, S3_TEST_BUCKET};

/// The variables of each test server.
const SERVERS: [&str; 2] = ["FIELDSTORE_TEST_S3_", "FIELDSTORE_TEST_S3_SEAWEED_"];

/// Opens an S3 store on `yaml`'s section: its error, and how long it took to come.
fn open_error(yaml: &str) -> (fieldstore_core::Error, Duration) {
    let config =
        fieldstore_core::Config::parse("test", &format!("catalogue: {{type: posix, root: /nonexistent}}\nstore: {yaml}\n")).unwrap();
    let section = Section { name: "store", config: &config.store, source: &config.source };
    let started = Instant::now();
    let open = fieldstore_s3::FACTORY.store.unwrap();
    let error = open(&section).err().expect("opening should fail");
    (error, started.elapsed())
}

fn section(server: &S3Server, endpoint: &str, bucket: &str, secret: &str) -> String {
    format!(
        "{{type: s3, endpoint: '{endpoint}', bucket: {bucket}, access_key_id: '{}', secret_access_key: '{secret}', connect_timeout_seconds: 2, timeout_seconds: 5, retries: 1}}",
        server.access_key
    )
}

#[test]
fn bad_sections_fail_clearly_in_bounded_time_and_never_show_the_secret() {
    for prefix in SERVERS {
        let Some(server) = s3_server(prefix) else { continue };
        let cases = [
            (
                "missing bucket",
                section(&server, &server.endpoint, "no-such-bucket-here", &server.secret_key),
                ErrorKind::NotFound,
                "no such bucket",
            ),
            (
                "bad secret",
                section(&server, &server.endpoint, S3_TEST_BUCKET, "not-the-secret-at-all"),
                ErrorKind::BadConfig,
                "refused the credentials",
            ),
            (
                "unreachable",
                section(&server, "http://127.0.0.1:9", S3_TEST_BUCKET, &server.secret_key),
                ErrorKind::Unavailable,
                "cannot reach",
            ),
        ];
        for (what, yaml, kind, says) in cases {
            let (error, took) = open_error(&yaml);
            let text = format!("{error} {error:?}");
            assert_eq!(error.kind(), kind, "{prefix} {what}: {text}");
            assert!(text.contains(says) && text.contains("bucket"), "{prefix} {what}: {text}");
            for secret in [&server.secret_key, "not-the-secret-at-all"] {
                assert!(!text.contains(secret), "{prefix} {what}: the secret is in {text}");
            }
            assert!(took < Duration::from_secs(15), "{prefix} {what}: {took:?}");
        }
    }
}

#[test]
fn a_section_without_credentials_names_where_they_may_come_from() {
    let Some(server) = s3_server(SERVERS[0]) else { return };
    let yaml = format!("{{type: s3, endpoint: '{}', bucket: {S3_TEST_BUCKET}}}", server.endpoint);
    // Only when the environment has none either.
    if std::env::var_os("AWS_ACCESS_KEY_ID").is_some() {
        return;
    }
    let (error, _) = open_error(&yaml);
    assert_eq!(error.kind(), ErrorKind::BadConfig);
    assert!(error.to_string().contains("AWS_ACCESS_KEY_ID"), "{error}");
}

#[test]
fn a_catalogue_section_refuses_the_store_s_in_flight_limits() {
    let yaml = format!("{{type: s3, endpoint: 'http://127.0.0.1:9', bucket: {S3_TEST_BUCKET}, writes_in_flight: 4}}");
    let config =
        fieldstore_core::Config::parse("test", &format!("catalogue: {yaml}\nstore: {{type: posix, root: /nonexistent}}\n")).unwrap();
    let section = Section { name: "catalogue", config: &config.catalogue, source: &config.source };
    let error = (fieldstore_s3::FACTORY.catalogue.unwrap())(&section).err().expect("refused");
    assert_eq!(error.kind(), ErrorKind::BadConfig);
    assert!(error.to_string().contains("catalogue.writes_in_flight (type 's3'): only a store"), "{error}");
}
