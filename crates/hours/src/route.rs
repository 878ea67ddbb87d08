//! Starting and booting a harness: operator starts with and without a lease, and what a daemon
//! does with a harness at boot.

use std::fmt;

use chrono::{DateTime, TimeDelta, Utc};

use crate::eval::Hours;
use crate::gate::DEFAULT_LEASE;

/// What the host knows of the harness an operator starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HarnessGate<'a> {
    /// No harness of that name.
    Unknown,
    /// A harness without `operating_hours`.
    Ungated,
    /// A harness with `operating_hours`.
    Gated(&'a Hours),
}

/// How an operator start proceeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StartRoute {
    /// An ordinary start.
    Plain,
    /// A start under a lease ending at `until`; the host writes `lease_until` before starting.
    Leased {
        /// The lease's end.
        until: DateTime<Utc>,
    },
}

/// Why a start was refused; `Display` is the refusal text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LeaseRefusal {
    /// `no lease applies: lease length must be positive`.
    NonPositive,
    /// `unknown harness`.
    UnknownHarness,
    /// `no lease applies: <name> has no operating_hours`.
    Ungated(String),
    /// `no lease applies: <name> is in hours now`.
    InHours(String),
}

impl LeaseRefusal {
    /// A stable machine name of the error's kind, as every `code()` of the family.
    pub fn code(&self) -> &'static str {
        match self {
            LeaseRefusal::NonPositive => "NO_LEASE_NON_POSITIVE",
            LeaseRefusal::UnknownHarness => "UNKNOWN_HARNESS",
            LeaseRefusal::Ungated(..) => "NO_LEASE_UNGATED",
            LeaseRefusal::InHours(..) => "NO_LEASE_IN_HOURS",
        }
    }
}

impl LeaseRefusal {
    /// True for the three `no lease applies: …` refusals, false for `unknown harness`.
    ///
    /// ```
    /// use shiftwork_hours::LeaseRefusal;
    /// assert!(LeaseRefusal::NonPositive.is_no_lease());
    /// assert!(!LeaseRefusal::UnknownHarness.is_no_lease());
    /// ```
    pub fn is_no_lease(&self) -> bool {
        !matches!(self, LeaseRefusal::UnknownHarness)
    }
}

impl fmt::Display for LeaseRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LeaseRefusal::NonPositive => f.write_str("no lease applies: lease length must be positive"),
            LeaseRefusal::UnknownHarness => f.write_str("unknown harness"),
            LeaseRefusal::Ungated(name) => write!(f, "no lease applies: {name} has no operating_hours"),
            LeaseRefusal::InHours(name) => write!(f, "no lease applies: {name} is in hours now"),
        }
    }
}

impl std::error::Error for LeaseRefusal {}

/// Decides an operator `start`: `requested` is the optional lease length (`--for`). A lease
/// end beyond chrono's range saturates at its end.
///
/// ```
/// use chrono::{TimeDelta, TimeZone, Utc};
/// use shiftwork_hours::{HarnessGate, Hours, StartRoute, Tz, start_route};
/// let hours = Hours::parse("TZ=UTC Mon-Fri 09:00-13:00", Tz::UTC).unwrap();
/// let now = Utc.with_ymd_and_hms(2026, 9, 21, 20, 0, 0).unwrap();
/// let day = HarnessGate::Gated(&hours);
/// assert_eq!(
///     start_route(now, "day", None, day),
///     Ok(StartRoute::Leased { until: now + TimeDelta::hours(1) })
/// );
/// let refusal = start_route(now, "plain", Some(TimeDelta::hours(2)), HarnessGate::Ungated).unwrap_err();
/// assert_eq!(refusal.to_string(), "no lease applies: plain has no operating_hours");
/// ```
pub fn start_route(
    now: DateTime<Utc>,
    name: &str,
    requested: Option<TimeDelta>,
    harness: HarnessGate<'_>,
) -> Result<StartRoute, LeaseRefusal> {
    if requested.is_some_and(|d| d <= TimeDelta::zero()) {
        return Err(LeaseRefusal::NonPositive);
    }
    let leased = |d: TimeDelta| StartRoute::Leased {
        until: now.checked_add_signed(d).unwrap_or(DateTime::<Utc>::MAX_UTC),
    };
    match (harness, requested) {
        (HarnessGate::Unknown, _) => Err(LeaseRefusal::UnknownHarness),
        (HarnessGate::Ungated, Some(_)) => Err(LeaseRefusal::Ungated(name.to_owned())),
        (HarnessGate::Gated(hours), Some(d)) => {
            if hours.is_in(now) {
                Err(LeaseRefusal::InHours(name.to_owned()))
            } else {
                Ok(leased(d))
            }
        }
        (HarnessGate::Gated(hours), None) if !hours.is_in(now) => Ok(leased(DEFAULT_LEASE)),
        (_, None) => Ok(StartRoute::Plain),
    }
}

/// What a daemon does with a harness at boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BootRoute {
    /// Not enabled: leave it stopped.
    LeaveStopped,
    /// Start it.
    Start,
    /// Record the `enabled` intent and mark it held without starting it; the first tick releases it if
    /// its hours are open.
    BeginHeld,
}

/// Decides a harness's boot: a restart mid-lease resumes the same lease.
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use shiftwork_hours::{BootRoute, boot_route};
/// let now = Utc.with_ymd_and_hms(2026, 9, 21, 20, 30, 0).unwrap();
/// let until = Utc.with_ymd_and_hms(2026, 9, 21, 21, 0, 0).unwrap();
/// assert_eq!(boot_route(true, true, Some(until), now), BootRoute::Start);
/// assert_eq!(boot_route(true, true, None, now), BootRoute::BeginHeld);
/// assert_eq!(boot_route(false, true, Some(until), now), BootRoute::LeaveStopped);
/// ```
pub fn boot_route(
    enabled: bool,
    gated: bool,
    lease_until: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> BootRoute {
    if !enabled {
        BootRoute::LeaveStopped
    } else if !gated || lease_until.is_some_and(|until| now < until) {
        BootRoute::Start
    } else {
        BootRoute::BeginHeld
    }
}
