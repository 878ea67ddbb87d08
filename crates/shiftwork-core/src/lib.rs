//! `shiftwork-core` — shift work for AI coding agents: a JSON checkpoint of planned units, a wave
//! planner that says which units may run now, clock-in briefs and clock-out records with an
//! accounting ledger.
//!
//! ```
//! use std::path::Path;
//! use std::sync::Arc;
//! use shiftwork_core::authoring::{create, CheckpointBuilder, Job};
//! use shiftwork_core::model::{HistoryEntry, PlannedUnit, Role, Text, UnitId, UnitStatus};
//! use shiftwork_core::{Accounting, ClockIn, ClockOut, Env, ShiftworkRefusal};
//! use shiftwork_seams::{ManualClock, MemFs, MemHost};
//!
//! let text = |t: &str| Text::new(t).unwrap();
//! let id = |t: &str| UnitId::new(t).unwrap();
//!
//! // A repository (here in memory), and a job of two units: the lexer, then the parser.
//! let fs = MemFs::new();
//! fs.make_dirs("/repo/.git");
//! let clock = ManualClock::new(chrono::DateTime::UNIX_EPOCH);
//! let env = Env::new(Arc::new(fs), Arc::new(clock), Arc::new(MemHost::new(7, "build-1")));
//! let cp = Path::new("/repo/.shiftwork/checkpoint.json");
//! let job = Job::new(text("compiler"), text("Parse the language."), text("make test"))
//!     .with_constraints(vec![text("no new dependencies")]);
//! let new = CheckpointBuilder::new(job)
//!     .unit(PlannedUnit::new(id("lexer"), text("Lexer"), Role::Implementer, text("make lexer")))
//!     .unit(PlannedUnit::new(id("parser"), text("Parser"), Role::Implementer, text("make parser")).depends_on([id("lexer")]))
//!     .build()
//!     .unwrap();
//! create(&env, cp, &new).unwrap();
//!
//! // Plan: which units may run now.
//! let plan = shiftwork_core::plan_checkpoint(&env, cp).unwrap();
//! assert_eq!(plan.ready(), ["lexer"]);
//!
//! // Clock in: the brief for the agent that does the cursor unit (recorded in the ledger).
//! let ClockIn::Brief(brief) = shiftwork_core::clock_in(&env, cp, None).unwrap() else {
//!     panic!("the lexer is ready");
//! };
//! assert_eq!((brief.unit().id.as_str(), brief.role()), ("lexer", Role::Implementer));
//!
//! // A clock-out of the parser now is refused; the refusal is matched by variant, not by its text.
//! let out = |unit: &str| ClockOut::new(cp, id(unit), UnitStatus::Done, HistoryEntry::new(id(unit), text("done")));
//! match shiftwork_core::clock_out(&env, &out("parser")) {
//!     Err(ShiftworkRefusal::NotCursor { unit, cursor }) => assert_eq!((unit.as_str(), cursor.as_str()), ("parser", "lexer")),
//!     other => panic!("{other:?}"),
//! }
//!
//! // Clock out the lexer with its cost: the cursor moves on.
//! let done = shiftwork_core::clock_out(&env, &out("lexer").with_accounting(Accounting::new(41_250, std::time::Duration::from_millis(95_000)))).unwrap();
//! assert_eq!((done.status, done.cursor.as_str()), (UnitStatus::Done, "parser"));
//! assert_eq!(done.log, "/repo/.shiftwork/checkpoint.json.log.jsonl");
//! ```
//!
//! # Compatibility with bantamkit
//!
//! bantamkit is a Python package whose MCP server (`bantamkit-mcp`, from `pip install
//! 'bantamkit[mcp]'`) serves the same shift-work tools; this crate is compatible with its release
//! 0.36.2, and the rest of these docs mean that release by "bantamkit". Compatible means two things:
//!
//! - **The same files.** A checkpoint or a ledger either program wrote, the other reads and continues;
//!   for the same operation on the same files, both write the same bytes (the checkpoint's layout, the
//!   ledger's lines, the lock file's protocol).
//! - **The same answers.** For the same call on the same files, the answer is the same JSON, and a
//!   refusal is the same sentence, found by the same checks in the same order ("bantamkit's order",
//!   "bantamkit's sentence").
//!
//! Where this crate differs, it does so on purpose, and the differences are listed under [Beyond
//! bantamkit 0.36.2](#beyond-bantamkit-0362-our-decisions).
//!
//! # Layout
//!
//! One operation per tool — [`work_plan`], [`plan_checkpoint`], [`status`], [`clock_in`],
//! [`clock_out`] — each answering a typed result ([`WorkPlan`], [`Plan`], [`Status`], [`ClockIn`],
//! [`ClockedOut`]) or a [`ShiftworkRefusal`], whose `Display` is the refusal's sentence and whose
//! [`ShiftworkRefusal::code`] names it for logs. The values of a checkpoint are typed in [`model`]
//! (ids, statuses, roles, history entries, planned units); a clock-out is a [`ClockOut`], and a new
//! checkpoint is built and written by [`authoring`]. An MCP server passes a client's arguments as
//! they came ([`ClockOutArguments`], [`clock_out_arguments`]) and renders every result and refusal as
//! the tool's JSON answer ([`Answer::to_answer`]), which is the one place results become JSON. Each
//! operation gathers through the seams of an [`Env`], lets the pure [`decide`] layer judge — no
//! filesystem, host or clock in any of its signatures — and applies what was decided.
//! [`Checkpoint`] is the typed read view of a validated document; [`json`] is the JSON codec
//! ([`shiftwork_json`]).
//!
//! # Design notes
//!
//! - **A checkpoint is read in place.** Its text is kept and a [`json::Tape`] says where each value is
//!   (about two thirds of the text beside it); the plan, the status and the clock-in read that, and
//!   only the clock-out, which changes the document, builds it. A plan of a checkpoint peaks at about
//!   2.4 times the file (13 times when every checkpoint was built).
//! - **The schema is code.** [`schema::validate_checkpoint`] walks the document once and keeps only
//!   the path of the violation it will report, where a generic validator collects every violation; a
//!   property test holds it to the `jsonschema` crate on [`CHECKPOINT_SCHEMA`].
//! - **Two forms of a clock-out.** A program builds a [`ClockOut`], which cannot miss a required part
//!   or hold a status outside the five; a server passes the tool's arguments as a client sent them
//!   ([`ClockOutArguments`]), so that every value, however wrong, is refused by the same gate and
//!   sentence as bantamkit refuses it. The first converts into the second.
//!
//! # Beyond bantamkit 0.36.2 (our decisions)
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
//!   refused before the first write ([`ShiftworkRefusal::TooLargeToWrite`], the sentence naming the
//!   bound). The ledger reader skips a longer line whole.
//! - **Memory admission.** An [`Env`] may hold a [`MemoryBudget`]: a call reserves its peak, a
//!   multiple of its checkpoint's size, before it reads; without room it waits on the `Clock` (at most
//!   the budget's wait, 30 s by default) and is refused [`ShiftworkRefusal::MemoryBusy`]; a call that
//!   needs more than the whole budget is refused at once ([`ShiftworkRefusal::MemoryTooLarge`]) rather
//!   than run alone, which could exhaust the machine. These two are not answers about the checkpoint
//!   ([`ShiftworkRefusal::is_answer`]): the MCP server reports them as tool errors. [`Env::new`] has
//!   no budget.
//! - **One agent-id grammar.** A clock-out's `agent_id` follows the family's grammar
//!   ([`shiftwork_seams::agent`]: `bob.smith` and `svc:deploy@eu` are agent ids). bantamkit 0.36.2
//!   takes no `agent_id`; the pattern of its later descriptions (`^[A-Za-z0-9_-]{1,64}$`) refuses
//!   `bob.smith`, which this crate accepts. An id both refuse keeps the pattern's sentence, and one
//!   only the grammar refuses (`-x`) gets [`ShiftworkRefusal::AgentIdRefused`].
//! - **Truthful variants where bantamkit words two cases alike.** A clock-in of a unit that does not
//!   exist is [`ShiftworkRefusal::UnknownUnit`] (not `NotReady`), a clock-out of a unit already done
//!   or dropped is [`ShiftworkRefusal::AlreadyFinished`] (not `NotCursor`); their sentences are
//!   bantamkit's.
//! - **Confinement and identity for servers.** An [`Env`] built [`Env::with_roots`] opens no file
//!   outside its roots; [`ClockOutArguments::acting_as`] makes an authenticated caller's own id the
//!   clock-out's `agent_id` and refuses another.
//!
//! # What this crate never does
//!
//! It calls no `std::fs`, reads no clock, spawns no process and reads no environment: files go through
//! [`shiftwork_seams::Fs`], time through [`shiftwork_seams::Clock`], process identity and probes
//! through [`shiftwork_seams::Host`]. It names no MCP type and no async runtime. It logs nothing: it
//! opens `tracing` spans around the checkpoint read (`shiftwork.checkpoint_read`), the lock wait
//! (`shiftwork.lock_wait`) and the durable write (`shiftwork.durable_write`), which cost nothing
//! when no subscriber listens and let a server's traces say where a slow call spent its time; no
//! event, no log line. No public operation panics on any input: every refusal is a value. Relay
//! probes — shell commands taken from the checkpoint — run only in an [`Env`] built
//! [`Env::with_probes`].

/// The JSON of checkpoints, ledger lines and arguments: [`shiftwork_json`], JSON as Python's `json`
/// module reads and writes it.
pub use shiftwork_json as json;

pub mod admission;
pub mod answer;
pub mod authoring;
pub mod budget;
pub mod checkpoint;
mod commit;
pub mod decide;
mod env;
pub mod ledger;
mod ledger_index;
mod ledger_line;
mod line_split;
pub mod lock;
pub mod model;
mod operations;
pub mod paths;
pub mod planner;
pub mod ranking;
pub mod records;
mod recovery;
mod refusal;
mod request;
mod results;
mod roots;
pub mod schema;
mod schema_instance;
pub mod search;
mod view;

pub use admission::{MemoryBudget, Reservation};
pub use answer::Answer;
pub use budget::BudgetDimension;
pub use decide::clock_out::{ClockOutArguments, next_cursor};
pub use env::{Env, PROBE_TIMEOUT};
pub use operations::{
    clock_in, clock_in_arguments, clock_out, clock_out_arguments, plan_checkpoint, preview_brief, status,
};
pub use paths::CheckpointPaths;
pub use planner::work_plan;
pub use recovery::recover;
pub use refusal::{FileError, NodeField, ShiftworkRefusal, TextPosition, Written};
pub use request::{
    Accounting, AgentId, AgentIdError, AgreementsPatch, ClockOut, Conclusion, ConclusionOutcome, FollowUp,
    HandoffPatch,
};
pub use results::{
    Brief, ClockIn, ClockedOut, Escalation, FailedProbe, HeldUnit, OpenQuestions, Plan, Ranked, Status,
    Upstream, WorkPlan,
};
pub use roots::Confined;

/// The refusal's former name.
#[deprecated(
    since = "0.2.0",
    note = "renamed to `ShiftworkRefusal`, so that it reads apart from the contracts' refusals"
)]
pub type Refusal = ShiftworkRefusal;
pub use schema::CHECKPOINT_SCHEMA;
pub use view::{Checkpoint, Unit};

/// The crate's README, run as a doc test so that its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
