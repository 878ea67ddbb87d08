//! Presentation texts (§9), table-driven from the exact examples.

use chrono::{DateTime, Utc};
use shiftwork_hours::{Expr, GateStatus, next_text, next_text_at, schedule_label, state_label};

use crate::{tz, utc};

/// HR-72: the STATE column.
#[test]
fn hr72_state_label() {
    #[rustfmt::skip]
    let rows = [
        ("running", true, true, "closing"),
        ("stopped", true, false, "off-hours"),
        ("running", true, false, "running"),
        ("stopped", false, false, "stopped"),
        ("stopped", false, true, "closing"),
        ("failed", true, false, "failed"),
    ];
    for (state, held, closing, label) in rows {
        assert_eq!(
            state_label(state, held, closing),
            label,
            "{state} {held} {closing}"
        );
    }
}

type NextRow<'a> = (
    bool,
    bool,
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
    &'a str,
    &'a str,
);

/// HR-73, HR-74: the NEXT column; the first matching case decides, a missing instant gives "".
#[test]
fn hr73_hr74_next_text() {
    #[rustfmt::skip]
    let rows: &[NextRow<'_>] = &[
        // (held, closing, lease_until, closing_until, hours_next, zone, text)
        (false, true, None, Some("2026-09-21T13:15:00Z"), None, "UTC", "stops by 13:15"),
        (false, false, Some("2026-09-21T21:00:00Z"), None, None, "UTC", "lease until 21:00"),
        (true, false, None, None, Some("2026-09-28T16:00:00Z"), "America/Los_Angeles", "opens Mon 09:00"),
        (true, false, None, None, Some("2026-09-28T16:00:00Z"), "UTC", "opens Mon 16:00"),
        (false, false, None, None, Some("2026-09-21T13:00:00Z"), "UTC", "closes 13:00"),
        (false, true, None, None, Some("2026-09-21T13:00:00Z"), "UTC", ""),
        (true, false, None, None, None, "UTC", ""),
        (false, true, None, Some("2026-09-21T13:15:59Z"), None, "UTC", "stops by 13:15"),
        // Beyond the examples: the case order, zones with odd offsets, the date line.
        (true, true, Some("2026-09-21T21:00:00Z"), Some("2026-09-21T13:15:00Z"), Some("2026-09-22T09:00:00Z"), "UTC", "stops by 13:15"),
        (true, false, Some("2026-09-21T21:00:00Z"), None, Some("2026-09-22T09:00:00Z"), "UTC", "lease until 21:00"),
        (false, false, None, None, None, "UTC", ""),
        (false, false, None, None, Some("2026-09-21T13:00:00Z"), "Asia/Kathmandu", "closes 18:45"),
        (true, false, None, None, Some("2026-09-21T13:00:00Z"), "Pacific/Kiritimati", "opens Tue 03:00"),
        (true, false, None, None, Some("2026-09-21T00:00:59Z"), "America/St_Johns", "opens Sun 21:30"),
    ];
    let at = |s: Option<&str>| s.map(utc);
    for &(held, closing, lease, closing_until, next, zone, text) in rows {
        assert_eq!(
            next_text(held, closing, at(lease), at(closing_until), at(next), tz(zone)),
            text,
            "{held} {closing} {lease:?} {closing_until:?} {next:?} {zone}"
        );
    }
}

/// HR-73: `next_text_at` takes `held` and `closing` from the status and the next change from the
/// expression at `now`.
#[test]
fn hr73_next_text_at() {
    let expr = Expr::parse("TZ=America/Los_Angeles Mon-Fri 09:00-13:00").unwrap();
    let hours = expr.bind(tz("UTC"));
    let now: DateTime<Utc> = utc("2026-09-26T03:00:00Z");
    let held = GateStatus {
        held: true,
        ..GateStatus::default()
    };
    assert_eq!(
        next_text_at(now, &hours, held, None, None, tz("America/Los_Angeles")),
        "opens Mon 09:00"
    );
    assert_eq!(
        next_text_at(now, &hours, held, None, None, tz("UTC")),
        "opens Mon 16:00"
    );
    let closing = GateStatus {
        closing: true,
        ..held
    };
    assert_eq!(
        next_text_at(
            now,
            &hours,
            closing,
            None,
            Some(utc("2026-09-25T20:15:00Z")),
            tz("America/Los_Angeles")
        ),
        "stops by 13:15"
    );
    let running = GateStatus::default();
    assert_eq!(
        next_text_at(
            utc("2026-09-25T17:00:00Z"),
            &hours,
            running,
            None,
            None,
            tz("America/Los_Angeles")
        ),
        "closes 13:00"
    );
    let whole = Expr::parse("Mon-Sun 00:00-24:00").unwrap();
    assert_eq!(
        next_text_at(now, &whole.bind(tz("UTC")), running, None, None, tz("UTC")),
        ""
    );
}

/// HR-75: the SCHEDULE label.
#[test]
fn hr75_schedule_label() {
    let la = "TZ=America/Los_Angeles Mon-Fri 09:00-13:00";
    #[rustfmt::skip]
    let rows: &[(&str, Option<&str>, &str)] = &[
        (la, Some("America/Los_Angeles"), "Mon-Fri 09:00-13:00"),
        (la, Some("UTC"), la),
        (la, None, la),
        (la, Some(""), la),
        ("CRON_TZ=UTC  Mon 09:00-10:00 ", Some("UTC"), "Mon 09:00-10:00"),
        ("TZ=UTC", Some("UTC"), "TZ=UTC"),
        ("TZ= Mon 09:00-10:00", Some(""), "TZ= Mon 09:00-10:00"),
        ("Mon 09:00-10:00", Some("UTC"), "Mon 09:00-10:00"),
        ("tz=UTC Mon 09:00-10:00", Some("UTC"), "tz=UTC Mon 09:00-10:00"),
        ("TZ=America/Los_Angeles Mon", Some("America/Los"), "TZ=America/Los_Angeles Mon"),
    ];
    for &(raw, viewer, label) in rows {
        assert_eq!(schedule_label(raw, viewer), label, "{raw:?} {viewer:?}");
    }
}
