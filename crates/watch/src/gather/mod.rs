//! Gather: the one module that reads the core crates (`shiftwork-core`, `shiftwork-contracts`,
//! `shiftwork-hours`) and turns what they say into [`crate::snapshot`] values.
//!
//! Everything else in this crate sees plain values only, so a change of the core crates' API touches
//! this module alone. Where the core crates do not yet expose what the view needs, the narrowest
//! read-only reader is written here and marked `PORT:`.
//!
//! Nothing here writes: checkpoints and ledgers are read through [`shiftwork_seams::Fs`] (bounded,
//! regular files only), the store through its read operations, and a SQLite store is never created or
//! initialised by the view.

mod contracts;
mod hours;
mod job;
mod ledger_agents;

pub use contracts::{
    CLAIMED_SHOWN, ContractsReader, ENDED_SHOWN, READ_PAGE, StoreLocation, WAITING_SHOWN, read_store,
};
pub use hours::HoursWatch;
pub use job::job;
pub use ledger_agents::{AgentScan, MAX_LINE};

/// Parses an agent name as the contracts crate does, or `None` when it is not one.
pub fn agent_id(name: &str) -> Option<shiftwork_contracts::AgentId> {
    shiftwork_contracts::AgentId::new(name).ok()
}

/// The files of a checkpoint whose changes change its pane: the path as given and its ledger.
pub fn checkpoint_files(checkpoint: &std::path::Path) -> [std::path::PathBuf; 2] {
    let paths = shiftwork_core::CheckpointPaths::new(checkpoint);
    [paths.given, paths.ledger]
}
