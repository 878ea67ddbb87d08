//! Benchmarks of `shiftwork-core` against its six performance targets (the benches `p1_` … `p6_`),
//! among them the planner's complexity at 20,000 nodes. The clock-out's percentiles (`p4_`) are in
//! `shiftwork_latency`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use divan::Bencher;
use shiftwork_core::budget::Budget;
use shiftwork_core::json::{self, Json};
use shiftwork_core::planner::{PlanNode, Priority, plan};
use shiftwork_core::{Answer, Checkpoint, Env};

mod common;
use common::{checkpoint, p4_clock_out};

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

fn os_fixture(n: usize) -> (tempfile::TempDir, std::path::PathBuf, Env) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    std::fs::create_dir_all(dir.path().join(".shiftwork")).unwrap();
    let cp = dir.path().join(".shiftwork/cp.json");
    std::fs::write(&cp, json::to_checkpoint_text(&checkpoint(n))).unwrap();
    (dir, cp, Env::os())
}

/// P3: `shiftwork_plan` on a 1,000-unit checkpoint: read + parse + validate + batch view (target < 10 ms).
#[divan::bench]
fn p3_plan_checkpoint_1000_units(bencher: Bencher<'_, '_>) {
    let (_dir, cp, env) = os_fixture(1000);
    bencher.bench(|| shiftwork_core::plan_checkpoint(&env, divan::black_box(cp.as_path())).to_answer());
}

/// P4: `shiftwork_clock_out` on a 1,000-unit checkpoint on the real filesystem, all fsyncs included
/// (target p95 < 25 ms). The cursor unit is clocked out `blocked`, so it stays the cursor.
#[divan::bench(sample_count = 60)]
fn p4_clock_out_1000_units(bencher: Bencher<'_, '_>) {
    let (_dir, cp, env) = os_fixture(1000);
    let args = p4_clock_out(cp);
    bencher.bench(|| {
        let answer = shiftwork_core::clock_out(&env, &args).to_answer();
        assert_eq!(answer.get("result").and_then(Json::as_str), Some("ok"));
    });
}

/// A ledger of 1,000,000 lines over the 1,000 units of [`checkpoint`]: brief and accounting lines
/// alternating, as clock-ins and clock-outs write them.
fn ledger_1m_lines() -> Vec<u8> {
    let mut text = String::with_capacity(130_000_000);
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
    text.into_bytes()
}

/// The 1,000-unit checkpoint with `job.budget` declared.
fn budget_checkpoint() -> Json {
    let text = json::to_compact_text(&checkpoint(1000)).replacen(
        r#""constraints": ["c"]"#,
        r#""constraints": ["c"], "budget": {"tokens": 100000000000, "units": 2000000}"#,
        1,
    );
    json::parse(&text).unwrap()
}

/// P5: the ledger pass over 1,000,000 lines with budgets on: briefed for every unit, the in-flight
/// set and the budget figures (spent, reserved, per-unit median, remaining, affordable) (target
/// < 200 ms). The ledger is in memory: this is the pass itself.
#[divan::bench(sample_count = 10)]
fn p5_ledger_pass_1m_lines_budget_on(bencher: Bencher<'_, '_>) {
    let doc = budget_checkpoint();
    let cp = Checkpoint::new(&doc);
    let ids = cp.ids();
    let bytes = ledger_1m_lines();
    bencher.bench(|| {
        let mut pass = shiftwork_core::ledger::LedgerPass::new(&ids, true);
        for chunk in bytes.chunks(shiftwork_seams::hash::CHUNK_SIZE) {
            pass.feed(chunk);
        }
        let summary = pass.finish();
        let in_flight = shiftwork_core::budget::in_flight(&cp, &summary).len();
        let budget = Budget::compute(&cp, &summary).unwrap();
        assert_eq!(budget.spent_units, 500_000);
        (in_flight, budget.to_answer())
    });
}

/// P5 from the file: the same pass reading a 1,000,000-line ledger through `shiftwork_seams::OsFs` (page cache
/// warm), as `shiftwork_plan` does with a budget.
#[divan::bench(sample_count = 10)]
fn p5_ledger_pass_1m_lines_budget_on_from_file(bencher: Bencher<'_, '_>) {
    let doc = budget_checkpoint();
    let cp = Checkpoint::new(&doc);
    let ids = cp.ids();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cp.json.log.jsonl");
    std::fs::write(&path, ledger_1m_lines()).unwrap();
    bencher.bench(|| {
        let summary = shiftwork_core::ledger::scan(&shiftwork_seams::OsFs, &path, &ids, true);
        Budget::compute(&cp, &summary).unwrap().to_answer()
    });
}

/// P6: writing a 1,000-unit checkpoint as the checkpoint file holds it (two-space indentation, ASCII
/// only, keys in document order, one final LF; target < 2 ms).
#[divan::bench]
fn p6_write_checkpoint_1000_units(bencher: Bencher<'_, '_>) {
    let doc = checkpoint(1000);
    bencher.bench(|| json::to_checkpoint_text(divan::black_box(&doc)));
}

/// Keeps the in-memory seams linked for embedders comparing both.
#[divan::bench]
fn plan_checkpoint_1000_units_memfs(bencher: Bencher<'_, '_>) {
    let fs = shiftwork_seams::MemFs::new();
    fs.write_file(
        "/r/.shiftwork/cp.json",
        json::to_checkpoint_text(&checkpoint(1000)).as_bytes(),
    );
    let env = Env::new(
        Arc::new(fs),
        Arc::new(shiftwork_seams::ManualClock::new(chrono::DateTime::UNIX_EPOCH)),
        Arc::new(shiftwork_seams::MemHost::new(1, "h")),
    );
    bencher.bench(|| {
        shiftwork_core::plan_checkpoint(&env, std::path::Path::new("/r/.shiftwork/cp.json")).to_answer()
    });
}

/// 100,000 nodes with `touches` — every node writes two of 1,000 files and every tenth also
/// `Cargo.lock`, so thousands are held batch after batch (target: under 1 s; the naive hold rule
/// was quadratic, 12.8 s for 30,000 units on one path).
#[divan::bench(sample_count = 10)]
fn planner_100k_nodes_with_touches(bencher: Bencher<'_, '_>) {
    let (ids, deps, prio) = dag(100_000, 200_000, false);
    let mut rng = fastrand::Rng::with_seed(7);
    let touches: Vec<Vec<String>> = (0..ids.len())
        .map(|i| {
            let mut t = vec![
                format!("src/f{}.rs", rng.usize(..1000)),
                format!("src/f{}.rs", rng.usize(..1000)),
            ];
            if i % 10 == 0 {
                t.push(String::from("Cargo.lock"));
            }
            t
        })
        .collect();
    let mut input = nodes(&ids, &deps, &prio);
    for (node, t) in input.iter_mut().zip(touches) {
        node.touches = Some(t);
    }
    bencher.bench(|| plan(divan::black_box(&input)).unwrap());
}

/// `shiftwork_plan` on 100,000 units that all touch one file — read, parse, validate, batch view
/// and the `held` records (target: under 1 s).
#[divan::bench(sample_count = 5)]
fn plan_checkpoint_100k_units_touching_one_file_memfs(bencher: Bencher<'_, '_>) {
    let text = json::to_checkpoint_text(&checkpoint(100_000)).replace(
        r#""verify": "make test-"#,
        r#""touches": ["Cargo.lock"], "verify": "make test-"#,
    );
    let fs = shiftwork_seams::MemFs::new();
    fs.write_file("/r/.shiftwork/cp.json", text.as_bytes());
    let env = Env::new(
        Arc::new(fs),
        Arc::new(shiftwork_seams::ManualClock::new(chrono::DateTime::UNIX_EPOCH)),
        Arc::new(shiftwork_seams::MemHost::new(1, "h")),
    );
    bencher.bench(|| {
        let answer =
            shiftwork_core::plan_checkpoint(&env, std::path::Path::new("/r/.shiftwork/cp.json")).to_answer();
        assert_eq!(answer.get("result").and_then(Json::as_str), Some("plan"));
    });
}
