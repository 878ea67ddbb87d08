//! What several bench targets share: the 1,000-unit checkpoint of the shift-work figures, the
//! release binary of `shiftwork-mcp` and a client over its stdio ([`stdio`]) or over HTTP ([`http`]), a PostgreSQL store of
//! its own, the workload factor and the CPU's name. Each target uses part of it.
#![allow(dead_code)]

pub mod http;
pub mod stdio;

use std::path::PathBuf;
use std::process::Command;

use shiftwork_core::json::{self, Json};
use shiftwork_core::model::{HistoryEntry, Text, UnitId, UnitStatus};
use shiftwork_core::{Accounting, ClockOut};

/// A checkpoint of `n` units: waves of ten, each unit after two of the previous wave; `U0` the cursor.
pub fn checkpoint(n: usize) -> Json {
    let units: Vec<String> = (0..n)
        .map(|i| {
            let deps = if i >= 10 {
                format!(r#"["U{}", "U{}"]"#, i - 10, i - 7)
            } else {
                String::from("[]")
            };
            format!(
                r#"{{"id": "U{i}", "title": "Unit {i} of the job", "brief_path": "briefs/U{i}.md", "status": "todo", "role": "implementer", "depends_on": {deps}, "verify": "make test-{i}"}}"#
            )
        })
        .collect();
    json::parse(&format!(
        r#"{{"version": 1, "job": {{"id": "bench", "goal": "Go.", "done_definition": "make", "constraints": ["c"]}}, "plan": {{"cursor": "U0", "units": [{}]}}, "state": {{"repo": {{"branch": "main", "head_sha": "abc", "dirty": false}}, "artifacts": [], "external": []}}, "history": [], "retro": [], "handoff": {{"next_action": "Go.", "open_questions": [], "do_not": []}}}}"#,
        units.join(", ")
    ))
    .expect("the bench checkpoint parses")
}

/// The clock-out call of the `p4_` benches: the cursor unit `U0` clocked out `blocked` with its
/// accounting, so it stays the cursor and the call can repeat on one checkpoint.
pub fn p4_clock_out(checkpoint: impl Into<PathBuf>) -> ClockOut {
    let unit = UnitId::new("U0").expect("U0 is an id");
    let outcome = Text::new("blocked").expect("the outcome is a text");
    ClockOut::new(
        checkpoint,
        unit.clone(),
        UnitStatus::Blocked,
        HistoryEntry::new(unit, outcome),
    )
    .with_accounting(Accounting::new(1234, std::time::Duration::from_millis(5)))
}

/// Whether this is a measuring run: `cargo bench` passes `--bench`; `cargo test --all-targets` runs
/// each bench target once without it, as a smoke test.
pub fn benching() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// The `shiftwork-mcp` a bench starts: under `cargo bench` the release binary, built with
/// `cargo build --release -p shiftwork-mcp` when missing; in a test run the debug binary the workspace's
/// tests already built, so a test run never builds in release.
pub fn server_binary() -> PathBuf {
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target"));
    let (profile, build): (&str, &[&str]) = if benching() {
        ("release", &["build", "--release", "-p", "shiftwork-mcp"])
    } else {
        ("debug", &["build", "-p", "shiftwork-mcp"])
    };
    let exe = target.join(profile).join("shiftwork-mcp");
    if !exe.exists() {
        let status = Command::new(env!("CARGO"))
            .args(build)
            .current_dir(&workspace)
            .status()
            .expect("cargo runs");
        assert!(status.success(), "cannot build {}", exe.display());
    }
    exe
}

/// A PostgreSQL store in a schema of its own, `<prefix>_<pid>`, on the server of
/// `SHIFTWORK_TEST_POSTGRES_URL`: the URL, the schema and the store; `None` (with `figure` said to be
/// skipped) when the variable is not set. The caller drops the schema when done.
#[cfg(feature = "postgres")]
pub fn postgres_store(
    figure: &str,
    prefix: &str,
) -> Option<(String, String, std::sync::Arc<shiftwork_contracts::PgStore>)> {
    let Ok(url) = std::env::var("SHIFTWORK_TEST_POSTGRES_URL") else {
        println!("{figure}: skipped (SHIFTWORK_TEST_POSTGRES_URL is not set)");
        return None;
    };
    let schema = format!("{prefix}_{}", std::process::id());
    let options = shiftwork_contracts::PgOptions {
        schema: Some(schema.clone()),
        ..shiftwork_contracts::PgOptions::default()
    };
    let store = shiftwork_contracts::PgStore::connect(&url, options).unwrap();
    Some((url, schema, std::sync::Arc::new(store)))
}

/// How much a bench shrinks its workload: 10 with `SHIFTWORK_BENCH_QUICK=1`, else 1.
pub fn quick() -> usize {
    if std::env::var("SHIFTWORK_BENCH_QUICK").is_ok_and(|v| v == "1") {
        10
    } else {
        1
    }
}

/// The CPU's model name, for the figures' header.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| String::from("unknown CPU"))
}

/// Claims the contracts of `agent` one poll at a time until its queue is empty, trying again when the
/// store is busy: how many it claimed.
pub fn claim_until_empty(
    contracts: &shiftwork_contracts::Contracts,
    agent: &shiftwork_contracts::AgentId,
) -> usize {
    let mut claimed = 0;
    loop {
        match contracts.poll_next_task(agent) {
            Ok(p) if p.held().is_some() => claimed += 1,
            Ok(_) => return claimed,
            Err(r) if r.code() == shiftwork_contracts::RefusalCode::StoreBusy => {}
            Err(r) => panic!("{r}"),
        }
    }
}
