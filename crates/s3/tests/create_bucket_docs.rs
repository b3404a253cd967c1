//! docs/s3.md's "Creating the bucket" works as written: its `create-bucket` command, run on
//! the test S3 server with a bucket of this test's own, creates a bucket that its `head-bucket`
//! command then finds. Needs the server (`FIELDSTORE_TEST_S3_*`) and the AWS command line;
//! skips, saying so, without either.

use std::process::Command;

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

#[test]
fn the_documented_command_creates_the_bucket() {
    let commands = section_commands("Creating the bucket");
    let create = commands.iter().find(|l| l.contains("create-bucket")).expect("a create-bucket command");
    let head = commands.iter().find(|l| l.contains("head-bucket")).expect("a command that checks the bucket");
    let Some(server) = fieldstore_testing::s3_server("FIELDSTORE_TEST_S3_") else { return };
    if Command::new("aws").arg("--version").output().is_err() {
        eprintln!("skipped: the_documented_command_creates_the_bucket: needs the AWS command line (pip install awscli)");
        return;
    }
    let bucket = format!("fieldstore-docs-{}", std::process::id());
    assert!(!run_aws(head, &server, &bucket).status.success(), "{bucket} exists before the test");
    let out = run_aws(create, &server, &bucket);
    assert!(out.status.success(), "{create}: {}", String::from_utf8_lossy(&out.stderr));
    let found = run_aws(head, &server, &bucket).status.success();
    let delete = format!("aws --endpoint-url http://127.0.0.1:7480 --region us-east-1 s3api delete-bucket --bucket {bucket}");
    run_aws(&delete, &server, &bucket);
    assert!(found, "the documented command created {bucket}");
}
