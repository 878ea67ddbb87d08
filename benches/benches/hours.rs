//! Benchmarks of `hours`: membership, parse, next change and previous end, `next_change` side by
//! side with croner's `find_next_occurrence`, and the whole typed answer of `hours_check`
//! (`HoursQuery::answer`: parse, membership, next change, previous end, canonical form and
//! summary — the tool's work without its JSON).
//!
//! Run: `cargo bench -p benches --bench hours`. Targets (medians on the 2-core reference machine):
//! membership ≤ 200 ns, parse ≤ 10 µs, next/previous ≤ 10 µs typical and ≤ 50 µs worst case, and every
//! `next_vs_croner` pair faster than croner.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::str::FromStr;

use chrono::{DateTime, Utc};
use croner::Cron;
use divan::{Bencher, black_box};
use shiftwork_hours::{Expr, HoursQuery};

fn main() {
    divan::main();
}

fn utc(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
}

const NY_MORNINGS: &str = "TZ=America/New_York Mon-Fri 09:00-13:00";
const NY_DAY: &str = "TZ=America/New_York Mon-Fri 09:00-17:00";
const FIVE_SEGMENTS: &str = "TZ=Europe/London Mon-Fri 09:00-12:00; Mon-Fri 13:00-17:30; Sat 10:00-14:00; Sun 22:00-02:00; Wed 18:00-20:00";
const LONDON_49: &str = "TZ=Europe/London Mon-Sun 00:15-00:45; Mon-Sun 01:15-01:45; Mon-Sun 02:15-02:45; \
                         Mon-Sun 03:15-03:45; Mon-Sun 06:00-12:00; Mon-Sun 13:00-18:00; Mon-Sun 20:00-23:00";

/// Membership (target ≤ 200 ns).
#[divan::bench_group]
mod membership {
    use super::*;

    #[divan::bench]
    fn ny_weekday_mornings(bencher: Bencher<'_, '_>) {
        let expr = Expr::parse(NY_MORNINGS).unwrap();
        let hours = expr.bind(chrono_tz::UTC);
        let t = utc("2026-09-21T14:00:00Z");
        assert!(hours.is_in(t));
        bencher.bench_local(|| black_box(&hours).is_in(black_box(t)));
    }

    #[divan::bench]
    fn london_49_windows_in_the_fold(bencher: Bencher<'_, '_>) {
        let expr = Expr::parse(LONDON_49).unwrap();
        assert_eq!(expr.windows().len(), 49);
        let hours = expr.bind(chrono_tz::UTC);
        let t = utc("2026-10-25T00:50:00Z");
        assert!(!hours.is_in(t));
        bencher.bench_local(|| black_box(&hours).is_in(black_box(t)));
    }
}

/// Parsing the five-segment expression (target ≤ 10 µs).
#[divan::bench]
fn parse_five_segments(bencher: Bencher<'_, '_>) {
    assert!(Expr::parse(FIVE_SEGMENTS).is_ok());
    bencher.bench_local(|| Expr::parse(black_box(FIVE_SEGMENTS)));
}

/// `next_change` and `prev_end` in a typical case (target ≤ 10 µs).
#[divan::bench_group]
mod typical {
    use super::*;

    /// (instant, expected next change, expected previous end).
    const CASES: [(&str, &str, Option<&str>); 3] = [
        ("2026-09-21T16:00:00Z", "2026-09-21T21:00:00Z", None), // Monday noon → close the same day
        (
            "2026-09-25T22:00:00Z",
            "2026-09-28T13:00:00Z",
            Some("2026-09-25T21:00:00Z"),
        ), // Friday evening
        (
            "2026-03-07T17:00:00Z",
            "2026-03-09T13:00:00Z",
            Some("2026-03-06T22:00:00Z"),
        ), // across spring forward
    ];

    #[divan::bench(args = [0, 1, 2])]
    fn next_change(bencher: Bencher<'_, '_>, case: usize) {
        let expr = Expr::parse(NY_DAY).unwrap();
        let hours = expr.bind(chrono_tz::UTC);
        let (t, next, _) = CASES[case];
        let t = utc(t);
        assert_eq!(hours.next_change(t), Some(utc(next)));
        bencher.bench_local(|| black_box(&hours).next_change(black_box(t)));
    }

    #[divan::bench(args = [1, 2])]
    fn prev_end(bencher: Bencher<'_, '_>, case: usize) {
        let expr = Expr::parse(NY_DAY).unwrap();
        let hours = expr.bind(chrono_tz::UTC);
        let (t, _, prev) = CASES[case];
        let t = utc(t);
        assert_eq!(hours.prev_end(t), prev.map(utc));
        bencher.bench_local(|| black_box(&hours).prev_end(black_box(t)));
    }
}

/// `next_change` and `prev_end` in the worst case (target ≤ 50 µs): 49 windows, inside the fold and
/// just before the gap.
#[divan::bench_group]
mod worst_case {
    use super::*;

    const INSTANTS: [&str; 2] = ["2026-10-25T00:50:00Z", "2026-03-29T00:50:00Z"];

    #[divan::bench(args = INSTANTS)]
    fn next_change(bencher: Bencher<'_, '_>, t: &str) {
        let expr = Expr::parse(LONDON_49).unwrap();
        let hours = expr.bind(chrono_tz::UTC);
        let t = utc(t);
        assert!(hours.next_change(t).is_some());
        bencher.bench_local(|| black_box(&hours).next_change(black_box(t)));
    }

    #[divan::bench(args = INSTANTS)]
    fn prev_end(bencher: Bencher<'_, '_>, t: &str) {
        let expr = Expr::parse(LONDON_49).unwrap();
        let hours = expr.bind(chrono_tz::UTC);
        let t = utc(t);
        assert!(hours.prev_end(t).is_some());
        bencher.bench_local(|| black_box(&hours).prev_end(black_box(t)));
    }
}

/// `next_change` against croner's `find_next_occurrence` (non-inclusive, on a
/// `DateTime<chrono_tz::Tz>` in New York), both parsed once outside the timed loop, same answer
/// checked first (target: ours faster in every pair).
#[divan::bench_group]
mod next_vs_croner {
    use super::*;

    /// (pair, instant, croner pattern, expected answer).
    const PAIRS: [(&str, &str, &str, &str); 3] = [
        (
            "open",
            "2026-09-25T22:00:00Z",
            "0 9 * * 1-5",
            "2026-09-28T13:00:00Z",
        ),
        (
            "close",
            "2026-09-21T16:00:00Z",
            "0 17 * * 1-5",
            "2026-09-21T21:00:00Z",
        ),
        (
            "dst",
            "2026-03-07T17:00:00Z",
            "0 9 * * 1-5",
            "2026-03-09T13:00:00Z",
        ),
    ];

    fn pair(name: &str) -> (DateTime<Utc>, Cron, DateTime<Utc>) {
        let (_, t, pattern, expected) = PAIRS.iter().find(|p| p.0 == name).unwrap();
        (utc(t), Cron::from_str(pattern).unwrap(), utc(expected))
    }

    /// Both libraries give the expected answer for the pair.
    fn check(name: &str) {
        let (t, cron, expected) = pair(name);
        let expr = Expr::parse(NY_DAY).unwrap();
        assert_eq!(
            expr.bind(chrono_tz::UTC).next_change(t),
            Some(expected),
            "hours, {name}"
        );
        let local = t.with_timezone(&chrono_tz::America::New_York);
        let found = cron.find_next_occurrence(&local, false).unwrap();
        assert_eq!(found.with_timezone(&Utc), expected, "croner, {name}");
    }

    #[divan::bench(args = ["open", "close", "dst"])]
    fn hours(bencher: Bencher<'_, '_>, name: &str) {
        check(name);
        let (t, _, _) = pair(name);
        let expr = Expr::parse(NY_DAY).unwrap();
        let hours = expr.bind(chrono_tz::UTC);
        bencher.bench_local(|| black_box(&hours).next_change(black_box(t)));
    }

    #[divan::bench(args = ["open", "close", "dst"])]
    fn croner(bencher: Bencher<'_, '_>, name: &str) {
        check(name);
        let (t, cron, _) = pair(name);
        let local = t.with_timezone(&chrono_tz::America::New_York);
        bencher.bench_local(|| black_box(&cron).find_next_occurrence(black_box(&local), false));
    }
}

/// The typed answer of `hours_check`: everything the tool computes for one call, from the
/// expression's text and `at` to the `HoursReport`, for the five-segment expression of
/// `parse_five_segments`.
#[divan::bench(args = ["2026-09-23T18:00:00Z", "2026-09-27T22:00:00Z"])]
fn report_answer(bencher: Bencher<'_, '_>, at: &str) {
    let now = utc("2031-01-01T00:00:00Z");
    let query = HoursQuery {
        expression: FIVE_SEGMENTS,
        at: Some(at),
        zone: None,
    };
    let report = query.answer(now, chrono_tz::UTC).unwrap();
    assert!(report.in_hours, "{at}: Wed 19:00 and Sun 23:00 BST are in hours");
    bencher.bench_local(|| black_box(query).answer(black_box(now), chrono_tz::UTC));
}
