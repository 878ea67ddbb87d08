//! Tests of `shiftwork-watch` (issue 15): the snapshot on values, the drawing at 80×24 and 160×48,
//! the plain-text report, the plan pictures, and that a view never writes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod contracts_order;
mod fixture;
mod gather;
mod hostile;
mod picture;
mod read_only;
mod report;
mod screens;
mod web;
