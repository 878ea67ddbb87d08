//! Runnable examples of embedding the shiftwork crates; see `examples/` (run one with
//! `cargo run -p examples --example NAME`). This library is empty on purpose.
