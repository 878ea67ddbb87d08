//! `shiftwork-core` — shift work for AI coding agents: a JSON checkpoint of planned units, a wave
//! planner that says which units may run now, clock-in briefs and clock-out records with an
//! accounting ledger.
//!
//! ```
//! use std::sync::Arc;
//! use shiftwork_core::json::{self, Json};
//! use shiftwork_core::{Answer, ClockIn, ClockOut, Env, Refusal};
//! use shiftwork_seams::{ManualClock, MemFs, MemHost};
//!
//! // A repository (here in memory) with a job of two units: the lexer, then the parser.
//! let fs = MemFs::new();
//! fs.create_dir_all("/repo/.git");
//! fs.write_file("/repo/.shiftwork/checkpoint.json", br#"{"version": 1,
//!   "job": {"id": "compiler", "goal": "Parse the language.", "done_definition": "make test", "constraints": ["no new dependencies"]},
//!   "plan": {"cursor": "lexer", "units": [
//!     {"id": "lexer", "title": "Lexer", "brief_path": "briefs/lexer.md", "status": "todo", "role": "implementer", "depends_on": [], "verify": "make lexer"},
//!     {"id": "parser", "title": "Parser", "brief_path": "briefs/parser.md", "status": "todo", "role": "implementer", "depends_on": ["lexer"], "verify": "make parser"}]},
//!   "state": {"repo": {"branch": "main", "head_sha": "abc1234", "dirty": false}, "artifacts": [], "external": []},
//!   "history": [], "retro": [], "handoff": {"next_action": "Write the lexer.", "open_questions": [], "do_not": []}}"#);
//! let clock = ManualClock::new(chrono::DateTime::UNIX_EPOCH);
//! let env = Env::new(Arc::new(fs), Arc::new(clock), Arc::new(MemHost::new(7, "build-1")));
//! let cp = "/repo/.shiftwork/checkpoint.json";
//!
//! // Plan: which units may run now.
//! let plan = shiftwork_core::plan_checkpoint(&env, cp).unwrap();
//! assert_eq!(plan.ready(), ["lexer"]);
//!
//! // Clock in: the brief for the agent that does the cursor unit (recorded in the ledger).
//! let ClockIn::Brief(brief) = shiftwork_core::clock_in(&env, cp, None).unwrap() else {
//!     panic!("the lexer is ready");
//! };
//! assert_eq!(brief.role, "implementer");
//!
//! // A clock-out of the parser now is refused; the refusal is matched by variant, not by its text.
//! let history = |unit: &str| json::object([("unit", Json::str(unit)), ("outcome", Json::str("done"))]);
//! let early = ClockOut {
//!     checkpoint: cp.into(),
//!     unit_id: "parser".into(),
//!     status: "done".into(),
//!     history_entry: history("parser"),
//!     ..ClockOut::default()
//! };
//! match shiftwork_core::clock_out(&env, &early) {
//!     Err(Refusal::NotCursor { unit, cursor }) => assert_eq!((unit.as_str(), cursor.as_str()), ("parser", "lexer")),
//!     other => panic!("{other:?}"),
//! }
//!
//! // Clock out the lexer with its cost: the cursor moves on, and the answer renders as the MCP tool's.
//! let done = ClockOut {
//!     unit_id: "lexer".into(),
//!     history_entry: history("lexer"),
//!     accounting: Some(json::parse(r#"{"tokens": 41250, "duration_ms": 95000}"#).unwrap()),
//!     ..early
//! };
//! let out = shiftwork_core::clock_out(&env, &done).unwrap();
//! assert_eq!(out.cursor, "parser");
//! assert_eq!(
//!     json::to_compact_text(&out.to_answer()),
//!     r#"{"result": "ok", "unit": "lexer", "status": "done", "cursor": "parser", "log": "/repo/.shiftwork/checkpoint.json.log.jsonl"}"#
//! );
//! ```
//!
//! The behaviour is the contract of `spec/shiftwork.md` (requirement ids `SW-n`), compatible byte for
//! byte with the checkpoints and ledgers of bantamkit 0.36.2's shift-work tools.
//!
//! # Layout
//!
//! One operation per tool — [`work_plan`], [`plan_checkpoint`], [`status`], [`clock_in`],
//! [`clock_out`] — each answering a typed result ([`WorkPlan`], [`Plan`], [`Status`], [`ClockIn`],
//! [`ClockedOut`]) or a [`Refusal`], whose `Display` is the spec's sentence. The JSON answer of the MCP
//! tool is one rendering of either ([`Answer::to_answer`]). Each operation gathers through the seams
//! of an [`Env`], lets the pure [`decide`] layer judge — no filesystem, host or clock in any of its
//! signatures — and applies what was decided. [`Checkpoint`] is the typed read view of a validated
//! document, over a built [`json::Json`] or over the document read in place ([`json::Tape`]); [`json`]
//! is the JSON codec ([`shiftwork_json`]).
//!
//! # Design notes
//!
//! - **A checkpoint is read in place.** Its text is kept and a [`json::Tape`] says where each value is
//!   (about two thirds of the text beside it); the plan, the status and the clock-in read that, and
//!   only the clock-out, which changes the document, builds it. A plan of a checkpoint peaks at about
//!   2.4 times the file (13 times when every checkpoint was built; `benches/shiftwork_memory`).
//! - **The schema is code.** [`schema::validate_checkpoint`] walks the document once and keeps only
//!   the path of the violation it will report (SW-29), where a generic validator collects every
//!   violation; a property test holds it to the `jsonschema` crate on [`CHECKPOINT_SCHEMA`] (SW-151).
//!
//! # Beyond bantamkit 0.36.2 (issue 27; our decisions)
//!
//! - **A refusal about a file quotes none of it.** A `checkpoint` argument can name any file the
//!   process can read, so a checkpoint refused on read names the path in the document and the rule,
//!   never a value or a key (`… at 'plan/units/1/status': the value is not one of ['todo', …]` where
//!   0.36.2 quotes the value); a UTF-8 error never names the byte; a JSON syntax error keeps Python's
//!   position only when the file begins as a JSON object or the error is at its first character
//!   ([`checkpoint`]). Prefixes and paths are 0.36.2's; the tails differ by design. The clock-out's own
//!   validation (`refused to write: …`) still quotes its values: they are the caller's.
//! - **Nothing is written that its reader would refuse.** A clock-out whose checkpoint would pass
//!   [`checkpoint::MAX_CHECKPOINT_BYTES`] once written (a compact file grows when indented), a ledger
//!   line past [`ledger::MAX_LEDGER_LINE_BYTES`], lock records past what a lock's reader reads: each is
//!   refused before the first write ([`Refusal::TooLargeToWrite`], the sentence naming the bound). The
//!   ledger reader skips a longer line whole.
//! - **Memory admission.** An [`Env`] may hold a [`MemoryBudget`]: a call reserves its peak, a
//!   multiple of its checkpoint's size, before it reads; without room it waits on the `Clock` (at most
//!   the budget's wait, 30 s by default) and is refused [`Refusal::MemoryBusy`]; a call that needs more
//!   than the whole budget is refused at once ([`Refusal::MemoryTooLarge`]) rather than run alone,
//!   which could exhaust the machine. These two are not answers about the checkpoint
//!   ([`Refusal::is_answer`]): the MCP server reports them as tool errors. [`Env::new`] has no budget.
//!
//! # What this crate never does
//!
//! It calls no `std::fs`, reads no clock, spawns no process and reads no environment: files go through
//! [`shiftwork_seams::Fs`], time through [`shiftwork_seams::Clock`], process identity and probes
//! through [`shiftwork_seams::Host`]. It names no MCP type and no async runtime. No public operation
//! panics on any input: every refusal is a value (SW-47, SW-150). Relay probes — shell commands taken
//! from the checkpoint — run only in an [`Env`] built [`Env::with_probes`].

/// The JSON of checkpoints, ledger lines and arguments: [`shiftwork_json`], JSON as Python's `json`
/// module reads and writes it.
pub use shiftwork_json as json;

pub mod admission;
pub mod answer;
pub mod budget;
pub mod checkpoint;
mod commit;
pub mod decide;
mod env;
pub mod ledger;
mod ledger_line;
mod line_split;
pub mod lock;
mod operations;
pub mod paths;
pub mod planner;
pub mod ranking;
pub mod records;
mod recovery;
mod refusal;
mod results;
pub mod schema;
mod schema_instance;
pub mod search;
mod view;

pub use admission::{MemoryBudget, Reservation};
pub use answer::Answer;
pub use decide::clock_out::{ClockOut, next_cursor};
pub use env::{Env, PROBE_TIMEOUT};
pub use operations::{clock_in, clock_out, plan_checkpoint, status};
pub use paths::CheckpointPaths;
pub use planner::work_plan;
pub use recovery::recover;
pub use refusal::{FileError, NodeField, Refusal, TextPosition, Written};
pub use results::{
    Brief, ClockIn, ClockedOut, Escalation, FailedProbe, HeldUnit, Plan, Ranked, Status, Upstream, WorkPlan,
};
pub use schema::CHECKPOINT_SCHEMA;
pub use view::{Checkpoint, Unit};

/// The crate's README, run as a doc test so that its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
