//! What the operations answer when they do not refuse: typed values. Their JSON answer objects are
//! one rendering of them ([`crate::Answer`]); [`crate::ShiftworkRefusal`] is the other side of each result.

use crate::budget::Budget;
use crate::json::Json;
use crate::model::{
    Artifact, Handoff, HistoryEntry, PlannedUnit, Produced, Question, Role, Text, UnitId, UnitStatus,
};
use crate::search::SearchResult;

/// `work_plan`'s answer: the waves of a graph given inline, its ids borrowed from the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkPlan<'a> {
    /// The batches: node ids, each batch in run order (higher priority first).
    pub batches: Vec<Vec<&'a str>>,
    /// The holds, present when some node has a non-null `touches`.
    pub held: Option<Vec<HeldUnit>>,
}

/// A node held out of a batch because another node of that batch claimed a path it touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldUnit {
    /// The held node.
    pub id: String,
    /// The first batch it was held out of (0-based).
    pub batch: usize,
    /// The node that claimed the path.
    pub by: String,
    /// The path, normalized.
    pub path: String,
}

/// `shiftwork_plan`'s answer: the batch view of a checkpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The batches of the non-terminal units.
    pub batches: Vec<Vec<UnitId>>,
    /// `plan.cursor`.
    pub cursor: UnitId,
    /// The holds, present when some non-terminal unit has a `touches` key.
    pub held: Option<Vec<HeldUnit>>,
    /// The budget figures, present when the checkpoint declares `job.budget`.
    pub budget: Option<Budget>,
    /// The experimentation ranking, present when `job.kind` is `experimentation`.
    pub ranking: Option<Vec<Ranked>>,
}

/// A validated candidate of an experimentation job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ranked {
    /// The candidate unit.
    pub id: String,
    /// Its reported score, as written.
    pub score: String,
    /// Its submitted commit.
    pub sha: String,
}

/// The batch list's common views.
fn sequence<S: AsRef<str>>(batches: &[Vec<S>]) -> impl Iterator<Item = &str> {
    batches.iter().flatten().map(AsRef::as_ref)
}

fn width<S>(batches: &[Vec<S>]) -> usize {
    batches.iter().map(Vec::len).max().unwrap_or(0)
}

impl WorkPlan<'_> {
    /// Every node in run order: the batches one after another.
    pub fn sequence(&self) -> impl Iterator<Item = &str> {
        sequence(&self.batches)
    }

    /// The longest batch's length.
    pub fn width(&self) -> usize {
        width(&self.batches)
    }
}

impl Plan {
    /// `ready`: the first batch, or none.
    pub fn ready(&self) -> &[UnitId] {
        self.batches.first().map_or(&[], Vec::as_slice)
    }

    /// Every unit in run order.
    pub fn sequence(&self) -> impl Iterator<Item = &str> {
        sequence(&self.batches)
    }

    /// The longest batch's length.
    pub fn width(&self) -> usize {
        width(&self.batches)
    }

    /// The experimentation winner: the first ranked candidate.
    pub fn winner(&self) -> Option<&str> {
        self.ranking.as_ref()?.first().map(|r| r.id.as_str())
    }
}

/// `shiftwork_status`'s answer: the cursor, the units per status, the open questions, the last
/// history entry and, when asked for, the archive's matching lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    cursor: UnitId,
    units: Vec<(UnitStatus, usize)>,
    open_questions: usize,
    last_history: Option<HistoryEntry>,
    search: Option<SearchResult>,
    /// The last history entry as the checkpoint holds it, for the answer (which repeats it verbatim).
    pub(crate) last_history_json: Option<Json>,
}

impl Status {
    pub(crate) fn new(
        cursor: UnitId,
        units: Vec<(UnitStatus, usize)>,
        open_questions: usize,
        last_history_json: Option<Json>,
        search: Option<SearchResult>,
    ) -> Status {
        Status {
            cursor,
            units,
            open_questions,
            last_history: last_history_json.as_ref().map(HistoryEntry::read),
            search,
            last_history_json,
        }
    }

    /// `plan.cursor`: the unit a clock-in briefs by default.
    pub fn cursor(&self) -> &UnitId {
        &self.cursor
    }

    /// How many units hold each status, in the order each status first appears in the plan.
    pub fn units(&self) -> &[(UnitStatus, usize)] {
        &self.units
    }

    /// How many units hold `status`.
    pub fn count(&self, status: UnitStatus) -> usize {
        self.units
            .iter()
            .find(|(s, _)| *s == status)
            .map_or(0, |(_, n)| *n)
    }

    /// The number of open questions in the handoff.
    pub fn open_questions(&self) -> usize {
        self.open_questions
    }

    /// The newest entry of the history ring.
    pub fn last_history(&self) -> Option<&HistoryEntry> {
        self.last_history.as_ref()
    }

    /// The archive search, when one was asked for.
    pub fn search(&self) -> Option<&SearchResult> {
        self.search.as_ref()
    }
}

/// What a clock-in answers when it does not refuse.
#[derive(Debug, Clone, PartialEq)]
pub enum ClockIn {
    /// The brief of the selected unit, recorded in the ledger.
    Brief(Box<Brief>),
    /// A question for a human: an open question, or a cursor that names no unit.
    Escalate(Escalation),
    /// Every unit is done or dropped (`{"result": "success", "reason": "all units done or dropped"}`).
    AllDone,
}

/// The brief of one unit: what the agent that does it needs — the unit, its role, the job's
/// constraints, the handoff, the job's files and agreements, and what its dependencies produced last.
#[derive(Debug, Clone, PartialEq)]
pub struct Brief {
    unit: PlannedUnit,
    invariants: Vec<Text>,
    handoff: Handoff,
    files: Vec<Artifact>,
    agreements: Option<Vec<Text>>,
    upstream: Vec<Upstream>,
    /// The answer object, its parts as the checkpoint holds them (verbatim: key order kept).
    pub(crate) answer: Json,
}

impl Brief {
    pub(crate) fn new(
        unit: PlannedUnit,
        invariants: Vec<Text>,
        handoff: Handoff,
        files: Vec<Artifact>,
        agreements: Option<Vec<Text>>,
        upstream: Vec<Upstream>,
        answer: Json,
    ) -> Brief {
        Brief {
            unit,
            invariants,
            handoff,
            files,
            agreements,
            upstream,
            answer,
        }
    }

    /// The unit.
    pub fn unit(&self) -> &PlannedUnit {
        &self.unit
    }

    /// Its role.
    pub fn role(&self) -> Role {
        self.unit.role
    }

    /// The job's constraints: what every unit must keep true.
    pub fn invariants(&self) -> &[Text] {
        &self.invariants
    }

    /// The handoff from the agent before.
    pub fn handoff(&self) -> &Handoff {
        &self.handoff
    }

    /// What not to do (the handoff's).
    pub fn do_not(&self) -> &[Text] {
        &self.handoff.do_not
    }

    /// The job's files.
    pub fn files(&self) -> &[Artifact] {
        &self.files
    }

    /// The job's working agreements, when the job has the list.
    pub fn agreements(&self) -> Option<&[Text]> {
        self.agreements.as_deref()
    }

    /// What each dependency with attempts produced in its newest one (none: no dependency has an
    /// attempt yet).
    pub fn upstream(&self) -> &[Upstream] {
        &self.upstream
    }
}

/// What one dependency of a briefed unit produced in its newest attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    /// The dependency.
    pub unit: UnitId,
    /// What its newest attempt produced.
    pub last: Vec<Produced>,
}

/// The open questions an escalation repeats: typed, and as the checkpoint holds them (the answer
/// repeats them verbatim).
#[derive(Debug, Clone, PartialEq)]
pub struct OpenQuestions {
    questions: Vec<Question>,
    pub(crate) json: Vec<Json>,
}

impl OpenQuestions {
    pub(crate) fn new(json: Vec<Json>) -> OpenQuestions {
        OpenQuestions {
            questions: json.iter().map(Question::read).collect(),
            json,
        }
    }

    /// The questions, in order.
    pub fn as_slice(&self) -> &[Question] {
        &self.questions
    }
}

impl std::ops::Deref for OpenQuestions {
    type Target = [Question];

    fn deref(&self) -> &[Question] {
        &self.questions
    }
}

/// A clock-in that needs a human. `Display` is its `reason`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Escalation {
    /// An open question: a decision question, or a relay whose probe did not answer it.
    #[error("open question: {question}")]
    OpenQuestion {
        /// The question named: the first decision question, or the failed relay's `q`.
        question: String,
        /// The handoff's open questions.
        open_questions: OpenQuestions,
        /// The relay's probe that did not answer it.
        probe: Option<FailedProbe>,
    },
    /// The default unit: `plan.cursor` names no unit.
    #[error("cursor {cursor} names no unit")]
    CursorNamesNoUnit {
        /// `plan.cursor`.
        cursor: String,
    },
}

/// A relay probe that did not answer its relay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedProbe {
    /// The relay's `q`.
    pub question: String,
    /// Its exit status, or `None` when it timed out, was killed or did not start.
    pub exit: Option<i32>,
}

/// `shiftwork_clock_out`'s answer: the unit recorded, its new status, the new cursor and the ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClockedOut {
    /// The unit.
    pub unit: UnitId,
    /// Its new status.
    pub status: UnitStatus,
    /// The new `plan.cursor`.
    pub cursor: UnitId,
    /// The ledger's path as printed, `<checkpoint>.log.jsonl`.
    pub log: String,
}
