//! `shiftwork-hours` — operating-hours expressions with time zones, exact across DST, and the pure hours gate.
//!
//! An expression such as `TZ=Europe/London Mon-Fri 09:00-17:30; Sat 10:00-14:00` says when a resident
//! agent may work. This crate parses it (with exact error sentences), prints its canonical form, and
//! answers at any instant: is it in hours, when does that change (when do hours next open, next
//! close), and when did hours last end. [`Hours`] — an expression bound to its zone — owns its
//! expression, so a host keeps it beside the harness it gates. The answers are exact to the second on
//! every DST day: in gaps, in folds (both passes), with 30-minute DST (Lord Howe), at midnight
//! transitions and on the day Samoa skipped.
//!
//! [`HoursQuery`] asks in-hours, next change and last end at once and answers with a typed
//! [`HoursReport`] (or a typed [`HoursRefusal`]): it is the `hours_check` tool of `shiftwork-mcp`
//! without its wire, so an embedder or a status view gets exactly the tool's answer.
//!
//! On top of that sits the hours gate: the per-tick decision a host makes for a gated harness (hold,
//! close step, release, warm the watch), leases, and the texts a status table shows.
//!
//! ```
//! use chrono::{TimeZone, Utc};
//! use shiftwork_hours::{Hours, Tz};
//!
//! // Owned and 'static: keep it in your harness. The default zone matters only without a TZ= prefix.
//! let hours = Hours::parse("TZ=America/New_York Mon-Fri 09:00-17:00", Tz::UTC).unwrap();
//! let friday_evening = Utc.with_ymd_and_hms(2026, 3, 6, 22, 0, 0).unwrap(); // 17:00 EST
//! assert!(!hours.is_in(friday_evening));
//! // Monday 09:00 is EDT by then: the clocks went forward on Sunday.
//! assert_eq!(hours.next_open(friday_evening), Some(Utc.with_ymd_and_hms(2026, 3, 9, 13, 0, 0).unwrap()));
//! assert_eq!(hours.next_close(friday_evening), Some(Utc.with_ymd_and_hms(2026, 3, 9, 21, 0, 0).unwrap()));
//! assert_eq!(hours.prev_end(friday_evening), Some(friday_evening));
//! ```
//!
//! # What this crate never does
//!
//! It never reads a clock, sleeps, spawns a thread or task, arms a timer, reads the environment, touches
//! files, the network or processes, logs, or keeps global mutable state (a test greps the sources).
//! Every temporal answer is a function of the instants the caller passes in; every zone is
//! either named by the expression or passed in by the caller. It never decides "now" and never decides
//! the default zone: `TZ=Local` is an unknown zone.
//!
//! # Design notes
//!
//! - **Wall clock only.** Membership converts the instant to the zone's wall clock (never the other
//!   way), so it is never ambiguous. Gaps and folds fall out of that definition.
//! - **Exact from boundaries.** `next_change` and `prev_end` place every window boundary on the time
//!   line through the zone, taking the zone's transition instant where a boundary falls into a gap or a
//!   fold, and test membership only at those candidates. Nothing steps through time at a fixed
//!   interval, and there is no eight-day horizon: a change further away (when the only hours of a
//!   week fell into a gap that week) is still found. `next_open` and `next_close` are one or two
//!   `next_change` searches, so they are exact in the same way.
//! - **The gate is level-triggered.** Each tick decides from where the clock is now and the small
//!   state the host keeps; a daemon restart, a suspend or a clock step loses nothing.
//! - **Zone data.** Zones come from `chrono-tz` (IANA tzdata 2025b in 0.10.4), looked up by exact name.

#![forbid(unsafe_code)]

mod close;
mod error;
mod eval;
mod expr;
mod gate;
mod present;
mod route;
mod week;
mod zone;

pub use close::{
    CloseStepOutcome, HoldPlan, Observation, ReleasePlan, StopReason, TurnState, close_deadline, close_step,
    hold_plan, release_plan,
};
pub use error::{ECHO_LIMIT, ModeError, ParseError, ParseErrorKind, ZoneError};
pub use eval::{Check, Hours};

/// The borrowed expression-and-zone of 0.1, replaced by the owned [`Hours`] (which `Expr::bind`
/// returns); the lifetime is kept so that code naming `ZonedExpr<'_>` still compiles.
#[deprecated(since = "0.2.0", note = "renamed to `Hours`, which owns its expression")]
pub type ZonedExpr<'a> = Hours;
pub use expr::{Expr, Window};
pub use gate::{
    ARM_LEAD, CLOSE_QUIET, CLOSE_SETTLE, DEFAULT_LEASE, DEFAULT_SHUTDOWN_TIMEOUT, GateAction, GateEvent,
    GateMemory, GateStatus, LeaseChange, LeaseJudgement, LeaseState, ProcState, ShutdownMode, TickInput,
    TickOutcome, close_anchor, judge_lease, tick, ungate,
};
pub use present::report::{HoursQuery, HoursRefusal, HoursReport, MAX_EXPRESSION_BYTES};
pub use present::{next_text, next_text_at, schedule_label, state_label};
pub use route::{BootRoute, HarnessGate, LeaseRefusal, StartRoute, boot_route, start_route};
pub use zone::parse_zone;

/// Re-exported so callers name zones and weekdays with the same types the crate uses.
pub use chrono::Weekday;
pub use chrono_tz::Tz;

/// The crate's README, run as a doc test so that its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
