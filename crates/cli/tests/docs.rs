//! Runs the examples in `docs/*.md`: every ```console block, in order, one store per document.
//! A line `$ COMMAND` is run with bash; the lines up to the next `$` are its expected standard
//! output (`...` matches any text). A command must succeed unless its expected output starts
//! with `fieldstore: error:`.

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
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared").canonicalize().expect("../shared beside the project");
    std::os::unix::fs::symlink(shared, dir.path().join("shared")).unwrap();
    let bin_dir = PathBuf::from(env!("CARGO_BIN_EXE_fieldstore")).parent().unwrap().to_path_buf();
    let path_var = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    for ex in &examples {
        let out = Command::new("bash")
            .args(["-c", &ex.command])
            .current_dir(&work)
            .env("PATH", &path_var)
            .env("FIELDSTORE_ROOT", dir.path().join("store"))
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
        if path.extension().is_some_and(|e| e == "md") {
            total += run_document(&path);
        }
    }
    assert!(total >= 20, "only {total} documented examples found");
}
