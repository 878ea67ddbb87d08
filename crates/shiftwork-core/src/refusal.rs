//! Every refusal of shift work as a value: [`ShiftworkRefusal`], one variant per refusal sentence,
//! carrying the values its sentence names. Its `Display` is the sentence, byte for byte; the answer
//! `{"result": "error", "reason": …}` is its rendering ([`crate::Answer`]), clipped there.

use std::io;
use std::path::PathBuf;

use chrono::{DateTime, Utc};

use crate::json::{Json, python_str, python_string_literal};
use crate::model::{UnitId, UnitStatus};
pub use crate::roots::Confined;
use crate::schema::SchemaViolation;

/// Why a file could not be read or written, as the sentences' tails render it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileError {
    /// The operating system's error number: `ENOENT`, `EISDIR`, `EACCES`, `EFBIG` for a file past the
    /// bound read, … (`EIO` stands for an error without one).
    Os(i32),
    /// Not a regular file: a FIFO, a socket or a device (it has no error number).
    NotRegularFile,
}

impl FileError {
    /// The error of an I/O failure.
    ///
    /// ```
    /// use shiftwork_core::FileError;
    /// assert_eq!(FileError::of(&std::io::Error::from_raw_os_error(2)), FileError::Os(2));
    /// assert_eq!(FileError::of(&shiftwork_seams::not_regular_file()), FileError::NotRegularFile);
    /// ```
    pub fn of(error: &io::Error) -> FileError {
        if shiftwork_seams::is_not_regular_file(error) {
            FileError::NotRegularFile
        } else {
            FileError::Os(error.raw_os_error().unwrap_or(5))
        }
    }

    /// The tail naming `shown_path` as 0.36.2 renders an OS error on POSIX:
    /// `[Errno 2] No such file or directory: 'nope/cp.json'`; `Not a regular file: '<path>'`.
    ///
    /// ```
    /// use shiftwork_core::FileError;
    /// assert_eq!(FileError::Os(21).tail("adir"), "[Errno 21] Is a directory: 'adir'");
    /// assert_eq!(FileError::NotRegularFile.tail("/dev/zero"), "Not a regular file: '/dev/zero'");
    /// ```
    pub fn tail(&self, shown_path: &str) -> String {
        let shown = python_string_literal(shown_path);
        match self {
            FileError::NotRegularFile => format!(
                "{}: {shown}",
                shiftwork_seams::os_reason(&shiftwork_seams::not_regular_file())
            ),
            FileError::Os(code) => {
                let text = shiftwork_seams::os_reason(&io::Error::from_raw_os_error(*code));
                format!("[Errno {code}] {text}: {shown}")
            }
        }
    }
}

/// Where in a text a decoder message points: 1-based line and column, 0-based code-point offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextPosition {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in code points.
    pub column: usize,
    /// 0-based code-point offset.
    pub char_offset: usize,
}

fn decoder_message(what: &str, at: Option<&TextPosition>) -> String {
    match at {
        Some(p) => format!(
            "{what}: line {} column {} (char {})",
            p.line, p.column, p.char_offset
        ),
        None => format!("{what} (no position given: the file does not begin as a JSON object)"),
    }
}

/// What a refused write would have written ([`ShiftworkRefusal::TooLargeToWrite`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Written {
    /// The checkpoint (a clock-out).
    Checkpoint,
    /// A ledger line: the accounting line or the uncommitted marker of a clock-out, the brief line of a
    /// clock-in.
    LedgerLine,
    /// The lock file's identity and intent records.
    LockRecords,
}

fn too_large_to_write(what: Written, size: Option<u64>, limit: u64) -> String {
    let (what, reader) = match what {
        Written::Checkpoint => ("the checkpoint", "a checkpoint's reader reads"),
        Written::LedgerLine => ("the ledger line", "a ledger's reader reads of one line"),
        Written::LockRecords => ("the lock file's records", "a lock's reader reads"),
    };
    let size = match size {
        Some(n) => format!("{n} bytes, more than"),
        None => String::from("more than"),
    };
    format!(
        "refused to write: {what} would be {size} {}, the most {reader}; nothing written",
        byte_size(limit)
    )
}

/// `268435456 bytes (256 MiB)`.
fn byte_size(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{n} bytes ({} MiB)", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{n} bytes ({} KiB)", n >> 10)
    } else {
        format!("{n} bytes")
    }
}

/// The field of a `work_plan` node (or a unit) that has the wrong shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NodeField {
    /// `id`: must be a string.
    Id,
    /// `depends_on`: must be a list of strings.
    DependsOn,
    /// `priority`: must be an integer.
    Priority,
    /// `touches`: must be a list of repo-relative paths.
    Touches,
}

/// A refusal: the answer `{"result": "error", "reason": <sentence>}` of a shift-work operation, as a
/// value an embedder matches by variant. Each variant carries the values its sentence names; `Display`
/// is the sentence bantamkit 0.36.2 answers (or ours, where we go beyond it), unclipped (the answer clips it to 2,000 code points).
///
/// ```
/// use shiftwork_core::ShiftworkRefusal;
/// use shiftwork_core::model::UnitId;
/// let id = |t: &str| UnitId::new(t).unwrap();
/// let refusal = ShiftworkRefusal::NotCursor { unit: id("U4"), cursor: id("U3") };
/// assert_eq!(refusal.to_string(), "unit U4 is not the cursor unit U3");
/// assert!(matches!(refusal, ShiftworkRefusal::NotCursor { ref cursor, .. } if cursor == "U3"));
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ShiftworkRefusal {
    /// The checkpoint file could not be read: missing, not a regular file, too large, no permission.
    #[error("checkpoint unreadable: {}", .error.tail(path))]
    Unreadable {
        /// The checkpoint path as printed.
        path: String,
        /// Why.
        error: FileError,
    },
    /// The checkpoint is not UTF-8; the message is Python's decoder message without the
    /// byte's value, and without its position unless the file begins as a JSON object.
    #[error("checkpoint unreadable: {message}")]
    NotUtf8 {
        /// `'utf-8' codec can't decode a byte in position 21: invalid start byte`.
        message: String,
    },
    /// The checkpoint is not JSON: Python's decoder message, `<what>: line <l> column <c> (char <n>)`; the position is
    /// withheld (`at: None`) for a file that does not begin as a JSON object, unless the error is at
    /// its first character.
    #[error("checkpoint is not parseable as JSON: {}", decoder_message(what, at.as_ref()))]
    NotJson {
        /// What was wrong (`Expecting value`, `Extra data`, …).
        what: &'static str,
        /// Where, when shown.
        at: Option<TextPosition>,
    },
    /// The checkpoint does not match the checkpoint schema.
    #[error("checkpoint invalid: {0}")]
    Invalid(SchemaViolation),
    /// Two units (or nodes, or follow-ups) have one id.
    #[error("duplicate node id {id}")]
    DuplicateId {
        /// The repeated id.
        id: String,
    },
    /// A node of `work_plan`, or a unit's `touches`, has the wrong shape: `nodes[<i>] must be an object`, or `nodes[<i>].<field> must be …`.
    #[error("{}", node_shape(*index, *field))]
    NodeShape {
        /// The node's 0-based position (for a checkpoint, the unit's position in `plan.units`).
        index: usize,
        /// The field that is wrong, or `None` when the node is not an object.
        field: Option<NodeField>,
    },
    /// A node depends on an id no node declares.
    #[error("node {node} depends on {dependency}, which no node declares")]
    UnknownDependency {
        /// The node.
        node: String,
        /// The dependency nobody declares.
        dependency: String,
    },
    /// The dependencies form a cycle: the walk of one cycle, the first id repeated at the end.
    #[error("the graph has a cycle: {}", .walk.join(" -> "))]
    Cycle {
        /// The ids of the cycle, `[a, b, a]`.
        walk: Vec<String>,
    },
    /// A unit's `reviews` names no unit.
    #[error("unit {unit} reviews {reviewed}, which no unit declares")]
    ReviewsUnknownUnit {
        /// The reviewing unit.
        unit: String,
        /// The id it reviews.
        reviewed: String,
    },
    /// A unit reviews a unit that is not among its dependencies.
    #[error("unit {unit} reviews {reviewed}, which is not in its depends_on")]
    ReviewsNonDependency {
        /// The reviewing unit.
        unit: String,
        /// The reviewed unit.
        reviewed: String,
    },
    /// A unit reviews a unit of its own role.
    #[error("unit {unit} reviews {reviewed}, which is in its own role {role}")]
    ReviewsOwnRole {
        /// The reviewing unit.
        unit: String,
        /// The reviewed unit.
        reviewed: String,
        /// Their shared role.
        role: String,
    },
    /// A clock-in names a unit that is not ready (not in the first wave).
    #[error("unit {unit} is not ready; ready is {}", join(ready))]
    NotReady {
        /// The selected unit.
        unit: UnitId,
        /// The ready units.
        ready: Vec<UnitId>,
    },
    /// Clock-in of a `unit_id` that names no unit of the plan. The sentence is the one of
    /// [`ShiftworkRefusal::NotReady`] (bantamkit 0.36.2 words both alike); the variant tells them apart.
    /// The id is the one asked for; from [`crate::clock_in_arguments`] it is the client's text as
    /// sent, which may be empty (the one `UnitId` that is: a client may ask for `""`).
    #[error("unit {unit} is not ready; ready is {}", join(ready))]
    UnknownUnit {
        /// The `unit_id` asked for.
        unit: UnitId,
        /// The ready units.
        ready: Vec<UnitId>,
    },
    /// A clock-in's unit touches a path that a unit in flight (briefed, not finished) holds.
    #[error("unit {unit} touches {path}, which {holder} holds until its clock-out")]
    TouchesHeld {
        /// The selected unit.
        unit: String,
        /// The shared path, normalized.
        path: String,
        /// The in-flight unit that holds it.
        holder: String,
    },
    /// A clock-in would go past the job's budget (spent plus what the units in flight reserve).
    #[error("budget {dimension} spent: {used} of {limit}; raise job.budget or stop the job")]
    BudgetSpent {
        /// The dimension that is spent.
        dimension: crate::budget::BudgetDimension,
        /// Spent plus reserved.
        used: i128,
        /// The declared limit.
        limit: i128,
    },
    /// A clock-out (or a create) found the checkpoint's lock held for the whole wait (5 s). The sentence names who
    /// holds it, since when, and the file to remove should that holder be gone.
    #[error("{}", locked(path, *pid, host.as_deref(), *since))]
    Locked {
        /// The lock file (`<T>.lock`, absolute).
        path: PathBuf,
        /// The holder's pid, when the lock's first line is one.
        pid: Option<u32>,
        /// The holder's host, when the lock names one (0.36.2's locks do not).
        host: Option<String>,
        /// When the lock file was last written, when it could be read.
        since: Option<DateTime<Utc>>,
    },
    /// A clock-out names a unit that is not in the plan.
    #[error("unit {unit} is not in the plan")]
    NotInPlan {
        /// The `unit_id` argument.
        unit: String,
    },
    /// A clock-out names a unit that is neither the cursor nor briefed since its last clock-out.
    #[error("unit {unit} is not the cursor unit {cursor}")]
    NotCursor {
        /// The `unit_id` argument.
        unit: UnitId,
        /// `plan.cursor`.
        cursor: UnitId,
    },
    /// A clock-out names a unit that is already finished (`done` or `dropped`), is not the cursor
    /// and was not briefed since: it was clocked out before. The sentence is the one of
    /// [`ShiftworkRefusal::NotCursor`] (bantamkit 0.36.2 words both alike); the variant tells them apart.
    #[error("unit {unit} is not the cursor unit {cursor}")]
    AlreadyFinished {
        /// The `unit_id` argument.
        unit: UnitId,
        /// Its status, `done` or `dropped`.
        status: UnitStatus,
        /// `plan.cursor`.
        cursor: UnitId,
    },
    /// A clock-out of a unit whose role `job.roles` names with something other than a list of models.
    #[error(
        "unit {unit} in role {role} cannot clock out: job.roles.{role} is not a list of model identifiers, so it allows no model"
    )]
    RolesNotAList {
        /// The unit.
        unit: String,
        /// Its role.
        role: String,
    },
    /// A clock-out reports no model, and `job.roles` names models for the unit's role.
    #[error("unit {unit} in role {role} reported no model, but job.roles.{role} allows only: {}", .allowed.join(", "))]
    NoModel {
        /// The unit.
        unit: String,
        /// Its role.
        role: String,
        /// The models the role allows, in checkpoint order.
        allowed: Vec<String>,
    },
    /// A clock-out reports a model that `job.roles` does not allow for the unit's role.
    #[error(
        "unit {unit} in role {role} reported model {}, which job.roles.{role} does not allow: {}",
        python_str(model),
        .allowed.join(", ")
    )]
    ModelNotAllowed {
        /// The unit.
        unit: String,
        /// Its role.
        role: String,
        /// The reported `model` (any JSON value; rendered in Python `str` rendering).
        model: Box<Json>,
        /// The models the role allows, in checkpoint order.
        allowed: Vec<String>,
    },
    /// A clock-out's accounting line does not have the accounting shape (`tokens` and `duration_ms`
    /// whole numbers at least 0, …).
    #[error("unit {unit} in role {role} reported an accounting line the schema refuses: {violation}")]
    AccountingShape {
        /// The unit.
        unit: String,
        /// Its role.
        role: String,
        /// The violation, at `accounting…`.
        violation: SchemaViolation,
    },
    /// A clock-out's accounting line sets the runtime's own keys (`unit`, `role`, `status`, `ts`,
    /// `event`, `agent_id`).
    #[error("unit {unit} in role {role} reported an accounting line that sets the runtime's own keys: {}", .keys.join(", "))]
    ReservedKeys {
        /// The unit.
        unit: String,
        /// Its role.
        role: String,
        /// The reserved keys present, in the sentence's order.
        keys: Vec<&'static str>,
    },
    /// A clock-out reports 0 tokens in a job with a budget, without `estimate: true`.
    #[error(
        "unit {unit} in role {role} reported 0 tokens, which job.budget refuses unless the line carries estimate: true"
    )]
    ZeroTokens {
        /// The unit.
        unit: String,
        /// Its role.
        role: String,
    },
    /// A clock-out's `agent_id`, `agreements`, `conclusion` or `follow_ups` does not have its shape.
    #[error("unit {unit} in role {role} sent {argument} the schema refuses: {violation}")]
    ArgumentShape {
        /// The unit.
        unit: String,
        /// Its role.
        role: String,
        /// `agent_id`, `agreements`, `conclusion` or `follow_ups`.
        argument: &'static str,
        /// The violation, at `<argument>…`.
        violation: SchemaViolation,
    },
    /// A clock-out's `agent_id` is a string outside the family's agent-id grammar
    /// ([`shiftwork_seams::agent`]) that the schema's pattern accepts (`-x`, `_x`). Our decision: the
    /// family has one agent-id grammar; bantamkit 0.36.2 takes no `agent_id` at all, and the pattern of
    /// the later descriptions (`^[A-Za-z0-9_-]{1,64}$`) refuses `bob.smith`, which this grammar accepts.
    #[error("unit {unit} in role {role} sent an agent_id that is not an agent id: {error}")]
    AgentIdRefused {
        /// The unit.
        unit: String,
        /// Its role.
        role: String,
        /// What is wrong with it.
        error: shiftwork_seams::agent::AgentIdError,
    },
    /// A clock-out sends a conclusion for a unit without `concludes: true`.
    #[error("unit {unit} cannot send a conclusion: only a unit with concludes: true may")]
    NotConcluder {
        /// The unit.
        unit: String,
    },
    /// A clock-out concludes `resolved` without naming the hypothesis it supports.
    #[error("conclusion resolved needs supported: the hypothesis id its evidence supports")]
    ResolvedWithoutSupported,
    /// A clock-out concludes `resolved` for a hypothesis no done run tests.
    #[error("conclusion resolved for {hypothesis} needs a done run: no done unit tests {hypothesis}")]
    NoDoneRun {
        /// The supported hypothesis.
        hypothesis: String,
    },
    /// A clock-out concludes `resolved` without a done replay of a run in another role.
    #[error("conclusion resolved for {hypothesis} needs a done replay of run {run} in another role")]
    NoReplay {
        /// The supported hypothesis.
        hypothesis: String,
        /// The first done run.
        run: String,
    },
    /// A clock-out concludes `resolved` without a done review of a run or its replay.
    #[error(
        "conclusion resolved for {hypothesis} needs a done review of run {run} or of its replay {replay}"
    )]
    NoReview {
        /// The supported hypothesis.
        hypothesis: String,
        /// The run of the first run/replay pair.
        run: String,
        /// Its replay.
        replay: String,
    },
    /// A run unit is clocked out done without a `run-output` in its history entry's `produced`.
    #[error("unit {unit} is a run unit clocked out done without a run-output in history_entry.produced")]
    NoRunOutput {
        /// The unit.
        unit: String,
    },
    /// A clock-out retires an agreement that is not on `job.agreements`.
    #[error("agreement to retire is not on job.agreements: {agreement}")]
    RetireUnknown {
        /// The text to retire.
        agreement: String,
    },
    /// A clock-out would leave more than 20 agreements.
    #[error("job.agreements would hold {count} agreements; at most 20 are kept")]
    TooManyAgreements {
        /// How many there would be.
        count: usize,
    },
    /// A follow-up's brief is not a regular file below the repository root.
    #[error("follow-up {id} brief {path} is not a file")]
    FollowUpBriefNotAFile {
        /// The follow-up's id.
        id: String,
        /// Its `brief_path`.
        path: String,
    },
    /// A follow-up's role is not declared in `job.roles`.
    #[error("follow-up {id} has role {role}, which job.roles does not declare")]
    FollowUpRoleUndeclared {
        /// The follow-up's id.
        id: String,
        /// Its role.
        role: String,
    },
    /// The document a clock-out would write does not match the checkpoint schema (its values, the
    /// caller's, are quoted).
    #[error("refused to write: {0}")]
    RefusedToWrite(SchemaViolation),
    /// Before the first write of a clock-out or a clock-in (beyond 0.36.2): what it
    /// would write is longer than its reader reads — a checkpoint past [`MAX_CHECKPOINT_BYTES`], a
    /// ledger line past [`MAX_LEDGER_LINE_BYTES`], the lock file's records past
    /// [`shiftwork_seams::lock_file::MAX_LOCK_READ`] — so every later call would fail on it. Nothing is
    /// written. `size` is the length when it is known (a writer that stops at the bound does not
    /// learn it).
    ///
    /// [`MAX_CHECKPOINT_BYTES`]: crate::checkpoint::MAX_CHECKPOINT_BYTES
    /// [`MAX_LEDGER_LINE_BYTES`]: crate::ledger::MAX_LEDGER_LINE_BYTES
    #[error("{}", too_large_to_write(*what, *size, *limit))]
    TooLargeToWrite {
        /// What would have been written.
        what: Written,
        /// Its length in bytes, when known.
        size: Option<u64>,
        /// The most its reader reads, in bytes.
        limit: u64,
    },
    /// Memory admission (beyond 0.36.2): the call needs about `needed` bytes for a
    /// checkpoint of `size` bytes, and the [`crate::MemoryBudget`] stayed taken by other calls for the
    /// whole wait. Nothing was read or written; the same call may succeed later. Not an answer about
    /// the checkpoint: an MCP server reports it as a tool error ([`ShiftworkRefusal::is_answer`]).
    #[error(
        "busy: a call on a checkpoint of {size} bytes needs about {needed} bytes of memory, and the memory budget of {budget} bytes stayed taken by other calls for {} ms; nothing was done, try again",
        .waited.as_millis()
    )]
    MemoryBusy {
        /// The checkpoint's size in bytes.
        size: u64,
        /// The bytes the call reserves.
        needed: u64,
        /// The budget in bytes.
        budget: u64,
        /// How long the call waited.
        waited: std::time::Duration,
    },
    /// Memory admission (beyond 0.36.2): the call needs more than the whole
    /// [`crate::MemoryBudget`], so it is refused at once rather than run alone. Not an answer about
    /// the checkpoint ([`ShiftworkRefusal::is_answer`]).
    #[error(
        "too large: a call on a checkpoint of {size} bytes needs about {needed} bytes of memory, more than the whole memory budget of {budget} bytes; nothing was done"
    )]
    MemoryTooLarge {
        /// The checkpoint's size in bytes.
        size: u64,
        /// The bytes the call would reserve.
        needed: u64,
        /// The budget in bytes.
        budget: u64,
    },
    /// A caller whose identity a server established (an authenticated request) named another agent
    /// in `agent_id`: an agent acts only as itself. Refused before the checkpoint is opened.
    #[error(
        "agent_id names {given}, but this caller authenticated as {authenticated}: an agent acts only as itself."
    )]
    IdentityMismatch {
        /// The agent the argument named (a value that is not a string, as its JSON text).
        given: String,
        /// The agent the caller is.
        authenticated: crate::AgentId,
    },
    /// A path the call would open resolves, symbolic links followed, outside every root of an
    /// [`crate::Env`] confined to roots ([`crate::Env::with_roots`]). Refused before any file is
    /// opened; the sentence names the path as given and the rule, never where it leads.
    #[error(
        "refused: {} resolves outside the directories this server may open; every path it opens must resolve, links followed, inside one of its roots",
        .what.describe(path)
    )]
    OutsideRoots {
        /// Which path.
        what: Confined,
        /// The path as given (for a derived path, the checkpoint's).
        path: String,
    },
    /// A new checkpoint was to be created where a file (or a link) already is: nothing is written.
    #[error(
        "refused: a checkpoint already exists at {}; nothing written",
        python_string_literal(path)
    )]
    CheckpointExists {
        /// The path as given.
        path: String,
    },
    /// A new checkpoint has no unit: there would be nothing to plan.
    #[error("refused: a new checkpoint needs at least one unit")]
    NoUnits,
    /// A new checkpoint could not be created (its directory, its file): nothing is left at its path.
    #[error("checkpoint not created: {}", .error.tail(path))]
    NotCreated {
        /// The path as given.
        path: String,
        /// Why.
        error: FileError,
    },
    /// A clock-out could not write the ledger line; the checkpoint is as it was.
    #[error("accounting log unwritable, checkpoint untouched: {}", .error.tail(path))]
    LedgerUnwritable {
        /// The ledger path as printed.
        path: String,
        /// Why.
        error: FileError,
    },
    /// A clock-out wrote its ledger line but could not replace the checkpoint; the line was withdrawn,
    /// or marked uncommitted when it could not be.
    #[error("checkpoint unwritable, last log line uncommitted: {}", .error.tail(path))]
    CheckpointUnwritable {
        /// The checkpoint path as printed.
        path: String,
        /// Why.
        error: FileError,
    },
}

impl ShiftworkRefusal {
    /// A stable machine name of the refusal, for logs and metrics that must not quote the sentence
    /// (which can hold a client's values): `NOT_READY`, `NOT_CURSOR`, `CYCLE`, … One code per variant;
    /// a code never changes meaning.
    ///
    /// ```
    /// use shiftwork_core::ShiftworkRefusal;
    /// assert_eq!(ShiftworkRefusal::NotInPlan { unit: "U9".into() }.code(), "NOT_IN_PLAN");
    /// assert_eq!(ShiftworkRefusal::Cycle { walk: vec![] }.code(), "CYCLE");
    /// ```
    pub fn code(&self) -> &'static str {
        use ShiftworkRefusal as R;
        match self {
            R::Unreadable { .. } => "CHECKPOINT_UNREADABLE",
            R::NotUtf8 { .. } => "CHECKPOINT_NOT_UTF8",
            R::NotJson { .. } => "CHECKPOINT_NOT_JSON",
            R::Invalid(_) => "CHECKPOINT_INVALID",
            R::DuplicateId { .. } => "DUPLICATE_ID",
            R::NodeShape { .. } => "NODE_SHAPE",
            R::UnknownDependency { .. } => "UNKNOWN_DEPENDENCY",
            R::Cycle { .. } => "CYCLE",
            R::ReviewsUnknownUnit { .. } => "REVIEWS_UNKNOWN_UNIT",
            R::ReviewsNonDependency { .. } => "REVIEWS_NON_DEPENDENCY",
            R::ReviewsOwnRole { .. } => "REVIEWS_OWN_ROLE",
            R::NotReady { .. } => "NOT_READY",
            R::UnknownUnit { .. } => "UNKNOWN_UNIT",
            R::TouchesHeld { .. } => "TOUCHES_HELD",
            R::BudgetSpent { .. } => "BUDGET_SPENT",
            R::Locked { .. } => "LOCKED",
            R::NotInPlan { .. } => "NOT_IN_PLAN",
            R::NotCursor { .. } => "NOT_CURSOR",
            R::AlreadyFinished { .. } => "ALREADY_FINISHED",
            R::RolesNotAList { .. } => "ROLES_NOT_A_LIST",
            R::NoModel { .. } => "NO_MODEL",
            R::ModelNotAllowed { .. } => "MODEL_NOT_ALLOWED",
            R::AccountingShape { .. } => "ACCOUNTING_SHAPE",
            R::ReservedKeys { .. } => "RESERVED_KEYS",
            R::ZeroTokens { .. } => "ZERO_TOKENS",
            R::ArgumentShape { .. } => "ARGUMENT_SHAPE",
            R::AgentIdRefused { .. } => "AGENT_ID_INVALID",
            R::NotConcluder { .. } => "NOT_CONCLUDER",
            R::ResolvedWithoutSupported => "RESOLVED_WITHOUT_SUPPORTED",
            R::NoDoneRun { .. } => "NO_DONE_RUN",
            R::NoReplay { .. } => "NO_REPLAY",
            R::NoReview { .. } => "NO_REVIEW",
            R::NoRunOutput { .. } => "NO_RUN_OUTPUT",
            R::RetireUnknown { .. } => "RETIRE_UNKNOWN",
            R::TooManyAgreements { .. } => "TOO_MANY_AGREEMENTS",
            R::FollowUpBriefNotAFile { .. } => "FOLLOW_UP_BRIEF_NOT_A_FILE",
            R::FollowUpRoleUndeclared { .. } => "FOLLOW_UP_ROLE_UNDECLARED",
            R::RefusedToWrite(_) => "REFUSED_TO_WRITE",
            R::TooLargeToWrite { .. } => "TOO_LARGE_TO_WRITE",
            R::MemoryBusy { .. } => "MEMORY_BUSY",
            R::MemoryTooLarge { .. } => "MEMORY_TOO_LARGE",
            R::IdentityMismatch { .. } => "IDENTITY_MISMATCH",
            R::OutsideRoots { .. } => "OUTSIDE_ROOTS",
            R::CheckpointExists { .. } => "CHECKPOINT_EXISTS",
            R::NoUnits => "NO_UNITS",
            R::NotCreated { .. } => "CHECKPOINT_NOT_CREATED",
            R::LedgerUnwritable { .. } => "LEDGER_UNWRITABLE",
            R::CheckpointUnwritable { .. } => "CHECKPOINT_UNWRITABLE",
        }
    }

    /// Whether this refusal is an answer about the call's own inputs (`{"result": "error", "reason":
    /// …}`) rather than about the server's state. Every refusal is, but memory admission
    /// ([`ShiftworkRefusal::MemoryBusy`], [`ShiftworkRefusal::MemoryTooLarge`]), which an MCP server
    /// reports as a tool error (`isError: true`, `Error executing tool <tool>: <sentence>`), so that a
    /// client retries rather than reads it as the checkpoint's answer.
    ///
    /// ```
    /// use shiftwork_core::ShiftworkRefusal;
    /// assert!(ShiftworkRefusal::NotInPlan { unit: "U9".into() }.is_answer());
    /// assert!(!ShiftworkRefusal::MemoryTooLarge { size: 1, needed: 6, budget: 5 }.is_answer());
    /// ```
    pub fn is_answer(&self) -> bool {
        !matches!(
            self,
            ShiftworkRefusal::MemoryBusy { .. } | ShiftworkRefusal::MemoryTooLarge { .. }
        )
    }
}

/// Ids joined with `, `, as the sentences list them.
fn join(ids: &[UnitId]) -> String {
    ids.iter().map(UnitId::as_str).collect::<Vec<_>>().join(", ")
}

fn node_shape(index: usize, field: Option<NodeField>) -> String {
    match field {
        None => format!("nodes[{index}] must be an object"),
        Some(NodeField::Id) => format!("nodes[{index}].id must be a string"),
        Some(NodeField::DependsOn) => format!("nodes[{index}].depends_on must be a list of strings"),
        Some(NodeField::Priority) => format!("nodes[{index}].priority must be an integer"),
        Some(NodeField::Touches) => format!("nodes[{index}].touches must be a list of repo-relative paths"),
    }
}

/// `checkpoint locked by another clock-out, nothing written: <lock path> (held by process <pid> on host
/// <host> since <ts>; if that holder is gone, the lock is stale: remove <lock path>)`.
fn locked(
    path: &std::path::Path,
    pid: Option<u32>,
    host: Option<&str>,
    since: Option<DateTime<Utc>>,
) -> String {
    let path = path.to_string_lossy();
    let mut who = match pid {
        Some(pid) => format!("process {pid}"),
        None => String::from("an unknown process"),
    };
    if let Some(host) = host {
        who.push_str(" on host ");
        who.push_str(host);
    }
    if let Some(since) = since {
        who.push_str(" since ");
        who.push_str(&crate::records::timestamp(since));
    }
    format!(
        "checkpoint locked by another clock-out, nothing written: {path} (held by {who}; if that holder is gone, the lock is stale: remove {path})"
    )
}

impl shiftwork_seams::Coded for ShiftworkRefusal {
    fn code(&self) -> &'static str {
        ShiftworkRefusal::code(self)
    }
}
