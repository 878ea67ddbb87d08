//! Crate-level properties of the public API (§1): thread safety, the derives callers rely on, and
//! determinism.

use shiftwork_hours::{
    Check, Expr, GateAction, GateEvent, GateMemory, GateStatus, HoldPlan, Hours, LeaseRefusal, LeaseState,
    ModeError, Observation, ParseError, ReleasePlan, StartRoute, TickOutcome, Window, ZoneError,
};

use crate::{tz, utc};

fn send_sync<T: Send + Sync>() {}
fn clone_debug_eq<T: Clone + std::fmt::Debug + PartialEq + Eq>() {}

/// HR-8: public types are `Send + Sync`; `Expr` is `Clone + Debug + PartialEq + Eq`.
#[test]
fn hr8_send_sync_and_derives() {
    send_sync::<Expr>();
    send_sync::<Hours>();
    send_sync::<Window>();
    send_sync::<Check>();
    send_sync::<ParseError>();
    send_sync::<ZoneError>();
    send_sync::<ModeError>();
    send_sync::<GateAction>();
    send_sync::<GateEvent>();
    send_sync::<GateMemory>();
    send_sync::<GateStatus>();
    send_sync::<LeaseState>();
    send_sync::<TickOutcome>();
    send_sync::<HoldPlan>();
    send_sync::<ReleasePlan>();
    send_sync::<StartRoute>();
    send_sync::<LeaseRefusal>();
    send_sync::<Observation>();
    clone_debug_eq::<Expr>();
    // An expression can be shared between threads and evaluated from each.
    let expr = std::sync::Arc::new(Expr::parse("TZ=Europe/London Mon-Fri 09:00-17:30").unwrap());
    let t = utc("2026-03-30T08:00:00Z");
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let e = std::sync::Arc::clone(&expr);
            std::thread::spawn(move || e.bind(tz("UTC")).check(t))
        })
        .collect();
    for h in handles {
        assert!(h.join().unwrap().in_hours);
    }
}

/// HR-9: the same inputs always give the same outputs, whatever the host's zone (`TZ` is ignored:
/// results do not change when the variable would name another zone).
#[test]
fn hr9_deterministic() {
    let expr = Expr::parse("Mon-Fri 09:00-17:00").unwrap();
    let t = utc("2026-03-06T22:00:00Z");
    let answer = |e: &Expr| {
        let z = e.bind(tz("America/New_York"));
        (z.is_in(t), z.next_change(t), z.prev_end(t))
    };
    let first = answer(&expr);
    for _ in 0..3 {
        assert_eq!(answer(&Expr::parse("Mon-Fri 09:00-17:00").unwrap()), first);
    }
    assert_eq!(first, (false, Some(utc("2026-03-09T13:00:00Z")), Some(t)));
}

/// HR-3, HR-33: the bundled database is tzdata 2025b, authoritative after its last transition (no
/// extrapolated DST after 2099 in New York: the last offset persists).
#[test]
fn hr3_hr33_zone_data() {
    assert_eq!(chrono_tz::IANA_TZDB_VERSION, "2025b");
    let expr = Expr::parse("TZ=America/New_York 12:00-13:00").unwrap();
    let z = expr.bind(tz("UTC"));
    // Whatever offset the table ends with applies to every later July and January alike.
    let july = z.next_change(utc("2150-07-01T00:00:00Z")).unwrap();
    let january = z.next_change(utc("2151-01-01T00:00:00Z")).unwrap();
    use chrono::Timelike;
    assert_eq!(july.hour(), january.hour());
}
