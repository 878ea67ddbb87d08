//! Property tests (§12): the round trip through the canonical form (HR-86, HR-87) and "no input makes
//! the crate panic" (HR-7, HR-88). Expressions are generated from the grammar of §2.1.

use chrono::{DateTime, TimeDelta, Utc};
use proptest::prelude::*;
use shiftwork_hours::Expr;

use crate::{tz, utc};

/// Zones a generated prefix may name (canonical names, links, odd offsets, POSIX-style entries).
pub const PREFIX_ZONES: &[&str] = &[
    "UTC",
    "GMT",
    "Etc/GMT+12",
    "US/Eastern",
    "EST5EDT",
    "America/New_York",
    "Europe/London",
    "Australia/Lord_Howe",
    "Asia/Kathmandu",
    "Pacific/Chatham",
    "Pacific/Apia",
    "America/St_Johns",
];

const DAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

/// Whitespace of every kind the grammar allows between fields (Unicode White_Space).
fn whitespace(min: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just(' '),
            Just('\t'),
            Just('\u{a0}'),
            Just('\u{3000}'),
            Just('\n')
        ],
        min..min + 3,
    )
    .prop_map(|v| v.into_iter().collect())
}

/// A day name in a random ASCII case.
fn day_name() -> impl Strategy<Value = String> {
    (0..7usize, proptest::collection::vec(any::<bool>(), 3)).prop_map(|(d, upper)| {
        DAYS[d]
            .chars()
            .zip(upper)
            .map(|(c, u)| if u { c.to_ascii_uppercase() } else { c })
            .collect()
    })
}

/// A day item: a name or a range `a-b` (wrapping ranges included).
fn day_item() -> impl Strategy<Value = String> {
    prop_oneof![
        day_name(),
        (day_name(), day_name()).prop_map(|(a, b)| format!("{a}-{b}"))
    ]
}

/// A day list: items joined by `,`, with optional whitespace after a comma (HR-14).
fn day_list() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        (
            day_item(),
            prop_oneof![3 => Just(String::new()), 1 => whitespace(1)],
        ),
        1..4,
    )
    .prop_map(|items| {
        let mut out = String::new();
        for (i, (item, ws)) in items.iter().enumerate() {
            if i > 0 {
                out.push(',');
                out.push_str(ws);
            }
            out.push_str(item);
        }
        out
    })
}

/// A time in minutes, biased towards DST hours and midnight.
fn minute_of_day() -> impl Strategy<Value = u32> {
    prop_oneof![
        2 => 0u32..1440,
        2 => 0u32..240,
        1 => (0u32..5).prop_map(|q| q * 15 + 60),
        1 => prop_oneof![Just(0u32), Just(1439), Just(1380), Just(1320)],
    ]
}

/// A time range `HH:MM-HH:MM` with start ≠ end; ends include `24:00` and overnight ranges.
pub fn time_range() -> impl Strategy<Value = (u32, u32)> {
    (
        minute_of_day(),
        prop_oneof![4 => minute_of_day(), 1 => Just(1440u32)],
    )
        .prop_filter("start and end differ", |(s, e)| s != e)
}

fn clock(minutes: u32) -> String {
    format!("{:02}:{:02}", minutes / 60, minutes % 60)
}

/// One window: an optional day list, whitespace, a time range.
fn window() -> impl Strategy<Value = String> {
    (
        proptest::option::weighted(0.7, (day_list(), whitespace(1))),
        time_range(),
    )
        .prop_map(|(days, (s, e))| {
            let range = format!("{}-{}", clock(s), clock(e));
            match days {
                Some((list, ws)) => format!("{list}{ws}{range}"),
                None => range,
            }
        })
}

/// A valid expression from the grammar of §2.1: optional prefix, one to four windows, whitespace
/// variants everywhere the grammar allows them.
pub fn valid_expression() -> impl Strategy<Value = String> {
    let prefix = proptest::option::weighted(
        0.5,
        (
            prop_oneof![Just("TZ="), Just("CRON_TZ=")],
            proptest::sample::select(PREFIX_ZONES),
            prop_oneof![Just(' '), Just('\t')],
            whitespace(0),
        ),
    );
    let windows = proptest::collection::vec((window(), whitespace(0), whitespace(0)), 1..5);
    (whitespace(0), prefix, windows, whitespace(0)).prop_map(|(lead, prefix, windows, trail)| {
        let mut out = lead;
        if let Some((p, zone, sep, ws)) = prefix {
            out.push_str(p);
            out.push_str(zone);
            out.push(sep);
            out.push_str(&ws);
        }
        for (i, (w, before, after)) in windows.iter().enumerate() {
            if i > 0 {
                out.push_str(before);
                out.push(';');
                out.push_str(after);
            }
            out.push_str(w);
        }
        out.push_str(&trail);
        out
    })
}

/// Any instant chrono can represent, whole seconds or not.
pub fn any_instant() -> impl Strategy<Value = DateTime<Utc>> {
    let (min, max) = (
        DateTime::<Utc>::MIN_UTC.timestamp(),
        DateTime::<Utc>::MAX_UTC.timestamp(),
    );
    prop_oneof![
        (min..=max, 0u32..1_000_000_000),
        (-2_208_988_800i64..7_258_118_400, 0u32..1_000_000_000),
        prop_oneof![Just(min), Just(max), Just(min + 1), Just(max - 1)].prop_map(|s| (s, 0u32)),
    ]
    .prop_map(|(s, n)| DateTime::from_timestamp(s, n).unwrap_or(DateTime::<Utc>::MIN_UTC))
}

/// HR-86's check: the canonical form parses back equal, and both agree on membership at the 168 hours
/// from 2026-09-21T00:00:00Z bound to UTC. HR-87: `Display` is idempotent.
pub fn check_round_trip(input: &str) -> Result<(), String> {
    let Ok(e) = Expr::parse(input) else {
        return Ok(());
    };
    let text = e.to_string();
    let e2 = Expr::parse(&text).map_err(|err| format!("canonical {text:?} of {input:?} fails: {err}"))?;
    if e2 != e {
        return Err(format!("{input:?} → {text:?} reads back different"));
    }
    if e2.to_string() != text {
        return Err(format!("Display not idempotent for {input:?}"));
    }
    let start = utc("2026-09-21T00:00:00Z");
    let (a, b) = (e.bind(tz("UTC")), e2.bind(tz("UTC")));
    for k in 0..168 {
        let t = start + TimeDelta::hours(k);
        if a.is_in(t) != b.is_in(t) {
            return Err(format!("{input:?} and its canonical form disagree at {t}"));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// HR-86, HR-87 (and HR-10, HR-27): generated valid expressions parse, and round-trip through the
    /// canonical form.
    #[test]
    fn hr86_hr87_round_trip(input in valid_expression()) {
        prop_assert!(Expr::parse(&input).is_ok(), "generated {:?} must parse: {:?}", input, Expr::parse(&input).err());
        check_round_trip(&input).map_err(TestCaseError::fail)?;
    }

    /// HR-7, HR-88: arbitrary strings never make `parse` or `Display` panic, and what parses round-trips.
    #[test]
    fn hr88_parse_never_panics(input in prop_oneof![
        any::<String>(),
        "[ \t\u{a0};,:0-9MTWFSonuedhrizt=_/ANYCR+-]{0,40}",
        valid_expression().prop_map(|s| s.replacen(':', "", 1)),
        valid_expression().prop_map(|s| s.replace(';', ",")),
    ]) {
        check_round_trip(&input).map_err(TestCaseError::fail)?;
    }

    /// HR-7, HR-50, HR-88: evaluation never panics at any instant chrono can represent, in any zone.
    #[test]
    fn hr88_evaluation_never_panics(
        input in valid_expression(),
        zone in proptest::sample::select(crate::oracle::ORACLE_ZONES),
        t in any_instant(),
    ) {
        let e = Expr::parse(&input).unwrap();
        let z = e.bind(tz(zone));
        let _ = (z.is_in(t), z.next_change(t), z.prev_end(t), z.check(t), e.to_string());
    }
}
