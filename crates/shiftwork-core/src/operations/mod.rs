//! The operations, one per tool: each gathers what its decision needs (the checkpoint, the ledger,
//! probes, file metadata — through the seams of [`crate::Env`]), lets [`crate::decide`] judge, and
//! applies the decision (the brief line, the durable commit).

mod clock_in;
mod clock_out;
mod plan;
mod preview;
mod status;

pub use clock_in::{clock_in, clock_in_arguments};
pub use clock_out::{clock_out, clock_out_arguments};
pub use plan::plan_checkpoint;
pub use preview::preview_brief;
pub use status::status;
