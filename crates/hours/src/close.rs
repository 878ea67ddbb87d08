//! Holding, closing and releasing a harness: what the host does once the tick has decided.

use std::fmt;

use chrono::{DateTime, TimeDelta, Utc};

use crate::gate::{CLOSE_QUIET, CLOSE_SETTLE, DEFAULT_SHUTDOWN_TIMEOUT, ProcState, ShutdownMode};

/// How to hold a harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HoldPlan {
    /// Not the gate's to hold: disabled, failed, or scheduled.
    Ignore,
    /// Mark the harness closing with this anchor; the process keeps running for now.
    BeginClose {
        /// The close anchor.
        close_at: DateTime<Utc>,
    },
    /// Stop it at once (a hold exit: no restart, no restart-count increment).
    StopNow,
    /// It is already down: just mark it held.
    MarkHeld,
}

/// Decides how to hold a harness. A held harness has its pending respawn cancelled, its queued
/// firings dropped and its crash-loop bookkeeping reset by the host; its `enabled` intent is never
/// written.
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use shiftwork_hours::{HoldPlan, ProcState, ShutdownMode, hold_plan};
/// let at = Utc.with_ymd_and_hms(2026, 9, 21, 13, 0, 0).unwrap();
/// let g = ShutdownMode::Graceful;
/// assert_eq!(hold_plan(g, at, true, ProcState::Running, true, false), HoldPlan::BeginClose { close_at: at });
/// assert_eq!(hold_plan(g, at, true, ProcState::Degraded, true, false), HoldPlan::StopNow);
/// assert_eq!(hold_plan(g, at, true, ProcState::Stopped, false, false), HoldPlan::MarkHeld);
/// assert_eq!(hold_plan(g, at, false, ProcState::Running, true, false), HoldPlan::Ignore);
/// ```
pub fn hold_plan(
    mode: ShutdownMode,
    close_at: DateTime<Utc>,
    enabled: bool,
    state: ProcState,
    has_process: bool,
    scheduled: bool,
) -> HoldPlan {
    if !enabled || state == ProcState::Failed || scheduled {
        HoldPlan::Ignore
    } else if mode == ShutdownMode::Graceful && has_process && state == ProcState::Running {
        HoldPlan::BeginClose { close_at }
    } else if has_process || state != ProcState::Stopped {
        HoldPlan::StopNow
    } else {
        HoldPlan::MarkHeld
    }
}

/// What the turn-state watch saw of the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TurnState {
    /// The agent's last activity; absent counts as long ago.
    pub last_event_at: Option<DateTime<Utc>>,
    /// Whether the agent's trace marks turn ends at all.
    pub turn_markers: bool,
    /// Whether the current turn has ended.
    pub turn_ended: bool,
}

/// What the host could observe for a close step.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Observation {
    /// Nothing attributable (generic adapter, no working directory, ambiguous session).
    Unavailable {
        /// Why, for the stop reason.
        why: String,
    },
    /// The watch's view of the agent's turn.
    Turn(TurnState),
}

/// Why a close step stops the harness; `Display` is the stop reason a host records.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StopReason {
    /// `hours_shutdown=immediate`.
    Immediate,
    /// `graceful unavailable: <why>`.
    Unavailable(String),
    /// `turn ended`.
    TurnEnded,
    /// `quiet`.
    Quiet,
    /// `deadline reached`.
    DeadlineReached,
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopReason::Immediate => f.write_str("hours_shutdown=immediate"),
            StopReason::Unavailable(why) => write!(f, "graceful unavailable: {why}"),
            StopReason::TurnEnded => f.write_str("turn ended"),
            StopReason::Quiet => f.write_str("quiet"),
            StopReason::DeadlineReached => f.write_str("deadline reached"),
        }
    }
}

/// The result of [`close_step`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CloseStepOutcome {
    /// The close's deadline.
    pub deadline: DateTime<Utc>,
    /// `Some` when the harness must stop now (ending the close); `None` to keep it running.
    pub stop: Option<StopReason>,
}

/// One step of a graceful close. `mode` and `timeout` are the values configured now, so a
/// reload applies to a close in progress; new prompts never move the deadline.
///
/// ```
/// use chrono::{TimeDelta, TimeZone, Utc};
/// use shiftwork_hours::{Observation, ShutdownMode, StopReason, TurnState, close_step};
/// let close_at = Utc.with_ymd_and_hms(2026, 9, 21, 13, 0, 0).unwrap();
/// let turn = Observation::Turn(TurnState {
///     last_event_at: Some(close_at + TimeDelta::minutes(4)),
///     turn_markers: true,
///     turn_ended: true,
/// });
/// let step = |secs| close_step(close_at + TimeDelta::seconds(secs), ShutdownMode::Graceful, None, close_at, &turn);
/// assert_eq!(step(249).stop, None); // 9 s after the turn ended: still settling
/// assert_eq!(step(250).stop, Some(StopReason::TurnEnded));
/// assert_eq!(step(250).deadline, close_at + TimeDelta::minutes(15));
/// ```
pub fn close_step(
    now: DateTime<Utc>,
    mode: ShutdownMode,
    timeout: Option<TimeDelta>,
    close_at: DateTime<Utc>,
    observation: &Observation,
) -> CloseStepOutcome {
    let deadline = close_deadline(close_at, timeout);
    let quiet_for = |turn: &TurnState, span: TimeDelta| turn.last_event_at.is_none_or(|at| now - at >= span);
    let stop = match observation {
        _ if mode != ShutdownMode::Graceful => Some(StopReason::Immediate),
        Observation::Unavailable { why } => Some(StopReason::Unavailable(why.clone())),
        Observation::Turn(turn) if turn.turn_markers && turn.turn_ended && quiet_for(turn, CLOSE_SETTLE) => {
            Some(StopReason::TurnEnded)
        }
        Observation::Turn(turn) if !turn.turn_markers && quiet_for(turn, CLOSE_QUIET) => {
            Some(StopReason::Quiet)
        }
        Observation::Turn(_) if now >= deadline => Some(StopReason::DeadlineReached),
        Observation::Turn(_) => None,
    };
    CloseStepOutcome { deadline, stop }
}

/// The close deadline: `close_at` plus the timeout when it is present and positive, else plus
/// [`DEFAULT_SHUTDOWN_TIMEOUT`], on the UTC time line. A sum beyond chrono's range saturates at its end.
///
/// ```
/// use chrono::{TimeDelta, TimeZone, Utc};
/// use shiftwork_hours::close_deadline;
/// let anchor = Utc.with_ymd_and_hms(2026, 11, 1, 5, 30, 0).unwrap(); // 01:30 EDT, first pass of the fold
/// assert_eq!(close_deadline(anchor, None), Utc.with_ymd_and_hms(2026, 11, 1, 5, 45, 0).unwrap());
/// assert_eq!(close_deadline(anchor, Some(TimeDelta::zero())), close_deadline(anchor, None));
/// ```
pub fn close_deadline(close_at: DateTime<Utc>, timeout: Option<TimeDelta>) -> DateTime<Utc> {
    let span = timeout
        .filter(|t| *t > TimeDelta::zero())
        .unwrap_or(DEFAULT_SHUTDOWN_TIMEOUT);
    close_at
        .checked_add_signed(span)
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// How to release a held harness when its hours open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReleasePlan {
    /// Not held: nothing to do.
    NoOp,
    /// Clear `held` and `closing` (a close in flight is cancelled); start nothing.
    ClearOnly,
    /// Clear `held` and `closing`, and start the harness.
    ClearAndStart,
}

/// Decides how to release a harness: a failed harness, or one the operator stopped, is never
/// started by hours opening; one still running just stays up.
///
/// ```
/// use shiftwork_hours::{ProcState, ReleasePlan, release_plan};
/// assert_eq!(release_plan(true, true, ProcState::Stopped, false), ReleasePlan::ClearAndStart);
/// assert_eq!(release_plan(true, true, ProcState::Running, true), ReleasePlan::ClearOnly);
/// assert_eq!(release_plan(false, true, ProcState::Stopped, false), ReleasePlan::NoOp);
/// ```
pub fn release_plan(held: bool, enabled: bool, state: ProcState, has_process: bool) -> ReleasePlan {
    if !held {
        ReleasePlan::NoOp
    } else if enabled && !has_process && state == ProcState::Stopped {
        ReleasePlan::ClearAndStart
    } else {
        ReleasePlan::ClearOnly
    }
}
