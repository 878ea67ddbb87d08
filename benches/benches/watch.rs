//! Benchmarks of `shiftwork-watch`: building the snapshot of a 1,000-unit checkpoint with a
//! 2,000-line ledger and a budget (what every refresh of the live view does, at most ten times a
//! second), reading a store of 300 contracts, drawing at 160×48, and the Mermaid chart of the plan.
//!
//! Run: `cargo bench -p benches --bench watch`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::sync::Arc;

use chrono::{TimeZone, Utc};
use divan::{Bencher, black_box};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use shiftwork_contracts::store::epoch_ms;
use shiftwork_contracts::{
    AgentId, Contracts, ContractsConfig, DispatchRequest, MemoryStore, SeededIdSource,
};
use shiftwork_core::json;
use shiftwork_seams::{ManualClock, MemFs};
use shiftwork_watch::gather::{self, read_store};
use shiftwork_watch::picture::mermaid;
use shiftwork_watch::snapshot::Snapshot;
use shiftwork_watch::view::ViewState;

const CHECKPOINT: &str = "/repo/.shiftwork/checkpoint.json";
const LEDGER: &str = "/repo/.shiftwork/checkpoint.json.log.jsonl";

fn main() {
    divan::main();
}

/// The bench checkpoint of the shift-work figures with a budget, every unit touching one of 50 files,
/// the first 300 units done; and a ledger of a brief and a clock-out (with its agent) for each of them,
/// then a brief for each of the next 100.
fn files() -> MemFs {
    let doc = common::checkpoint(1_000);
    let mut text = json::to_checkpoint_text(&doc);
    text = text.replace(
        "\"constraints\": [\n      \"c\"\n    ]",
        "\"constraints\": [\n      \"c\"\n    ],\n    \"budget\": {\n      \"tokens\": 100000000,\n      \"units\": 5000\n    }",
    );
    for i in 0..1_000 {
        let status = if i < 300 { "done" } else { "todo" };
        text = text.replacen(
            &format!("\"id\": \"U{i}\",\n        \"title\""),
            &format!(
                "\"id\": \"U{i}\",\n        \"touches\": [\"src/f{}.rs\"],\n        \"title\"",
                i % 50
            ),
            1,
        );
        if status == "done" {
            let at = text.find(&format!("\"id\": \"U{i}\",")).unwrap();
            let rel = text[at..].find("\"status\": \"todo\"").unwrap();
            text.replace_range(at + rel..at + rel + 16, "\"status\": \"done\"");
        }
    }
    let mut ledger = String::new();
    for i in 0..400 {
        ledger.push_str(&format!(
            "{{\"event\": \"brief\", \"role\": \"implementer\", \"ts\": \"2026-09-21T08:00:00Z\", \"unit\": \"U{i}\"}}\n"
        ));
        if i < 300 {
            ledger.push_str(&format!(
                "{{\"agent_id\": \"agent-{}\", \"briefed\": true, \"role\": \"implementer\", \"status\": \"done\", \"tokens\": {}, \"ts\": \"2026-09-21T08:30:00Z\", \"unit\": \"U{i}\"}}\n",
                i % 7,
                1_000 + i
            ));
        }
    }
    let fs = MemFs::new();
    fs.make_dirs("/repo/.shiftwork");
    fs.write_file(CHECKPOINT, text.as_bytes());
    fs.write_file(LEDGER, ledger.as_bytes());
    let pane = gather::job(&fs, Path::new(CHECKPOINT));
    let job = pane.body.expect("the bench checkpoint reads");
    assert!(job.plan_refusal.is_none() && job.finished.len() == 300 && job.budget.is_some());
    fs
}

/// One job pane: read, validate and plan the checkpoint, one pass over the ledger.
#[divan::bench]
fn snapshot_of_1000_units(bencher: Bencher<'_, '_>) {
    let fs = files();
    bencher.bench(|| gather::job(black_box(&fs), Path::new(CHECKPOINT)));
}

/// 300 contracts: 100 claimed, 100 waiting, 100 ended.
fn store() -> (Arc<MemoryStore>, ManualClock) {
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 9, 21, 10, 0, 0).unwrap());
    let fs = MemFs::new();
    fs.write_file("/repo/src/lib.rs", b"pub fn f() {}\n");
    let store = Arc::new(MemoryStore::new(Arc::new(clock.clone())));
    let config = ContractsConfig::builder()
        .allowed_roots(shiftwork_contracts::roots::AllowedRoots::new(["/repo"]))
        .build()
        .unwrap();
    let queue = Contracts::builder(store.clone())
        .fs(Arc::new(fs))
        .ids(Arc::new(SeededIdSource::new(1)))
        .config(config)
        .build();
    let lead = AgentId::new("lead").unwrap();
    for i in 0..300 {
        let target = AgentId::new(format!("agent-{}", i % 3)).unwrap();
        queue
            .dispatch(
                &DispatchRequest::new(lead.clone(), target.clone(), format!("Contract {i}"), "/repo")
                    .pointers(["src/lib.rs"]),
            )
            .unwrap();
        match i % 3 {
            0 => {
                queue.poll_next_task(&target).unwrap();
            }
            1 => {
                let held = queue.poll_next_task(&target).unwrap();
                queue.fail_contract(&held.held().unwrap().holder(), "no").unwrap();
            }
            _ => {}
        }
    }
    (store, clock)
}

/// The contracts pane of 300 contracts (three store reads).
#[divan::bench]
fn contracts_pane_of_300(bencher: Bencher<'_, '_>) {
    let (store, clock) = store();
    let now = epoch_ms(&clock);
    bencher.bench(|| read_store(black_box(store.as_ref()), None, now).unwrap());
}

fn snapshot() -> Snapshot {
    let fs = files();
    let (store, clock) = store();
    Snapshot {
        now: Utc.with_ymd_and_hms(2026, 9, 21, 10, 0, 0).unwrap(),
        zone: chrono_tz::UTC,
        jobs: vec![gather::job(&fs, Path::new(CHECKPOINT))],
        contracts: Some(shiftwork_watch::snapshot::ContractsPane {
            store: String::from("bench"),
            agent: None,
            body: Ok(read_store(store.as_ref(), None, epoch_ms(&clock)).unwrap()),
        }),
        hours: None,
    }
}

/// One frame at 160×48 of the 1,000-unit job and the 300 contracts.
#[divan::bench]
fn draw_160x48(bencher: Bencher<'_, '_>) {
    let snapshot = snapshot();
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).unwrap();
    let mut view = ViewState::new(2);
    bencher.bench_local(|| {
        terminal
            .draw(|frame| shiftwork_watch::draw::draw(frame, black_box(&snapshot), &mut view))
            .unwrap();
    });
}

/// The Mermaid chart of the 1,000-unit plan.
#[divan::bench]
fn mermaid_of_1000_units(bencher: Bencher<'_, '_>) {
    let fs = files();
    let job = gather::job(&fs, Path::new(CHECKPOINT)).body.unwrap();
    bencher.bench(|| mermaid(black_box(&job)));
}
