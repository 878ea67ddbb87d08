//! Docs that stand alone: what a reader of the workspace reads cites nothing the reader does not
//! have — no requirement id (`HR-12`), no section sign, no spec file (`spec/hours.md`, `mcp.md`), no
//! issue number — and no doc example uses an item the docs hide (`#[doc(hidden)]`). Tests keep their
//! ids: a test names the requirement it covers, by the project's rule, so test files and a file's
//! `#[cfg(test)]` part are not read.
//!
//! What is scanned, and which of its lines ([`SCANNED`]):
//!
//! | What | Lines read |
//! |---|---|
//! | `crates/*/src/**/*.rs`, every crate folder (the libraries and the MCP adapter) | doc comments (`///`, `//!`, `#[doc`) before the file's `#[cfg(test)]`; files that are test modules (`tests.rs`, `*_tests.rs`) are skipped |
//! | `crates/*/README.md`, `README.md`, `ARCHITECTURE.md`, `CHANGELOG.md` | every line |
//! | `crates/*/Cargo.toml`, `Cargo.toml`, `benches/`, `examples/` and `fuzz/Cargo.toml` | comments and the `description` |
//! | `docs/src/**/*.md` (the guide) | every line |
//! | `examples/examples/*.rs`, `examples/src/*.rs` | every comment (a reader reads an example whole) |
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// How a scanned file is read.
#[derive(Clone, Copy)]
enum Lines {
    /// Rust sources: the doc comments before the file's `#[cfg(test)]`.
    RustDocs,
    /// Rust sources a reader reads whole: every comment.
    RustComments,
    /// Markdown: every line.
    Markdown,
    /// A Cargo manifest: its comments and its `description`.
    Manifest,
}

/// What is scanned, relative to the workspace: a file, or a folder read recursively. `crates/*/`
/// stands for every folder under `crates/`, so a new crate is scanned without being listed.
const SCANNED: [(&str, Lines); 13] = [
    ("crates/*/src", Lines::RustDocs),
    ("crates/*/README.md", Lines::Markdown),
    ("crates/*/Cargo.toml", Lines::Manifest),
    ("README.md", Lines::Markdown),
    ("ARCHITECTURE.md", Lines::Markdown),
    ("CHANGELOG.md", Lines::Markdown),
    ("Cargo.toml", Lines::Manifest),
    ("benches/Cargo.toml", Lines::Manifest),
    ("examples/Cargo.toml", Lines::Manifest),
    ("fuzz/Cargo.toml", Lines::Manifest),
    ("docs/src", Lines::Markdown),
    ("examples/examples", Lines::RustComments),
    ("examples/src", Lines::RustComments),
];

/// The requirement ids' prefixes of the specification the project is built from.
const REQUIREMENT_PREFIXES: [&str; 8] = ["HR-", "WL-", "SW-", "CT-", "MC-", "DV-", "AV-", "AS-"];

/// The specification's files, by the names the docs once cited them under. A guide page of the same
/// name is linked as `(hours.md)` or named by its path (`docs/src/hours.md`), never bare.
const SPEC_FILES: [&str; 8] = [
    "mcp.md",
    "shiftwork.md",
    "hours.md",
    "worklog.md",
    "contracts.md",
    "watch.md",
    "seams.md",
    "architecture.md",
];

/// What a line cites that a reader does not have, if anything.
fn foreign_citation(line: &str) -> Option<String> {
    if line.contains('§') || line.contains("spec/") {
        return Some(line.to_owned());
    }
    let digit_at = |s: &str, i: usize| s[i..].chars().next().is_some_and(|c| c.is_ascii_digit());
    let word_start = |at: usize| {
        line[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_ascii_alphanumeric())
    };
    for id in REQUIREMENT_PREFIXES {
        for (at, _) in line.match_indices(id) {
            if word_start(at) && digit_at(line, at + id.len()) {
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
    for file in SPEC_FILES {
        for (at, _) in line.match_indices(file) {
            let before = line[..at].chars().next_back();
            let linked = line[..at].ends_with("](");
            if !linked && before.is_none_or(|c| !(c.is_ascii_alphanumeric() || "/-_.".contains(c))) {
                return Some(line.to_owned());
            }
        }
    }
    for words in ["the spec", "The spec"] {
        for (at, _) in line.match_indices(words) {
            let after = line[at + words.len()..].chars().next();
            // "the spec" and "the specification", not "the specified".
            let rest = &line[at + words.len()..];
            if after.is_none_or(|c| !c.is_ascii_alphabetic()) || rest.starts_with("ification") {
                return Some(line.to_owned());
            }
        }
    }
    None
}

#[test]
fn docs_manifests_and_the_guide_cite_nothing_outside_the_repository() {
    let workspace = workspace();
    let mut found = Vec::new();
    let mut files_read = 0;
    for (path, lines) in SCANNED {
        for file in expand(&workspace, path) {
            files_read += 1;
            let text = std::fs::read_to_string(&file).unwrap();
            for (n, line) in read_lines(&text, lines) {
                found.extend(foreign_citation(line).map(|l| {
                    let shown = file.strip_prefix(&workspace).unwrap_or(&file).display();
                    format!("{shown}:{}: {}", n + 1, l.trim())
                }));
            }
        }
    }
    assert!(files_read > 200, "the scan read only {files_read} files");
    assert!(
        found.is_empty(),
        "{} lines cite what a reader does not have:\n{}",
        found.len(),
        found.join("\n")
    );
}

/// No doc example — a fenced block of a doc comment, its hidden `# ` lines included, or a Rust block
/// of the guide or a README — names an item marked `#[doc(hidden)]`: a reader cannot look it up, and its API is
/// not kept stable.
#[test]
fn no_doc_example_uses_a_hidden_item() {
    let workspace = workspace();
    let sources: Vec<PathBuf> = expand(&workspace, "crates/*/src");
    let hidden = hidden_items(&sources);
    assert!(
        hidden.contains("testing"),
        "the scan finds the hidden items: {hidden:?}"
    );
    let mut found = Vec::new();
    let mut examples = 0;
    // The guide and the READMEs: their Rust blocks are examples a reader copies.
    let mut guide = expand(&workspace, "docs/src");
    guide.extend(expand(&workspace, "crates/*/README.md"));
    guide.push(workspace.join("README.md"));
    for file in sources.iter().chain(&guide) {
        let text = std::fs::read_to_string(file).unwrap();
        let markdown = file.extension().is_some_and(|e| e == "md");
        for (n, line) in doc_example_lines(&text, markdown) {
            examples += 1;
            for name in &hidden {
                if names(line, name) {
                    let shown = file.strip_prefix(&workspace).unwrap_or(file).display();
                    found.push(format!("{shown}:{}: `{name}`: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(examples > 1000, "the scan read {examples} example lines");
    assert!(
        found.is_empty(),
        "doc examples use hidden items:\n{}",
        found.join("\n")
    );
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The files one row of [`SCANNED`] names; a row that names nothing fails the test.
fn expand(workspace: &Path, path: &str) -> Vec<PathBuf> {
    let roots: Vec<PathBuf> = match path.strip_prefix("crates/*/") {
        Some(rest) => std::fs::read_dir(workspace.join("crates"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .map(|p| p.join(rest))
            .collect(),
        None => vec![workspace.join(path)],
    };
    let mut files = Vec::new();
    for root in roots {
        assert!(root.exists(), "{} is not there to scan", root.display());
        if root.is_dir() {
            files_under(&root, &mut files);
        } else {
            files.push(root);
        }
    }
    files.sort();
    files
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let is_test_module = || {
            path.file_stem()
                .is_some_and(|s| s == "tests" || s.to_string_lossy().ends_with("_tests"))
        };
        if path.is_dir() {
            files_under(&path, out);
        } else if path.extension().is_some_and(|e| e == "md")
            // A test module in a file of its own (`rules_tests.rs`) is a test: it keeps its ids.
            || (path.extension().is_some_and(|e| e == "rs") && !is_test_module())
        {
            out.push(path);
        }
    }
}

/// The lines of `text` a reader reads, with their index.
fn read_lines(text: &str, lines: Lines) -> Vec<(usize, &str)> {
    let comment = |line: &str, doc_only: bool| {
        let line = line.trim_start();
        line.starts_with("///")
            || line.starts_with("//!")
            || line.starts_with("#[doc")
            || (!doc_only && (line.starts_with("//") || line.contains(" // ")))
    };
    let code = || text.split("#[cfg(test)]").next().unwrap_or_default();
    match lines {
        Lines::RustDocs => code()
            .lines()
            .enumerate()
            .filter(|(_, l)| comment(l, true))
            .collect(),
        Lines::RustComments => code()
            .lines()
            .enumerate()
            .filter(|(_, l)| comment(l, false))
            .collect(),
        Lines::Markdown => text.lines().enumerate().collect(),
        Lines::Manifest => text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains('#') || l.trim_start().starts_with("description"))
            .collect(),
    }
}

/// The names of the items marked `#[doc(hidden)]` in `sources`: the name of the item the attribute
/// stands on (`pub mod testing;` gives `testing`, `pub use a::b as c;` gives `c`), and the module of
/// a file that hides itself (`#![doc(hidden)]`).
fn hidden_items(sources: &[PathBuf]) -> BTreeSet<String> {
    let mut hidden = BTreeSet::new();
    for file in sources {
        let text = std::fs::read_to_string(file).unwrap();
        if text
            .lines()
            .any(|l| l.trim_start().starts_with("#![doc(hidden)]"))
        {
            hidden.extend(file.file_stem().map(|s| s.to_string_lossy().into_owned()));
        }
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if !line.trim_start().starts_with("#[doc(hidden)]") {
                continue;
            }
            let item = lines
                .by_ref()
                .map(str::trim)
                .find(|l| !l.starts_with("#[") && !l.starts_with("//"))
                .unwrap_or_default();
            let mut words = item
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty());
            // A re-export is known by the last name it gives.
            let name = if item.contains("use ") {
                words.next_back()
            } else {
                words.find(|w| {
                    ![
                        "pub", "crate", "super", "mod", "fn", "struct", "enum", "trait", "const", "static",
                        "type", "use", "unsafe", "async", "extern", "in", "self",
                    ]
                    .contains(w)
                })
            };
            hidden.extend(name.map(str::to_owned));
        }
    }
    hidden
}

/// The lines of the doc examples of `text`: the fenced Rust blocks of its doc comments (or, for a guide
/// page, of the page), hidden `# ` lines included.
fn doc_example_lines(text: &str, markdown: bool) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut in_block: Option<bool> = None;
    for (n, line) in text.lines().enumerate() {
        let doc = if markdown {
            Some(line)
        } else {
            let t = line.trim_start();
            t.strip_prefix("///").or_else(|| t.strip_prefix("//!"))
        };
        let Some(doc) = doc else {
            in_block = None;
            continue;
        };
        let fence = doc.trim_start();
        if let Some(info) = fence.strip_prefix("```") {
            in_block = match in_block {
                Some(_) => None,
                // A doc comment's block is Rust unless its info string names another language; a
                // guide page's only when it says `rust`.
                None => Some(is_rust(info.trim(), markdown)),
            };
        } else if in_block == Some(true) {
            out.push((n, doc));
        }
    }
    out
}

fn is_rust(info: &str, markdown: bool) -> bool {
    let words: Vec<&str> = info.split([',', ' ']).filter(|w| !w.is_empty()).collect();
    if markdown {
        return words.first().is_some_and(|w| *w == "rust");
    }
    words.iter().all(|w| {
        [
            "rust",
            "no_run",
            "ignore",
            "should_panic",
            "compile_fail",
            "edition2018",
            "edition2021",
            "edition2024",
        ]
        .contains(w)
    })
}

/// Whether `line` names `name` as a word.
fn names(line: &str, name: &str) -> bool {
    line.match_indices(name).any(|(at, _)| {
        let ident = |c: char| c.is_alphanumeric() || c == '_';
        line[..at].chars().next_back().is_none_or(|c| !ident(c))
            && line[at + name.len()..].chars().next().is_none_or(|c| !ident(c))
    })
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
        "(mcp.md \"Command line\")",
        "AS-44",
        "as the spec says",
        "the specification's list",
    ] {
        assert!(foreign_citation(cited).is_some(), "{cited}");
    }
    for plain in [
        "UTF-8",
        "a SHA-256 hash",
        "an issue with it",
        "TZ=UTC Mon 09:00-17:00",
        "E-mail",
        "[Operating hours](hours.md)",
        "docs/src/hours.md",
        "the specified path",
        "a spec, a design note",
    ] {
        assert_eq!(foreign_citation(plain), None, "{plain}");
    }
}

/// The example scan reads Rust blocks of doc comments, hidden lines included, and nothing else.
#[test]
fn the_example_scan_reads_rust_blocks_only() {
    let source = "/// Text naming testing.\n/// ```\n/// # use x::testing;\n/// ```\n/// ```text\n/// testing\n/// ```\nfn f() {}\n";
    let lines: Vec<&str> = doc_example_lines(source, false)
        .into_iter()
        .map(|(_, l)| l)
        .collect();
    assert_eq!(lines, [" # use x::testing;"]);
    assert!(names("x::testing::f()", "testing"));
    assert!(!names("x::testing_more", "testing"));
}
