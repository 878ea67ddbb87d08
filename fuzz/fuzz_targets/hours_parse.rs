//! Arbitrary bytes (lossily decoded) through `shiftwork_hours::Expr::parse` (hours.md HR-86 … HR-88).
//! Invariants: nothing panics — parsing, the error text, `Display`, and evaluation at instants drawn
//! from the input across chrono's whole range; whatever parses reads back equal from its canonical
//! form, `Display` is idempotent, and the two agree on membership at the 168 hours from
//! 2026-09-21T00:00:00Z bound to UTC.
#![no_main]

use chrono::{DateTime, TimeDelta, Utc};
use shiftwork_hours::Expr;
use libfuzzer_sys::fuzz_target;

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
    let expr = match Expr::parse(&text) {
        Ok(expr) => expr,
        Err(e) => {
            assert!(!e.to_string().is_empty());
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
