//! Runs the examples in `docs/*.md`: every ```console block, in order, one store per document.
//! A line `$ COMMAND` is run with bash; the lines up to the next `$` are its expected standard
//! output (`...` matches any text). A command must succeed unless its expected output starts
//! with `fieldstore: error:`. The examples need nothing beside the repository (which
//! `$FIELDSTORE_REPO` names, for its scripts) and `../shared` beside it. Also checks
//! that every relative link in `docs/` and the README names a file of the repository (and a
//! heading of it, for `#anchors`).

use std::path::{Path, PathBuf};
use std::process::Command;

struct Example {
    line: usize,
    command: String,
    expected: Vec<String>,
}

fn examples(markdown: &str) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut in_console = false;
    for (i, line) in markdown.lines().enumerate() {
        if line.starts_with("```") {
            in_console = !in_console && line.trim() == "```console";
            continue;
        }
        if !in_console {
            continue;
        }
        match line.strip_prefix("$ ") {
            Some(command) => out.push(Example { line: i + 1, command: command.to_string(), expected: Vec::new() }),
            None => out.last_mut().expect("console blocks start with a command").expected.push(line.to_string()),
        }
    }
    out
}

/// `...` in `pattern` matches any text; everything else literally.
fn matches(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split("...").collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || !text.ends_with(last) || text.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

fn run_document(path: &Path) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    let examples = examples(&text);
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let bin_dir = PathBuf::from(env!("CARGO_BIN_EXE_fieldstore")).parent().unwrap().to_path_buf();
    let path_var = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    for ex in &examples {
        let out = Command::new("bash")
            .args(["-c", &ex.command])
            .current_dir(&work)
            .env("PATH", &path_var)
            .env("FIELDSTORE_ROOT", dir.path().join("store"))
            .env("FIELDSTORE_REPO", Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap())
            .env_remove("FIELDSTORE_CONFIG")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let got: Vec<&str> = stdout.lines().collect();
        let expects_error = ex.expected.first().is_some_and(|l| l.starts_with("fieldstore: error:"));
        let place = format!("{}:{}: $ {}", path.display(), ex.line, ex.command);
        assert!(out.status.success() || expects_error, "{place}\nfailed: {}", String::from_utf8_lossy(&out.stderr));
        let same = got.len() == ex.expected.len() && got.iter().zip(&ex.expected).all(|(g, e)| matches(e, g));
        assert!(same, "{place}\nexpected:\n{}\ngot:\n{stdout}", ex.expected.join("\n"));
    }
    examples.len()
}

#[test]
fn wildcards_match_as_documented() {
    assert!(matches("a...c", "abbbc"));
    assert!(matches("a...c...e", "abcde"));
    assert!(!matches("a...c", "abd"));
    assert!(!matches("abc", "abcd"));
    assert!(!matches("ab...ba", "aba"));
}

#[test]
fn documented_examples_run_as_shown() {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
    let mut total = 0;
    for entry in std::fs::read_dir(&docs).unwrap() {
        let path = entry.unwrap().path();
        // The Ceph and DAOS pages run against the test cluster and the DAOS emulation.
        let services = match path.file_name().and_then(|n| n.to_str()) {
            Some("rados.md") => fieldstore_testing::ceph_conf().is_some(),
            // Its example names the emulation by $FIELDSTORE_TEST_DAOS_LIBRARY.
            Some("daos.md") => fieldstore_testing::daos_emulation().is_some() && std::env::var_os("FIELDSTORE_TEST_DAOS_LIBRARY").is_some(),
            _ => true,
        };
        if path.extension().is_some_and(|e| e == "md") && services {
            total += run_document(&path);
        }
    }
    assert!(total >= 20, "only {total} documented examples found");
}

/// The markdown files a reader of the repository sees: the README and `docs/*.md`.
fn markdown_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let mut files = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    files
}

/// The targets of `[text](target)` links outside code.
fn links(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in markdown.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        // Inline code may hold brackets that are no links.
        let text: String = line.split('`').step_by(2).collect::<Vec<_>>().join("");
        let mut rest = text.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    out
}

/// GitHub's anchor of a heading: lower case, spaces to dashes, punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(markdown: &str) -> Vec<String> {
    markdown.lines().filter_map(|l| l.strip_prefix('#')).map(|h| anchor(h.trim_start_matches('#'))).collect()
}

#[test]
fn every_relative_link_names_a_file_of_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let mut checked = 0;
    let mut broken = Vec::new();
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        for link in links(&text) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, fragment) = link.split_once('#').unwrap_or((&link, ""));
            let target = if path.is_empty() { file.clone() } else { file.parent().unwrap().join(path) };
            let Ok(target) = target.canonicalize() else {
                broken.push(format!("{}: {link}: no such file", file.display()));
                continue;
            };
            if !target.starts_with(&root) {
                broken.push(format!("{}: {link}: outside the repository", file.display()));
            } else if !fragment.is_empty()
                && !anchors(&std::fs::read_to_string(&target).unwrap_or_default()).contains(&fragment.to_string())
            {
                broken.push(format!("{}: {link}: no heading #{fragment}", file.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(checked >= 20, "only {checked} relative links found");
}

#[test]
fn links_and_anchors_are_read_as_github_does() {
    assert_eq!(links("see [a](b.md#c) and `[x](y)` [d](https://e)"), ["b.md#c", "https://e"]);
    assert_eq!(anchor(" Creation, wipe, locks"), "creation-wipe-locks");
    assert_eq!(anchor("FDB5's weak points (on POSIX)"), "fdb5s-weak-points-on-posix");
}
