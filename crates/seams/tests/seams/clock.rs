use std::time::Duration;

use chrono::{TimeZone, Utc};
use shiftwork_seams::{Clock, ManualClock, SystemClock};

#[test]
fn manual_clock_set_advance_and_sleep_move_time_for_every_clone() {
    let start = Utc.with_ymd_and_hms(2026, 10, 25, 0, 30, 0).unwrap();
    let clock = ManualClock::new(start);
    let code = clock.clone();
    code.sleep(Duration::from_millis(1500));
    assert_eq!(clock.now(), start + chrono::TimeDelta::milliseconds(1500));
    assert_eq!(clock.monotonic(), Duration::from_millis(1500));
    // Setting the wall clock back never moves the monotonic clock back.
    clock.set(start - chrono::TimeDelta::hours(1));
    assert_eq!(code.now(), start - chrono::TimeDelta::hours(1));
    assert_eq!(code.monotonic(), Duration::from_millis(1500));
}

#[test]
fn system_clock_is_monotonic_and_sleeps() {
    let clock = SystemClock::new();
    let a = clock.monotonic();
    clock.sleep(Duration::from_millis(2));
    assert!(clock.monotonic() >= a + Duration::from_millis(2));
    let wall = clock.now();
    assert!((Utc::now() - wall).num_seconds().abs() < 5);
}

#[test]
fn clocks_work_behind_references_and_arcs() {
    fn read(clock: &dyn Clock) -> Duration {
        clock.monotonic()
    }
    let manual = std::sync::Arc::new(ManualClock::new(Utc.timestamp_opt(0, 0).unwrap()));
    manual.advance(Duration::from_secs(3));
    assert_eq!(read(&manual), Duration::from_secs(3));
    assert_eq!(read(&&*manual), Duration::from_secs(3));
}
