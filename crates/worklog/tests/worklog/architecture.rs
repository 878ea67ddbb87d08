//! The crate's shape (WL-2, WL-3), checked on its own sources: the core does no I/O and reads no
//! clock or environment; the whole crate touches files only through `shiftwork_seams::Fs`, reads no environment
//! variable and no clock, and writes no log output.

use std::path::{Path, PathBuf};

fn sources(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            // Unit tests at the end of a file may use what they like; only the code before them counts.
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or_default().to_owned();
            out.push((path, code));
        }
    }
    out
}

fn assert_absent(files: &[(PathBuf, String)], forbidden: &[&str]) {
    for (path, code) in files {
        for word in forbidden {
            assert!(!code.contains(word), "{} uses {word}", path.display());
        }
    }
}

/// WL-3: the crate touches the filesystem only through `shiftwork_seams::Fs`, reads no environment variable and
/// no clock, and logs nothing (no `log` or `tracing` event, nothing on stdout or stderr). Spans are not
/// logs (issue 30 item 2): `tracing` is named only to open the spans of the append, each written out as
/// `tracing::info_span!("worklog.…")`, so no event macro can slip in.
#[test]
fn wl3_no_io_but_the_fs_seam() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = sources(&src);
    assert!(files.len() >= 10);
    assert_absent(
        &files,
        &[
            "std::fs",
            "std::env",
            "env::var",
            "SystemTime::now",
            "Instant::now",
            "println!",
            "eprintln!",
            "print!(",
            "dbg!",
            " log::",
            "(log::",
            "std::io::stdout",
            "std::io::stderr",
            "std::process",
            "OsFs",
        ],
    );
}

/// Issue 30 item 2, WL-3: every non-comment mention of `tracing` in the crate opens a span named
/// `worklog.…`; none emits an event.
#[test]
fn wl3_tracing_only_opens_spans() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut spans = Vec::new();
    for (path, code) in sources(&src) {
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (at, _) in line.match_indices("tracing") {
                let rest = &line[at..];
                assert!(
                    rest.starts_with("tracing::info_span!(\"worklog."),
                    "{}: `{}` is not a worklog span",
                    path.display(),
                    line.trim()
                );
                spans.push(rest.split('"').nth(1).unwrap_or_default().to_owned());
            }
        }
    }
    spans.sort();
    assert_eq!(spans, ["worklog.durable_write", "worklog.lock_wait"]);
}

/// WL-2: the core is pure — no I/O, no clock, no environment, no global state, not even the seam. The
/// one thing of `shiftwork_seams` it uses is the workspace's pure rule for text that reaches a person
/// (`echo::is_control_or_bidi`, issue 27 item 11), so that a description is refused by the same set
/// of characters every output escapes.
#[test]
fn wl2_the_core_is_pure() {
    let core = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/core");
    let shared_rule = "use shiftwork_seams::echo::is_control_or_bidi;";
    let files: Vec<(PathBuf, String)> = sources(&core)
        .into_iter()
        .map(|(path, code)| (path, code.replace(shared_rule, "")))
        .collect();
    assert!(files.len() >= 5);
    assert_absent(
        &files,
        &[
            "seams",
            "std::io",
            "SystemTime",
            "Instant",
            "static mut",
            "OnceLock",
            "Mutex",
            "thread_local",
        ],
    );
}
