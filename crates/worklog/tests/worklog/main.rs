//! The integration tests of the `worklog` crate, one binary, modules by area. Every test names the
//! requirement ids (WL-n) and acceptance scenarios (AS-n) of the specification it covers.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod acceptance;
mod api;
mod architecture;
mod concurrency;
mod config;
mod core_tables;
mod faults;
mod file_choice;
mod hostile;
mod invariants;
mod model;
mod os_fs;
mod privacy;
mod properties;
mod service;
mod spans;
mod support;
