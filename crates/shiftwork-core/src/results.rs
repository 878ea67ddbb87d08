//! What the operations answer when they do not refuse: typed values. Their JSON answer objects are
//! one rendering of them ([`crate::Answer`]); [`crate::Refusal`] is the other side of each result.

use crate::budget::Budget;
use crate::json::Json;
use crate::search::SearchResult;

/// `work_plan`'s answer (§6.4): the waves of a graph given inline, its ids borrowed from the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkPlan<'a> {
    /// The batches: node ids, each batch in run order (higher priority first).
    pub batches: Vec<Vec<&'a str>>,
    /// The holds (SW-52), present when some node has a non-null `touches`.
    pub held: Option<Vec<HeldUnit>>,
}

/// A node held out of a batch because another node of that batch claimed a path it touches (SW-52).
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

/// `shiftwork_plan`'s answer (§7.3): the batch view of a checkpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The batches of the non-terminal units.
    pub batches: Vec<Vec<String>>,
    /// `plan.cursor`.
    pub cursor: String,
    /// The holds, present when some non-terminal unit has a `touches` key.
    pub held: Option<Vec<HeldUnit>>,
    /// The budget figures, present when the checkpoint declares `job.budget` (SW-131).
    pub budget: Option<Budget>,
    /// The experimentation ranking, present when `job.kind` is `experimentation` (SW-138).
    pub ranking: Option<Vec<Ranked>>,
}

/// A validated candidate of an experimentation job (SW-138).
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
    /// `ready` (SW-59): the first batch, or none.
    pub fn ready(&self) -> &[String] {
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

/// `shiftwork_status`'s answer (§8).
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    /// `plan.cursor`.
    pub cursor: String,
    /// How many units hold each status, in order of first appearance.
    pub units: Vec<(String, usize)>,
    /// The number of open questions.
    pub open_questions: usize,
    /// The last history entry, verbatim.
    pub last_history: Option<Json>,
    /// The archive search, when one was asked for (SW-139).
    pub search: Option<SearchResult>,
}

/// What a clock-in answers when it does not refuse (§9).
#[derive(Debug, Clone, PartialEq)]
pub enum ClockIn {
    /// The brief of the selected unit, recorded in the ledger.
    Brief(Box<Brief>),
    /// A question for a human: an open question, or a cursor that names no unit.
    Escalate(Escalation),
    /// Every unit is done or dropped (`{"result": "success", "reason": "all units done or dropped"}`).
    AllDone,
}

/// The brief of one unit (SW-74): what the agent that does it needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Brief {
    /// The unit, verbatim.
    pub unit: Json,
    /// Its role.
    pub role: String,
    /// `job.constraints`.
    pub invariants: Json,
    /// `handoff`.
    pub handoff: Json,
    /// `handoff.do_not`.
    pub do_not: Json,
    /// `state.artifacts`.
    pub files: Json,
    /// `job.agreements`, when the checkpoint has the key.
    pub agreements: Option<Json>,
    /// What each dependency with attempts produced last (SW-119); none: no `upstream` key.
    pub upstream: Vec<Upstream>,
}

/// What one dependency of a briefed unit produced in its newest attempt (SW-119).
#[derive(Debug, Clone, PartialEq)]
pub struct Upstream {
    /// The dependency.
    pub unit: String,
    /// Its newest attempt's `produced`.
    pub last: Vec<Json>,
}

/// A clock-in that needs a human (SW-67 steps 2 and 4). `Display` is its `reason`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Escalation {
    /// An open question: a decision question, or a relay whose probe did not answer it.
    #[error("open question: {question}")]
    OpenQuestion {
        /// The question named: the first decision question, or the failed relay's `q`.
        question: String,
        /// `handoff.open_questions`, verbatim.
        open_questions: Vec<Json>,
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

/// A relay probe that did not answer its relay (SW-72).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedProbe {
    /// The relay's `q`.
    pub question: String,
    /// Its exit status, or `None` when it timed out, was killed or did not start.
    pub exit: Option<i32>,
}

/// `shiftwork_clock_out`'s answer (gate 17): the unit recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClockedOut {
    /// The unit.
    pub unit: String,
    /// Its new status.
    pub status: String,
    /// The new `plan.cursor`.
    pub cursor: String,
    /// The ledger path as printed (SW-18).
    pub log: String,
}
