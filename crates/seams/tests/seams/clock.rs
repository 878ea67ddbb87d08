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

/// Threat class "waits": a wait on a `ManualClock` ends when the test moves the clock to its deadline
/// (and not before), or at once when its signal is given; the clock's time is what decides.
#[test]
fn waits_end_by_the_clock_they_were_given() {
    use shiftwork_seams::Signal;
    let clock = ManualClock::new(Utc.timestamp_opt(0, 0).unwrap());
    let signal = Signal::new();
    let (code, waited) = (clock.clone(), signal.clone());
    let waiter = std::thread::spawn(move || {
        let deadline = code.monotonic() + Duration::from_millis(100);
        (code.wait_until(&waited, deadline), code.monotonic())
    });
    while clock.waiters() == 0 {
        std::thread::yield_now();
    }
    // Short of the deadline, and a wall-clock step: the wait goes on.
    clock.advance(Duration::from_millis(99));
    clock.set(Utc.timestamp_opt(3600, 0).unwrap());
    std::thread::sleep(Duration::from_millis(20));
    assert!(
        !waiter.is_finished(),
        "ended before the clock reached its deadline"
    );
    clock.advance(Duration::from_millis(1));
    assert_eq!(waiter.join().unwrap(), (false, Duration::from_millis(100)));
    assert_eq!(clock.waiters(), 0, "a finished wait leaves nothing registered");

    // A signal ends a wait at once, whatever the deadline; given before the wait, too.
    let (code, waited) = (clock.clone(), signal.clone());
    let waiter = std::thread::spawn(move || code.wait_until(&waited, Duration::MAX));
    while clock.waiters() == 0 {
        std::thread::yield_now();
    }
    signal.downgrade().notify();
    assert!(waiter.join().unwrap());
    signal.notify();
    assert!(
        clock.wait_until(&signal, Duration::ZERO),
        "taken by the next wait"
    );
    assert!(!signal.take(), "and only once");

    // The system clock times out on its own time.
    let system = SystemClock::new();
    let start = system.monotonic();
    assert!(!system.wait_until(&Signal::new(), start + Duration::from_millis(5)));
    assert!(system.monotonic() >= start + Duration::from_millis(5));
}
