//! Expressions: the grammar, its errors and the canonical form.

use std::fmt;
use std::str::FromStr;

use chrono::Weekday;
use chrono_tz::Tz;

use crate::error::{ParseError, ParseErrorKind, quoted, unknown_zone_text};
use crate::eval::Hours;
use crate::week::WeekPlan;
use crate::zone;

/// One expanded occurrence of an expression: a weekday, a start and an end, in seconds after local
/// midnight.
///
/// ```
/// use shiftwork_hours::Expr;
/// let expr = Expr::parse("Fri 22:00-02:00").unwrap();
/// let w = expr.windows()[0];
/// assert_eq!((w.day, w.start, w.end), (chrono::Weekday::Fri, 79_200, 7_200));
/// assert!(w.is_overnight());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Window {
    /// The day the window starts on (an overnight window belongs to its start day).
    pub day: Weekday,
    /// The start, seconds after midnight, `0..=86_340`.
    pub start: u32,
    /// The end, seconds after midnight, `0..=86_400` (`86_400` is `24:00`).
    pub end: u32,
}

impl Window {
    /// Whether the window runs past midnight into the next day: `end ≤ start`. A window ending
    /// at `24:00` is never overnight.
    ///
    /// ```
    /// use shiftwork_hours::Expr;
    /// let e = Expr::parse("Mon 22:00-00:00; Mon 22:00-24:00").unwrap();
    /// assert!(e.windows()[0].is_overnight());
    /// assert!(!e.windows()[1].is_overnight());
    /// ```
    pub fn is_overnight(&self) -> bool {
        self.end <= self.start
    }
}

/// A parsed operating-hours expression: an optional zone prefix and a sorted list of windows.
///
/// `Display` gives the canonical form, which parses back to an equal `Expr`.
///
/// ```
/// use shiftwork_hours::Expr;
/// let e: Expr = "CRON_TZ=UTC Fri-Mon 10:00-11:00".parse().unwrap();
/// assert_eq!(e.to_string(), "TZ=UTC Mon 10:00-11:00; Fri 10:00-11:00; Sat 10:00-11:00; Sun 10:00-11:00");
/// assert_eq!(e.zone_text(), Some("UTC"));
/// assert_eq!(Expr::parse(&e.to_string()).unwrap(), e);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expr {
    zone_text: Option<String>,
    zone: Option<Tz>,
    windows: Vec<Window>,
    plan: WeekPlan,
}

impl Expr {
    /// Parses an expression. Accepts any `&str`; never panics.
    ///
    /// ```
    /// use shiftwork_hours::Expr;
    /// assert!(Expr::parse("Mon, Wed 09:00-10:00").is_ok());
    /// assert_eq!(Expr::parse("   ").unwrap_err().to_string(), "must not be blank");
    /// ```
    pub fn parse(input: &str) -> Result<Expr, ParseError> {
        let trimmed = input.trim();
        if trimmed.is_empty() {
            return Err(ParseError::new(
                ParseErrorKind::Blank,
                String::from("must not be blank"),
            ));
        }
        let (zone_text, zone, body) = if trimmed.starts_with("TZ=") || trimmed.starts_with("CRON_TZ=") {
            // The separator after the zone name is a space or a tab only (HR-11).
            let (token, body) = match trimmed.find([' ', '\t']) {
                // Both separators are one byte long.
                Some(i) => (&trimmed[..i], trimmed[i + 1..].trim()),
                None => (trimmed, ""),
            };
            let name = token.split_once('=').map_or("", |(_, name)| name);
            if name.is_empty() {
                return Err(ParseError::new(
                    ParseErrorKind::MissingZoneName,
                    format!("zone prefix {}: missing zone name", quoted(token)),
                ));
            }
            let Some(tz) = zone::lookup(name) else {
                return Err(ParseError::new(
                    ParseErrorKind::UnknownZone,
                    unknown_zone_text(name),
                ));
            };
            (Some(name.to_owned()), Some(tz), body)
        } else {
            (None, None, trimmed)
        };
        if body.is_empty() {
            return Err(ParseError::new(
                ParseErrorKind::NoWindow,
                String::from("must specify at least one window"),
            ));
        }
        let mut windows = Vec::new();
        for segment in body.split(';') {
            let segment = segment.trim();
            if segment.is_empty() {
                return Err(ParseError::new(
                    ParseErrorKind::EmptyWindow,
                    String::from("empty window (check for a stray \";\")"),
                ));
            }
            read_segment(segment, &mut windows)?;
        }
        windows.sort_by_key(|w| (w.day.num_days_from_monday(), w.start, w.end));
        let plan = WeekPlan::new(&windows);
        Ok(Expr {
            zone_text,
            zone,
            windows,
            plan,
        })
    }

    /// The prefix's zone text exactly as written (`US/Eastern` stays `US/Eastern`), if there is one.
    pub fn zone_text(&self) -> Option<&str> {
        self.zone_text.as_deref()
    }

    /// The zone the prefix names, if there is one.
    pub fn prefix_zone(&self) -> Option<Tz> {
        self.zone
    }

    /// The expanded windows, sorted by (weekday from Monday, start, end), duplicates kept.
    pub fn windows(&self) -> &[Window] {
        &self.windows
    }

    /// Whether the windows together cover every minute of the week; decided from the windows
    /// alone. Such an expression is in hours at every instant in every zone.
    ///
    /// ```
    /// use shiftwork_hours::Expr;
    /// assert!(Expr::parse("Mon-Sun 12:00-12:01; Mon-Sun 12:01-12:00").unwrap().covers_whole_week());
    /// assert!(!Expr::parse("Mon-Sat 00:00-24:00").unwrap().covers_whole_week());
    /// ```
    pub fn covers_whole_week(&self) -> bool {
        self.plan.covers_whole_week()
    }

    /// The expression bound to the zone it is evaluated in, as [`Hours`]: its prefix zone when it has
    /// one (then `default_zone` is ignored), else `default_zone`. The expression is cloned; to move it
    /// in instead, use [`Hours::new`].
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use shiftwork_hours::Expr;
    /// let e = Expr::parse("Mon-Fri 09:00-17:30").unwrap();
    /// let kolkata = e.bind(chrono_tz::Asia::Kolkata);
    /// assert_eq!(kolkata.zone_name(), "Asia/Kolkata");
    /// assert!(kolkata.is_in(Utc.with_ymd_and_hms(2026, 9, 21, 4, 0, 0).unwrap()));
    /// ```
    pub fn bind(&self, default_zone: Tz) -> Hours {
        Hours::new(self.clone(), default_zone)
    }

    pub(crate) fn plan(&self) -> &WeekPlan {
        &self.plan
    }
}

impl FromStr for Expr {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Expr::parse(s)
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(name) = &self.zone_text {
            write!(f, "TZ={name} ")?;
        }
        for (i, w) in self.windows.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{} {}-{}", day_name(w.day), Clock(w.start), Clock(w.end))?;
        }
        Ok(())
    }
}

/// `Mon` … `Sun`.
pub(crate) fn day_name(day: Weekday) -> &'static str {
    DAY_NAMES[day.num_days_from_monday() as usize]
}

const DAY_NAMES: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

const WEEKDAYS: [Weekday; 7] = [
    Weekday::Mon,
    Weekday::Tue,
    Weekday::Wed,
    Weekday::Thu,
    Weekday::Fri,
    Weekday::Sat,
    Weekday::Sun,
];

/// Seconds after midnight written as `HH:MM`.
struct Clock(u32);

impl fmt::Display for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}:{:02}", self.0 / 3600, self.0 % 3600 / 60)
    }
}

/// Reads one trimmed, non-empty segment and appends its windows.
fn read_segment(segment: &str, windows: &mut Vec<Window>) -> Result<(), ParseError> {
    let in_window = |e: ParseError| e.wrapped(&format!("window {}: ", quoted(segment)));
    let fields = fields(segment);
    let Some((&(range_at, range_end), day_fields)) = fields.split_last() else {
        // A trimmed, non-empty segment has at least one field.
        return Ok(());
    };
    let days = match day_fields {
        [] => [true; 7],
        [.., (_, last_end)] => {
            let mut token = String::new();
            for (i, &(at, end)) in day_fields.iter().enumerate() {
                let field = &segment[at..end];
                if i + 1 < day_fields.len() && !field.ends_with(',') {
                    return Err(ParseError::new(
                        ParseErrorKind::MalformedWindow,
                        format!(
                            "window {}: malformed (want \"[days] HH:MM-HH:MM\")",
                            quoted(segment)
                        ),
                    ));
                }
                token.push_str(field);
            }
            read_days(&token, &segment[..*last_end]).map_err(in_window)?
        }
    };
    let (start, end) = read_range(&segment[range_at..range_end]).map_err(in_window)?;
    for (day, named) in WEEKDAYS.into_iter().zip(days) {
        if named {
            windows.push(Window { day, start, end });
        }
    }
    Ok(())
}

/// The byte ranges of the whitespace-separated fields of `s`.
fn fields(s: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in s.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(at)) => {
                out.push((at, i));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(at) = start {
        out.push((at, s.len()));
    }
    out
}

/// Reads a day list: `token` is the concatenated day fields, `text` the list as written.
fn read_days(token: &str, text: &str) -> Result<[bool; 7], ParseError> {
    let mut days = [false; 7];
    for item in token.split(',') {
        if item.is_empty() {
            return Err(ParseError::new(
                ParseErrorKind::EmptyDay,
                format!("day list {}: empty day (check for a stray \",\")", quoted(text)),
            ));
        }
        let (first, last) = match item.split_once('-') {
            Some((left, right)) => {
                let first = read_day(left)?;
                (first, read_day(right)?)
            }
            None => {
                let day = read_day(item)?;
                (day, day)
            }
        };
        // Walk Mon … Sun, wrapping from Sun to Mon (`Fri-Mon` is Fri, Sat, Sun, Mon).
        let mut d = first;
        loop {
            days[d] = true;
            if d == last {
                break;
            }
            d = (d + 1) % 7;
        }
    }
    Ok(days)
}

/// A day name, ASCII case-insensitive; Monday = 0.
fn read_day(name: &str) -> Result<usize, ParseError> {
    DAY_NAMES
        .iter()
        .position(|d| d.eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            ParseError::new(
                ParseErrorKind::UnknownDay,
                format!(
                    "unknown day {} (want Mon, Tue, Wed, Thu, Fri, Sat, or Sun)",
                    quoted(name)
                ),
            )
        })
}

/// Reads a time range into (start, end) seconds.
fn read_range(field: &str) -> Result<(u32, u32), ParseError> {
    let mut parts = field.split('-');
    let (Some(start), Some(end), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err(ParseError::new(
            ParseErrorKind::MalformedRange,
            format!("malformed time range {} (want \"HH:MM-HH:MM\")", quoted(field)),
        ));
    };
    let start = read_time(start, false).map_err(|e| e.wrapped("start "))?;
    let end = read_time(end, true).map_err(|e| e.wrapped("end "))?;
    if start == end {
        return Err(ParseError::new(
            ParseErrorKind::EqualStartEnd,
            String::from("start and end must not be equal"),
        ));
    }
    Ok((start, end))
}

/// Reads `HH:MM` into seconds after midnight; `24:00` only when `is_end`.
fn read_time(text: &str, is_end: bool) -> Result<u32, ParseError> {
    let fail = |kind, what: &str| Err(ParseError::new(kind, format!("time {}: {what}", quoted(text))));
    let Some((hour, minute)) = text.split_once(':') else {
        return fail(ParseErrorKind::MalformedTime, "malformed (want \"HH:MM\")");
    };
    let Some(hour) = two_digits(hour) else {
        return fail(ParseErrorKind::MalformedHour, "malformed hour");
    };
    let Some(minute) = two_digits(minute) else {
        return fail(ParseErrorKind::MalformedMinute, "malformed minute");
    };
    if hour == 24 && minute == 0 {
        if is_end {
            return Ok(86_400);
        }
        return fail(
            ParseErrorKind::TwentyFourAsStart,
            "24:00 is valid only as a window's end",
        );
    }
    if hour > 23 || minute > 59 {
        return fail(
            ParseErrorKind::OutOfRange,
            "out of range (want 00:00 through 23:59, or 24:00 as an end)",
        );
    }
    Ok(hour * 3600 + minute * 60)
}

/// Exactly two ASCII digits, as a number.
fn two_digits(s: &str) -> Option<u32> {
    match s.as_bytes() {
        [a @ b'0'..=b'9', b @ b'0'..=b'9'] => Some(u32::from(a - b'0') * 10 + u32::from(b - b'0')),
        _ => None,
    }
}
