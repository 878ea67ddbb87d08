//! `shiftwork-watch` — a live terminal view of shiftwork jobs, their contracts and their hours, and
//! plans drawn as pictures.
//!
//! People who run several agents at once want to *look* at where a job stands: which wave is running,
//! who holds what, which units are held apart by a file conflict, how much of the budget is in flight,
//! which contracts wait, which leases are about to run out, whether the hours gate is open. This crate
//! builds that view:
//!
//! * [`gather`] reads the core crates (`shiftwork-core`, `shiftwork-contracts`, `shiftwork-hours`)
//!   into a [`snapshot::Snapshot`] — plain values, no terminal type;
//! * [`draw`] is the thin ratatui layer that draws a snapshot, [`report`] writes it as plain text,
//!   [`picture`] draws a plan as a Mermaid flowchart or text;
//! * [`web`] is the same snapshot for a web page: a JSON document and the plan as an SVG picture;
//! * [`view`] is what the person changes (focus, scrolling, the filter), driven by [`view::Key`]s;
//! * [`run`] is the full-screen terminal session: it redraws when a checkpoint, its ledger or the
//!   contracts store changes (file change notification, no polling of files), at most ten times a
//!   second, and every second for the countdowns.
//!
//! ```
//! use std::sync::Arc;
//! use chrono::{TimeZone, Utc};
//! use shiftwork_seams::{ManualClock, MemFs};
//! use shiftwork_watch::{Sources, WatchOptions};
//!
//! let fs = MemFs::new();
//! let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 9, 21, 8, 0, 0).unwrap());
//! let options = WatchOptions {
//!     checkpoints: vec!["/job/.shiftwork/checkpoint.json".into()],
//!     store: None,
//!     agent: None,
//!     hours: Some("Mon-Fri 09:00-17:00".into()),
//!     zone: chrono_tz::UTC,
//! };
//! let snapshot = Sources::new(&options, Arc::new(fs), Arc::new(clock)).unwrap().snapshot();
//! let pane = &snapshot.jobs[0];
//! assert!(pane.body.as_ref().unwrap_err().starts_with("checkpoint unreadable: [Errno 2] No such file or directory"));
//! assert_eq!(snapshot.hours.unwrap().next_local, "opens Mon 09:00");
//! ```
//!
//! # What this crate never does
//!
//! It never writes: no checkpoint, ledger or contract is changed, no store is created or initialised
//! (a test checks that every file is byte-identical after a view). It never sends text from a file to
//! the terminal unfiltered ([`display_text`], by the workspace's one rule
//! [`shiftwork_seams::echo::is_control_or_bidi`]), and its errors escape what they repeat. A Mermaid
//! chart ([`picture`]) is inert whatever the checkpoint holds. Apart from [`run`], nothing here touches a terminal;
//! apart from [`gather`], nothing here names a core crate's type.

pub mod display_text;
pub mod draw;
mod error;
pub mod figures;
pub mod gather;
mod live;
pub mod picture;
pub mod report;
pub mod snapshot;
mod sources;
pub mod view;
pub mod web;

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

pub use error::WatchError;
pub use live::{MAX_REFRESH_RATE, run};
pub use picture::PlanFormat;
pub use sources::{Sources, WatchOptions};

/// Prints one snapshot of `options` as plain text to `out` (colours when `colour`) and returns the
/// sources that could not be read, one sentence each ([`unread`]; empty when every checkpoint, and
/// the store when one is watched, was read — a store that does not exist yet is an empty queue, read).
pub fn once(options: &WatchOptions, colour: bool, out: &mut dyn Write) -> Result<Vec<String>, WatchError> {
    let mut sources = Sources::new(
        options,
        Arc::new(shiftwork_seams::OsFs),
        Arc::new(shiftwork_seams::SystemClock::new()),
    )?;
    let snapshot = sources.snapshot();
    out.write_all(report::render(&snapshot, colour).as_bytes())
        .and_then(|()| out.flush())
        .map_err(WatchError::Output)?;
    Ok(unread(&snapshot))
}

/// Whether every source of `snapshot` could be read.
pub fn all_read(snapshot: &snapshot::Snapshot) -> bool {
    unread(snapshot).is_empty()
}

/// One sentence for each source of `snapshot` that could not be read, naming it: `checkpoint PATH:
/// why` and `contracts store LOCATION: why`, in the order of the view. Their text is as clean as the
/// view's ([`display_text`]).
///
/// ```
/// use std::sync::Arc;
/// use chrono::{TimeZone, Utc};
/// use shiftwork_seams::{ManualClock, MemFs};
/// use shiftwork_watch::{Sources, WatchOptions};
/// let options = WatchOptions {
///     checkpoints: vec!["/job/missing.json".into()],
///     store: None,
///     agent: None,
///     hours: None,
///     zone: chrono_tz::UTC,
/// };
/// let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 9, 21, 8, 0, 0).unwrap());
/// let snapshot = Sources::new(&options, Arc::new(MemFs::new()), Arc::new(clock)).unwrap().snapshot();
/// let unread = shiftwork_watch::unread(&snapshot);
/// assert_eq!(unread.len(), 1);
/// assert!(unread[0].starts_with("checkpoint /job/missing.json: checkpoint unreadable"));
/// ```
pub fn unread(snapshot: &snapshot::Snapshot) -> Vec<String> {
    let jobs = snapshot.jobs.iter().filter_map(|j| {
        j.body
            .as_ref()
            .err()
            .map(|why| format!("checkpoint {}: {why}", j.checkpoint))
    });
    let store = snapshot.contracts.iter().filter_map(|c| {
        c.body
            .as_ref()
            .err()
            .map(|why| format!("contracts store {}: {why}", c.store))
    });
    jobs.chain(store).collect()
}

/// The plan of the checkpoint at `checkpoint` as a picture; the shift-work tools' refusal sentence
/// when it cannot be read or planned.
pub fn plan(checkpoint: &Path, format: PlanFormat) -> Result<String, WatchError> {
    let pane = gather::job(&shiftwork_seams::OsFs, checkpoint);
    let job = pane.body.map_err(WatchError::Plan)?;
    if let Some(refusal) = &job.plan_refusal {
        return Err(WatchError::Plan(refusal.clone()));
    }
    Ok(picture::render(&job, format))
}

/// The crate's README, run as a doc test so that its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
