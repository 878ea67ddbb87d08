//! Integration tests of the `contracts` crate, one binary with modules by area:
//! `acceptance` (the §11 scenarios on every store), `model` (the model-based property test),
//! `concurrency` (threads and processes claiming from one file), `crash` (kill -9), `embedding` (the
//! typed API a runtime uses, the observer, the gauges' query, the spans), `fencing`, `retention`
//! (finished contracts kept for a while, then purged), `waits` (waits on the clock they were given,
//! cancelled calls), `wakeups` (one waiting poll woken per contract). Every behaviour a store offers runs on every
//! store kind (`support::store_kinds`: memory, SQLite, and PostgreSQL when `SHIFTWORK_TEST_POSTGRES_URL`
//! is set; with `SHIFTWORK_REQUIRE_POSTGRES=1` a missing server fails).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod acceptance;
mod beyond;
mod concurrency;
mod crash;
mod embedding;
mod fencing;
mod hostile;
mod hostile_round3_secrets;
mod hostile_round3_store;
mod migration;
mod model;
mod postgres;
mod redelivery_race;
mod retention;
mod rules;
pub mod scenarios;
mod store_files;
pub mod support;
mod waits;
mod wakeups;
