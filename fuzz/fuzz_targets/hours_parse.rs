//! Arbitrary bytes (lossily decoded) through `shiftwork_hours::Expr::parse` (hours.md HR-86 … HR-88).
//! Invariants: nothing panics — parsing, the error text, `Display`, and evaluation at instants drawn
//! from the input across chrono's whole range; whatever parses reads back equal from its canonical
//! form, `Display` is idempotent, and the two agree on membership at the 168 hours from
//! 2026-09-21T00:00:00Z bound to UTC. An error repeats at most two input values, each clipped at
//! `ECHO_LIMIT` characters (issue 12 item 14); the typed answer of `hours_check` (`HoursQuery`) never
//! panics either, refuses an expression over its bound, and reports only instants RFC 3339 can write.
#![no_main]

use chrono::{DateTime, Datelike, TimeDelta, Utc};
use shiftwork_hours::{ECHO_LIMIT, Expr, HoursQuery, HoursRefusal, MAX_EXPRESSION_BYTES};
use libfuzzer_sys::fuzz_target;

/// The longest error text: two clipped values, each character escaped to at most ten (`\u{10ffff}`),
/// plus `…(<k> more)` and the fixed words.
const MAX_ERROR_CHARS: usize = 2 * (10 * ECHO_LIMIT + 32) + 200;

/// An instant from eight bytes, folded into chrono's range.
fn instant(bytes: &[u8]) -> DateTime<Utc> {
    let mut raw = [0u8; 8];
    for (slot, b) in raw.iter_mut().zip(bytes) {
        *slot = *b;
    }
    let (min, max) = (DateTime::<Utc>::MIN_UTC.timestamp(), DateTime::<Utc>::MAX_UTC.timestamp());
    let span = (max - min) as u64 + 1;
    let secs = min + (u64::from_le_bytes(raw) % span) as i64;
    DateTime::from_timestamp(secs, 0).unwrap_or(DateTime::<Utc>::MIN_UTC)
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let now = instant(data.get(data.len().saturating_sub(8)..).unwrap_or_default());
    let answer = HoursQuery { expression: &text, at: None, zone: None }.answer(now, chrono_tz::UTC);
    match &answer {
        Ok(report) => {
            for t in [report.next_change, report.previous_end].into_iter().flatten() {
                assert!((0..=9999).contains(&t.year()), "an instant RFC 3339 cannot write: {t:?}");
            }
        }
        Err(HoursRefusal::ExpressionTooLong { bytes }) => assert!(*bytes > MAX_EXPRESSION_BYTES),
        Err(refused) => assert!(refused.to_string().chars().count() <= MAX_ERROR_CHARS),
    }
    let expr = match Expr::parse(&text) {
        Ok(expr) => expr,
        Err(e) => {
            let message = e.to_string();
            assert!(!message.is_empty());
            assert!(message.chars().count() <= MAX_ERROR_CHARS, "an error of {} characters", message.chars().count());
            assert!(text.len() > MAX_EXPRESSION_BYTES || answer.is_err(), "the query answered what does not parse");
            let _ = e.kind();
            return;
        }
    };
    let canonical = expr.to_string();
    let again = Expr::parse(&canonical).unwrap_or_else(|e| panic!("canonical {canonical:?} fails: {e}"));
    assert_eq!(again, expr, "round trip of {text:?}");
    assert_eq!(again.to_string(), canonical, "Display is idempotent");
    let (a, b) = (expr.bind(chrono_tz::UTC), again.bind(chrono_tz::UTC));
    let start = DateTime::from_timestamp(1_789_948_800, 0).unwrap(); // 2026-09-21T00:00:00Z
    for k in 0..168 {
        let t = start + TimeDelta::hours(k);
        assert_eq!(a.is_in(t), b.is_in(t), "membership at {t}");
    }
    // Evaluation never panics, at instants taken from the input, in a zone taken from it too.
    let zones = [chrono_tz::UTC, chrono_tz::America::New_York, chrono_tz::Australia::Lord_Howe, chrono_tz::Pacific::Apia];
    let zone = zones[data.first().map_or(0, |b| usize::from(*b) % zones.len())];
    let z = expr.bind(zone);
    for chunk in data.chunks(8).take(4) {
        let t = instant(chunk);
        let _ = (z.is_in(t), z.next_change(t), z.prev_end(t));
    }
});
