//! The pure decisions of shift work: every gate of every operation, judged on values.
//!
//! An operation runs in three layers. The *shell* (the operation's function at the crate root)
//! gathers: it takes the lock, reads the checkpoint and the ledger, stats the follow-up brief files,
//! runs the probes, resolves the paths once. These modules *decide* on what was gathered — a
//! checkpoint document, a [`crate::ledger::LedgerSummary`], the arguments, the time — and answer a
//! typed result or a [`crate::ShiftworkRefusal`]. The shell then *applies* what was decided: the brief line, or
//! the clock-out's commit (the ledger line, then the checkpoint).
//!
//! **Invariant:** no function here takes a filesystem, a host, a clock or an [`crate::Env`]; a test
//! fails if a file of this directory names one. So every gate is tested on plain values, without a
//! filesystem, and reads the same in the shell and in an embedder's own loop.
//!
//! ```
//! use shiftwork_core::decide::clock_out::{clock_out, ClockOutArguments, Gathered};
//! use shiftwork_core::json::Object;
//! use shiftwork_core::ledger::LedgerSummary;
//! use shiftwork_core::ShiftworkRefusal;
//!
//! let doc = shiftwork_core::json::parse(r#"{"version": 1, "job": {"id": "j", "goal": "g", "done_definition": "d", "constraints": []}, "plan": {"cursor": "U1", "units": [{"id": "U1", "title": "t", "brief_path": "b.md", "status": "todo", "role": "implementer", "depends_on": [], "verify": "v"}, {"id": "U2", "title": "t", "brief_path": "b.md", "status": "todo", "role": "implementer", "depends_on": [], "verify": "v"}]}, "state": {"repo": {"branch": "m", "head_sha": "a", "dirty": false}, "artifacts": [], "external": []}, "history": [], "retro": [], "handoff": {"next_action": "n", "open_questions": [], "do_not": []}}"#).unwrap();
//! let args = ClockOutArguments::new("cp.json", "U2", "done", Object::default(), Object::default());
//! // U2 is neither the cursor nor briefed since its last clock-out.
//! let ledger = LedgerSummary { briefed: vec![false, false], ..LedgerSummary::default() };
//! let refused = clock_out(doc, &ledger, &Gathered::default(), &args, chrono::DateTime::UNIX_EPOCH);
//! assert!(matches!(refused, Err(ShiftworkRefusal::NotCursor { ref cursor, .. }) if cursor == "U1"));
//! ```

pub mod clock_in;
pub mod clock_out;
pub mod plan;
