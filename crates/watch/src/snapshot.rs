//! The snapshot: everything the view shows, as plain values.
//!
//! A [`Snapshot`] is built by [`crate::gather`] from the core crates and read by the drawing
//! ([`crate::draw`]), the plain-text report ([`crate::report`]) and the plan pictures
//! ([`crate::picture`]). It holds no terminal type and no core type: statuses are their wire names
//! with a [`Tone`] chosen once, in `gather`, so a status the core crates add later shows up (in the
//! neutral tone) without a change here or in the drawing. Every string in a snapshot is display-safe
//! ([`crate::display_text::clean`]): no control character, bounded length.
//!
//! Instants are absolute; whatever depends on the time (a lease's time left, a waiting contract's
//! age, the hours countdown) is computed from [`Snapshot::now`] by the methods here, so the view can
//! tick every second without reading a file.

use chrono::{DateTime, TimeDelta, Utc};
use chrono_tz::Tz;

/// A lease with less time left than this is shown as about to expire (in red: under one minute).
pub const URGENT_LEASE: TimeDelta = TimeDelta::seconds(60);

/// Everything the view shows at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The instant the view is drawn for (re-stamped every second between reads).
    pub now: DateTime<Utc>,
    /// The zone instants are shown in (the viewer's zone).
    pub zone: Tz,
    /// One pane per watched checkpoint, in the order given.
    pub jobs: Vec<JobPane>,
    /// The contracts pane, when a store is watched.
    pub contracts: Option<ContractsPane>,
    /// The hours line, when an expression is watched.
    pub hours: Option<HoursLine>,
}

/// How a status or a figure is coloured: chosen once, where the status is known, so the drawing
/// never matches on status names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tone {
    /// Not started, waiting (`todo`, `SUBMITTED`).
    Waiting,
    /// Running (`in_progress`, `CLAIMED`).
    Running,
    /// Finished well (`done`, `COMPLETED`).
    Good,
    /// Needs someone (`blocked`).
    Warn,
    /// Ended badly (`FAILED`, `TIMED_OUT`, `POINTER_STALE`).
    Bad,
    /// Set aside, or a status this build does not know (`dropped`).
    Muted,
}

/// A status and how many carry it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusCount {
    /// The status's wire name.
    pub status: String,
    /// How many.
    pub count: u64,
    /// Its colour.
    pub tone: Tone,
}

/// The pane of one checkpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct JobPane {
    /// The checkpoint path as shown (normalized as the shift-work tools print it).
    pub checkpoint: String,
    /// The job, or the sentence saying why the checkpoint could not be read.
    pub body: Result<Job, String>,
}

/// One job as its checkpoint and ledger show it.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// `job.id`.
    pub id: String,
    /// `job.goal`.
    pub goal: String,
    /// `plan.cursor`.
    pub cursor: String,
    /// Units per status, in order of first appearance in `plan.units`.
    pub counts: Vec<StatusCount>,
    /// The waves of the unfinished units (the batch view), in run order; empty when the plan is refused.
    pub waves: Vec<Vec<Unit>>,
    /// Units the plan could not place: every unfinished unit when the plan is refused, else none.
    pub unplanned: Vec<Unit>,
    /// The finished (`done` or `dropped`) units, in plan order.
    pub finished: Vec<Unit>,
    /// The plan checks' refusal sentence, when the unfinished units cannot be planned.
    pub plan_refusal: Option<String>,
    /// Units held out of a wave because another unit of that wave touches the same file.
    pub held: Vec<Hold>,
    /// The budget, when `job.budget` is declared.
    pub budget: Option<Budget>,
    /// The history ring, newest first.
    pub history: Vec<HistoryEntry>,
    /// `handoff.open_questions`, in order.
    pub questions: Vec<Question>,
    /// The last clock-outs the ledger records (its accounting lines), newest first, at most
    /// [`CLOCK_OUTS_SHOWN`].
    pub clock_outs: Vec<ClockOut>,
}

/// The clock-outs a [`Job`] keeps: the newest.
pub const CLOCK_OUTS_SHOWN: usize = 10;

/// One clock-out as its ledger line records it, with what it cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClockOut {
    /// The unit.
    pub unit: String,
    /// The status it was clocked out with.
    pub status: String,
    /// The agent that clocked it out, when the line names one.
    pub agent: Option<String>,
    /// The tokens it reported.
    pub tokens: Option<i128>,
    /// How long it reported it took, in milliseconds.
    pub duration_ms: Option<i128>,
    /// The model it reported.
    pub model: Option<String>,
    /// When the line was written (its `ts`), as written.
    pub at: String,
}

/// One unit of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// Its position in `plan.units`, counted from 0: the one name of a unit no other unit shares.
    /// Its id as shown is cleaned ([`crate::display_text::clean`]), and two ids can clean to the same
    /// text (`U\u{7}x` and `U\u{1b}x` both show as `U\u{fffd}x`), so units are told apart and edges
    /// resolved by this position, never by the shown id.
    pub index: usize,
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its status's wire name.
    pub status: String,
    /// How its status is coloured.
    pub tone: Tone,
    /// Its role.
    pub role: String,
    /// The ids it depends on, as declared.
    pub depends_on: Vec<String>,
    /// The positions in `plan.units` ([`Unit::index`]) of the units it depends on, in declared order;
    /// a declared id that names no unit has none.
    pub depends_on_units: Vec<usize>,
    /// The agent of the unit's latest ledger line that names one.
    pub agent: Option<String>,
    /// Briefed and not finished: it holds a brief (and its files) until its clock-out.
    pub in_flight: bool,
    /// It is `plan.cursor`.
    pub is_cursor: bool,
    /// It was held out of a wave (see [`Job::held`]).
    pub is_held: bool,
}

/// A unit held out of a wave by a file another unit of that wave touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hold {
    /// The held unit.
    pub unit: String,
    /// The unit that touches the path in that wave.
    pub by: String,
    /// The held unit's [`Unit::index`].
    pub unit_index: usize,
    /// The [`Unit::index`] of the unit that touches the path.
    pub by_index: usize,
    /// The path both touch.
    pub path: String,
    /// The wave it was first held out of, counted from 1.
    pub wave: usize,
}

/// `job.budget` and what the ledger says of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    /// The declared dimensions, in the order `tokens`, `units`.
    pub dimensions: Vec<BudgetDimension>,
    /// The units in flight, in plan order.
    pub in_flight: Vec<String>,
    /// The tokens one unit is assumed to cost.
    pub per_unit: i128,
    /// How many more units fit.
    pub affordable: i128,
}

/// One budget dimension: spent, in flight, left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetDimension {
    /// `tokens` or `units`.
    pub name: String,
    /// The declared limit.
    pub limit: i128,
    /// Spent by counted clock-outs.
    pub spent: i128,
    /// Reserved by the units in flight.
    pub in_flight: i128,
    /// Limit − spent − in flight (negative when over).
    pub left: i128,
}

/// One entry of the history ring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryEntry {
    /// The unit.
    pub unit: String,
    /// Its outcome.
    pub outcome: String,
    /// Its notes, when given.
    pub notes: Option<String>,
}

/// One open question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// The question.
    pub text: String,
    /// `decision` or `relay`.
    pub kind: String,
}

/// The contracts pane.
#[derive(Debug, Clone, PartialEq)]
pub struct ContractsPane {
    /// Where the store is, as shown (a PostgreSQL URL without its password).
    pub store: String,
    /// The agent whose contracts are shown (as target or requester), or `None` for all.
    pub agent: Option<String>,
    /// The contracts, or the sentence saying why the store could not be read.
    pub body: Result<Contracts, String>,
}

/// What the store holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Contracts {
    /// A sentence shown above the counts: that no store exists at the location yet (the first call
    /// that writes creates it), when the counts are those of an empty queue. An empty queue is read,
    /// not a failure.
    pub note: Option<String>,
    /// Records per stored status, every status this build knows, in the store's order.
    pub counts: Vec<StatusCount>,
    /// Live records past their deadline that no sweep has recorded yet.
    pub past_deadline: u64,
    /// The claimed contracts, soonest lease end first.
    pub claimed: Vec<Claimed>,
    /// The oldest waiting contracts, oldest first.
    pub waiting: Vec<Waiting>,
    /// The most recently ended contracts, newest first.
    pub ended: Vec<Ended>,
}

/// A claimed contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// The agent holding it (its target).
    pub holder: String,
    /// The agent that dispatched it.
    pub requester: String,
    /// The claim epoch (the fencing token).
    pub epoch: u64,
    /// When the lease ends.
    pub lease_ends: Option<DateTime<Utc>>,
    /// Claims so far (this one included).
    pub deliveries: u32,
}

/// A contract waiting in the queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// The agent it waits for.
    pub target: String,
    /// The agent that dispatched it.
    pub requester: String,
    /// When it last entered the queue.
    pub queued_at: DateTime<Utc>,
    /// Claims so far: more than 0 when it was delivered, lost its lease and was put back.
    pub deliveries: u32,
    /// The claims it may get.
    pub max_deliveries: u32,
    /// Before this instant it is not claimable (a redelivery's backoff).
    pub available_at: Option<DateTime<Utc>>,
}

/// A contract that ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its target.
    pub target: String,
    /// The agent that dispatched it.
    pub requester: String,
    /// Its terminal status.
    pub status: String,
    /// How the status is coloured.
    pub tone: Tone,
    /// Why it ended (the end reason's wire name).
    pub reason: Option<String>,
    /// What its holder or requester said when it failed or was cancelled (the fail or cancel
    /// reason), when either did.
    pub why: Option<String>,
    /// When it ended.
    pub ended_at: Option<DateTime<Utc>>,
}

/// One contract in full: every field a person needs to follow it from dispatch to its end, each
/// text cleaned and bounded ([`crate::display_text::clean`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractRecord {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its task type.
    pub task_type: String,
    /// Its stored status.
    pub status: String,
    /// How the status is coloured.
    pub tone: Tone,
    /// Past a deadline no sweep has recorded yet.
    pub past_deadline: bool,
    /// The agent that dispatched it.
    pub requester: String,
    /// The agent it is for.
    pub target: String,
    /// The workspace root its files are under.
    pub workspace_root: String,
    /// What the target needs to know.
    pub context_summary: String,
    /// The files it pins, at most [`RECORD_POINTERS_SHOWN`].
    pub pointers: Vec<String>,
    /// How many files it pins.
    pub pointer_count: usize,
    /// The claim epoch (the fencing token).
    pub epoch: u64,
    /// Claims so far.
    pub deliveries: u32,
    /// The claims it may get.
    pub max_deliveries: u32,
    /// Renewals of the current lease.
    pub extends: u32,
    /// Releases over its life.
    pub releases: u32,
    /// Deliveries the result schema refused.
    pub retries: u32,
    /// Its instants in the order they happen: dispatched, queued, claimable again, claimed, lease
    /// end, queue deadline, ended, lifetime ceiling (the ones it has).
    pub times: Vec<(String, DateTime<Utc>)>,
    /// Why it ended (the end reason's wire name).
    pub end_reason: Option<String>,
    /// Its history of errors, newest first (the store keeps it as one text, `… | prev: …`).
    pub history: Vec<String>,
    /// The holder's reason when it failed.
    pub fail_reason: Option<String>,
    /// The requester's reason when it was cancelled.
    pub cancel_reason: Option<String>,
    /// The delivered summary.
    pub result_summary: Option<String>,
}

/// The pinned files a [`ContractRecord`] lists.
pub const RECORD_POINTERS_SHOWN: usize = 50;

/// The hours line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HoursLine {
    /// The expression in canonical form.
    pub expression: String,
    /// Whether it is in hours now.
    pub in_hours: bool,
    /// The next change, when hours ever change.
    pub next_change: Option<DateTime<Utc>>,
    /// The next change in the viewer's zone (`closes 17:30`, `opens Mon 09:00`).
    pub next_local: String,
}

impl Claimed {
    /// The lease's time left at `now` (negative once it has run out), or `None` without a deadline.
    pub fn time_left(&self, now: DateTime<Utc>) -> Option<TimeDelta> {
        self.lease_ends.map(|end| end - now)
    }

    /// Less than [`URGENT_LEASE`] left, or already run out.
    pub fn is_urgent(&self, now: DateTime<Utc>) -> bool {
        self.time_left(now).is_some_and(|left| left < URGENT_LEASE)
    }
}

impl Waiting {
    /// How long it has waited at `now`.
    pub fn age(&self, now: DateTime<Utc>) -> TimeDelta {
        now - self.queued_at
    }
}

impl Ended {
    /// How long ago it ended.
    pub fn ago(&self, now: DateTime<Utc>) -> Option<TimeDelta> {
        self.ended_at.map(|t| now - t)
    }
}

impl HoursLine {
    /// The time until the next change at `now`.
    pub fn countdown(&self, now: DateTime<Utc>) -> Option<TimeDelta> {
        self.next_change.map(|t| t - now)
    }
}

impl Job {
    /// Every unit the pane lists: the waves in order, then the unplanned ones.
    pub fn open_units(&self) -> impl Iterator<Item = &Unit> {
        self.waves.iter().flatten().chain(&self.unplanned)
    }

    /// The unit with `id`, wherever it is listed.
    pub fn unit(&self, id: &str) -> Option<&Unit> {
        self.open_units().chain(&self.finished).find(|u| u.id == id)
    }
}

impl Snapshot {
    /// The snapshot narrowed to what matches `filter` (the view's `/` filters by unit or agent): units
    /// whose id or agent contains it, holds and history of those units, and contracts whose id or one
    /// of whose agents contains it; case-insensitive. Counts, budgets and questions stay whole: they
    /// describe the job, not a unit. An empty filter keeps everything.
    pub fn filtered(&self, filter: &str) -> Snapshot {
        let needle = filter.trim().to_lowercase();
        if needle.is_empty() {
            return self.clone();
        }
        let hit = |text: &str| text.to_lowercase().contains(&needle);
        let unit_hit = |u: &Unit| hit(&u.id) || u.agent.as_deref().is_some_and(hit);
        let mut out = self.clone();
        for pane in &mut out.jobs {
            let Ok(job) = &mut pane.body else { continue };
            let kept: Vec<(usize, String)> = job
                .open_units()
                .chain(&job.finished)
                .filter(|u| unit_hit(u))
                .map(|u| (u.index, u.id.clone()))
                .collect();
            let keep = |index: usize| kept.iter().any(|(k, _)| *k == index);
            for wave in &mut job.waves {
                wave.retain(|u| keep(u.index));
            }
            job.unplanned.retain(|u| keep(u.index));
            job.finished.retain(|u| keep(u.index));
            job.held.retain(|h| keep(h.unit_index) || keep(h.by_index));
            // The history names units by id only.
            job.history.retain(|h| kept.iter().any(|(_, id)| *id == h.unit));
        }
        if let Some(Ok(c)) = out.contracts.as_mut().map(|p| p.body.as_mut()) {
            c.claimed
                .retain(|x| hit(&x.id) || hit(&x.holder) || hit(&x.requester));
            c.waiting
                .retain(|x| hit(&x.id) || hit(&x.target) || hit(&x.requester));
            c.ended
                .retain(|x| hit(&x.id) || hit(&x.target) || hit(&x.requester));
        }
        out
    }
}
