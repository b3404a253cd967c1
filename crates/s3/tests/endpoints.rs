//! A malformed S3 endpoint is refused by name when a client is made, before any of the
//! client's threads start (`object_store` panics a thread on some URLs it cannot parse), and
//! a URL holding a password is refused without echoing it.

use fieldstore_core::error::ErrorKind;
use fieldstore_s3::client::S3Client;
use fieldstore_s3::config::S3Config;

fn client_error(endpoint: &str) -> String {
    let config: S3Config =
        serde_yaml::from_str(&format!("{{bucket: b, endpoint: '{endpoint}', access_key_id: k, secret_access_key: very-secret}}")).unwrap();
    let err = S3Client::unchecked(&config, "b", "store").err().unwrap_or_else(|| panic!("{endpoint} was accepted"));
    assert_eq!(err.kind(), ErrorKind::BadConfig, "{err}");
    err.report().to_string()
}

#[test]
fn malformed_endpoints_are_refused_by_name() {
    for (endpoint, said) in [
        ("http://127.0.0.1:99999", "is not a URL: invalid port number"),
        ("http://a b:80", "is not a URL"),
        ("http://[::1", "is not a URL"),
        ("ftp://127.0.0.1", "is not an http:// or https:// URL"),
        ("127.0.0.1:7480", "is not an http:// or https:// URL"),
        ("http://127.0.0.1:7480/?x=1", "must name a host and nothing else"),
    ] {
        let err = client_error(endpoint);
        assert!(err.contains("store (type 's3'): endpoint") && err.contains(said), "{endpoint}: {err}");
    }
}

#[test]
fn an_endpoint_with_a_password_is_refused_and_not_echoed() {
    for endpoint in ["http://user:hunter2@127.0.0.1:7480", "http://hunter2@127.0.0.1:7480", "http://user:hunter2@[::1"] {
        let err = client_error(endpoint);
        assert!(!err.contains("hunter2") && !err.contains("very-secret"), "{err}");
    }
    assert!(client_error("http://user:hunter2@127.0.0.1:7480").contains("holds a user name or password"));
}

#[test]
fn well_formed_endpoints_make_a_client() {
    for endpoint in ["http://127.0.0.1:7480", "https://[::1]:9000/", "http://localhost"] {
        let config: S3Config =
            serde_yaml::from_str(&format!("{{bucket: b, endpoint: '{endpoint}', access_key_id: k, secret_access_key: s}}")).unwrap();
        assert!(S3Client::unchecked(&config, "b", "store").is_ok(), "{endpoint}");
    }
}
