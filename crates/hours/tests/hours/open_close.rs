//! `Hours`, the owned gate, and "when does it next open / close" (issue 28 item 5): `next_open` and
//! `next_close` on hand-checked DST vectors, and against the brute-force oracle of `oracle.rs` (membership
//! by HR-34 literally, walked minute by minute) on random expressions, zones and instants.

use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use shiftwork_hours::{Expr, GateMemory, GateStatus, Hours, ShutdownMode, TickInput, Tz, Window, tick};

use crate::oracle::{HORIZON_MINUTES, minute_floor, oracle_in, transition_after};
use crate::{opt_utc, tz, utc};

/// One vector: an expression, the default zone, an instant, and the expected next opening and close.
fn check(expression: &str, default_zone: &str, at: &str, open: &str, close: &str) {
    let hours = Hours::parse(expression, tz(default_zone)).unwrap();
    let t = utc(at);
    assert_eq!(
        hours.next_open(t),
        opt_utc(open),
        "next_open of {expression:?} at {at}"
    );
    assert_eq!(
        hours.next_close(t),
        opt_utc(close),
        "next_close of {expression:?} at {at}"
    );
}

/// HR-43, HR-47 (exact across DST) for the two new questions.
#[test]
#[rustfmt::skip]
fn next_open_and_next_close_across_dst() {
    let ny_day = "TZ=America/New_York Mon-Fri 09:00-17:00";
    // Friday 17:00 EST, out of hours: Monday opens at 09:00 EDT, after the spring-forward Sunday.
    check(ny_day, "UTC", "2026-03-06T22:00:00Z", "2026-03-09T13:00:00Z", "2026-03-09T21:00:00Z");
    // Exactly at an opening (in hours): the next opening is the day after; the close is today's.
    check(ny_day, "UTC", "2026-03-09T13:00:00Z", "2026-03-10T13:00:00Z", "2026-03-09T21:00:00Z");
    check(ny_day, "UTC", "2026-03-09T13:00:00.5Z", "2026-03-10T13:00:00Z", "2026-03-09T21:00:00Z");
    // Exactly at a close (out of hours): the next close is tomorrow's.
    check(ny_day, "UTC", "2026-03-09T21:00:00Z", "2026-03-10T13:00:00Z", "2026-03-10T21:00:00Z");
    // A window ending in the gap closes when the clocks jump (07:00Z), and opens at 01:30 EDT next day.
    check("TZ=America/New_York 01:30-02:30", "UTC", "2026-03-08T06:59:00Z", "2026-03-09T05:30:00Z", "2026-03-08T07:00:00Z");
    // A window starting in the gap opens when the clocks jump.
    check("TZ=America/New_York 02:15-04:00", "UTC", "2026-03-08T06:00:00Z", "2026-03-08T07:00:00Z", "2026-03-08T08:00:00Z");
    // A window inside the fold opens and closes on both passes.
    check("TZ=America/New_York 01:00-01:30", "UTC", "2026-11-01T05:15:00Z", "2026-11-01T06:00:00Z", "2026-11-01T05:30:00Z");
    check("TZ=America/New_York 01:00-01:30", "UTC", "2026-11-01T05:30:00Z", "2026-11-01T06:00:00Z", "2026-11-01T06:30:00Z");
    // Lord Howe's 30-minute shift: 02:00 falls in the gap, so hours open at the jump (02:30 LHDT).
    check("TZ=Australia/Lord_Howe 02:00-03:00", "UTC", "2026-10-03T15:00:00Z", "2026-10-03T15:30:00Z", "2026-10-03T16:00:00Z");
    // The day Samoa skipped: Friday never came, so hours open at Saturday 00:00 in the window's tail.
    check("TZ=Pacific/Apia Fri 22:00-02:00", "UTC", "2011-12-30T09:00:00Z", "2011-12-30T10:00:00Z", "2011-12-30T12:00:00Z");
    // Without a prefix the default zone decides.
    check("Mon-Fri 09:00-17:30", "Asia/Kolkata", "2026-09-21T03:00:00Z", "2026-09-21T03:30:00Z", "2026-09-21T12:00:00Z");
    // A whole week never closes, so it never opens again either.
    check("Mon-Sun 00:00-24:00", "UTC", "2026-03-06T22:00:00Z", "—", "—");
    check("Mon-Sun 12:00-12:01; Mon-Sun 12:01-12:00", "UTC", "2026-03-06T22:00:00Z", "—", "—");
}

/// The first whole minute after `t` at which the oracle's membership flips to `to`, within 16 days.
fn oracle_next_flip(windows: &[Window], zone: Tz, t: DateTime<Utc>, to: bool) -> Option<DateTime<Utc>> {
    let mut m = minute_floor(t);
    let mut before = oracle_in(windows, zone, m);
    for _ in 0..HORIZON_MINUTES {
        m += TimeDelta::minutes(1);
        let now = oracle_in(windows, zone, m);
        if now == to && before != to {
            return Some(m);
        }
        before = now;
    }
    None
}

/// One random case (the oracle module's generator): `next_open` and `next_close` are flips of
/// `is_in` in the right direction, whole seconds after `t`, the first such flips by the oracle, and
/// `None` only for a whole week.
fn check_case(
    input: &str,
    zone_name: &str,
    base: i64,
    near: bool,
    shift: i64,
    nanos: u32,
) -> Result<(), String> {
    let hours = Hours::parse(input, tz(zone_name)).map_err(|e| format!("{input:?}: {e}"))?;
    let seconds = match (near, transition_after(tz(zone_name), base)) {
        (true, Some(transition)) => (transition + shift).min(4_102_444_799),
        _ => base,
    };
    let t = DateTime::from_timestamp(seconds, nanos).ok_or("instant out of range")?;
    let ctx = || format!("{input:?} in {} at {t}", hours.zone_name());
    let whole_week = hours.expr().covers_whole_week();
    let second = TimeDelta::seconds(1);
    for (to, answer, what) in [
        (true, hours.next_open(t), "next_open"),
        (false, hours.next_close(t), "next_close"),
    ] {
        if let Some(a) = answer {
            if a <= t || a.timestamp_subsec_nanos() != 0 {
                return Err(format!("{what} {a} is not a whole second after t: {}", ctx()));
            }
            if hours.is_in(a) != to || hours.is_in(a - second) == to {
                return Err(format!("{what} {a} is not a flip to {to}: {}", ctx()));
            }
        }
        let horizon = t + TimeDelta::minutes(HORIZON_MINUTES);
        match (
            oracle_next_flip(hours.expr().windows(), hours.zone(), t, to),
            answer,
        ) {
            (Some(o), Some(a)) if o == a => {}
            (None, Some(a)) if a > horizon => {}
            (None, None) if whole_week => {}
            (o, a) => return Err(format!("{what}: oracle {o:?}, crate {a:?}: {}", ctx())),
        }
    }
    // The next change is the next opening out of hours, the next close in hours.
    let (open, close, change) = (hours.next_open(t), hours.next_close(t), hours.next_change(t));
    let expected = if hours.is_in(t) { close } else { open };
    if change != expected {
        return Err(format!(
            "next_change {change:?} is not the coming flip {expected:?}: {}",
            ctx()
        ));
    }
    Ok(())
}

/// HR-89 style agreement for `next_open` / `next_close`: 500 random cases (years 1975–2099, half
/// near a transition of the zone).
#[test]
fn next_open_and_next_close_agree_with_the_oracle() {
    let mut runner = TestRunner::new(Config {
        cases: 500,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(
        &crate::oracle::case(),
        |(input, zone, base, near, shift, nanos)| {
            check_case(&input, zone, base, near, shift, nanos).map_err(TestCaseError::fail)
        },
    );
    if let Err(e) = result {
        panic!("{e}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// HR-7, HR-50: the new questions never panic, at any instant chrono can represent, in any zone.
    #[test]
    fn next_open_and_next_close_never_panic(
        input in crate::properties::valid_expression(),
        zone in proptest::sample::select(crate::oracle::ORACLE_ZONES),
        t in crate::properties::any_instant(),
    ) {
        let hours = Hours::parse(&input, tz(zone)).unwrap();
        let _ = (hours.next_open(t), hours.next_close(t));
    }
}

fn owned<T: Clone + Send + Sync + 'static>() {}

/// `Hours` owns its expression: it is `Clone + Send + Sync + 'static`, so a host stores it in its
/// harness, moves it to another thread, and lends it to the gate on every tick.
#[test]
fn hours_is_owned_and_can_be_stored_and_sent() {
    owned::<Hours>();
    struct Harness {
        hours: Hours,
        memory: GateMemory,
    }
    let harness = Harness {
        hours: Hours::parse("TZ=Europe/London Mon-Fri 09:00-17:30", Tz::UTC).unwrap(),
        memory: GateMemory::default(),
    };
    let worker = std::thread::spawn(move || {
        let t = utc("2026-03-30T16:30:00Z"); // 17:30 BST, Monday: the close
        let out = tick(
            TickInput {
                now: t,
                hours: &harness.hours,
                status: GateStatus {
                    up: true,
                    ..GateStatus::default()
                },
                mode: ShutdownMode::Immediate,
                lease: Default::default(),
                in_flight: false,
            },
            harness.memory,
        );
        (out.action.is_some(), harness.hours.next_open(t))
    });
    assert_eq!(worker.join().unwrap(), (true, Some(utc("2026-03-31T08:00:00Z"))));
    // Shared between threads behind an `Arc`, or cloned.
    let shared = Arc::new(Expr::parse("Sat 10:00-14:00").unwrap().bind(tz("UTC")));
    let clone = (*shared).clone();
    assert_eq!(clone, *shared);
    assert_eq!(clone.into_expr().to_string(), "Sat 10:00-14:00");
}

/// HR-30, HR-31, HR-46: `Hours::new`, `Hours::parse` and `Expr::bind` bind alike: the prefix zone
/// (spelt as written) wins over the default zone.
#[test]
fn hours_binds_like_expr_bind() {
    for (text, default_zone, zone_name) in [
        ("TZ=US/Eastern 09:00-17:00", "UTC", "US/Eastern"),
        ("CRON_TZ=UTC 09:00-17:00", "Asia/Kolkata", "UTC"),
        ("09:00-17:00", "Asia/Kolkata", "Asia/Kolkata"),
    ] {
        let expr = Expr::parse(text).unwrap();
        let parsed = Hours::parse(text, tz(default_zone)).unwrap();
        assert_eq!(parsed, expr.bind(tz(default_zone)), "{text}");
        assert_eq!(parsed, Hours::new(expr, tz(default_zone)), "{text}");
        assert_eq!(parsed.zone_name(), zone_name, "{text}");
    }
    assert!(Hours::parse("   ", Tz::UTC).is_err());
}
