//! The hours report: one question — "is this instant in hours, when does that change, when did
//! hours last end?" — answered as a typed value, or refused with a typed reason.
//!
//! This is the `hours_check` tool without its wire: the adapter decodes the arguments, supplies "now"
//! and the server zone, and encodes the value; every rule of the answer lives
//! here, so an embedder and a status view get the same answer as the tool.

use std::fmt;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use super::next_text;
use crate::error::{ParseError, ZoneError, quoted};
use crate::eval::Hours;
use crate::expr::Expr;
use crate::zone::parse_zone;

/// The most bytes an expression of an [`HoursQuery`] may hold.
///
/// Why this bound: the canonical form writes one window per day, so it can be ten times as
/// long as the expression (`00:00-01:00;` becomes seven windows), and the answer carries it twice (the
/// text block and `structuredContent`). At 2,048 bytes the longest canonical form is about 20 KB, so
/// every answer stays under 64 KB; a real week of windows, even the 49-window expressions of the
/// benchmarks, needs a few hundred bytes. [`Expr::parse`] itself accepts any length.
pub const MAX_EXPRESSION_BYTES: usize = 2_048;

/// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the instants RFC 3339 can write (four-digit years).
const FIRST_WRITABLE: i64 = -62_167_219_200;
const LAST_WRITABLE: i64 = 253_402_300_799;

/// One question: an expression, and optionally the instant (`at`, RFC 3339) and the zone for an
/// expression without a prefix. Absent values take the defaults the caller passes to
/// [`HoursQuery::answer`].
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use shiftwork_hours::{HoursQuery, Tz};
///
/// let now = Utc.with_ymd_and_hms(2031, 1, 1, 0, 0, 0).unwrap(); // unused: `at` is given
/// let query = HoursQuery {
///     expression: "TZ=America/Los_Angeles Mon-Fri 09:00-13:00",
///     at: Some("2026-09-26T03:00:00Z"),
///     zone: None,
/// };
/// let report = query.answer(now, Tz::UTC).unwrap();
/// assert!(!report.in_hours);
/// assert_eq!(report.next_change, Some(Utc.with_ymd_and_hms(2026, 9, 28, 16, 0, 0).unwrap()));
/// assert_eq!(report.previous_end, Some(Utc.with_ymd_and_hms(2026, 9, 25, 20, 0, 0).unwrap()));
/// assert_eq!(report.zone, "America/Los_Angeles");
/// assert_eq!(report.summary, "opens Mon 09:00");
///
/// let refused = HoursQuery { at: Some("tomorrow"), ..query }.answer(now, Tz::UTC).unwrap_err();
/// assert_eq!(refused.to_string(), r#"argument 'at' must be an RFC 3339 timestamp, got "tomorrow""#);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HoursQuery<'a> {
    /// The expression.
    pub expression: &'a str,
    /// The instant to evaluate, RFC 3339; `None` means the `now` passed to [`HoursQuery::answer`].
    pub at: Option<&'a str>,
    /// The IANA zone for an expression without a prefix; `None` means the server zone passed to
    /// [`HoursQuery::answer`]. A given zone is checked even when the expression has a prefix.
    pub zone: Option<&'a str>,
}

impl HoursQuery<'_> {
    /// Answers the question: the expression must be at most
    /// [`MAX_EXPRESSION_BYTES`] long and parse; a given zone must be known; a given `at` must be RFC
    /// 3339. The evaluation zone is the prefix's, else `zone`, else `server_zone`; the instant is `at`,
    /// else `now`. The crate reads no clock: `now` is the caller's.
    pub fn answer(&self, now: DateTime<Utc>, server_zone: Tz) -> Result<HoursReport, HoursRefusal> {
        if self.expression.len() > MAX_EXPRESSION_BYTES {
            return Err(HoursRefusal::ExpressionTooLong {
                bytes: self.expression.len(),
            });
        }
        let expr = Expr::parse(self.expression).map_err(HoursRefusal::Expression)?;
        let default_zone = match self.zone {
            Some(name) => parse_zone(name).map_err(HoursRefusal::Zone)?,
            None => server_zone,
        };
        let t = match self.at {
            None => now,
            Some(text) => DateTime::parse_from_rfc3339(text)
                .map_err(|_| HoursRefusal::At {
                    given: text.to_owned(),
                })?
                .with_timezone(&Utc),
        };
        let hours = Hours::new(expr, default_zone);
        let mut report = HoursReport::of(&hours, t);
        // HR-81: the prefix's zone text as written, else the zone argument as given.
        if let (None, Some(given)) = (hours.expr().zone_text(), self.zone) {
            given.clone_into(&mut report.zone);
        }
        Ok(report)
    }
}

/// The answer: membership at the instant, the next change, the previous end, the canonical
/// form, the evaluation zone's name and the summary.
///
/// Every instant is a whole second inside the range RFC 3339 can write, 0000-01-01T00:00:00Z through
/// 9999-12-31T23:59:59Z: a change beyond it is reported as `None` (at 9999-12-31 the next opening
/// may lie in year 10000, which has no RFC 3339 form), and the summary then
/// is empty, like the summary of an expression that never changes.
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use shiftwork_hours::{Hours, HoursReport, Tz};
///
/// let hours = Hours::parse("TZ=UTC Mon-Fri 09:00-17:00", Tz::UTC).unwrap();
/// let monday_noon = Utc.with_ymd_and_hms(2026, 9, 21, 12, 0, 0).unwrap();
/// let report = HoursReport::of(&hours, monday_noon);
/// assert!(report.in_hours);
/// assert_eq!(report.summary, "closes 17:00");
/// assert_eq!(report.previous_end, None);
///
/// let last_day = Utc.with_ymd_and_hms(9999, 12, 31, 18, 0, 0).unwrap(); // a Friday evening
/// assert_eq!(HoursReport::of(&hours, last_day).next_change, None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HoursReport {
    /// Whether the instant is in hours.
    pub in_hours: bool,
    /// The next change; `None` when there is none or it lies after year 9999.
    pub next_change: Option<DateTime<Utc>>,
    /// The last end of hours; `None` when in hours, when there is none, or before year 0000.
    pub previous_end: Option<DateTime<Utc>>,
    /// The canonical form; no prefix is added to an expression without one.
    pub canonical: String,
    /// The evaluation zone's name: the prefix's zone text as written, else the zone's name.
    pub zone: String,
    /// `opens Ddd HH:MM` out of hours, `closes HH:MM` in hours, shown in the evaluation zone; empty
    /// when there is no next change.
    pub summary: String,
}

impl HoursReport {
    /// The report of a bound expression at `t`. The zone is `hours.zone_name()`.
    pub fn of(hours: &Hours, t: DateTime<Utc>) -> HoursReport {
        let check = hours.check(t);
        let next_change = writable(check.next_change);
        HoursReport {
            in_hours: check.in_hours,
            next_change,
            previous_end: writable(hours.prev_end(t)),
            canonical: hours.expr().to_string(),
            zone: hours.zone_name().to_owned(),
            summary: next_text(!check.in_hours, false, None, None, next_change, hours.zone()),
        }
    }
}

/// `t` when RFC 3339 can write it, else `None`.
fn writable(t: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
    t.filter(|t| (FIRST_WRITABLE..=LAST_WRITABLE).contains(&t.timestamp()))
}

/// Why a question was refused. `Display` is the `reason` sentence the `hours_check` tool answers; every
/// value it repeats is clipped at [`ECHO_LIMIT`](crate::ECHO_LIMIT) characters.
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use shiftwork_hours::{HoursQuery, HoursRefusal, Tz};
///
/// let now = Utc.with_ymd_and_hms(2026, 9, 21, 12, 0, 0).unwrap();
/// let ask = |expression, zone| HoursQuery { expression, at: None, zone }.answer(now, Tz::UTC);
/// assert!(matches!(ask("9:00-13:00", None), Err(HoursRefusal::Expression(_))));
/// assert!(matches!(ask("09:00-13:00", Some("Mars")), Err(HoursRefusal::Zone(_))));
/// let long = "09:00-13:00;".repeat(200);
/// assert_eq!(
///     ask(&long, None).unwrap_err().to_string(),
///     "argument 'expression' is 2400 bytes long; an expression may hold at most 2048 bytes"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HoursRefusal {
    /// The expression is longer than [`MAX_EXPRESSION_BYTES`].
    ExpressionTooLong {
        /// The expression's length in bytes.
        bytes: usize,
    },
    /// The expression does not parse.
    Expression(ParseError),
    /// The given zone is blank or unknown.
    Zone(ZoneError),
    /// The given `at` is not an RFC 3339 timestamp.
    At {
        /// The text as given.
        given: String,
    },
}

impl HoursRefusal {
    /// A stable machine name of the error's kind, as every `code()` of the family.
    pub fn code(&self) -> &'static str {
        match self {
            HoursRefusal::ExpressionTooLong { .. } => "EXPRESSION_TOO_LONG",
            HoursRefusal::Expression(inner) => inner.code(),
            HoursRefusal::Zone(inner) => inner.code(),
            HoursRefusal::At { .. } => "AT_NOT_RFC3339",
        }
    }
}

impl fmt::Display for HoursRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HoursRefusal::ExpressionTooLong { bytes } => write!(
                f,
                "argument 'expression' is {bytes} bytes long; an expression may hold at most \
                 {MAX_EXPRESSION_BYTES} bytes"
            ),
            HoursRefusal::Expression(e) => e.fmt(f),
            HoursRefusal::Zone(e) => e.fmt(f),
            HoursRefusal::At { given } => write!(
                f,
                "argument 'at' must be an RFC 3339 timestamp, got {}",
                quoted(given)
            ),
        }
    }
}

impl std::error::Error for HoursRefusal {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HoursRefusal::Expression(e) => Some(e),
            HoursRefusal::Zone(e) => Some(e),
            _ => None,
        }
    }
}
