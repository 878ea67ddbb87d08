//! Embedding `shiftwork-core`: build and create a checkpoint, plan the job, then brief and record each
//! unit from Rust until the job is done — the same operations the MCP tools serve, with typed values
//! throughout (no JSON written by hand, refusals matched by variant).
//!
//! Run: `cargo run -p examples --example shiftwork_job`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use shiftwork_core::authoring::{CheckpointBuilder, Job, create};
use shiftwork_core::model::{HistoryEntry, PlannedUnit, Role, Text, UnitId, UnitStatus};
use shiftwork_core::{Accounting, Answer, ClockIn, ClockOut, Env, ShiftworkRefusal};

fn main() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    let checkpoint = dir.path().join(".shiftwork/checkpoint.json");
    let text = |t: &str| Text::new(t).unwrap();
    let id = |t: &str| UnitId::new(t).unwrap();
    let unit = |name: &str, title: &str, role: Role, verify: &str| {
        PlannedUnit::new(id(name), text(title), role, text(verify))
    };
    let job = Job::new(
        text("parser"),
        text("A faster parser."),
        text("cargo test passes"),
    )
    .with_constraints(vec![text("no unsafe")]);
    let new = CheckpointBuilder::new(job)
        .unit(unit(
            "lexer",
            "Write the lexer",
            Role::Implementer,
            "cargo test lexer",
        ))
        .unit(unit("docs", "Write the docs", Role::Implementer, "cargo doc"))
        .unit(unit("parser", "Write the parser", Role::Implementer, "cargo test").depends_on([id("lexer")]))
        .unit(unit("review", "Review", Role::Reviewer, "cargo clippy").depends_on([id("parser"), id("docs")]))
        .build()
        .expect("the plan has no duplicate, unknown dependency or cycle");
    let env = Env::os();
    create(&env, &checkpoint, &new).expect("no checkpoint was there");

    let plan = shiftwork_core::plan_checkpoint(&env, &checkpoint).expect("the checkpoint plans");
    println!("plan: {:?} (ready: {:?})", plan.batches, plan.ready());

    loop {
        let brief = match shiftwork_core::clock_in(&env, &checkpoint, None) {
            Ok(ClockIn::Brief(brief)) => brief,
            Ok(ClockIn::AllDone) => {
                println!("every unit is done");
                break;
            }
            Ok(ClockIn::Escalate(escalation)) => {
                println!("a human is needed: {escalation}");
                break;
            }
            Err(refusal) => {
                println!("refused ({}): {refusal}", refusal.code());
                break;
            }
        };
        let unit = brief.unit().id.clone();
        // ... hand the brief to an agent (as JSON: `brief.to_answer()`); when it ends, record the
        // outcome and its cost.
        let request = ClockOut::new(
            &checkpoint,
            unit.clone(),
            UnitStatus::Done,
            HistoryEntry::new(unit.clone(), text("done")),
        )
        .with_accounting(Accounting::new(12_000, std::time::Duration::from_secs(60)));
        match shiftwork_core::clock_out(&env, &request) {
            Ok(out) => println!("clocked out {unit}; the cursor is now {}", out.cursor),
            // Refusals are matched by variant; their text is the sentence a person reads.
            Err(ShiftworkRefusal::Locked { path, .. }) => {
                println!("another clock-out holds {}; try again", path.display());
                break;
            }
            Err(refusal) => {
                println!("clock-out refused: {refusal}");
                break;
            }
        }
    }
    let status = shiftwork_core::status(&env, &checkpoint, None).expect("the checkpoint reads");
    println!("status: {:?}", status.units());
    // Every result renders as the JSON answer of its MCP tool.
    println!(
        "as JSON: {}",
        shiftwork_core::json::to_compact_text(&status.to_answer())
    );
    let ledger = std::fs::read_to_string(checkpoint.with_extension("json.log.jsonl")).unwrap();
    println!("ledger: {} lines", ledger.lines().count());
}
