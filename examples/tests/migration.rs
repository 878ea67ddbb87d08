//! Issue 37 item 1: releases an embedder can trust. A runtime written against the 0.1 API, using the
//! names 0.2 renamed, still builds against today's crates, and every deprecation warning it gets names
//! the replacement; the guide's migration page is in the book (its snippets run as this crate's doc
//! tests, `MigratingFrom01`).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::Path;
use std::process::Command;

/// The 0.1 names the fixture uses, and the replacement each warning must name.
const RENAMES: [(&str, &str); 7] = [
    ("`shiftwork_core::Refusal`", "`ShiftworkRefusal`"),
    (
        "`shiftwork_core::decide::clock_out::ClockOut`",
        "`ClockOutArguments`",
    ),
    ("`shiftwork_core::budget::DIMENSIONS`", "`BudgetDimension::ALL`"),
    ("`shiftwork_hours::ZonedExpr`", "`Hours`"),
    ("AgentId::parse`", "`AgentId::new`"),
    ("`shiftwork_worklog::Config::from_values`", "`Config::builder()`"),
    ("`shiftwork_worklog::core::Plan`", "`AppendPlan`"),
];

#[test]
fn issue37_item1_a_runtime_for_0_1_builds_and_its_warnings_name_the_replacements() {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = manifest_dir.parent().unwrap();
    let fixture = manifest_dir.join("tests/fixtures/runtime-0.1");
    // The crate is built outside the workspace, with the workspace's lock file (the same dependency
    // versions, already fetched) and a target directory of its own that later runs reuse.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("runtime-0.1");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let manifest = std::fs::read_to_string(fixture.join("Cargo.toml.in"))
        .unwrap()
        .replace("@WORKSPACE@", workspace.to_str().unwrap());
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(fixture.join("src/main.rs"), dir.join("src/main.rs")).unwrap();
    std::fs::copy(workspace.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();

    let cargo = std::env::var("CARGO").unwrap_or_else(|_| String::from("cargo"));
    let out = Command::new(cargo)
        .args(["check", "--offline", "--message-format", "short"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env("CARGO_TERM_COLOR", "never")
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the 0.1 runtime must build against 0.2:\n{stderr}"
    );
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("warning: use of deprecated"))
        .collect();
    for (old, new) in RENAMES {
        assert!(
            warnings.iter().any(|w| w.contains(old) && w.contains(new)),
            "no warning names {old} with its replacement {new}:\n{stderr}"
        );
    }
}

#[test]
fn issue37_item1_the_migration_page_is_in_the_book() {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/src");
    let summary = std::fs::read_to_string(docs.join("SUMMARY.md")).unwrap();
    assert!(summary.contains("(migrating-from-0.1.md)"), "{summary}");
    let page = std::fs::read_to_string(docs.join("migrating-from-0.1.md")).unwrap();
    let compiled = page.matches("```rust\n").count();
    assert!(
        compiled >= 6,
        "the page's snippets are compiled rust blocks, found {compiled}"
    );
    assert!(
        !page.contains("```rust,ignore"),
        "every snippet of the page compiles"
    );
}
