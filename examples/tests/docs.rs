//! Docs that stand alone (issue 28 item 6): every library crate's rustdoc and README cite nothing a
//! user of the crate does not have — no requirement id (`HR-12`), no section sign, no path into the
//! specification, no issue number. Tests keep their ids; only doc comments before a file's
//! `#[cfg(test)]` and the README are read. One scan for the whole workspace, so every crate is held to
//! the same rule.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};

/// What a line cites that a user does not have, if anything.
fn foreign_citation(line: &str) -> Option<String> {
    if line.contains('§') || line.contains("spec/") {
        return Some(line.to_owned());
    }
    let digit_at = |s: &str, i: usize| s[i..].chars().next().is_some_and(|c| c.is_ascii_digit());
    for id in ["HR-", "WL-", "SW-", "CT-", "MC-", "DV-", "AV-"] {
        for (at, _) in line.match_indices(id) {
            let word_start = line[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_ascii_alphanumeric());
            if word_start && digit_at(line, at + id.len()) {
                return Some(line.to_owned());
            }
        }
    }
    for word in ["issue ", "issues ", "Issue ", "Issues "] {
        for (at, _) in line.match_indices(word) {
            if digit_at(line, at + word.len()) {
                return Some(line.to_owned());
            }
        }
    }
    None
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs")
            // A test module in a file of its own (`rules_tests.rs`) is a test: it keeps its ids.
            && !path.file_stem().is_some_and(|s| s == "tests" || s.to_string_lossy().ends_with("_tests"))
        {
            out.push(path);
        }
    }
}

/// The library crates, by their folder under `crates/`.
const CRATES: [&str; 7] = [
    "seams",
    "json",
    "shiftwork-core",
    "hours",
    "worklog",
    "contracts",
    "watch",
];

#[test]
fn rustdoc_and_readme_cite_nothing_outside_the_repository() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    for name in CRATES {
        found.extend(citations_of(&workspace.join("crates").join(name)));
    }
    assert!(
        found.is_empty(),
        "docs cite what a user does not have:\n{}",
        found.join("\n")
    );
}

/// Every citation in one crate's rustdoc and README, as `file:line: text`.
fn citations_of(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (n, line) in code.lines().enumerate() {
            let doc = line.trim_start();
            if doc.starts_with("///") || doc.starts_with("//!") || doc.starts_with("#[doc") {
                found.extend(
                    foreign_citation(line).map(|l| format!("{}:{}: {}", file.display(), n + 1, l.trim())),
                );
            }
        }
    }
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    for (n, line) in readme.lines().enumerate() {
        found.extend(foreign_citation(line).map(|l| format!("{}/README.md:{}: {l}", root.display(), n + 1)));
    }
    assert!(
        files.len() > 1,
        "the scan found the sources of {}",
        root.display()
    );
    found
}

/// The scan itself catches each kind of citation and passes plain words.
#[test]
fn the_citation_scan_catches_each_kind() {
    for cited in [
        "(HR-12)",
        "see §14",
        "spec/hours.md",
        "issue 27 item 8",
        "WL-3: x",
        "(issues 12 and 16)",
    ] {
        assert!(foreign_citation(cited).is_some(), "{cited}");
    }
    for plain in [
        "UTF-8",
        "a SHA-256 hash",
        "an issue with it",
        "TZ=UTC Mon 09:00-17:00",
        "E-mail",
    ] {
        assert_eq!(foreign_citation(plain), None, "{plain}");
    }
}
