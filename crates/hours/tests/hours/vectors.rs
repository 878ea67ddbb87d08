//! The acceptance vectors of §14 (HR-98, HR-99), table-driven. They assume tzdata 2025b (HR-3).

use shiftwork_hours::Expr;

use crate::{opt_utc, tz, utc};

/// One §14 row: expression, default zone ("—" for none: UTC is passed and must not matter), instant,
/// expected membership, next change and previous end.
fn check(id: &str, expression: &str, default_zone: &str, t: &str, in_hours: bool, next: &str, prev: &str) {
    let expr = Expr::parse(expression).unwrap_or_else(|e| panic!("{id}: {expression:?} does not parse: {e}"));
    let zones: Vec<_> = if default_zone == "—" {
        // A prefixed expression ignores the default zone (HR-30): try two very different ones.
        vec![tz("UTC"), tz("Pacific/Kiritimati")]
    } else {
        vec![tz(default_zone)]
    };
    for zone in zones {
        let z = expr.bind(zone);
        let t = utc(t);
        assert_eq!(z.is_in(t), in_hours, "{id}: is_in({t}) in default zone {zone}");
        assert_eq!(
            z.next_change(t),
            opt_utc(next),
            "{id}: next_change({t}) in default zone {zone}"
        );
        assert_eq!(
            z.prev_end(t),
            opt_utc(prev),
            "{id}: prev_end({t}) in default zone {zone}"
        );
        let c = z.check(t);
        assert_eq!(
            (c.in_hours, c.next_change),
            (in_hours, opt_utc(next)),
            "{id}: check (HR-45)"
        );
    }
}

/// HR-98 (and through it HR-34 … HR-50): every row of the acceptance table holds exactly.
#[test]
fn hr98_acceptance_vectors() {
    #[rustfmt::skip]
    let rows: &[(&str, &str, &str, &str, bool, &str, &str)] = &[
        ("AV-01", "TZ=UTC Mon-Fri 09:00-13:00", "—", "2026-09-21T13:00:01Z", false, "2026-09-22T09:00:00Z", "2026-09-21T13:00:00Z"),
        ("AV-02", "TZ=UTC Mon-Fri 09:00-13:00", "—", "2026-09-21T12:59:59.999Z", true, "2026-09-21T13:00:00Z", "—"),
        ("AV-03", "TZ=UTC Fri-Mon 10:00-11:00", "—", "2026-09-29T10:30:00Z", false, "2026-10-02T10:00:00Z", "2026-09-28T11:00:00Z"),
        ("AV-04", "TZ=UTC 22:00-00:00", "—", "2026-09-21T23:59:00Z", true, "2026-09-22T00:00:00Z", "—"),
        ("AV-05", "Mon-Fri 09:00-17:30", "Asia/Kolkata", "2026-09-21T03:29:00Z", false, "2026-09-21T03:30:00Z", "2026-09-18T12:00:00Z"),
        ("AV-06", "TZ=Asia/Kolkata Mon 00:00-01:00", "—", "2026-09-20T18:00:00Z", false, "2026-09-20T18:30:00Z", "2026-09-13T19:30:00Z"),
        ("AV-07", "TZ=Asia/Kolkata Fri 22:00-02:00", "—", "2026-09-25T20:29:00Z", true, "2026-09-25T20:30:00Z", "—"),
        ("AV-08", "TZ=America/New_York 01:30-02:30", "—", "2026-03-08T06:59:00Z", true, "2026-03-08T07:00:00Z", "—"),
        ("AV-09", "TZ=America/New_York 01:30-02:30", "—", "2026-03-08T08:00:00Z", false, "2026-03-09T05:30:00Z", "2026-03-08T07:00:00Z"),
        ("AV-10", "TZ=America/New_York Mon-Fri 09:00-17:00", "—", "2026-03-06T22:00:00Z", false, "2026-03-09T13:00:00Z", "2026-03-06T22:00:00Z"),
        ("AV-11", "TZ=America/New_York Mon-Sun 00:00-24:00", "—", "2026-03-08T07:00:00Z", true, "—", "—"),
        ("AV-12", "TZ=America/New_York 01:30-02:30", "—", "2025-03-09T06:45:00Z", true, "2025-03-09T07:00:00Z", "—"),
        ("AV-13", "TZ=America/New_York 22:00-02:00", "—", "2026-11-01T03:00:00Z", true, "2026-11-01T07:00:00Z", "—"),
        ("AV-14", "TZ=America/New_York 00:30-01:30", "—", "2026-11-01T05:31:00Z", false, "2026-11-01T06:00:00Z", "2026-11-01T05:30:00Z"),
        ("AV-15", "TZ=America/New_York 00:30-01:30", "—", "2026-11-01T06:31:00Z", false, "2026-11-02T05:30:00Z", "2026-11-01T06:30:00Z"),
        ("AV-16", "TZ=America/New_York 00:00-12:00; 12:00-24:00", "—", "2026-11-01T06:00:00Z", true, "—", "—"),
        ("AV-17", "TZ=America/New_York 01:30-03:00", "—", "2027-11-07T05:45:00Z", true, "2027-11-07T06:00:00Z", "—"),
        ("AV-18", "TZ=America/New_York 01:30-03:00", "—", "2027-11-07T06:10:00Z", false, "2027-11-07T06:30:00Z", "2027-11-07T06:00:00Z"),
        ("AV-19", "TZ=America/New_York 01:00-01:30", "—", "2027-11-07T05:40:00Z", false, "2027-11-07T06:00:00Z", "2027-11-07T05:30:00Z"),
        ("AV-20", "TZ=America/New_York Mon-Sat 00:00-24:00; Sun 00:00-02:00; Sun 02:30-24:00", "—", "2026-03-01T08:00:00Z", true, "2026-03-15T06:00:00Z", "—"),
        ("AV-21", "TZ=America/New_York Sun 02:00-02:30", "—", "2026-03-10T12:00:00Z", false, "2026-03-15T06:00:00Z", "2026-03-01T07:30:00Z"),
        ("AV-22", "TZ=America/Los_Angeles Mon-Fri 09:00-13:00", "—", "2026-09-26T03:00:00Z", false, "2026-09-28T16:00:00Z", "2026-09-25T20:00:00Z"),
        ("AV-23", "TZ=Europe/London 01:30-02:30", "—", "2026-03-29T00:30:00Z", false, "2026-03-29T01:00:00Z", "2026-03-28T02:30:00Z"),
        ("AV-24", "TZ=Europe/London 01:00-02:00", "—", "2026-10-25T00:30:00Z", true, "2026-10-25T02:00:00Z", "—"),
        ("AV-25", "TZ=Europe/London Sun 01:30-01:45", "—", "2026-10-25T00:40:00Z", true, "2026-10-25T00:45:00Z", "—"),
        ("AV-26", "TZ=Europe/London Sun 01:30-01:45", "—", "2026-10-25T00:50:00Z", false, "2026-10-25T01:30:00Z", "2026-10-25T00:45:00Z"),
        ("AV-27", "TZ=Europe/London Mon-Fri 09:00-17:30", "—", "2026-03-27T17:30:00Z", false, "2026-03-30T08:00:00Z", "2026-03-27T17:30:00Z"),
        ("AV-28", "TZ=Australia/Lord_Howe 02:00-03:00", "—", "2026-10-03T15:00:00Z", false, "2026-10-03T15:30:00Z", "2026-10-02T16:30:00Z"),
        ("AV-29", "TZ=Australia/Lord_Howe 02:00-03:00", "—", "2026-10-03T15:45:00Z", true, "2026-10-03T16:00:00Z", "—"),
        ("AV-30", "TZ=Australia/Lord_Howe 02:00-02:30", "—", "2026-10-03T15:00:00Z", false, "2026-10-04T15:00:00Z", "2026-10-02T16:00:00Z"),
        ("AV-31", "TZ=Australia/Lord_Howe 01:00-02:00", "—", "2026-04-04T15:10:00Z", true, "2026-04-04T15:30:00Z", "—"),
        ("AV-32", "TZ=Australia/Lord_Howe 01:45-02:15", "—", "2026-04-04T14:50:00Z", true, "2026-04-04T15:00:00Z", "—"),
        ("AV-33", "TZ=Pacific/Apia Fri 22:00-02:00", "—", "2011-12-30T09:00:00Z", false, "2011-12-30T10:00:00Z", "2011-12-24T12:00:00Z"),
        ("AV-34", "TZ=America/Sao_Paulo Mon-Fri 09:00-18:00", "—", "2026-11-02T12:00:00Z", true, "2026-11-02T21:00:00Z", "—"),
    ];
    for &(id, expression, zone, t, in_hours, next, prev) in rows {
        check(id, expression, zone, t, in_hours, next, prev);
    }
}

/// Membership only: expression, default zone, instant, expected `is_in`.
fn check_in(expression: &str, default_zone: &str, t: &str, expected: bool) {
    let expr = Expr::parse(expression).unwrap();
    assert_eq!(
        expr.bind(tz(default_zone)).is_in(utc(t)),
        expected,
        "{expression} at {t} in {default_zone}"
    );
}

/// HR-99: the membership-only checks that complete the table (HR-34, HR-35, HR-39).
#[test]
fn hr99_membership_checks() {
    #[rustfmt::skip]
    let rows: &[(&str, &str, bool)] = &[
        ("TZ=America/New_York 01:30-02:30", "2026-03-08T06:59:59Z", true),
        ("TZ=America/New_York 01:30-02:30", "2026-03-08T07:00:00Z", false),
        ("TZ=America/New_York 01:00-02:00", "2026-11-01T05:30:00Z", true),
        ("TZ=America/New_York 01:00-02:00", "2026-11-01T06:30:00Z", true),
        ("TZ=UTC Fri 22:00-02:00", "2026-09-25T23:00:00Z", true),
        ("TZ=UTC Fri 22:00-02:00", "2026-09-26T01:59:00Z", true),
        ("TZ=UTC Fri 22:00-02:00", "2026-09-26T02:00:00Z", false),
        ("TZ=UTC Fri 22:00-02:00", "2026-09-25T21:59:00Z", false),
        ("TZ=UTC Fri-Mon 10:00-11:00", "2026-09-25T10:30:00Z", true),
        ("TZ=UTC Fri-Mon 10:00-11:00", "2026-09-26T10:30:00Z", true),
        ("TZ=UTC Fri-Mon 10:00-11:00", "2026-09-27T10:30:00Z", true),
        ("TZ=UTC Fri-Mon 10:00-11:00", "2026-09-28T10:30:00Z", true),
        ("TZ=UTC Mon-Fri 09:00-12:00; Mon-Fri 13:00-17:00", "2026-09-21T12:30:00Z", false),
        ("TZ=UTC Mon-Fri 09:00-12:00; Mon-Fri 13:00-17:00", "2026-09-21T13:00:00Z", true),
    ];
    for &(expression, t, expected) in rows {
        check_in(expression, "UTC", t, expected);
    }
    // `Mon-Sun 00:00-24:00` with any default zone at any instant: in, no next change, no previous end.
    let whole = Expr::parse("Mon-Sun 00:00-24:00").unwrap();
    for zone in [
        "UTC",
        "America/New_York",
        "Australia/Lord_Howe",
        "Pacific/Apia",
        "Asia/Kathmandu",
    ] {
        for t in [
            "1900-01-01T00:00:00Z",
            "2011-12-30T10:00:00Z",
            "2026-03-08T07:00:00Z",
            "2199-12-31T23:59:59Z",
        ] {
            let z = whole.bind(tz(zone));
            assert!(z.is_in(utc(t)), "{zone} {t}");
            assert_eq!(z.next_change(utc(t)), None, "{zone} {t}");
            assert_eq!(z.prev_end(utc(t)), None, "{zone} {t}");
        }
    }
}

/// HR-39, HR-40: the DST consequences spelled out in §6, each pinned at the seconds around it.
#[test]
fn hr39_hr40_gaps_folds_and_the_skipped_day() {
    #[rustfmt::skip]
    let rows: &[(&str, &str, bool)] = &[
        // A window wholly inside the gap does not occur that day.
        ("TZ=America/New_York 02:00-03:00", "2026-03-08T06:59:59Z", false),
        ("TZ=America/New_York 02:00-03:00", "2026-03-08T07:00:00Z", false),
        ("TZ=America/New_York 02:00-03:00", "2026-03-09T06:00:00Z", true),
        // A window with one label inside the fold gets a hole (NY 2027-11-07 01:30-03:00).
        ("TZ=America/New_York 01:30-03:00", "2027-11-07T05:29:59Z", false),
        ("TZ=America/New_York 01:30-03:00", "2027-11-07T05:30:00Z", true),
        ("TZ=America/New_York 01:30-03:00", "2027-11-07T05:59:59Z", true),
        ("TZ=America/New_York 01:30-03:00", "2027-11-07T06:00:00Z", false),
        ("TZ=America/New_York 01:30-03:00", "2027-11-07T06:30:00Z", true),
        // A window wholly inside the fold runs twice.
        ("TZ=America/New_York 01:00-01:30", "2027-11-07T05:00:00Z", true),
        ("TZ=America/New_York 01:00-01:30", "2027-11-07T05:30:00Z", false),
        ("TZ=America/New_York 01:00-01:30", "2027-11-07T06:00:00Z", true),
        ("TZ=America/New_York 01:00-01:30", "2027-11-07T06:30:00Z", false),
        // A window spanning the whole fold is two real hours long (London 2026-10-25).
        ("TZ=Europe/London 01:00-02:00", "2026-10-25T00:00:00Z", true),
        ("TZ=Europe/London 01:00-02:00", "2026-10-25T01:59:59Z", true),
        ("TZ=Europe/London 01:00-02:00", "2026-10-25T02:00:00Z", false),
        // Apia skipped Friday 2011-12-30: Friday's tail still applies on Saturday, Thursday's is lost.
        ("TZ=Pacific/Apia Fri 22:00-02:00", "2011-12-30T10:00:00Z", true),
        ("TZ=Pacific/Apia Fri 22:00-02:00", "2011-12-30T11:59:59Z", true),
        ("TZ=Pacific/Apia Fri 22:00-02:00", "2011-12-30T12:00:00Z", false),
        ("TZ=Pacific/Apia Thu 22:00-02:00", "2011-12-30T09:59:59Z", true),
        ("TZ=Pacific/Apia Thu 22:00-02:00", "2011-12-30T10:00:00Z", false),
        ("TZ=Pacific/Apia Fri 09:00-17:00", "2011-12-30T20:00:00Z", false),
    ];
    for &(expression, t, expected) in rows {
        check_in(expression, "UTC", t, expected);
    }
    // Thursday's tail ends at the transition instant.
    let thu = Expr::parse("TZ=Pacific/Apia Thu 22:00-02:00").unwrap();
    assert_eq!(
        thu.bind(tz("UTC")).next_change(utc("2011-12-30T09:00:00Z")),
        Some(utc("2011-12-30T10:00:00Z"))
    );
}

/// HR-47: results are exact whole seconds, never a nearby second, and a gap label gives the transition
/// instant, never the label shifted by the gap (never 07:30Z for NY 02:30 on 2026-03-08).
#[test]
fn hr47_exact_whole_seconds() {
    let expr = Expr::parse("TZ=UTC Mon-Fri 09:00-13:00").unwrap();
    let z = expr.bind(tz("UTC"));
    assert_eq!(
        z.prev_end(utc("2026-09-21T13:00:01Z")),
        Some(utc("2026-09-21T13:00:00Z"))
    );
    assert_eq!(
        z.prev_end(utc("2026-09-21T13:00:00.5Z")),
        Some(utc("2026-09-21T13:00:00Z"))
    );
    let n = z.next_change(utc("2026-09-21T12:59:59.999999999Z")).unwrap();
    assert_eq!(n, utc("2026-09-21T13:00:00Z"));
    assert_eq!(n.timestamp_subsec_nanos(), 0);
    let gap = Expr::parse("TZ=America/New_York 01:30-02:30").unwrap();
    assert_eq!(
        gap.bind(tz("UTC")).next_change(utc("2026-03-08T06:45:00Z")),
        Some(utc("2026-03-08T07:00:00Z"))
    );
}

/// HR-38: sub-second parts are truncated; an instant and the start of its UTC second agree.
#[test]
fn hr38_subsecond_truncation() {
    let expr = Expr::parse("TZ=UTC 09:00-13:00").unwrap();
    let z = expr.bind(tz("UTC"));
    assert!(z.is_in(utc("2026-09-21T12:59:59.999999999Z")));
    assert!(!z.is_in(utc("2026-09-21T08:59:59.999999999Z")));
    assert!(z.is_in(utc("2026-09-21T09:00:00.000000001Z")));
}

/// HR-30, HR-31, HR-46: without a prefix the default zone decides and is reported by `Tz::name()`; with
/// a prefix the default zone is ignored and the zone text is reported as written; `bind` offers `zone`,
/// `zone_name` and the four evaluation functions.
#[test]
fn hr30_hr31_hr46_default_zone_and_names() {
    let plain = Expr::parse("Mon-Fri 09:00-17:30").unwrap();
    let t = utc("2026-09-21T03:30:00Z"); // 09:00 in Kolkata, 23:30 Sunday in New York
    assert!(plain.bind(tz("Asia/Kolkata")).is_in(t));
    assert!(!plain.bind(tz("America/New_York")).is_in(t));
    assert_eq!(plain.bind(tz("Asia/Kolkata")).zone_name(), "Asia/Kolkata");
    assert_eq!(plain.bind(tz("US/Eastern")).zone_name(), "US/Eastern");
    let linked = Expr::parse("TZ=US/Eastern Mon-Fri 09:00-17:30").unwrap();
    let z = linked.bind(tz("Asia/Kolkata"));
    assert_eq!(z.zone_name(), "US/Eastern");
    assert_eq!(z.zone(), tz("US/Eastern"));
    assert!(!z.is_in(t));
}

/// HR-49: no eight-day horizon — a change more than eight days away is returned (AV-20/AV-21 above), in
/// both directions, and an expression whose only gap in the week falls into a DST gap is still found.
#[test]
fn hr49_no_eight_day_limit() {
    let expr = Expr::parse("TZ=America/New_York Sun 02:00-02:30").unwrap();
    let z = expr.bind(tz("UTC"));
    // From just after the 2026-03-01 window, the next opening skips the gap Sunday (03-08).
    assert_eq!(
        z.next_change(utc("2026-03-01T08:00:00Z")),
        Some(utc("2026-03-15T06:00:00Z"))
    );
    assert_eq!(
        z.prev_end(utc("2026-03-14T12:00:00Z")),
        Some(utc("2026-03-01T07:30:00Z"))
    );
}

/// HR-50, HR-7: at and near the ends of chrono's range the functions answer without panicking, and
/// within 1900–2199 they answer normally.
#[test]
fn hr50_domain_edges() {
    use chrono::{DateTime, TimeDelta};
    let expr = Expr::parse("Mon-Fri 09:00-17:00").unwrap();
    for zone in [
        "UTC",
        "Pacific/Kiritimati",
        "Pacific/Pago_Pago",
        "America/New_York",
    ] {
        let z = expr.bind(tz(zone));
        for t in [
            DateTime::<chrono::Utc>::MIN_UTC,
            DateTime::<chrono::Utc>::MIN_UTC + TimeDelta::days(3),
            DateTime::<chrono::Utc>::MAX_UTC,
            DateTime::<chrono::Utc>::MAX_UTC - TimeDelta::days(3),
        ] {
            let _ = (z.is_in(t), z.next_change(t), z.prev_end(t), z.check(t));
        }
        assert!(z.next_change(DateTime::<chrono::Utc>::MAX_UTC).is_none());
        assert!(z.next_change(utc("1900-01-01T00:00:00Z")).is_some());
        assert!(z.next_change(utc("2199-12-31T23:59:59Z")).is_some());
        let out = utc("2199-12-31T20:00:00Z"); // a Tuesday
        assert!(z.is_in(out) || z.prev_end(out).is_some());
    }
}

/// HR-47, HR-48: exact from boundaries, off the minute grid too. Monrovia kept −00:44:30 until
/// 1972-01-07, when its clocks jumped from 00:00 to 00:44:30: labels land on odd seconds, a window lying
/// in that gap does not occur, and a window ending in it ends at the transition instant. Sampling every
/// 30 s (the reference) would miss every one of these by seconds.
#[test]
fn hr47_hr48_exact_off_the_minute_grid() {
    check(
        "Monrovia-1",
        "TZ=Africa/Monrovia Mon-Fri 09:00-17:00",
        "—",
        "1970-01-05T00:00:00Z",
        false,
        "1970-01-05T09:44:30Z",
        "1970-01-02T17:44:30Z",
    );
    check(
        "Monrovia-2",
        "TZ=Africa/Monrovia Fri 00:00-00:30",
        "—",
        "1972-01-06T12:00:00Z",
        false,
        "1972-01-14T00:00:00Z",
        "1971-12-31T01:14:30Z",
    );
    check(
        "Monrovia-3",
        "TZ=Africa/Monrovia Thu 23:00-00:30",
        "—",
        "1972-01-07T00:00:00Z",
        true,
        "1972-01-07T00:44:30Z",
        "—",
    );
    check(
        "Monrovia-4",
        "TZ=Africa/Monrovia Thu 23:00-00:30",
        "—",
        "1972-01-07T00:44:30Z",
        false,
        "1972-01-13T23:00:00Z",
        "1972-01-07T00:44:30Z",
    );
}

/// HR-37: windows are a union — overlapping and duplicate windows are allowed, not merged in the
/// canonical form, and a time is in hours if any window holds it; the next change skips over the seams
/// between touching or overlapping windows.
#[test]
fn hr37_union_of_windows() {
    let e = Expr::parse("TZ=UTC Mon 09:00-12:00; Mon 11:00-13:00; Mon 13:00-14:00; Mon 09:00-12:00").unwrap();
    assert_eq!(e.windows().len(), 4);
    assert_eq!(
        e.to_string(),
        "TZ=UTC Mon 09:00-12:00; Mon 09:00-12:00; Mon 11:00-13:00; Mon 13:00-14:00"
    );
    let z = e.bind(tz("UTC"));
    for (t, member) in [
        ("11:30", true),
        ("12:30", true),
        ("13:00", true),
        ("13:59", true),
        ("14:00", false),
        ("08:59", false),
    ] {
        assert_eq!(z.is_in(utc(&format!("2026-09-21T{t}:00Z"))), member, "{t}");
    }
    assert_eq!(
        z.next_change(utc("2026-09-21T09:00:00Z")),
        Some(utc("2026-09-21T14:00:00Z"))
    );
    assert_eq!(
        z.prev_end(utc("2026-09-21T20:00:00Z")),
        Some(utc("2026-09-21T14:00:00Z"))
    );
}
