//! Embedding `shiftwork-core`: write a checkpoint, plan the job, then brief and record each unit from
//! Rust until the job is done — the same operations the MCP tools serve.
//!
//! Run: `cargo run -p examples --example shiftwork_job`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use shiftwork_core::json::{self, Json};
use shiftwork_core::{Answer, ClockIn, ClockOut, Env, Refusal};

fn main() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    std::fs::create_dir_all(dir.path().join(".shiftwork")).unwrap();
    let checkpoint = dir.path().join(".shiftwork/checkpoint.json");
    let doc = json::parse(
        r#"{"version": 1,
            "job": {"id": "parser", "goal": "A faster parser.", "done_definition": "cargo test passes", "constraints": ["no unsafe"]},
            "plan": {"cursor": "lexer", "units": [
              {"id": "lexer", "title": "Write the lexer", "brief_path": "briefs/lexer.md", "status": "todo", "role": "implementer", "depends_on": [], "verify": "cargo test lexer"},
              {"id": "docs", "title": "Write the docs", "brief_path": "briefs/docs.md", "status": "todo", "role": "implementer", "depends_on": [], "verify": "cargo doc"},
              {"id": "parser", "title": "Write the parser", "brief_path": "briefs/parser.md", "status": "todo", "role": "implementer", "depends_on": ["lexer"], "verify": "cargo test"},
              {"id": "review", "title": "Review", "brief_path": "briefs/review.md", "status": "todo", "role": "reviewer", "depends_on": ["parser", "docs"], "verify": "cargo clippy"}]},
            "state": {"repo": {"branch": "main", "head_sha": "0000000", "dirty": false}, "artifacts": [], "external": []},
            "history": [], "retro": [],
            "handoff": {"next_action": "Start with the lexer.", "open_questions": [], "do_not": []}}"#,
    )
    .unwrap();
    std::fs::write(&checkpoint, json::to_checkpoint_text(&doc)).unwrap();
    let cp = checkpoint.to_str().unwrap();
    let env = Env::os();

    let plan = shiftwork_core::plan_checkpoint(&env, cp).expect("the checkpoint plans");
    println!("plan: {:?} (ready: {:?})", plan.batches, plan.ready());

    loop {
        let brief = match shiftwork_core::clock_in(&env, cp, None) {
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
                println!("refused: {refusal}");
                break;
            }
        };
        let unit = brief
            .unit
            .get("id")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_owned();
        // ... hand the brief to an agent (as JSON: `brief.to_answer()`); when it ends, record the
        // outcome and its cost.
        let request = ClockOut {
            checkpoint: cp.to_owned(),
            unit_id: unit.clone(),
            status: String::from("done"),
            history_entry: json::object([("unit", Json::str(unit.as_str())), ("outcome", Json::str("done"))]),
            accounting: Some(json::parse(r#"{"tokens": 12000, "duration_ms": 60000}"#).unwrap()),
            ..ClockOut::default()
        };
        match shiftwork_core::clock_out(&env, &request) {
            Ok(out) => println!("clocked out {unit}; the cursor is now {}", out.cursor),
            // Refusals are matched by variant; their text is the spec's sentence.
            Err(Refusal::Locked { path, .. }) => {
                println!("another clock-out holds {}; try again", path.display());
                break;
            }
            Err(refusal) => {
                println!("clock-out refused: {refusal}");
                break;
            }
        }
    }
    let status = shiftwork_core::status(&env, cp, None).expect("the checkpoint reads");
    println!("status: {:?}", status.units);
    // Every result renders as the JSON answer of its MCP tool.
    println!("as JSON: {}", json::to_compact_text(&status.to_answer()));
    let ledger = std::fs::read_to_string(format!("{cp}.log.jsonl")).unwrap();
    println!("ledger: {} lines", ledger.lines().count());
}
