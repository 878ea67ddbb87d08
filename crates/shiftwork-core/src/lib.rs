//! `shiftwork-core` — shift work for AI coding agents: a JSON checkpoint of planned units, a wave
//! planner that says which units may run now, clock-in briefs and clock-out records with an
//! accounting ledger.
//!
//! The behaviour is the contract of `spec/shiftwork.md` (requirement ids `SW-n`), compatible byte for
//! byte with the checkpoints and ledgers of bantamkit 0.36.2's shift-work tools.
//!
//! # What this crate never does
//!
//! It calls no `std::fs`, reads no clock, spawns no process and reads no environment: files go through
//! [`shiftwork_seams::Fs`], time through [`shiftwork_seams::Clock`], process identity and probes through [`shiftwork_seams::Host`].
//! It names no MCP type and no async runtime. No public operation panics on any input: every refusal
//! is an answer value (SW-47, SW-150).

/// The JSON of checkpoints, ledger lines and arguments: [`shiftwork_json`], JSON as Python's `json`
/// module reads and writes it.
pub use shiftwork_json as json;
pub mod schema;
mod schema_instance;

pub use schema::CHECKPOINT_SCHEMA;
pub mod answer;
pub mod budget;
pub mod checkpoint;
mod clock_out;
mod commit;
mod env;
mod error;
pub mod ledger;
mod ledger_line;
mod lines;
pub mod lock;
pub mod paths;
pub mod planner;
pub mod ranking;
mod recovery;
pub mod search;
mod tools;

pub use clock_out::{ClockOut, clock_out, next_cursor};
pub use env::{Env, PROBE_TIMEOUT};
pub use error::Error;
pub use paths::CheckpointPaths;
pub use planner::work_plan;
pub use recovery::recover;
pub use tools::{clock_in, plan_checkpoint, status};

/// The crate's README, run as a doc test so that its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
