//! The hours report (§11 without its wire): the typed answer of `HoursQuery` (HR-78 steps 3–5,
//! HR-80 … HR-82), and the bounds of issues 12 and 16 on what an answer or an error repeats.

use chrono::{DateTime, Utc};
use shiftwork_hours::{
    ECHO_LIMIT, Expr, HoursQuery, HoursRefusal, HoursReport, MAX_EXPRESSION_BYTES, ParseErrorKind, Tz,
    ZoneError, parse_zone,
};

use crate::{opt_utc, tz, utc};

/// "Now" for the rows that give `at`: never used by them.
const FAR: &str = "2031-01-01T00:00:00Z";

fn ask(
    expression: &str,
    at: Option<&str>,
    zone: Option<&str>,
    server: Tz,
) -> Result<HoursReport, HoursRefusal> {
    HoursQuery { expression, at, zone }.answer(utc(FAR), server)
}

/// One expected report: in hours, next change, previous end ("—" = none), canonical, zone, summary.
type Row<'a> = (bool, &'a str, &'a str, &'a str, &'a str, &'a str);

/// A question (server zone, expression, `at`, `zone`) and its expected report.
type Question<'a> = (Tz, &'a str, Option<&'a str>, Option<&'a str>, Row<'a>);

fn check_report(report: &HoursReport, (in_hours, next, prev, canonical, zone, summary): Row<'_>) {
    let expected = HoursReport {
        in_hours,
        next_change: opt_utc(next),
        previous_end: opt_utc(prev),
        canonical: canonical.to_owned(),
        zone: zone.to_owned(),
        summary: summary.to_owned(),
    };
    assert_eq!(report, &expected);
}

/// HR-80 … HR-82, HR-92: the answering examples of §11 (1–4, 10) as typed reports.
#[test]
fn hr80_hr82_section_11_examples_as_reports() {
    #[rustfmt::skip]
    let rows: &[Question<'_>] = &[
        (Tz::UTC, "TZ=America/Los_Angeles Mon-Fri 09:00-13:00", Some("2026-09-26T03:00:00Z"), None,
         (false, "2026-09-28T16:00:00Z", "2026-09-25T20:00:00Z", "TZ=America/Los_Angeles Mon 09:00-13:00; Tue 09:00-13:00; Wed 09:00-13:00; Thu 09:00-13:00; Fri 09:00-13:00", "America/Los_Angeles", "opens Mon 09:00")),
        (Tz::UTC, "Mon-Fri 09:00-17:30", Some("2026-09-21T03:29:00Z"), Some("Asia/Kolkata"),
         (false, "2026-09-21T03:30:00Z", "2026-09-18T12:00:00Z", "Mon 09:00-17:30; Tue 09:00-17:30; Wed 09:00-17:30; Thu 09:00-17:30; Fri 09:00-17:30", "Asia/Kolkata", "opens Mon 09:00")),
        (Tz::UTC, "TZ=America/New_York 22:00-02:00", Some("2026-11-01T03:00:00Z"), None,
         (true, "2026-11-01T07:00:00Z", "—", "TZ=America/New_York Mon 22:00-02:00; Tue 22:00-02:00; Wed 22:00-02:00; Thu 22:00-02:00; Fri 22:00-02:00; Sat 22:00-02:00; Sun 22:00-02:00", "America/New_York", "closes 02:00")),
        (Tz::UTC, "Mon-Sun 00:00-24:00", Some("2026-09-23T12:00:00Z"), Some("UTC"),
         (true, "—", "—", "Mon 00:00-24:00; Tue 00:00-24:00; Wed 00:00-24:00; Thu 00:00-24:00; Fri 00:00-24:00; Sat 00:00-24:00; Sun 00:00-24:00", "UTC", "")),
        (tz("America/New_York"), "Mon-Fri 09:00-17:00", Some("2026-03-06T22:00:00Z"), None,
         (false, "2026-03-09T13:00:00Z", "2026-03-06T22:00:00Z", "Mon 09:00-17:00; Tue 09:00-17:00; Wed 09:00-17:00; Thu 09:00-17:00; Fri 09:00-17:00", "America/New_York", "opens Mon 09:00")),
        // HR-31, HR-81: the prefix's text as written wins over a given zone; a given link name stays.
        (Tz::UTC, "TZ=US/Eastern Mon-Fri 09:00-17:30", Some("2026-09-21T13:30:00Z"), Some("UTC"),
         (true, "2026-09-21T21:30:00Z", "—", "TZ=US/Eastern Mon 09:00-17:30; Tue 09:00-17:30; Wed 09:00-17:30; Thu 09:00-17:30; Fri 09:00-17:30", "US/Eastern", "closes 17:30")),
        (Tz::UTC, "Mon 09:00-17:30", Some("2026-09-21T13:30:00Z"), Some("US/Eastern"),
         (true, "2026-09-21T21:30:00Z", "—", "Mon 09:00-17:30", "US/Eastern", "closes 17:30")),
    ];
    for &(server, expression, at, zone, row) in rows {
        let report = ask(expression, at, zone, server).unwrap_or_else(|e| panic!("{expression:?}: {e}"));
        check_report(&report, row);
    }
}

/// HR-77, HR-80: without `at` the instant is the caller's `now`; without `zone`, the server zone.
#[test]
fn hr77_hr80_defaults_are_the_callers() {
    let query = HoursQuery {
        expression: "Mon-Fri 09:00-17:30",
        at: None,
        zone: None,
    };
    let report = query
        .answer(utc("2026-09-21T13:30:00Z"), tz("Asia/Kolkata"))
        .unwrap();
    check_report(
        &report,
        (
            false,
            "2026-09-22T03:30:00Z",
            "2026-09-21T12:00:00Z",
            "Mon 09:00-17:30; Tue 09:00-17:30; Wed 09:00-17:30; Thu 09:00-17:30; Fri 09:00-17:30",
            "Asia/Kolkata",
            "opens Tue 09:00",
        ),
    );
    // The report of a bound expression is the same answer (what a status view shows).
    let expr = Expr::parse("Mon-Fri 09:00-17:30").unwrap();
    assert_eq!(
        HoursReport::of(&expr.bind(tz("Asia/Kolkata")), utc("2026-09-21T13:30:00Z")),
        report
    );
}

/// HR-78 steps 3–5, in order: the parse error, then the zone, then `at`; each refusal's kind is a
/// variant and its text the sentence of §11.
#[test]
fn hr78_refusals_in_order() {
    #[rustfmt::skip]
    let rows: &[(&str, Option<&str>, Option<&str>, &str)] = &[
        ("+9:00-13:00", None, None, r#"window "+9:00-13:00": start time "+9:00": malformed hour"#),
        ("bad", Some("never"), Some("Mars"), r#"window "bad": malformed time range "bad" (want "HH:MM-HH:MM")"#),
        ("TZ=UTC 09:00-10:00", Some("never"), Some("Mars"), r#"unknown time zone "Mars": unknown time zone Mars"#),
        ("09:00-10:00", None, Some(""), "zone must not be blank"),
        ("09:00-10:00", Some("tomorrow"), None, r#"argument 'at' must be an RFC 3339 timestamp, got "tomorrow""#),
        ("09:00-10:00", Some("say \"when\"\n"), None, r#"argument 'at' must be an RFC 3339 timestamp, got "say \"when\"\n""#),
    ];
    for &(expression, at, zone, text) in rows {
        let refused = ask(expression, at, zone, Tz::UTC).unwrap_err();
        assert_eq!(refused.to_string(), text, "{expression:?} {at:?} {zone:?}");
    }
    assert!(matches!(
        ask("+9:00-13:00", None, None, Tz::UTC),
        Err(HoursRefusal::Expression(e)) if e.kind() == ParseErrorKind::MalformedHour
    ));
    assert!(matches!(
        ask("09:00-10:00", None, Some("Mars"), Tz::UTC),
        Err(HoursRefusal::Zone(ZoneError::Unknown { .. }))
    ));
    assert!(
        matches!(ask("09:00-10:00", Some("x"), None, Tz::UTC), Err(HoursRefusal::At { given }) if given == "x")
    );
}

/// Issue 12 item 14 (class: an answer instant past what RFC 3339 can write): at 9999-12-31, a Friday,
/// the next opening of a Mon–Fri expression lies in year 10000; it is reported as none (and the
/// summary is empty), never as `+10000-…`. Likewise a previous end before year 0000. Instants inside
/// the range on the same days are still reported.
#[test]
fn issue12_item14_instants_past_the_rfc3339_range_are_none() {
    #[rustfmt::skip]
    let rows: &[(&str, &str, Row<'_>)] = &[
        // Friday 9999-12-31 after hours: Monday 10000-01-03 cannot be written.
        ("TZ=UTC Mon-Fri 09:00-17:00", "9999-12-31T18:00:00Z",
         (false, "—", "9999-12-31T17:00:00Z", "TZ=UTC Mon 09:00-17:00; Tue 09:00-17:00; Wed 09:00-17:00; Thu 09:00-17:00; Fri 09:00-17:00", "UTC", "")),
        // In hours on the last day: the close at 17:00 is still year 9999.
        ("TZ=UTC Mon-Fri 09:00-17:00", "9999-12-31T12:00:00Z",
         (true, "9999-12-31T17:00:00Z", "—", "TZ=UTC Mon 09:00-17:00; Tue 09:00-17:00; Wed 09:00-17:00; Thu 09:00-17:00; Fri 09:00-17:00", "UTC", "closes 17:00")),
        // A change exactly at the last second that can be written.
        ("TZ=UTC 00:00-23:59", "9999-12-31T23:58:00Z",
         (true, "9999-12-31T23:59:00Z", "—", "TZ=UTC Mon 00:00-23:59; Tue 00:00-23:59; Wed 00:00-23:59; Thu 00:00-23:59; Fri 00:00-23:59; Sat 00:00-23:59; Sun 00:00-23:59", "UTC", "closes 23:59")),
        // 0000-01-01 was a Saturday (proleptic Gregorian): Friday's end lies in year -1.
        ("TZ=UTC Mon-Fri 09:00-17:00", "0000-01-01T12:00:00Z",
         (false, "0000-01-03T09:00:00Z", "—", "TZ=UTC Mon 09:00-17:00; Tue 09:00-17:00; Wed 09:00-17:00; Thu 09:00-17:00; Fri 09:00-17:00", "UTC", "opens Mon 09:00")),
    ];
    for &(expression, at, row) in rows {
        check_report(&ask(expression, Some(at), None, Tz::UTC).unwrap(), row);
    }
    // Directly on a bound expression, at chrono's own extremes: never a panic, never an instant that
    // RFC 3339 cannot write.
    let expr = Expr::parse("TZ=UTC Mon-Fri 09:00-17:00").unwrap();
    let last = DateTime::<Utc>::MAX_UTC;
    let first = DateTime::<Utc>::MIN_UTC;
    for t in [first, last] {
        let report = HoursReport::of(&expr.bind(Tz::UTC), t);
        assert_eq!((report.next_change, report.previous_end), (None, None), "{t:?}");
    }
}

/// Issue 12 item 14, issue 16 item 4 (class: a long input value repeated in an error): every value a
/// sentence quotes — a segment, a time, a day, a day list, a zone — is clipped at `ECHO_LIMIT`
/// characters with `…(<k> more)`, so a 1 MB expression no longer makes a 2 MB reason; values up to the
/// limit are quoted whole, exactly as before.
#[test]
fn issue12_item14_long_values_in_errors_are_clipped() {
    let mb = "9".repeat(1 << 20);
    let long_day = "X".repeat(1 << 20);
    let long_zone = "Z".repeat(1 << 20);
    #[rustfmt::skip]
    let inputs: Vec<(String, ParseErrorKind)> = vec![
        (format!("{mb}-13:00"), ParseErrorKind::MalformedTime),
        (format!("{mb}:00-13:00"), ParseErrorKind::MalformedHour),
        (format!("{long_day} 09:00-13:00"), ParseErrorKind::UnknownDay),
        (format!("Mon,,{long_day} 09:00-13:00"), ParseErrorKind::EmptyDay),
        (format!("Mon {long_day} 09:00-13:00"), ParseErrorKind::MalformedWindow),
        (format!("09:00-13:00-{mb}"), ParseErrorKind::MalformedRange),
        (format!("TZ={long_zone} 09:00-13:00"), ParseErrorKind::UnknownZone),
    ];
    for (input, kind) in inputs {
        let err = Expr::parse(&input).unwrap_err();
        assert_eq!(err.kind(), kind);
        let text = err.to_string();
        // At most two values are repeated, each clipped to the limit plus its `…(<k> more)`.
        assert!(
            text.chars().count() < 2 * (ECHO_LIMIT + 20) + 120,
            "{kind:?}: {} characters",
            text.chars().count()
        );
        assert!(text.contains(" more)"), "{kind:?}: says how much was left out");
    }
    let zone = parse_zone(&long_zone).unwrap_err().to_string();
    let clipped = format!("{}…({} more)", "Z".repeat(ECHO_LIMIT), (1 << 20) - ECHO_LIMIT);
    assert_eq!(
        zone,
        format!("unknown time zone \"{clipped}\": unknown time zone {clipped}")
    );
    let at = ask("09:00-10:00", Some(&mb), None, Tz::UTC)
        .unwrap_err()
        .to_string();
    assert!(
        at.ends_with(&format!("…({} more)\"", (1 << 20) - ECHO_LIMIT)),
        "{}",
        &at[at.len() - 40..]
    );
    assert!(at.len() < ECHO_LIMIT + 100);
    // At the limit exactly, nothing is cut.
    let edge = "Y".repeat(ECHO_LIMIT);
    assert_eq!(
        parse_zone(&edge).unwrap_err().to_string(),
        format!("unknown time zone \"{edge}\": unknown time zone {edge}")
    );
}

/// Issue 16 item 4 (class: an expression too long for a bounded answer): an expression over
/// `MAX_EXPRESSION_BYTES` is refused before it is parsed, with a sentence naming the limit; at the
/// limit it is answered, and its canonical form stays far below 64 KB.
#[test]
fn issue16_item4_long_expressions_are_refused_naming_the_limit() {
    let segment = "00:00-01:00;";
    let at_limit = segment.repeat(MAX_EXPRESSION_BYTES / segment.len());
    let at_limit = at_limit.trim_end_matches(';');
    assert!(at_limit.len() <= MAX_EXPRESSION_BYTES);
    let report = ask(at_limit, Some("2026-09-21T00:30:00Z"), None, Tz::UTC).unwrap();
    assert!(report.in_hours);
    assert!(
        report.canonical.len() < 32 * 1024,
        "{} bytes",
        report.canonical.len()
    );
    let over = format!("{at_limit};{}", " ".repeat(MAX_EXPRESSION_BYTES));
    let refused = ask(&over, None, None, Tz::UTC).unwrap_err();
    assert_eq!(refused, HoursRefusal::ExpressionTooLong { bytes: over.len() });
    assert_eq!(
        refused.to_string(),
        format!(
            "argument 'expression' is {} bytes long; an expression may hold at most 2048 bytes",
            over.len()
        )
    );
    // Blank padding counts: the limit is on what was sent, before anything is read.
    let padded = format!("09:00-10:00{}", " ".repeat(MAX_EXPRESSION_BYTES));
    assert!(matches!(
        ask(&padded, None, None, Tz::UTC),
        Err(HoursRefusal::ExpressionTooLong { .. })
    ));
    // Expr::parse itself still accepts any length (HR-10).
    assert!(Expr::parse(&padded).is_ok());
}
