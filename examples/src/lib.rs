//! Runnable examples of embedding the shiftwork crates; see `examples/` (run one with
//! `cargo run -p examples --example NAME`). This library is empty on purpose.

/// The user guide's migration page, run as doc tests, so that every snippet it shows compiles against
/// the crates as they are.
#[cfg(doctest)]
#[doc = include_str!("../../docs/src/migrating-from-0.1.md")]
pub struct MigratingFrom01;
