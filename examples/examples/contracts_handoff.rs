//! Two agents hand work to each other through one contracts database (an embedded SQLite file).
//!
//! alice asks bob to review a file and names the shape of the answer; bob claims the contract, checks
//! the file is still the one alice read, and delivers a typed verdict; alice reads it back typed. Then
//! bob hands a follow-up back to alice, who claims and fulfills it. Each agent has its own `Contracts`
//! facade and its own connection, as two processes on one machine would.
//!
//! Run with `cargo run -p examples --example contracts_handoff`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::json;
use shiftwork_contracts::roots::AllowedRoots;
use shiftwork_contracts::{
    AgentId, Contracts, ContractsConfig, DispatchRequest, FulfillRequest, InspectRequest, SqliteOptions,
    SqliteStore,
};
use shiftwork_seams::{OsFs, SystemClock};

/// The answer alice asks for.
#[derive(Debug, Serialize, Deserialize)]
struct Review {
    verdict: String,
    fixes: Vec<String>,
}

fn agent(name: &str) -> AgentId {
    AgentId::new(name).unwrap()
}

fn agent_facade(db: &std::path::Path, workspaces: &std::path::Path) -> Contracts {
    let store = SqliteStore::open(db, SqliteOptions::default(), Arc::new(SystemClock::new()), &OsFs).unwrap();
    // Workspace roots must lie in an allowed root (the default: the home and temporary directories).
    let config = ContractsConfig::builder()
        .allowed_roots(AllowedRoots::new([workspaces]))
        .build()
        .unwrap();
    Contracts::builder(Arc::new(store))
        .config(config)
        .real_fs()
        .real_ids()
        .build()
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    std::fs::create_dir_all(workspace.join("src")).unwrap();
    std::fs::write(
        workspace.join("src/lib.rs"),
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    )
    .unwrap();
    let db = dir.path().join("shared").join("contracts.db");
    let alice = agent_facade(&db, dir.path());
    let bob = agent_facade(&db, dir.path());
    let root = workspace.display().to_string();

    // alice dispatches a review with a result schema.
    let schema = json!({"type": "object", "required": ["verdict"],
                        "properties": {"verdict": {"enum": ["approve", "reject"]}}});
    let sent = alice
        .dispatch(
            &DispatchRequest::new(agent("alice"), agent("bob"), "Review add()", root.clone())
                .pointers(["src/lib.rs"])
                .contract_schema(schema.as_object().cloned().unwrap()),
        )
        .unwrap();
    println!(
        "alice dispatched {} ({:?}), pinning {}",
        sent.contract_id, sent.status, sent.pointers[0].sha256
    );

    // bob claims it; the poll verifies the pinned file before handing it over.
    let polled = bob.poll_next_task(&agent("bob")).unwrap();
    let held = polled.held().expect("bob has work");
    println!(
        "bob claimed {} with claim_epoch {}",
        held.contract_id, held.claim_epoch
    );
    let review = Review {
        verdict: String::from("approve"),
        fixes: vec![String::from("use checked_add")],
    };
    let done = bob
        .fulfill_contract(
            &held.holder(),
            &FulfillRequest::new("add() is correct; consider overflow.")
                .output(&review)
                .unwrap(),
        )
        .unwrap();
    println!("bob delivered: {:?} at {}", done.status, done.completed_at);

    // alice reads the verdict back as a `Review`.
    let result: Review = alice
        .detail(&sent.contract_id)
        .unwrap()
        .output()
        .unwrap()
        .expect("a structured result");
    println!("alice reads: {result:?}");

    // bob hands a follow-up back to alice.
    let follow_up = bob
        .dispatch(
            &DispatchRequest::new(agent("bob"), agent("alice"), "Apply the overflow fix", root)
                .pointers(["src/lib.rs"])
                .task_type("implementation")
                .context_summary("Use checked_add and return an Option."),
        )
        .unwrap();
    let polled = alice.poll_next_task(&agent("alice")).unwrap();
    let held = polled.held().expect("alice has work");
    assert_eq!(held.contract_id, follow_up.contract_id);
    alice
        .fulfill_contract(&held.holder(), &FulfillRequest::new("Fix proposed under fixes."))
        .unwrap();

    // Either agent can read the whole exchange.
    let seen = alice.inspect(&InspectRequest::default()).unwrap();
    for item in &seen.contracts {
        let s = item.summary();
        println!(
            "{} -> {}: {} [{}]",
            s.requester_agent,
            s.target_agent,
            s.title,
            s.status.as_str()
        );
    }
    println!(
        "counts: {} completed, {} waiting",
        seen.counts.completed, seen.counts.submitted
    );
    assert!(alice.check_integrity().unwrap().is_clean());
}
