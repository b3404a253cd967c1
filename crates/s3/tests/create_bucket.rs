//! Creating the bucket a `bucket:` section names, on the test S3 servers: docs/s3.md's
//! "Creating the bucket" works as written (its `create-bucket` command creates a bucket that
//! its `head-bucket` command then finds; needs the AWS command line), and `create_bucket:
//! true` creates a missing bucket when the store opens. Each test uses a bucket of its own and
//! removes it (with the AWS command line, where there is one). Skips, saying so, without the
//! servers (`FIELDSTORE_TEST_S3_*`).

use std::process::Command;

use fieldstore_core::error::ErrorKind;
use fieldstore_core::factory::Section;

const DOCS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/s3.md");

/// The shell lines of the first code block of the section `heading` of docs/s3.md.
fn section_commands(heading: &str) -> Vec<String> {
    let docs = std::fs::read_to_string(DOCS).unwrap();
    let section = docs.split(&format!("\n### {heading}\n")).nth(1).unwrap_or_else(|| panic!("docs/s3.md has no section {heading}"));
    let block = section.split("```sh\n").nth(1).expect("the section shows its commands").split("```").next().unwrap();
    block.lines().map(|l| l.split(" # ").next().unwrap().trim().to_string()).filter(|l| !l.is_empty()).collect()
}

/// Runs a documented `aws` line with the server's endpoint and keys and `bucket` for `fields`.
fn run_aws(line: &str, server: &fieldstore_testing::S3Server, bucket: &str) -> std::process::Output {
    let line = line.replace("http://127.0.0.1:7480", &server.endpoint).replace("--bucket fields", &format!("--bucket {bucket}"));
    let args: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(args[0], "aws", "{line}");
    Command::new("aws")
        .args(&args[1..])
        .env("AWS_ACCESS_KEY_ID", &server.access_key)
        .env("AWS_SECRET_ACCESS_KEY", &server.secret_key)
        .output()
        .unwrap()
}

/// A bucket name of this test process's own.
fn own_bucket(what: &str) -> String {
    format!("fieldstore-{what}-{}", std::process::id())
}

/// Removes an empty `bucket` from the server, with the AWS command line where there is one.
fn remove_bucket(server: &fieldstore_testing::S3Server, bucket: &str) {
    if fieldstore_testing::aws_cli().is_some() {
        let delete = format!("aws --endpoint-url http://127.0.0.1:7480 --region us-east-1 s3api delete-bucket --bucket {bucket}");
        run_aws(&delete, server, bucket);
    }
}

/// Opens an S3 store on the server's `bucket` with `extra` keys in its section.
fn open_store(server: &fieldstore_testing::S3Server, bucket_keys: &str) -> fieldstore_core::error::Result<Box<dyn fieldstore_core::Store>> {
    let yaml = format!(
        "catalogue: {{type: posix, root: /nonexistent}}\nstore: {{type: s3, endpoint: '{}', {bucket_keys}, access_key_id: '{}', secret_access_key: '{}', timeout_seconds: 10}}\n",
        server.endpoint, server.access_key, server.secret_key
    );
    let config = fieldstore_core::Config::parse("test", &yaml).unwrap();
    let section = Section { name: "store", config: &config.store, source: &config.source };
    (fieldstore_s3::FACTORY.store.unwrap())(&section)
}

#[test]
fn create_bucket_true_creates_a_missing_bucket_when_the_store_opens() {
    let Some(server) = fieldstore_testing::s3_server("FIELDSTORE_TEST_S3_") else { return };
    let bucket = own_bucket("create");
    let missing = open_store(&server, &format!("bucket: {bucket}")).err().expect("no such bucket yet");
    assert_eq!(missing.kind(), ErrorKind::NotFound, "{missing}");
    open_store(&server, &format!("bucket: {bucket}, create_bucket: true")).expect("created on opening");
    let found = open_store(&server, &format!("bucket: {bucket}"));
    open_store(&server, &format!("bucket: {bucket}, create_bucket: true")).expect("an existing bucket is used as it is");
    remove_bucket(&server, &bucket);
    found.expect("the bucket exists once a store with create_bucket: true opened");
    let both = open_store(&server, "bucket_prefix: fdb-, create_bucket: true").err().expect("create_bucket is bucket's");
    assert!(both.kind() == ErrorKind::BadConfig && both.to_string().contains("bucket_prefix creates its buckets itself"), "{both}");
}

#[test]
fn the_documented_command_creates_the_bucket() {
    let commands = section_commands("Creating the bucket");
    let create = commands.iter().find(|l| l.contains("create-bucket")).expect("a create-bucket command");
    let head = commands.iter().find(|l| l.contains("head-bucket")).expect("a command that checks the bucket");
    let Some(server) = fieldstore_testing::s3_server("FIELDSTORE_TEST_S3_") else { return };
    if fieldstore_testing::aws_cli().is_none() {
        return;
    }
    let bucket = own_bucket("docs");
    assert!(!run_aws(head, &server, &bucket).status.success(), "{bucket} exists before the test");
    let out = run_aws(create, &server, &bucket);
    assert!(out.status.success(), "{create}: {}", String::from_utf8_lossy(&out.stderr));
    let found = run_aws(head, &server, &bucket).status.success();
    remove_bucket(&server, &bucket);
    assert!(found, "the documented command created {bucket}");
}
