//! How the view writes figures: durations and countdowns, large counts.

use chrono::TimeDelta;

/// A duration as the view shows it, to two units: `3d 04h`, `2h 14m`, `4m 05s`, `42s`. A negative
/// duration is shown as its size (callers say "ago" or "expired").
///
/// ```
/// use chrono::TimeDelta;
/// use shiftwork_watch::figures::duration;
/// assert_eq!(duration(TimeDelta::seconds(42)), "42s");
/// assert_eq!(duration(TimeDelta::seconds(245)), "4m 05s");
/// assert_eq!(duration(TimeDelta::seconds(8_040)), "2h 14m");
/// assert_eq!(duration(TimeDelta::seconds(273_600)), "3d 04h");
/// ```
pub fn duration(d: TimeDelta) -> String {
    let s = d.num_seconds().unsigned_abs();
    let (days, hours, minutes, seconds) = (s / 86_400, s / 3_600 % 24, s / 60 % 60, s % 60);
    if days > 0 {
        format!("{days}d {hours:02}h")
    } else if hours > 0 {
        format!("{hours}h {minutes:02}m")
    } else if minutes > 0 {
        format!("{minutes}m {seconds:02}s")
    } else {
        format!("{seconds}s")
    }
}

/// A lease's time left: [`duration`], or `expired` once it has run out.
pub fn time_left(left: TimeDelta) -> String {
    if left <= TimeDelta::zero() {
        String::from("expired")
    } else {
        format!("{} left", duration(left))
    }
}

/// A count in about five characters: `950`, `12.3k`, `120k`, `4.5M`, `12G`.
///
/// ```
/// use shiftwork_watch::figures::compact;
/// assert_eq!(compact(950), "950");
/// assert_eq!(compact(12_345), "12.3k");
/// assert_eq!(compact(120_000), "120k");
/// assert_eq!(compact(-4_500_000), "-4.5M");
/// ```
pub fn compact(n: i128) -> String {
    let sign = if n < 0 { "-" } else { "" };
    let m = n.unsigned_abs();
    if m < 10_000 {
        return format!("{sign}{m}");
    }
    let units = [
        (1_000u128, "k"),
        (1_000_000, "M"),
        (1_000_000_000, "G"),
        (1_000_000_000_000, "T"),
    ];
    let (scale, suffix) = units
        .iter()
        .rev()
        .find(|(scale, _)| m >= *scale)
        .copied()
        .unwrap_or(units[0]);
    let whole = m / scale;
    if whole < 100 {
        format!("{sign}{whole}.{}{suffix}", (m % scale) * 10 / scale)
    } else {
        format!("{sign}{whole}{suffix}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_keep_two_units() {
        let check =
            |seconds: i64, expected: &str| assert_eq!(duration(TimeDelta::seconds(seconds)), expected);
        check(0, "0s");
        check(59, "59s");
        check(60, "1m 00s");
        check(3_599, "59m 59s");
        check(3_600, "1h 00m");
        check(86_399, "23h 59m");
        check(86_400, "1d 00h");
        check(-61, "1m 01s");
    }

    #[test]
    fn leases_say_expired_once_run_out() {
        assert_eq!(time_left(TimeDelta::seconds(42)), "42s left");
        assert_eq!(time_left(TimeDelta::zero()), "expired");
        assert_eq!(time_left(TimeDelta::seconds(-5)), "expired");
    }

    #[test]
    fn compact_counts_fit_five_characters() {
        let check = |n: i128, expected: &str| assert_eq!(compact(n), expected, "{n}");
        check(0, "0");
        check(9_999, "9999");
        check(10_000, "10.0k");
        check(99_999, "99.9k");
        check(100_000, "100k");
        check(999_999, "999k");
        check(1_000_000, "1.0M");
        check(60_000_000_000, "60.0G");
        check(
            i128::MAX,
            &format!("{}T", i128::MAX.unsigned_abs() / 1_000_000_000_000),
        );
    }
}
