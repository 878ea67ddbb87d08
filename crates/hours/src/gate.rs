//! The hours gate: the per-tick decision for one gated harness, leases and the close
//! anchor. Every function is pure: the host passes in the tick's instant and the state it keeps between
//! ticks, and gets the new state back.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, TimeDelta, Utc};

use crate::error::ModeError;
use crate::eval::Hours;

/// How close a close must be before the turn-state watch is warmed.
pub const ARM_LEAD: TimeDelta = TimeDelta::minutes(1);
/// Quiet time after a turn end before a graceful close stops the harness.
pub const CLOSE_SETTLE: TimeDelta = TimeDelta::seconds(10);
/// Silence that counts as "done" for an agent without turn markers.
pub const CLOSE_QUIET: TimeDelta = TimeDelta::minutes(2);
/// The close deadline after the anchor when no positive timeout is configured.
pub const DEFAULT_SHUTDOWN_TIMEOUT: TimeDelta = TimeDelta::minutes(15);
/// The lease length of a plain start outside hours.
pub const DEFAULT_LEASE: TimeDelta = TimeDelta::hours(1);

/// How a harness is shut down when its hours end.
///
/// ```
/// use shiftwork_hours::ShutdownMode;
/// assert_eq!("immediate".parse::<ShutdownMode>(), Ok(ShutdownMode::Immediate));
/// assert_eq!(ShutdownMode::default(), ShutdownMode::Graceful);
/// assert!("Graceful".parse::<ShutdownMode>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ShutdownMode {
    /// Let the agent finish its turn, up to a deadline.
    #[default]
    Graceful,
    /// Stop at once.
    Immediate,
}

impl FromStr for ShutdownMode {
    type Err = ModeError;

    /// Accepts exactly `graceful` and `immediate`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "graceful" => Ok(ShutdownMode::Graceful),
            "immediate" => Ok(ShutdownMode::Immediate),
            other => Err(ModeError::new(other)),
        }
    }
}

impl fmt::Display for ShutdownMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ShutdownMode::Graceful => "graceful",
            ShutdownMode::Immediate => "immediate",
        })
    }
}

/// A harness's process state as the host sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProcState {
    /// Not running.
    Stopped,
    /// Being started.
    Starting,
    /// Running.
    Running,
    /// Running but unhealthy.
    Degraded,
    /// Waiting to be restarted.
    Restarting,
    /// Given up on.
    Failed,
}

impl ProcState {
    /// Whether the harness is **up**: starting, running, degraded or restarting.
    ///
    /// ```
    /// use shiftwork_hours::ProcState;
    /// assert!(ProcState::Restarting.is_up());
    /// assert!(!ProcState::Failed.is_up());
    /// ```
    pub fn is_up(self) -> bool {
        matches!(
            self,
            ProcState::Starting | ProcState::Running | ProcState::Degraded | ProcState::Restarting
        )
    }
}

/// What the host knows about a gated harness at a tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct GateStatus {
    /// The harness is up.
    pub up: bool,
    /// The harness is held for its hours.
    pub held: bool,
    /// A graceful close is in flight.
    pub closing: bool,
    /// An opaque, non-zero fingerprint of hold reasons other than hours; 0 when there are none.
    pub other_holds: u64,
}

/// What the gate remembers about a harness between ticks. The host owns it: it passes the value in and
/// stores the one returned. `GateMemory::default()` for a harness seen for the first time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct GateMemory {
    /// Membership at the last evaluation (unset before the first).
    pub last_in: Option<bool>,
    /// Whether a valid lease was seen at the last evaluation (unset before the first).
    pub was_leased: Option<bool>,
    /// The close instant the watch was last armed for.
    pub armed_for: Option<DateTime<Utc>>,
    /// The other-holds fingerprint an hours hold was last added for.
    pub hours_asked: Option<u64>,
}

/// A harness's lease, owned by the host. `until` is persisted as `lease_until`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct LeaseState {
    /// When the lease ends (a lease is spent at this instant).
    pub until: Option<DateTime<Utc>>,
    /// The end of a lease that expired and has not yet anchored a hold.
    pub expired_end: Option<DateTime<Utc>>,
}

/// How a lease changed; the host persists the new `until` when there is a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LeaseChange {
    /// The lease reached its end.
    Expired {
        /// The end it reached.
        until: DateTime<Utc>,
    },
    /// The harness's hours opened; it simply continues as an in-hours harness.
    DiscardedHoursOpened,
    /// The harness is no longer gated.
    DiscardedUngated,
}

/// The result of [`judge_lease`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LeaseJudgement {
    /// The new lease state.
    pub state: LeaseState,
    /// The lease's end, when the lease is valid.
    pub valid_until: Option<DateTime<Utc>>,
    /// The change, if any.
    pub change: Option<LeaseChange>,
}

/// Judges a lease at `now`: the first matching rule of no lease, spent, ungated, hours open,
/// valid.
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use shiftwork_hours::{LeaseChange, LeaseState, judge_lease};
/// let until = Utc.with_ymd_and_hms(2026, 9, 21, 21, 0, 0).unwrap();
/// let lease = LeaseState { until: Some(until), expired_end: None };
/// let spent = judge_lease(&lease, until, true, false);
/// assert_eq!(spent.change, Some(LeaseChange::Expired { until }));
/// assert_eq!(spent.state.expired_end, Some(until));
/// ```
pub fn judge_lease(state: &LeaseState, now: DateTime<Utc>, gated: bool, in_hours: bool) -> LeaseJudgement {
    let unchanged = LeaseJudgement {
        state: *state,
        valid_until: None,
        change: None,
    };
    let Some(until) = state.until else {
        return unchanged;
    };
    let (state, change) = if now >= until {
        (
            LeaseState {
                until: None,
                expired_end: Some(until),
            },
            LeaseChange::Expired { until },
        )
    } else if !gated {
        (LeaseState::default(), LeaseChange::DiscardedUngated)
    } else if in_hours {
        (LeaseState::default(), LeaseChange::DiscardedHoursOpened)
    } else {
        return LeaseJudgement {
            valid_until: Some(until),
            ..unchanged
        };
    };
    LeaseJudgement {
        state,
        valid_until: None,
        change: Some(change),
    }
}

/// The close anchor: the instant the harness went out of hours — the end of an expired lease
/// when that is not earlier than the previous end of hours, else the previous end — and whether it is
/// known. Unknown (`(now, false)`) only when there is neither.
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use shiftwork_hours::close_anchor;
/// let at = |h| Utc.with_ymd_and_hms(2026, 9, 21, h, 0, 0).unwrap();
/// assert_eq!(close_anchor(Some(at(21)), Some(at(13)), at(21)), (at(21), true));
/// assert_eq!(close_anchor(None, Some(at(13)), at(15)), (at(13), true));
/// assert_eq!(close_anchor(None, None, at(15)), (at(15), false));
/// ```
pub fn close_anchor(
    expired_end: Option<DateTime<Utc>>,
    prev_end: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> (DateTime<Utc>, bool) {
    match (expired_end, prev_end) {
        (Some(x), None) => (x, true),
        (Some(x), Some(p)) if x >= p => (x, true),
        (_, Some(p)) => (p, true),
        (None, None) => (now, false),
    }
}

/// What the host must do for a harness this tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GateAction {
    /// Warm the turn-state watch for a close at `close_at` (graceful mode only).
    Arm {
        /// The close the watch is armed for.
        close_at: DateTime<Utc>,
    },
    /// Observe the watch and call [`close_step`](crate::close_step) with this `now`.
    CloseStep {
        /// The tick's instant.
        now: DateTime<Utc>,
    },
    /// Hold the harness: call [`hold_plan`](crate::hold_plan) with `close_at` and carry it out; when the
    /// plan begins a close and `step_now` is true, step it on this tick.
    Hold {
        /// The mode configured now.
        mode: ShutdownMode,
        /// The close anchor.
        close_at: DateTime<Utc>,
        /// Whether the anchor is known (else it is the tick's `now`).
        anchored: bool,
        /// Whether to call `close_step` on this tick.
        step_now: bool,
    },
    /// Add the hours reason to a harness that is down for other reasons.
    AddHoursHold {
        /// The mode configured now.
        mode: ShutdownMode,
    },
    /// Release the harness: call [`release_plan`](crate::release_plan) and carry it out.
    Release {
        /// True when the release comes from [`ungate`] (the expression was removed).
        ungated: bool,
    },
}

/// Something the host publishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GateEvent {
    /// Membership flipped since the last tick.
    HoursChanged {
        /// Membership now.
        in_hours: bool,
        /// The next change, `None` for a whole week.
        next: Option<DateTime<Utc>>,
    },
    /// A lease that was valid at the last tick is no longer valid.
    LeaseEnded,
}

/// The inputs of one tick for one gated harness.
#[derive(Debug, Clone, Copy)]
pub struct TickInput<'a> {
    /// The tick's instant.
    pub now: DateTime<Utc>,
    /// The harness's operating hours.
    pub hours: &'a Hours,
    /// What the host knows about the harness.
    pub status: GateStatus,
    /// The shutdown mode configured now.
    pub mode: ShutdownMode,
    /// The harness's lease.
    pub lease: LeaseState,
    /// True while the host is still carrying out this harness's previous decision.
    pub in_flight: bool,
}

/// What one tick decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TickOutcome {
    /// At most one action.
    pub action: Option<GateAction>,
    /// Zero to two events, in order.
    pub events: Vec<GateEvent>,
    /// The memory to pass to the next tick.
    pub memory: GateMemory,
    /// The new lease state.
    pub lease: LeaseState,
    /// How the lease changed, if it did (the host persists `lease_until`).
    pub lease_change: Option<LeaseChange>,
}

/// One tick of the gate for one harness: level-triggered, so a host that restarts,
/// sleeps through a close or sees its clock step loses nothing.
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use shiftwork_hours::{GateAction, GateMemory, GateStatus, Hours, LeaseState, ShutdownMode, TickInput, Tz, tick};
/// let hours = Hours::parse("TZ=UTC Mon-Fri 09:00-13:00", Tz::UTC).unwrap();
/// let now = Utc.with_ymd_and_hms(2026, 9, 21, 13, 0, 0).unwrap();
/// let out = tick(
///     TickInput {
///         now,
///         hours: &hours,
///         status: GateStatus { up: true, ..GateStatus::default() },
///         mode: ShutdownMode::Graceful,
///         lease: LeaseState::default(),
///         in_flight: false,
///     },
///     GateMemory::default(),
/// );
/// assert_eq!(
///     out.action,
///     Some(GateAction::Hold { mode: ShutdownMode::Graceful, close_at: now, anchored: true, step_now: true })
/// );
/// ```
pub fn tick(input: TickInput<'_>, memory: GateMemory) -> TickOutcome {
    let TickInput {
        now,
        hours,
        status,
        mode,
        lease,
        in_flight,
    } = input;
    if in_flight {
        return TickOutcome {
            action: None,
            events: Vec::new(),
            memory,
            lease,
            lease_change: None,
        };
    }
    let mut memory = memory;
    let mut events = Vec::new();
    let check = hours.check(now);
    let in_hours = check.in_hours;
    if in_hours {
        memory.hours_asked = None;
    }
    match memory.last_in {
        None => memory.last_in = Some(in_hours),
        Some(last) if last != in_hours => {
            events.push(GateEvent::HoursChanged {
                in_hours,
                next: check.next_change,
            });
            memory.last_in = Some(in_hours);
        }
        Some(_) => {}
    }
    let judgement = judge_lease(&lease, now, true, in_hours);
    let mut lease = judgement.state;
    let leased_until = judgement.valid_until.filter(|until| now < *until);
    let leased = leased_until.is_some();
    match memory.was_leased {
        None => memory.was_leased = Some(leased),
        Some(true) if !leased => {
            events.push(GateEvent::LeaseEnded);
            memory.was_leased = Some(false);
        }
        Some(_) if leased => memory.was_leased = Some(true),
        Some(_) => {}
    }
    let graceful = mode == ShutdownMode::Graceful;
    let action = if let (false, Some(until)) = (in_hours, leased_until) {
        if graceful && until - now <= ARM_LEAD && memory.armed_for != Some(until) {
            memory.armed_for = Some(until);
            Some(GateAction::Arm { close_at: until })
        } else {
            None
        }
    } else if !in_hours && status.closing {
        Some(GateAction::CloseStep { now })
    } else if !in_hours && status.up {
        let (close_at, anchored) = close_anchor(lease.expired_end, hours.prev_end(now), now);
        lease.expired_end = None;
        memory.armed_for = None;
        Some(GateAction::Hold {
            mode,
            close_at,
            anchored,
            step_now: graceful,
        })
    } else if !in_hours && !status.held && status.other_holds != 0 {
        if memory.hours_asked != Some(status.other_holds) {
            memory.hours_asked = Some(status.other_holds);
            memory.armed_for = None;
            lease.expired_end = None;
            Some(GateAction::AddHoursHold { mode })
        } else {
            None
        }
    } else if in_hours && status.held {
        Some(GateAction::Release { ungated: false })
    } else if let (true, Some(next)) = (in_hours, check.next_change) {
        if next - now <= ARM_LEAD && graceful && memory.armed_for != Some(next) {
            memory.armed_for = Some(next);
            Some(GateAction::Arm { close_at: next })
        } else {
            None
        }
    } else {
        None
    };
    TickOutcome {
        action,
        events,
        memory,
        lease,
        lease_change: judgement.change,
    }
}

/// A reload removed the harness's `operating_hours`: release it if it is held for its hours,
/// forget the gate's memory and drop any lease. The host runs this once and stops ticking the harness.
///
/// ```
/// use shiftwork_hours::{GateAction, GateMemory, GateStatus, LeaseState, ungate};
/// let (action, memory, lease, change) =
///     ungate(GateStatus { held: true, ..GateStatus::default() }, LeaseState::default());
/// assert_eq!(action, Some(GateAction::Release { ungated: true }));
/// assert_eq!((memory, lease, change), (GateMemory::default(), LeaseState::default(), None));
/// ```
pub fn ungate(
    status: GateStatus,
    lease: LeaseState,
) -> (Option<GateAction>, GateMemory, LeaseState, Option<LeaseChange>) {
    let action = status.held.then_some(GateAction::Release { ungated: true });
    let change = lease.until.map(|_| LeaseChange::DiscardedUngated);
    (action, GateMemory::default(), LeaseState::default(), change)
}
