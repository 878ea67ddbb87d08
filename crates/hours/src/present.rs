//! Presentation texts: the STATE and NEXT columns and the SCHEDULE label. Every instant is shown in
//! a zone the caller passes; the crate never picks one. The [`report`] module presents one
//! evaluation whole: the answer of the `hours_check` tool.

pub(crate) mod report;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use crate::eval::Hours;
use crate::gate::GateStatus;
use crate::zone::{DAY, day_of, offset_at, weekday_of_day};

const DAY_NAMES: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

/// The STATE column: `closing` outranks everything; a held, stopped harness is `off-hours`;
/// otherwise the host's state word unchanged.
///
/// ```
/// use shiftwork_hours::state_label;
/// assert_eq!(state_label("running", true, true), "closing");
/// assert_eq!(state_label("stopped", true, false), "off-hours");
/// assert_eq!(state_label("running", true, false), "running");
/// ```
pub fn state_label(state: &str, held: bool, closing: bool) -> &str {
    if closing {
        "closing"
    } else if held && state == "stopped" {
        "off-hours"
    } else {
        state
    }
}

/// The NEXT column: `stops by HH:MM` while closing, `lease until HH:MM` under a lease,
/// `opens Ddd HH:MM` when held, else `closes HH:MM`; the first matching case decides, and a missing
/// instant for that case gives the empty string.
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use shiftwork_hours::next_text;
/// let next = Utc.with_ymd_and_hms(2026, 9, 28, 16, 0, 0).unwrap();
/// let la = chrono_tz::America::Los_Angeles;
/// assert_eq!(next_text(true, false, None, None, Some(next), la), "opens Mon 09:00");
/// assert_eq!(next_text(true, false, None, None, Some(next), chrono_tz::UTC), "opens Mon 16:00");
/// assert_eq!(next_text(false, true, None, None, Some(next), la), "");
/// ```
pub fn next_text(
    held: bool,
    closing: bool,
    lease_until: Option<DateTime<Utc>>,
    closing_until: Option<DateTime<Utc>>,
    hours_next: Option<DateTime<Utc>>,
    zone: Tz,
) -> String {
    let (words, instant, with_day) = if closing {
        ("stops by", closing_until, false)
    } else if lease_until.is_some() {
        ("lease until", lease_until, false)
    } else if held {
        ("opens", hours_next, true)
    } else {
        ("closes", hours_next, false)
    };
    let Some(instant) = instant else {
        return String::new();
    };
    let local = instant.timestamp() + offset_at(zone, &instant);
    let second = local.rem_euclid(DAY);
    let clock = format!("{:02}:{:02}", second / 3600, second % 3600 / 60);
    if with_day {
        format!("{words} {} {clock}", DAY_NAMES[weekday_of_day(day_of(local))])
    } else {
        format!("{words} {clock}")
    }
}

/// [`next_text`] over the gate's inputs: `held` and `closing` come from `status`, and the next
/// change of hours is computed at `now`.
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use shiftwork_hours::{GateStatus, Hours, Tz, next_text_at};
/// let hours = Hours::parse("TZ=UTC Mon-Fri 09:00-13:00", Tz::UTC).unwrap();
/// let now = Utc.with_ymd_and_hms(2026, 9, 21, 10, 0, 0).unwrap();
/// let text = next_text_at(now, &hours, GateStatus::default(), None, None, Tz::UTC);
/// assert_eq!(text, "closes 13:00");
/// ```
pub fn next_text_at(
    now: DateTime<Utc>,
    hours: &Hours,
    status: GateStatus,
    lease_until: Option<DateTime<Utc>>,
    closing_until: Option<DateTime<Utc>>,
    zone: Tz,
) -> String {
    next_text(
        status.held,
        status.closing,
        lease_until,
        closing_until,
        hours.next_change(now),
        zone,
    )
}

/// The SCHEDULE column: the configured expression without its zone prefix when the viewer's
/// zone is exactly the prefix's zone; otherwise the expression unchanged.
///
/// ```
/// use shiftwork_hours::schedule_label;
/// let raw = "TZ=America/Los_Angeles Mon-Fri 09:00-13:00";
/// assert_eq!(schedule_label(raw, Some("America/Los_Angeles")), "Mon-Fri 09:00-13:00");
/// assert_eq!(schedule_label(raw, Some("UTC")), raw);
/// assert_eq!(schedule_label(raw, None), raw);
/// ```
pub fn schedule_label<'a>(raw: &'a str, viewer_zone: Option<&str>) -> &'a str {
    let Some(viewer) = viewer_zone.filter(|v| !v.is_empty()) else {
        return raw;
    };
    let Some(after_prefix) = raw.strip_prefix("CRON_TZ=").or_else(|| raw.strip_prefix("TZ=")) else {
        return raw;
    };
    match after_prefix.split_once(' ') {
        Some((zone, rest)) if zone == viewer => rest.trim(),
        _ => raw,
    }
}
