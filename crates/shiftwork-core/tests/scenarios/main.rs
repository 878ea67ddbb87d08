//! The acceptance scenarios of spec §19 (SW-152), one module per scenario group, plus the property
//! and fault-injection tests of SW-151 and SW-111.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod bounds;
mod clock_in;
mod clock_out;
mod crate_rules;
mod decide;
mod durability;
mod features;
mod hardening;
mod issue27;
mod issue28;
mod issue36;
mod issue37;
mod plain_text;
mod planner;
mod planner_oracle;
mod properties;
mod reading;
mod schema;
