//! The `hours` crate's tests, one module per area of the specification (`spec/hours.md`). Every test
//! names the requirement ids it covers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod api;
mod gate;
mod grammar;
mod open_close;
mod oracle;
mod present;
mod properties;
mod purity;
mod report;
mod vectors;

use chrono::{DateTime, Utc};

/// An instant from RFC 3339 text (test tables are written in UTC).
pub fn utc(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .unwrap_or_else(|e| panic!("bad test instant {text:?}: {e}"))
        .with_timezone(&Utc)
}

/// An optional instant: "—" is `None`.
pub fn opt_utc(text: &str) -> Option<DateTime<Utc>> {
    (text != "—").then(|| utc(text))
}

/// A zone by name.
pub fn tz(name: &str) -> chrono_tz::Tz {
    shiftwork_hours::parse_zone(name).unwrap_or_else(|e| panic!("bad test zone {name:?}: {e}"))
}
