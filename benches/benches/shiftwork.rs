//! Benchmarks of `shiftwork-core` against the targets of spec §17 (P1–P6).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use divan::Bencher;
use shiftwork_core::json::{self, Json};
use shiftwork_core::planner::{PlanNode, Priority, plan};
use shiftwork_core::{ClockOut, Env};

fn main() {
    divan::main();
}

/// A deterministic random DAG of `n` nodes and `e` edges (each edge to an earlier node).
fn dag(n: usize, e: usize, priorities: bool) -> (Vec<String>, Vec<Vec<usize>>, Vec<i64>) {
    let mut rng = fastrand::Rng::with_seed(42);
    let ids: Vec<String> = (0..n).map(|i| format!("n{i}")).collect();
    let mut deps = vec![Vec::new(); n];
    for _ in 0..e {
        let to = rng.usize(1..n);
        deps[to].push(rng.usize(..to));
    }
    let prio = (0..n)
        .map(|_| if priorities { rng.i64(-50..50) } else { 0 })
        .collect();
    (ids, deps, prio)
}

fn nodes<'a>(ids: &'a [String], deps: &[Vec<usize>], prio: &[i64]) -> Vec<PlanNode<'a>> {
    (0..ids.len())
        .map(|i| PlanNode {
            id: &ids[i],
            depends_on: deps[i].iter().map(|&d| ids[d].as_str()).collect(),
            priority: Priority::Small(i128::from(prio[i])),
            touches: None,
        })
        .collect()
}

/// P1: 20,000 nodes / 100,000 edges, equal and random priorities (target < 20 ms).
#[divan::bench(args = [false, true])]
fn p1_planner_20k_nodes_100k_edges(bencher: Bencher<'_, '_>, random_priorities: bool) {
    let (ids, deps, prio) = dag(20_000, 100_000, random_priorities);
    let input = nodes(&ids, &deps, &prio);
    bencher.bench(|| plan(divan::black_box(&input)).unwrap());
}

/// P2: the cycle refusal on 20,000 nodes (target < 10 ms).
#[divan::bench]
fn p2_planner_cycle_20k(bencher: Bencher<'_, '_>) {
    let (ids, mut deps, prio) = dag(20_000, 100_000, false);
    deps[0].push(19_999);
    let input = nodes(&ids, &deps, &prio);
    bencher.bench(|| plan(divan::black_box(&input)).unwrap_err());
}

/// A checkpoint of `n` units: a chain of waves, the first unit the cursor.
fn checkpoint(n: usize) -> Json {
    let units: Vec<String> = (0..n)
        .map(|i| {
            let deps = if i >= 10 { format!(r#"["U{}", "U{}"]"#, i - 10, i - 7) } else { String::from("[]") };
            format!(
                r#"{{"id": "U{i}", "title": "Unit {i} of the job", "brief_path": "briefs/U{i}.md", "status": "todo", "role": "implementer", "depends_on": {deps}, "verify": "make test-{i}"}}"#
            )
        })
        .collect();
    json::parse(&format!(
        r#"{{"version": 1, "job": {{"id": "bench", "goal": "Go.", "done_definition": "make", "constraints": ["c"]}}, "plan": {{"cursor": "U0", "units": [{}]}}, "state": {{"repo": {{"branch": "main", "head_sha": "abc", "dirty": false}}, "artifacts": [], "external": []}}, "history": [], "retro": [], "handoff": {{"next_action": "Go.", "open_questions": [], "do_not": []}}}}"#,
        units.join(", ")
    ))
    .unwrap()
}

fn os_fixture(n: usize) -> (tempfile::TempDir, String, Env) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    std::fs::create_dir_all(dir.path().join(".shiftwork")).unwrap();
    let cp = dir.path().join(".shiftwork/cp.json");
    std::fs::write(&cp, json::to_checkpoint_text(&checkpoint(n))).unwrap();
    (dir, cp.to_string_lossy().into_owned(), Env::os())
}

/// P3: `shiftwork_plan` on a 1,000-unit checkpoint: read + parse + validate + batch view (target < 10 ms).
#[divan::bench]
fn p3_plan_checkpoint_1000_units(bencher: Bencher<'_, '_>) {
    let (_dir, cp, env) = os_fixture(1000);
    bencher.bench(|| shiftwork_core::plan_checkpoint(&env, divan::black_box(&cp)));
}

/// P4: `shiftwork_clock_out` on a 1,000-unit checkpoint on the real filesystem, all fsyncs included
/// (target p95 < 25 ms). The cursor unit is clocked out `blocked`, so it stays the cursor.
#[divan::bench(sample_count = 60)]
fn p4_clock_out_1000_units(bencher: Bencher<'_, '_>) {
    let (_dir, cp, env) = os_fixture(1000);
    let args = ClockOut {
        checkpoint: cp,
        unit_id: String::from("U0"),
        status: String::from("blocked"),
        history_entry: json::parse(r#"{"unit": "U0", "outcome": "blocked"}"#)
            .unwrap()
            .as_object()
            .unwrap()
            .clone(),
        accounting: Some(json::parse(r#"{"tokens": 1234, "duration_ms": 5}"#).unwrap()),
        ..ClockOut::default()
    };
    bencher.bench(|| {
        let answer = shiftwork_core::clock_out(&env, &args);
        assert_eq!(answer.get("result").and_then(Json::as_str), Some("ok"));
    });
}

/// P5: the ledger pass (briefed, in-flight, budget tokens kept) over 1,000,000 lines (target < 200 ms).
#[divan::bench(sample_count = 10)]
fn p5_ledger_pass_1m_lines_budget_on(bencher: Bencher<'_, '_>) {
    let ids: Vec<String> = (0..1000).map(|i| format!("U{i}")).collect();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let mut text = String::new();
    for i in 0..1_000_000usize {
        let u = i % 1000;
        if i % 2 == 0 {
            text.push_str(&format!(
                r#"{{"event": "brief", "role": "implementer", "ts": "2026-01-02T03:04:05Z", "unit": "U{u}"}}"#
            ));
        } else {
            text.push_str(&format!(
                r#"{{"briefed": true, "duration_ms": 88200, "model": "haiku", "role": "implementer", "status": "done", "tokens": {}, "ts": "2026-01-02T03:04:05Z", "unit": "U{u}"}}"#,
                i * 7 % 90_000
            ));
        }
        text.push('\n');
    }
    let bytes = text.into_bytes();
    bencher.bench(|| {
        let mut pass = shiftwork_core::ledger::LedgerPass::new(&refs, true);
        for chunk in bytes.chunks(256 * 1024) {
            pass.feed(chunk);
        }
        pass.finish()
    });
}

/// P6: writing a 1,000-unit checkpoint in the §3.1 form (target < 2 ms).
#[divan::bench]
fn p6_write_checkpoint_1000_units(bencher: Bencher<'_, '_>) {
    let doc = checkpoint(1000);
    bencher.bench(|| json::to_checkpoint_text(divan::black_box(&doc)));
}

/// Keeps the in-memory seams linked for embedders comparing both.
#[divan::bench]
fn plan_checkpoint_1000_units_memfs(bencher: Bencher<'_, '_>) {
    let fs = seams::MemFs::new();
    fs.write_file(
        "/r/.shiftwork/cp.json",
        json::to_checkpoint_text(&checkpoint(1000)).as_bytes(),
    );
    let env = Env::new(
        Arc::new(fs),
        Arc::new(seams::ManualClock::new(chrono::DateTime::UNIX_EPOCH)),
        Arc::new(seams::MemHost::new(1, "h")),
    );
    bencher.bench(|| shiftwork_core::plan_checkpoint(&env, "/r/.shiftwork/cp.json"));
}
