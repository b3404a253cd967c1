//! The S3 backend against the real servers `scripts/test-services.sh` starts (Ceph's RADOS
//! gateway and SeaweedFS): what a store opened on a bad section says, within bounded time,
//! and that no output ever holds the secret. The conformance suite covers the store itself
//! (crates/conformance/tests/pairings.rs).

use std::time::{Duration, Instant};

use fieldstore_core::error::ErrorKind;
use fieldstore_core::factory::Section;
use fieldstore_testing::{s3_server, S3Server, S3_TEST_BUCKET};
use object_store::ObjectStoreExt;

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
            let text = format!("{} {error:?}", error.report());
            assert_eq!(error.kind(), kind, "{prefix} {what}: {text}");
            let source = std::error::Error::source(&error);
            assert!(source.is_some_and(|s| s.is::<object_store::Error>()), "{prefix} {what}: the client's error is the source: {text}");
            assert!(text.contains(says) && text.contains("bucket"), "{prefix} {what}: {text}");
            for secret in [&server.secret_key, "not-the-secret-at-all"] {
                assert!(!text.contains(secret), "{prefix} {what}: the secret is in {text}");
            }
            assert!(took < Duration::from_secs(15), "{prefix} {what}: {took:?}");
        }
    }
}

/// A missing object is NotFound, from the client's typed error (kept as the source), whose
/// text names no bucket.
#[test]
fn a_missing_object_is_not_found() {
    for prefix in SERVERS {
        let Some(server) = s3_server(prefix) else { continue };
        let yaml = format!(
            "{{endpoint: '{}', bucket: {S3_TEST_BUCKET}, access_key_id: '{}', secret_access_key: '{}'}}",
            server.endpoint, server.access_key, server.secret_key
        );
        let config: fieldstore_s3::config::S3Config = serde_yaml::from_str(&yaml).unwrap();
        let client = fieldstore_s3::client::S3Client::connect(&config, S3_TEST_BUCKET, "test").unwrap();
        let (store, path) = (client.store().clone(), client.path(&["no-such-object-here"]));
        let error = client.run(async move { store.get(&path).await.map(drop) }).expect_err("no such object");
        assert_eq!(error.kind(), ErrorKind::NotFound, "{prefix}: {}", error.report());
        assert!(error.to_string().contains("no object") && error.to_string().contains("no-such-object-here"), "{prefix}: {error}");
        let source = std::error::Error::source(&error);
        assert!(source.is_some_and(|s| s.is::<object_store::Error>()), "{prefix}: the client's error is the source: {error:?}");
    }
}

#[test]
fn the_raw_loop_gets_whole_objects_or_a_range_of_each_and_refuses_a_range_beyond_them() {
    for prefix in SERVERS {
        let Some(server) = s3_server(prefix) else { continue };
        let yaml = format!(
            "{{endpoint: '{}', bucket: {S3_TEST_BUCKET}, access_key_id: '{}', secret_access_key: '{}'}}",
            server.endpoint, server.access_key, server.secret_key
        );
        let config: fieldstore_s3::config::S3Config = serde_yaml::from_str(&yaml).unwrap();
        let client = fieldstore_s3::client::S3Client::connect(&config, S3_TEST_BUCKET, "test").unwrap();
        // Each GET is checked for its length: whole, then only the range asked.
        fieldstore_s3::raw::put_get_loop(&client, 3, 1000, 2, None).unwrap();
        fieldstore_s3::raw::put_get_loop(&client, 3, 1000, 2, Some(10..20)).unwrap();
        let error = fieldstore_s3::raw::put_get_loop(&client, 3, 1000, 2, Some(10..1001)).unwrap_err();
        assert!(error.to_string().contains("range 10-1001 is not within an object of 1000 bytes"), "{prefix}: {error}");
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
fn a_catalogue_section_refuses_the_store_s_settings() {
    for (setting, says) in
        [("writes_in_flight: 4", "catalogue.writes_in_flight (type 's3'): only a store"), ("pack: true", "'pack' packs a store's fields")]
    {
        let yaml = format!("{{type: s3, endpoint: 'http://127.0.0.1:9', bucket: {S3_TEST_BUCKET}, {setting}}}");
        let config =
            fieldstore_core::Config::parse("test", &format!("catalogue: {yaml}\nstore: {{type: posix, root: /nonexistent}}\n")).unwrap();
        let section = Section { name: "catalogue", config: &config.catalogue, source: &config.source };
        let error = (fieldstore_s3::FACTORY.catalogue.unwrap())(&section).err().expect("refused");
        assert_eq!(error.kind(), ErrorKind::BadConfig);
        assert!(error.to_string().contains(says), "{error}");
    }
}

/// A server that ignores `If-None-Match: *` is refused by the catalogue, by name. The servers
/// here honour it, so the test puts a forwarding proxy in front of one that answers a PUT's
/// 412 (precondition failed) with 200, as such a server would.
#[test]
fn a_server_ignoring_conditional_puts_is_refused_by_the_catalogue() {
    for prefix in SERVERS {
        let Some(server) = s3_server(prefix) else { continue };
        let upstream = server.endpoint.trim_start_matches("http://").to_string();
        let proxy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = format!("http://{}", proxy.local_addr().unwrap());
        std::thread::spawn(move || {
            for client in proxy.incoming().flatten() {
                let upstream = upstream.clone();
                std::thread::spawn(move || forward_hiding_412(client, &upstream));
            }
        });
        let honest = format!(
            "{{type: s3, endpoint: '{}', bucket: {S3_TEST_BUCKET}, access_key_id: '{}', secret_access_key: '{}'}}",
            server.endpoint, server.access_key, server.secret_key
        );
        let config =
            fieldstore_core::Config::parse("test", &format!("catalogue: {honest}\nstore: {{type: posix, root: /nonexistent}}\n")).unwrap();
        let section = Section { name: "catalogue", config: &config.catalogue, source: &config.source };
        assert!((fieldstore_s3::FACTORY.catalogue.unwrap())(&section).is_ok(), "{prefix}: the server itself honours conditional PUTs");

        let hiding = honest.replace(&server.endpoint, &endpoint);
        let config =
            fieldstore_core::Config::parse("test", &format!("catalogue: {hiding}\nstore: {{type: posix, root: /nonexistent}}\n")).unwrap();
        let section = Section { name: "catalogue", config: &config.catalogue, source: &config.source };
        let error = (fieldstore_s3::FACTORY.catalogue.unwrap())(&section).err().expect("refused");
        assert_eq!(error.kind(), ErrorKind::Unsupported, "{prefix}: {error}");
        assert!(error.to_string().contains("ignores conditional PUTs"), "{prefix}: {error}");
    }
}

/// Forwards one client connection's requests to `upstream`, one connection each, and turns
/// a PUT's 412 answer into 200.
fn forward_hiding_412(mut client: std::net::TcpStream, upstream: &str) {
    use std::io::{BufRead, BufReader, Read, Write};
    let mut reader = BufReader::new(client.try_clone().unwrap());
    loop {
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n\r\n") {
            let mut line = Vec::new();
            if reader.read_until(b'\n', &mut line).unwrap_or(0) == 0 {
                return;
            }
            // Each request on a connection of its own upstream, which closes after answering.
            if !line.to_ascii_lowercase().starts_with(b"connection:") {
                head.extend_from_slice(&line);
            }
        }
        let text = String::from_utf8_lossy(&head).to_string();
        let length = text
            .lines()
            .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse::<usize>().unwrap()))
            .unwrap_or(0);
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        head.truncate(head.len() - 2);
        head.extend_from_slice(b"Connection: close\r\n\r\n");
        let mut server = std::net::TcpStream::connect(upstream).unwrap();
        server.write_all(&head).unwrap();
        server.write_all(&body).unwrap();
        let mut answer = Vec::new();
        server.read_to_end(&mut answer).unwrap();
        if text.starts_with("PUT ") && answer.starts_with(b"HTTP/1.1 412") {
            answer = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nETag: \"0\"\r\n\r\n".to_vec();
        }
        if client.write_all(&answer).is_err() {
            return;
        }
    }
}

/// The object API of the field-io and ior benchmarks, on each server.
#[test]
fn the_object_api_keeps_its_promises() {
    for prefix in SERVERS {
        let Some(server) = s3_server(prefix) else { continue };
        let yaml = format!(
            "{{endpoint: '{}', bucket: {S3_TEST_BUCKET}, prefix: 'objects-{}/', access_key_id: '{}', secret_access_key: '{}'}}",
            server.endpoint,
            std::process::id(),
            server.access_key,
            server.secret_key
        );
        let config: fieldstore_s3::config::S3Config = serde_yaml::from_str(&yaml).unwrap();
        let pool = fieldstore_s3::objects::S3Pool::new(fieldstore_s3::client::S3Client::connect(&config, S3_TEST_BUCKET, "test").unwrap());
        fieldstore_objects::conformance::check_pool(&pool, "run/../1");
    }
}

#[test]
fn a_section_names_exactly_one_bucket_layout_and_a_valid_bucket_prefix() {
    use fieldstore_s3::config::S3Config;
    let layout = |extra: &str| {
        serde_yaml::from_str::<S3Config>(&format!("{{{extra}}}")).unwrap().layout("store").map(|_| ()).map_err(|e| e.to_string())
    };
    assert!(layout("bucket: b").is_ok());
    assert!(layout("bucket_prefix: fdb-").is_ok());
    assert!(layout("bucket: b, bucket_prefix: fdb-").unwrap_err().contains("not both"));
    assert!(layout("prefix: x/").unwrap_err().contains("name the bucket"));
    for bad in ["Fdb-", "-fdb", "fdb_", "a-prefix-of-more-than-thirty-one-characters"] {
        assert!(layout(&format!("bucket_prefix: '{bad}'")).unwrap_err().contains("bucket_prefix"), "{bad}");
    }
}
