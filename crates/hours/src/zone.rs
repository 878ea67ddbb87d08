//! Zones: name resolution, and the one conversion the crate uses — instant → wall clock.

use std::str::FromStr;

use chrono::{DateTime, Offset, TimeZone, Utc};
use chrono_tz::Tz;

use crate::error::ZoneError;

/// Seconds in a day.
pub(crate) const DAY: i64 = 86_400;

/// Resolves a zone name by an exact, case-sensitive lookup in the bundled IANA database.
///
/// Canonical names, backward-compatible links (`US/Eastern`), `UTC`, `GMT`, `Etc/…` and POSIX-style
/// entries (`EST5EDT`) are known; `Local` and lower-cased names are not: there is no way to ask
/// this crate for the host's zone.
///
/// ```
/// use shiftwork_hours::parse_zone;
/// assert_eq!(parse_zone("US/Eastern").unwrap().name(), "US/Eastern");
/// assert!(parse_zone("america/new_york").is_err());
/// assert!(parse_zone("Local").is_err());
/// ```
pub fn parse_zone(name: &str) -> Result<Tz, ZoneError> {
    if name.trim().is_empty() {
        return Err(ZoneError::Blank);
    }
    lookup(name).ok_or_else(|| ZoneError::Unknown {
        name: name.to_owned(),
    })
}

/// The exact lookup shared by [`parse_zone`] and the expression prefix.
pub(crate) fn lookup(name: &str) -> Option<Tz> {
    Tz::from_str(name).ok()
}

/// The UTC offset of `tz` at `t`, in seconds.
pub(crate) fn offset_at(tz: Tz, t: &DateTime<Utc>) -> i64 {
    i64::from(
        tz.offset_from_utc_datetime(&t.naive_utc())
            .fix()
            .local_minus_utc(),
    )
}

/// The UTC offset of `tz` at the whole second `ts` (Unix seconds), or `None` when chrono cannot
/// represent that second.
pub(crate) fn offset_at_secs(tz: Tz, ts: i64) -> Option<i64> {
    let t = DateTime::from_timestamp(ts, 0)?;
    Some(offset_at(tz, &t))
}

/// A wall clock as "local seconds": seconds since 1970-01-01 00:00 on the local time line. The local
/// date, weekday and time of day follow from it by integer arithmetic, which never fails.
pub(crate) fn day_of(local: i64) -> i64 {
    local.div_euclid(DAY)
}

/// The weekday of a local day number, Monday = 0 (1970-01-01 was a Thursday).
pub(crate) fn weekday_of_day(day: i64) -> usize {
    // rem_euclid(7) is in 0..7, so the cast cannot truncate.
    (day + 3).rem_euclid(7) as usize
}

/// The position in the week (Monday 00:00:00 = 0) of a wall clock given as local seconds.
pub(crate) fn week_position(local: i64) -> u32 {
    let day = day_of(local);
    let second = local.rem_euclid(DAY);
    // weekday < 7 and second < 86 400, so the position is below 604 800 and fits.
    (weekday_of_day(day) as i64 * DAY + second) as u32
}
