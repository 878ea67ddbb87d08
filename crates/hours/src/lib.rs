//! `hours` — not built yet.
//!
//! This crate is a placeholder in the workspace so that the layout of ARCHITECTURE.md holds from the
//! first commit. Its behaviour is specified in `spec/` and is built by issue 5; until then the crate
//! exports nothing, and the `shiftwork-mcp` binary serves none of its tools.
