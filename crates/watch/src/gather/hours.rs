//! The hours line, from `shiftwork-hours`.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use shiftwork_hours::{Hours, ParseError, next_text};

use crate::display_text::clean_text;
use crate::snapshot::HoursLine;

/// An hours expression bound to its zones, evaluated at any instant without I/O.
#[derive(Debug, Clone)]
pub struct HoursWatch {
    text: String,
    hours: Hours,
    viewer: Tz,
}

impl HoursWatch {
    /// Parses `expression`; `default_zone` applies to an expression without a `TZ=` prefix, `viewer`
    /// is the zone the next change is shown in.
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use shiftwork_watch::gather::HoursWatch;
    /// let hours = HoursWatch::parse("TZ=UTC Mon-Fri 09:00-17:00", chrono_tz::UTC, chrono_tz::Europe::Berlin).unwrap();
    /// let line = hours.line(Utc.with_ymd_and_hms(2026, 9, 21, 10, 0, 0).unwrap());
    /// assert!(line.in_hours);
    /// assert_eq!(line.next_local, "closes 19:00"); // 17:00 UTC on the viewer's Berlin clock
    /// ```
    pub fn parse(expression: &str, default_zone: Tz, viewer: Tz) -> Result<HoursWatch, ParseError> {
        Ok(HoursWatch {
            text: clean_text(expression.trim()),
            hours: Hours::parse(expression, default_zone)?,
            viewer,
        })
    }

    /// The line at `now`.
    pub fn line(&self, now: DateTime<Utc>) -> HoursLine {
        let check = self.hours.check(now);
        HoursLine {
            expression: self.text.clone(),
            in_hours: check.in_hours,
            next_change: check.next_change,
            next_local: next_text(!check.in_hours, false, None, None, check.next_change, self.viewer),
        }
    }
}
