//! `fieldstore serve` and `type: remote` end to end, as a site deploys them: TLS with a CA's
//! certificate, tokens made by `fieldstore token`, identities allowed per operation on request
//! patterns; the CLI and curl as clients; refusals that name what was refused; SIGTERM.
//! (The conformance suite runs every property through a server too: `served_*` pairings.)

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_fieldstore");

/// A running `fieldstore serve`, killed if the test fails first.
struct Server {
    child: Child,
    address: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A config of a POSIX store under `dir` (`store.yaml`), and its path.
fn posix_store(dir: &Path) -> PathBuf {
    let store = dir.join("store.yaml");
    let root = dir.join("root").display().to_string();
    std::fs::write(
        &store,
        format!("catalogue: {{type: posix, root: {root}, create: true}}\nstore: {{type: posix, root: {root}, create: true}}\n"),
    )
    .unwrap();
    store
}

/// Starts `fieldstore --config CONFIG serve ARGS` on a free port and waits for its address.
fn serve(config: &Path, args: &[&str]) -> Server {
    serve_at(config, "127.0.0.1:0", args)
}

/// Starts `fieldstore --config CONFIG serve --listen ADDRESS ARGS` (a port a killed server
/// had is taken again at once) and waits for its address.
fn serve_at(config: &Path, address: &str, args: &[&str]) -> Server {
    let mut child = Command::new(BIN)
        .arg("--config")
        .arg(config)
        .args(["serve", "--listen", address])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let address = line.trim().strip_prefix("listening on ").unwrap_or_else(|| panic!("not an address: {line:?}")).to_string();
    Server { child, address }
}

fn run(config: &Path, args: &[&str]) -> Output {
    Command::new(BIN).arg("--config").arg(config).args(args).env_remove("FIELDSTORE_TOKEN").output().unwrap()
}

fn ok(config: &Path, args: &[&str]) -> String {
    let out = run(config, args);
    assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn fails(config: &Path, args: &[&str]) -> String {
    let out = run(config, args);
    assert!(!out.status.success(), "{args:?} should fail");
    String::from_utf8(out.stderr).unwrap()
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl").current_dir(dir).args(args).output().expect("openssl (scripts/install-deps.sh installs it)");
    assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A CA, and a certificate it signed for 127.0.0.1: `ca.pem`, `server.pem`, `server.key`.
fn certificates(dir: &Path) {
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    openssl(dir, &[&["req", "-x509"][..], &ec, &["-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=test CA", "-days", "2"]].concat());
    openssl(dir, &[&["req"][..], &ec, &["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"]].concat());
    std::fs::write(dir.join("ext.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n").unwrap();
    let sign = [
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
    ];
    openssl(dir, &sign);
}

/// Serves `store` over TLS (`certificates` made first) to the identities of `access` (the
/// access file's text), with `args` more.
fn serve_tls(dir: &Path, store: &Path, access: &str, args: &[&str]) -> Server {
    std::fs::write(dir.join("access.yaml"), access).unwrap();
    let file = |name: &str| dir.join(name).display().to_string();
    let tls = ["--tls-certificate", &file("server.pem"), "--tls-key", &file("server.key"), "--access", &file("access.yaml")];
    serve(store, &[&tls[..], args].concat())
}

/// A new token and its identity, from `fieldstore token --json`.
fn token(dir: &Path, name: &str) -> (String, String) {
    let out = ok(&dir.join("store.yaml"), &["token", "--name", name, "--json"]);
    let made: serde_json::Value = serde_json::from_str(&out).unwrap();
    (made["token"].as_str().unwrap().to_string(), made["identity"]["token_sha256"].as_str().unwrap().to_string())
}

/// A client config of the server at `address` with `token` (none: no token file).
fn client(dir: &Path, name: &str, address: &str, token: Option<&str>) -> PathBuf {
    let mut section = format!("type: remote, endpoint: 'https://{address}', ca: {}, connect_timeout: 5", dir.join("ca.pem").display());
    if let Some(token) = token {
        let file = dir.join(format!("{name}.token"));
        std::fs::write(&file, format!("{token}\n")).unwrap();
        section.push_str(&format!(", token_file: {}", file.display()));
    }
    let config = dir.join(format!("{name}.yaml"));
    std::fs::write(&config, format!("catalogue: {{{section}}}\nstore: {{{section}}}\n")).unwrap();
    config
}

fn curl(dir: &Path, token: &str, url: &str) -> (u16, Vec<u8>) {
    curl_with(dir, token, url, &[])
}

/// `curl`, with more of its arguments (`--data`, ...).
fn curl_with(dir: &Path, token: &str, url: &str, more: &[&str]) -> (u16, Vec<u8>) {
    let out = Command::new("curl")
        .args(["-sS", "--cacert"])
        .arg(dir.join("ca.pem"))
        .args(more)
        .args(["-H", &format!("Authorization: Bearer {token}"), "-w", "\n%{http_code}", url])
        .output()
        .expect("curl");
    let mut body = out.stdout;
    let at = body.iter().rposition(|b| *b == b'\n').unwrap();
    let code = String::from_utf8_lossy(&body[at + 1..]).parse().unwrap();
    body.truncate(at);
    (code, body)
}

#[test]
fn a_tls_server_serves_each_identity_what_its_patterns_allow() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    certificates(dir);
    let store = posix_store(dir);
    let (reader_token, reader_hash) = token(dir, "reader");
    let (writer_token, writer_hash) = token(dir, "writer");
    assert_ne!(reader_token, writer_token);
    let access = format!(
        "identities:\n- name: reader\n  token_sha256: {reader_hash}\n  allow: {{read: ['class=od']}}\n\
         - name: writer\n  token_sha256: {writer_hash}\n  allow: {{read: ['class=rd,expver=x*'], archive: ['class=rd,expver=x*'], wipe: ['class=rd,expver=x*']}}\n"
    );
    let grib = dir.join("fc.grib");
    ok(&store, &["sample", "--steps", "0/6", "--params", "t/u", "-o", grib.to_str().unwrap()]);
    ok(&store, &["archive", grib.to_str().unwrap()]); // class=od, expver=0001, locally
    let server = serve_tls(dir, &store, &access, &[]);
    let (reader, writer) =
        (client(dir, "reader", &server.address, Some(&reader_token)), client(dir, "writer", &server.address, Some(&writer_token)));

    // Archive through the server, within the writer's pattern; flushed when the command ends.
    ok(&writer, &["archive", "--modifiers", "class=rd,expver=x001", grib.to_str().unwrap()]);
    let listed = ok(&writer, &["list", "class=rd,expver=x001"]);
    assert_eq!(listed.lines().count(), 4, "{listed}");
    assert_eq!(ok(&store, &["list", "class=rd,expver=x001"]), listed, "the server's store holds what was archived through it");
    // Retrieved through the server: the same bytes as read locally.
    let (through, local) = (dir.join("through.grib"), dir.join("local.grib"));
    ok(&writer, &["retrieve", "class=rd,expver=x001,param=t", "-o", through.to_str().unwrap()]);
    ok(&store, &["retrieve", "class=rd,expver=x001,param=t", "-o", local.to_str().unwrap()]);
    assert!(std::fs::read(&through).unwrap() == std::fs::read(&local).unwrap() && std::fs::metadata(&local).unwrap().len() > 0);
    ok(&reader, &["list", "class=od,expver=0001"]);
    // Points extracted by the server: the values a local extraction gives.
    let extract = ["extract", "--csv", "class=rd,expver=x001,param=t", "--ranges", "0-3,100-101"];
    let points = ok(&writer, &extract);
    assert_eq!(points, ok(&store, &extract));
    assert_eq!(points.lines().count(), 1 + 2 * 4, "a header and 4 points of each of 2 fields: {points}");
    // A scan keeps the packings beside the server's data, once.
    let scanned: serde_json::Value = serde_json::from_str(&ok(&writer, &["scan", "--json", "class=rd,expver=x001"])).unwrap();
    assert_eq!((&scanned["fields"], &scanned["learnt"], &scanned["side_objects"]), (&4.into(), &4.into(), &1.into()), "{scanned}");
    let again: serde_json::Value = serde_json::from_str(&ok(&store, &["scan", "--json", "class=rd,expver=x001"])).unwrap();
    assert_eq!(again["already_kept"], 4, "{again}");

    // What an identity may not do is refused, naming the identity and what it may do.
    let refused = fails(&reader, &["list", "class=rd,expver=x001"]);
    assert!(refused.contains("identity 'reader' may not read 'class=rd,expver=x001': it may read class=od"), "{refused}");
    let refused = fails(&reader, &["extract", "class=rd,expver=x001,param=t", "--ranges", "0-1"]);
    assert!(refused.contains("identity 'reader' may not read 'class=rd,expver=x001,param=t'"), "{refused}");
    let refused = fails(&reader, &["scan", "class=od,expver=0001"]);
    assert!(refused.contains("identity 'reader' may not archive"), "a scan writes beside the data: {refused}");
    let refused = fails(&reader, &["archive", grib.to_str().unwrap()]);
    assert!(refused.contains("identity 'reader' may not archive anything"), "refused before its body is read: {refused}");
    let refused = fails(&writer, &["wipe", "class=od,expver=0001,stream=oper,date=20231201,time=1200", "--doit"]);
    assert!(refused.contains("identity 'writer' may not wipe"), "{refused}");
    let refused = fails(&writer, &["archive", grib.to_str().unwrap()]);
    assert!(refused.contains("identity 'writer' may not archive class=od"), "{refused}");
    assert_eq!(ok(&store, &["list", "class=od,expver=0001"]).lines().count(), 4, "nothing refused changed the store");
    let unknown = fails(&client(dir, "nobody", &server.address, Some("not-a-token")), &["list", "class=od,expver=0001"]);
    assert!(unknown.contains("unknown token") && !unknown.contains("not-a-token"), "the token is never repeated: {unknown}");
    assert!(fails(&client(dir, "anonymous", &server.address, None), &["list", "class=od,expver=0001"]).contains("no bearer token"));

    // Why nothing matched names no stored value to a caller allowed part of the store.
    let out = run(&reader, &["list", "class=od,expver=9999"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("nothing this caller may read matches") && !said.contains("0001"), "{said}");

    // curl: fields as JSON lines, their bytes as one stream, both as the CLI's.
    let base = format!("https://{}", server.address);
    // A frame's identifier is checked as soon as it came, before room is made for its bytes:
    // a header declaring 1 GiB of a field the writer may not archive is refused at once.
    let mut header = vec![b'F'];
    let forbidden = "class=od,expver=0001,stream=oper,date=20231201,time=1200,type=fc,levtype=sfc,step=0,param=167";
    header.extend((forbidden.len() as u32).to_be_bytes());
    header.extend(forbidden.as_bytes());
    header.extend((1u64 << 30).to_be_bytes());
    std::fs::write(dir.join("header.bin"), &header).unwrap();
    let posted = Command::new("curl")
        .args(["-sS", "--cacert"])
        .arg(dir.join("ca.pem"))
        .args(["-H", &format!("Authorization: Bearer {writer_token}"), "-H", "content-type: application/vnd.fieldstore.fields"])
        .args(["--data-binary", &format!("@{}", dir.join("header.bin").display()), "-w", "\n%{http_code}"])
        .arg(format!("{base}/v1/archive"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&posted.stdout);
    assert!(said.ends_with("403") && said.contains(&format!("may not archive {forbidden}")), "{said}");
    let (code, lines) = curl(dir, &writer_token, &format!("{base}/v1/list?request=class=rd,expver=x001,param=t"));
    assert_eq!(code, 200);
    let fields: Vec<serde_json::Value> =
        lines.split(|b| *b == b'\n').filter(|l| !l.is_empty()).map(|l| serde_json::from_slice(l).unwrap()).collect();
    assert_eq!(fields.len(), 2);
    assert_eq!(fields[0]["dataset"]["class"], "rd");
    let (code, bytes) = curl(dir, &writer_token, &format!("{base}/v1/retrieve?request=class=rd,expver=x001,param=t"));
    assert!(code == 200 && bytes == std::fs::read(&local).unwrap());
    let (code, body) = curl(dir, &reader_token, &format!("{base}/v1/retrieve?request=class=rd,expver=x001"));
    assert_eq!(code, 403, "{}", String::from_utf8_lossy(&body));
    // An extraction's call that is not one, and one whose answer could not fit the server's
    // memory, are refused before anything is read.
    let extract = |body: &str| curl_with(dir, &writer_token, &format!("{base}/v1/extract"), &["--data", body]);
    let (code, body) = extract("{\"requests\": 3}");
    assert!(code == 400 && String::from_utf8_lossy(&body).contains("not an extraction"), "{code} {}", String::from_utf8_lossy(&body));
    let (code, body) = extract(r#"{"requests": [{"request": "class=rd,expver=x001,param=t", "ranges": [[0, 18446744073709551615]]}]}"#);
    assert!(code == 400 && String::from_utf8_lossy(&body).contains("split its requests"), "{code} {}", String::from_utf8_lossy(&body));
    // A location is read back only by the identity it was given to, and only as given.
    let location = &fields[0]["location"];
    let uri = location["uri"].as_str().unwrap();
    let read = |token: &str, uri: &str| {
        curl(dir, token, &format!("{base}/v1/read?uri={}&offset={}&length={}", encode(uri), location["offset"], location["length"]))
    };
    assert_eq!(read(&writer_token, uri).0, 200);
    assert_eq!(read(&reader_token, uri).0, 403, "signed for another identity");
    assert_eq!(read(&writer_token, &uri.replace(".data#", ".index#")).0, 403, "another file under the signature");
    assert_eq!(curl(dir, "", &format!("{base}/v1/list?request=class=od")).0, 401);
    assert_eq!(curl(dir, "x", &format!("{base}/health")).0, 200);
    // The counters a Prometheus server scrapes: what was answered, and how.
    let (code, metrics) = curl(dir, "", &format!("{base}/metrics"));
    let metrics = String::from_utf8(metrics).unwrap();
    assert_eq!(code, 200);
    for line in [
        "fieldstore_requests_total{operation=\"archive\",outcome=\"ok\"} 1",
        "outcome=\"denied\"",
        "fieldstore_received_bytes_total{operation=\"archive\"} 784",
        "fieldstore_request_duration_seconds_bucket{",
    ] {
        assert!(metrics.contains(line), "no {line} in:\n{metrics}");
    }

    // Access files the server refuses at start: patterns on the fields' keywords (a caller
    // allowed a collocation reads its files), two identities of one name.
    let refused_access = |text: &str| {
        std::fs::write(dir.join("bad-access.yaml"), text).unwrap();
        let out = run(&store, &["serve", "--listen", "127.0.0.1:0", "--access", dir.join("bad-access.yaml").to_str().unwrap()]);
        assert!(!out.status.success());
        String::from_utf8(out.stderr).unwrap()
    };
    let identity = |name: &str, pattern: &str| format!("- name: {name}\n  token_sha256: {reader_hash}\n  allow: {{read: ['{pattern}']}}\n");
    let said = refused_access(&format!("identities:\n{}", identity("a", "class=od,param=t")));
    assert!(said.contains("names 'param', a keyword of the schema's fields"), "{said}");
    let said = refused_access(&format!("identities:\n{}{}", identity("a", "class=od"), identity("a", "class=rd")));
    assert!(said.contains("each identity needs a name of its own"), "{said}");

    // Wipe through the server, within the pattern.
    ok(&writer, &["wipe", "class=rd,expver=x001,stream=oper,date=20231201,time=1200", "--doit"]);
    assert!(ok(&store, &["list", "class=rd,expver=x001"]).is_empty());
    let mut server = server;
    // SIGTERM: the server stops, cleanly.
    terminate(server.child.id());
    assert!(server.child.wait().unwrap().success(), "a server stopped by SIGTERM exits 0");
}

/// Percent-encodes a query value.
fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| if b.is_ascii_alphanumeric() || b"-._~".contains(&b) { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}

fn terminate(pid: u32) {
    let status = Command::new("kill").args(["-TERM", &pid.to_string()]).status().unwrap();
    assert!(status.success());
}

#[test]
fn a_server_without_tls_or_tokens_stays_on_loopback_and_clients_name_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = posix_store(dir.path());
    let out = Command::new(BIN).arg("--config").arg(&store).args(["serve", "--listen", "0.0.0.0:0"]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && said.contains("will not listen on 0.0.0.0:0") && said.contains("without TLS"), "{said}");
    // A client of a server that is not there fails at once, naming it.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let remote = dir.path().join("remote.yaml");
    let section = format!("{{type: remote, endpoint: 'http://{free}', connect_timeout: 2}}");
    std::fs::write(&remote, format!("catalogue: {section}\nstore: {section}\n")).unwrap();
    let started = std::time::Instant::now();
    let error = fails(&remote, &["list", "class=od,expver=1"]);
    assert!(error.contains(&format!("server http://{free}")), "{error}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    // A remote catalogue with another store is refused.
    std::fs::write(&remote, format!("catalogue: {section}\nstore: {{type: posix, root: /nonexistent}}\n")).unwrap();
    assert!(fails(&remote, &["list", "class=od,expver=1"]).contains("the same server's store"));
}

/// A server killed (SIGKILL) at random moments while a client archives rounds of fields, each
/// ended by a flush: every round whose flush returned is there whole, with its bytes; a round
/// whose flush failed is there whole or not at all; the client goes on after each restart.
#[test]
fn a_server_killed_at_any_moment_loses_nothing_flushed_and_shows_nothing_half_archived() {
    let dir = tempfile::tempdir().unwrap();
    let store = posix_store(dir.path());
    let first = serve(&store, &[]);
    let address = first.address.clone();
    let section = format!("{{type: remote, endpoint: 'http://{address}', connect_timeout: 2, idle_timeout: 5}}");
    let remote = dir.path().join("remote.yaml");
    std::fs::write(&remote, format!("catalogue: {section}\nstore: {section}\n")).unwrap();
    let id = |round: u32, field: u32| {
        fieldstore::Key::parse(&format!(
            "class=od,expver=0001,stream=oper,date=20231201,time=1200,type=fc,levtype=sfc,step={round},param={}",
            128 + field
        ))
        .unwrap()
    };
    let payload = |round: u32, field: u32| format!("round {round} field {field} ").repeat(200).into_bytes();
    // Rounds go on until the kills are over (at most this many): each kill falls on some.
    const ROUNDS: u32 = 5_000;
    const FIELDS: u32 = 10;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let client = {
        let (remote, stop) = (remote.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut flushed = Vec::new();
            let mut failed = Vec::new();
            let mut fs = None;
            let mut rounds = 0;
            for round in 0..ROUNDS {
                if stop.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                rounds = round + 1;
                // Opening needs the server (its schema): retried until it is back.
                if fs.is_none() {
                    fs = fieldstore::open(&fieldstore::Config::from_file(&remote).unwrap()).ok();
                }
                let Some(handle) = &fs else {
                    failed.push(round);
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    continue;
                };
                let archived = (0..FIELDS)
                    .try_for_each(|field| handle.archive(&id(round, field), &payload(round, field)))
                    .and_then(|()| handle.flush());
                match archived {
                    Ok(()) => flushed.push(round),
                    Err(_) => failed.push(round),
                }
            }
            (flushed, failed, rounds)
        })
    };
    let mut server = first;
    for kill in 0..5u64 {
        std::thread::sleep(std::time::Duration::from_millis(150 + (kill * 37) % 100));
        server.child.kill().unwrap(); // SIGKILL
        server.child.wait().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        server = serve_at(&store, &address, &[]);
    }
    // A round after the last restart, then the client stops.
    std::thread::sleep(std::time::Duration::from_millis(300));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (flushed, failed, rounds) = client.join().unwrap();
    drop(server);
    assert!(!flushed.is_empty() && !failed.is_empty(), "the kills fell between flushes: flushed {flushed:?}, failed {failed:?}");
    let local = fieldstore::open(&fieldstore::Config::from_file(&store).unwrap()).unwrap();
    for round in 0..rounds {
        let request = fieldstore::Request::parse(&format!(
            "class=od,expver=0001,stream=oper,date=20231201,time=1200,type=fc,levtype=sfc,step={round}"
        ))
        .unwrap();
        let (mut reader, _) = local.retrieve(&request).unwrap();
        let fields = reader.fields().len() as u32;
        if flushed.contains(&round) {
            assert_eq!(fields, FIELDS, "round {round}'s flush returned: every field is there");
        } else {
            assert!(fields == 0 || fields == FIELDS, "round {round} is half there: {fields} of {FIELDS} fields");
        }
        let mut bytes = Vec::new();
        reader.write_to(&mut bytes).unwrap();
        let expected: Vec<u8> = if fields == 0 { Vec::new() } else { (0..FIELDS).flat_map(|f| payload(round, f)).collect() };
        assert!(bytes == expected, "round {round}: the bytes read are not those archived");
    }
}

/// A call that only reads is made again after a lost connection: a retrieve made while its
/// server restarts answers once the server is back; with no retries it fails naming the
/// server.
#[test]
fn reading_calls_are_made_again_while_a_server_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let store = posix_store(dir.path());
    let server = serve(&store, &[]);
    let address = server.address.clone();
    let remote = |retries: u32| {
        let section = format!("{{type: remote, endpoint: 'http://{address}', connect_timeout: 2, retries: {retries}}}");
        let path = dir.path().join(format!("remote-{retries}.yaml"));
        std::fs::write(&path, format!("catalogue: {section}\nstore: {section}\n")).unwrap();
        fieldstore::open(&fieldstore::Config::from_file(&path).unwrap()).unwrap()
    };
    let (patient, impatient) = (remote(6), remote(0));
    let id = "class=od,expver=0001,stream=oper,date=20231201,time=1200,type=fc,levtype=sfc,step=0,param=167";
    patient.archive(&fieldstore::Key::parse(id).unwrap(), b"a field that outlives its server").unwrap();
    patient.flush().unwrap();
    let request = fieldstore::Request::parse(id).unwrap();
    let mut server = server;
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let error = impatient.retrieve(&request).err().expect("no server, no retries: the call fails").report().to_string();
    assert!(error.contains(&format!("server http://{address}")), "{error}");
    let restarted = {
        let (store, address) = (store.clone(), address.clone());
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            serve_at(&store, &address, &[])
        })
    };
    let (mut reader, _) = patient.retrieve(&request).unwrap();
    let mut bytes = Vec::new();
    reader.write_to(&mut bytes).unwrap();
    assert_eq!(bytes, b"a field that outlives its server");
    // From a task of another async runtime the calls block that task's thread, but work.
    let listed = tokio::runtime::Runtime::new().unwrap().block_on(async move {
        let listed = patient.list(&request, fieldstore::ListOptions::default()).map(|m| m.fields.len());
        patient.archive(&fieldstore::Key::parse(id).unwrap(), b"again").and_then(|()| patient.flush()).map(|()| listed)
    });
    assert_eq!(listed.unwrap().unwrap(), 1);
    drop(restarted.join().unwrap());
}

/// Issue 44's load: 200 clients at once of one identity on one TLS server (a tenth archiving,
/// the others listing and retrieving) for a bounded time, with no error, every byte read
/// checked.
#[test]
fn two_hundred_clients_at_once_get_every_byte_right() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    certificates(dir);
    let store = posix_store(dir);
    let (load_token, load_hash) = token(dir, "load");
    let patterns = "['class=od,expver=load']";
    let access = format!(
        "identities:\n- name: load\n  token_sha256: {load_hash}\n  allow: {{read: {patterns}, archive: {patterns}, wipe: {patterns}}}\n"
    );
    let server = serve_tls(dir, &store, &access, &[]);
    let remote = client(dir, "load", &server.address, Some(&load_token));
    let out = ok(&remote, &["bench", "load", "--clients", "200", "--seconds", "3", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["errors"], 0, "{report}");
    let count = |operation: &str| report[operation]["count"].as_u64().unwrap();
    assert!(count("list") > 0 && count("point_retrieve") > 0 && count("archive_flush") > 0, "{report}");
    assert!(report["fields_flushed"].as_u64().unwrap() > 0 && report["fields_checked"] == report["fields_flushed"], "{report}");
}

/// `bench compare --remote` (issue 44 item 7): FDB5's `fdb-server` (catalogue and store) and
/// `fieldstore serve` started for each repetition, each system's processes through its own;
/// every phase of both measured, and the loopback floor beside them.
#[test]
fn bench_compare_runs_fdb5_and_fieldstore_each_through_its_servers() {
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().display().to_string();
    let workload = ["--reps", "1", "--nsteps", "2", "--nlevels", "2", "--nparams", "2", "--field-size", "2048"];
    let out = Command::new(BIN)
        .current_dir(&project)
        .args(["bench", "compare", "--remote", "--json", "--root", &root])
        .args(workload)
        .env_remove("FIELDSTORE_CONFIG")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["remote"], true);
    assert!(report["loopback_bytes_per_second"].as_f64().unwrap() > 0.0, "{report}");
    let phases = report["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 5, "{report}");
    for phase in phases {
        assert!(phase["fdb5_seconds"].as_f64().unwrap() > 0.0 && phase["fieldstore_seconds"].as_f64().unwrap() > 0.0, "{phase}");
    }
    // The servers stopped with their repetition: no `fieldstore serve` of the root runs on.
    let serving = Command::new("pgrep").args(["-f", &root]).output().unwrap();
    assert!(serving.stdout.is_empty(), "still running: {}", String::from_utf8_lossy(&serving.stdout));
}

/// The server's memory budget: refused if a field could not fit in it; a small one makes
/// concurrent archives and reads of large fields wait for each other, never fail.
#[test]
fn a_small_memory_budget_makes_requests_wait_not_fail() {
    let dir = tempfile::tempdir().unwrap();
    let store = posix_store(dir.path());
    let out = Command::new(BIN)
        .arg("--config")
        .arg(&store)
        .args(["serve", "--listen", "127.0.0.1:0", "--max-field", "1048576", "--max-memory", "1048576"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && said.contains("--max-memory 1048576 is less than --max-field 1048576"), "{said}");
    // Room for the largest field and one read's pieces: 17 MiB for 24 clients of 1 MiB fields.
    let server = serve(&store, &["--max-field", "1048576", "--max-memory", &(17u64 << 20).to_string()]);
    let section = format!("{{type: remote, endpoint: 'http://{}'}}", server.address);
    let remote = dir.path().join("remote.yaml");
    std::fs::write(&remote, format!("catalogue: {section}\nstore: {section}\n")).unwrap();
    let load = ["bench", "load", "--clients", "24", "--archivers", "8", "--seconds", "2", "--field-size", "1048576", "--levels", "2"];
    let report: serde_json::Value = serde_json::from_str(&ok(&remote, &[&load[..], &["--batch", "4", "--json"]].concat())).unwrap();
    assert_eq!(report["errors"], 0, "{report}");
    assert!(report["fields_checked"].as_u64().unwrap() > 0 && report["point_retrieve"]["count"].as_u64().unwrap() > 0, "{report}");
}

/// Mutual TLS: a client's certificate, signed by the server's `--client-ca`, is its identity
/// where it gives no token (the access file names it by its SHA-256); a client without one
/// cannot connect.
#[test]
fn a_client_certificate_identifies_its_caller() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    certificates(dir);
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    openssl(dir, &[&["req"][..], &ec, &["-keyout", "client.key", "-out", "client.csr", "-subj", "/CN=robot"]].concat());
    std::fs::write(dir.join("client.cnf"), "extendedKeyUsage=clientAuth\n").unwrap();
    let sign = ["x509", "-req", "-in", "client.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "client.pem"];
    openssl(dir, &[&sign[..], &["-days", "2", "-extfile", "client.cnf"]].concat());
    openssl(dir, &["x509", "-in", "client.pem", "-outform", "DER", "-out", "client.der"]);
    let out = Command::new("openssl").current_dir(dir).args(["dgst", "-sha256", "-r", "client.der"]).output().unwrap();
    let fingerprint = String::from_utf8(out.stdout).unwrap().split_whitespace().next().unwrap().to_string();
    let access = format!("identities:\n- name: robot\n  certificate_sha256: {fingerprint}\n  allow: {{read: ['class=od']}}\n");
    let store = posix_store(dir);
    let grib = dir.join("fc.grib");
    ok(&store, &["sample", "--steps", "0", "--params", "t", "-o", grib.to_str().unwrap()]);
    ok(&store, &["archive", grib.to_str().unwrap()]);
    let file = |name: &str| dir.join(name).display().to_string();
    let server = serve_tls(dir, &store, &access, &["--client-ca", &file("ca.pem")]);
    let plain = client(dir, "plain", &server.address, None);
    let section = std::fs::read_to_string(&plain).unwrap().lines().next().unwrap().replace("catalogue: {", "").replace('}', "");
    let with_certificate = format!("{section}, client_certificate: {}, client_key: {}", file("client.pem"), file("client.key"));
    let robot = dir.join("robot.yaml");
    std::fs::write(&robot, format!("catalogue: {{{with_certificate}}}\nstore: {{{with_certificate}}}\n")).unwrap();
    assert_eq!(ok(&robot, &["list", "class=od,expver=0001"]).lines().count(), 1);
    let refused = fails(&robot, &["list", "class=rd,expver=0001"]);
    assert!(refused.contains("identity 'robot' may not read"), "{refused}");
    let refused = fails(&plain, &["list", "class=od,expver=0001"]);
    assert!(refused.contains(&format!("server https://{}", server.address)), "no certificate, no connection: {refused}");
}

/// curl's answer headers (lower-case names) and body, for `url` with `token` (none: no
/// `Authorization`) and more of curl's arguments.
fn curl_headers(dir: &Path, token: Option<&str>, url: &str, more: &[&str]) -> (String, Vec<u8>) {
    let mut command = Command::new("curl");
    command.args(["-sS", "-D", "-", "--cacert"]).arg(dir.join("ca.pem")).args(more);
    if let Some(token) = token {
        command.args(["-H", &format!("Authorization: Bearer {token}")]);
    }
    let out = command.arg(url).output().expect("curl");
    let end =
        out.stdout.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or_else(|| panic!("{url}: {}", String::from_utf8_lossy(&out.stderr)))
            + 4;
    (String::from_utf8_lossy(&out.stdout[..end]).to_ascii_lowercase(), out.stdout[end..].to_vec())
}

#[test]
fn the_web_catalogue_shows_an_identity_only_what_it_may_read_with_the_security_headers() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    certificates(dir);
    let store = posix_store(dir);
    let (reader_token, reader_hash) = token(dir, "reader");
    let access = format!("identities:\n- name: reader\n  token_sha256: {reader_hash}\n  allow: {{read: ['class=od']}}\n");
    let (od, rd) = (dir.join("od.grib"), dir.join("rd.grib"));
    ok(&store, &["sample", "--steps", "0/6", "--params", "t/u", "--fill-bits", "12", "-o", od.to_str().unwrap()]);
    ok(&store, &["sample", "--class", "rd", "--steps", "0/6/12", "--params", "t", "-o", rd.to_str().unwrap()]);
    ok(&store, &["archive", od.to_str().unwrap(), rd.to_str().unwrap()]);
    let server = serve_tls(dir, &store, &access, &[]);
    let base = format!("https://{}", server.address);
    let json =
        |body: &[u8]| -> serde_json::Value { serde_json::from_slice(body).unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(body))) };

    // The page and its files need no token, carry no data, load nothing from elsewhere.
    let (headers, page) = curl_headers(dir, None, &format!("{base}/web/"), &[]);
    assert!(headers.starts_with("http/2 200") || headers.starts_with("http/1.1 200"), "{headers}");
    for header in [
        "content-security-policy: default-src 'none'; script-src 'self'",
        "x-content-type-options: nosniff",
        "x-frame-options: deny",
        "referrer-policy: no-referrer",
        "strict-transport-security: max-age=",
    ] {
        assert!(headers.contains(header), "{header} missing from {headers}");
    }
    let page = String::from_utf8(page).unwrap();
    assert!(page.contains("catalogue.js") && !page.contains("http://") && !page.contains("https://"), "{page}");
    // Every answer has them, the API's too.
    assert!(curl_headers(dir, Some(&reader_token), &format!("{base}/v1/list?request=class=od,expver=0001"), &[])
        .0
        .contains("x-frame-options: deny"));

    // The catalogue counts only what the reader may read: class=od, never rd's fields.
    let (_, body) = curl_headers(dir, Some(&reader_token), &format!("{base}/v1/web/browse?limit=1"), &[]);
    let catalogue = json(&body);
    assert_eq!(catalogue["fields"], 4, "{catalogue}");
    let keyword = |name: &str| catalogue["keywords"].as_array().unwrap().iter().find(|k| k["keyword"] == name).cloned().unwrap();
    assert_eq!(keyword("class")["values"], serde_json::json!([{"value": "od", "fields": 4}]));
    // A parameter offered with the name users know it by.
    assert_eq!(keyword("param")["values"][0], serde_json::json!({"value": "130", "fields": 2, "label": "t"}));
    // Values paged: one a page, the next page asked for by keyword.
    let step = keyword("step");
    assert_eq!((step["total"].as_u64(), step["values"].as_array().unwrap().len()), (Some(2), 1));
    let (_, body) = curl_headers(dir, Some(&reader_token), &format!("{base}/v1/web/browse?keyword=step&offset=1&limit=1"), &[]);
    assert_eq!(json(&body)["keywords"][0]["values"], serde_json::json!([{"value": "6", "fields": 2}]));
    assert_eq!(catalogue["listed"].as_array().unwrap().len(), 4);
    // Nothing it may read: said without naming what is stored.
    for request in ["class=rd", "class=zz"] {
        let (_, body) = curl_headers(dir, Some(&reader_token), &format!("{base}/v1/web/browse?request={request}"), &[]);
        let answer = json(&body);
        assert_eq!(
            (answer["fields"].as_u64(), answer["explanation"].as_str()),
            (Some(0), Some("nothing this caller may read matches")),
            "{answer}"
        );
    }

    // A field: its GRIB keys, statistics and location; its map a PNG.
    let one = "class=od,expver=0001,stream=oper,date=20231201,time=1200,domain=g,type=fc,levtype=pl,step=6,levelist=500,param=131";
    let (_, body) = curl_headers(dir, Some(&reader_token), &format!("{base}/v1/web/field?request={one}"), &[]);
    let facts = json(&body);
    assert!(facts["grib"].as_array().unwrap().iter().any(|kv| kv[0] == "shortName" && kv[1] == "u"), "{facts}");
    let statistics = &facts["statistics"];
    assert!(
        statistics["points"].as_u64().unwrap() > 0 && statistics["min"].as_f64().unwrap() < statistics["max"].as_f64().unwrap(),
        "{facts}"
    );
    assert!(facts["location"]["uri"].as_str().unwrap().starts_with(store.parent().unwrap().to_str().unwrap()), "{facts}");
    let (headers, png) = curl_headers(dir, Some(&reader_token), &format!("{base}/v1/web/map?request={one}&width=600&height=340"), &[]);
    assert!(headers.contains("content-type: image/png") && png.starts_with(b"\x89PNG"), "{headers}");
    // A request naming several fields, or one of rd's, is no map.
    let (headers, body) = curl_headers(dir, Some(&reader_token), &format!("{base}/v1/web/map?request=class=od,expver=0001"), &[]);
    assert!(headers.contains(" 400") && String::from_utf8_lossy(&body).contains("choose one value of"), "{headers}");
    let rd_one = one.replace("class=od", "class=rd").replace("param=131", "param=130");
    let (headers, body) = curl_headers(dir, Some(&reader_token), &format!("{base}/v1/web/field?request={rd_one}"), &[]);
    assert!(headers.contains(" 404") && !String::from_utf8_lossy(&body).contains("0001"), "{headers} {}", String::from_utf8_lossy(&body));
    // No token, an unknown one: refused. Nothing on the page's paths writes.
    assert!(curl_headers(dir, None, &format!("{base}/v1/web/browse"), &[]).0.contains(" 401"));
    assert!(curl_headers(dir, Some("not-a-token"), &format!("{base}/v1/web/browse"), &[]).0.contains(" 401"));
    for path in ["/web/", "/v1/web/browse", "/v1/web/field", "/v1/web/map"] {
        let (headers, _) = curl_headers(dir, Some(&reader_token), &format!("{base}{path}"), &["-X", "POST"]);
        assert!(headers.contains(" 405"), "POST {path}: {headers}");
    }
}
