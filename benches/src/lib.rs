//! Benchmarks of the shiftwork workspace, one file per crate under `benches/`; run them with
//! `cargo bench -p benches`. This library holds the fixtures the benches share.
