//! The purity guard (HR-91) and the crate's boundaries (HR-4, HR-5, HR-6, HR-8).

use std::path::{Path, PathBuf};

const FORBIDDEN: &[&str] = &[
    "::now(",
    "SystemTime",
    "Instant::",
    "sleep(",
    "thread::spawn",
    "std::thread",
    "std::env",
    "env::var",
    "std::fs",
    "std::net",
    "std::process",
    "chrono::Local",
    "Local::",
    "tokio",
    "iana_time_zone",
];

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The HR-91 scan of one file's text: (line number, forbidden text) for each offending line.
fn offences(text: &str) -> Vec<(usize, &'static str)> {
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.starts_with("#[cfg(test)]") {
            break;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        found.extend(
            FORBIDDEN
                .iter()
                .filter(|f| line.contains(*f))
                .map(|f| (i + 1, *f)),
        );
    }
    found
}

/// HR-91 (HR-6): no non-test line under `crates/hours/src` reads a clock, sleeps, spawns, touches the
/// environment, files, network or processes, or names an async runtime or the host's zone.
#[test]
fn hr91_purity_guard() {
    let mut files = Vec::new();
    rust_files(&crate_dir().join("src"), &mut files);
    assert!(files.len() >= 5, "the scan found the sources: {files:?}");
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (line, what) in offences(&text) {
            failures.push(format!("{}:{line}: contains {what:?}", file.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "HR-91 purity guard:\n{}",
        failures.join("\n")
    );
}

/// HR-91: the guard itself catches each forbidden text, skips comments, and stops at `#[cfg(test)]`.
#[test]
fn hr91_guard_catches_offences() {
    for what in FORBIDDEN {
        let text = format!("fn f() {{\n    let x = {what};\n}}\n");
        assert_eq!(offences(&text), vec![(2, *what)], "{what}");
    }
    assert!(offences("// Utc::now() in a comment\n/// std::thread in a doc\n").is_empty());
    assert!(
        offences("fn f() {}\n#[cfg(test)]\nmod tests { fn g() { std::thread::sleep(d); } }\n").is_empty()
    );
}

/// HR-5, HR-97: the normal dependencies are exactly chrono (no default features, `std` only) and
/// chrono-tz; proptest, croner and divan are never normal dependencies, and croner and divan belong to
/// the `benches` member only.
#[test]
fn hr5_dependencies() {
    let manifest = std::fs::read_to_string(crate_dir().join("Cargo.toml")).unwrap();
    let deps = section(&manifest, "[dependencies]");
    let names: Vec<&str> = deps
        .iter()
        .map(|l| l.split(['=', '.']).next().unwrap_or("").trim())
        .collect();
    assert_eq!(names, ["chrono", "chrono-tz"], "HR-5: {deps:?}");
    let workspace = std::fs::read_to_string(crate_dir().join("../../Cargo.toml")).unwrap();
    let chrono = section(&workspace, "[workspace.dependencies]")
        .into_iter()
        .find(|l| l.starts_with("chrono ="))
        .unwrap();
    assert!(chrono.contains("default-features = false"), "{chrono}");
    assert!(
        chrono.contains(r#"features = ["std"]"#),
        "the workspace entry asks only for std: {chrono}"
    );
    for line in deps {
        assert!(!line.contains("features"), "hours adds no features: {line}");
    }
    let root = crate_dir().join("../..");
    let benches = std::fs::read_to_string(root.join("benches/Cargo.toml")).unwrap();
    assert!(benches.contains("croner") && benches.contains("divan"));
    for member in [
        "crates/seams",
        "crates/hours",
        "crates/mcp-adapter",
        "crates/worklog",
        "crates/contracts",
        "crates/shiftwork-core",
        "examples",
    ] {
        let Ok(manifest) = std::fs::read_to_string(root.join(member).join("Cargo.toml")) else {
            continue;
        };
        for bench_only in ["croner", "divan"] {
            assert!(
                !manifest.contains(bench_only),
                "HR-97: {member} names {bench_only}"
            );
        }
    }
}

/// HR-48: no label is placed with chrono's default disambiguation — the sources never call
/// `earliest()`, `latest()` or `single()`.
#[test]
fn hr48_no_default_disambiguation() {
    let mut files = Vec::new();
    rust_files(&crate_dir().join("src"), &mut files);
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for call in [".earliest()", ".latest()", ".single()"] {
                assert!(!line.contains(call), "{}:{}: {call}", file.display(), i + 1);
            }
        }
    }
}

/// The non-blank, non-comment lines of a TOML section.
fn section<'a>(toml: &'a str, header: &str) -> Vec<&'a str> {
    toml.lines()
        .skip_while(|l| l.trim() != header)
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with('['))
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// HR-8: the crate root forbids unsafe code. HR-4: the crate holds the modules of its boundary and no
/// others.
#[test]
fn hr4_hr8_crate_root() {
    let lib = std::fs::read_to_string(crate_dir().join("src/lib.rs")).unwrap();
    assert!(lib.contains("#![forbid(unsafe_code)]"));
    let mut modules: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("mod ").and_then(|m| m.strip_suffix(';')))
        .collect();
    modules.sort_unstable();
    assert_eq!(
        modules,
        [
            "close", "error", "eval", "expr", "gate", "present", "route", "week", "zone"
        ]
    );
}
