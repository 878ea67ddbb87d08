//! The crate's errors: why an expression does not parse, why a zone name is unknown, and why
//! a shutdown mode is not one of the two.
//!
//! Each error renders a stable sentence and exposes a kind, so callers decide by kind and never by
//! parsing text. (`thiserror` is not used: the crate's normal dependencies are chrono and chrono-tz
//! only.)

use std::borrow::Cow;
use std::fmt;

/// The most characters (Unicode scalar values) of one input value that an error sentence of this crate
/// repeats: an expression's segment, a day list, a time, a zone name. A longer value is cut there and
/// `…(<k> more)` says how many characters were left out, so a 1 MB expression never makes a 2 MB error.
///
/// The same bound and the same form as
/// `shiftwork_seams::echo::ECHO_LIMIT` and its `clip`, written out here because this crate depends on
/// chrono and chrono-tz only; the adapter's tests check that the two agree.
///
/// ```
/// use shiftwork_hours::{ECHO_LIMIT, Expr};
/// let long = format!("{}-13:00", "9".repeat(5_000));
/// let text = Expr::parse(&long).unwrap_err().to_string();
/// // The segment and the start time are each repeated once, clipped.
/// assert!(text.starts_with(r#"window "99"#) && text.ends_with(r#"…(3000 more)": malformed (want "HH:MM")"#));
/// assert!(text.contains(r#"…(3006 more)": start time "99"#));
/// assert!(text.len() < 2 * ECHO_LIMIT + 100);
/// ```
pub const ECHO_LIMIT: usize = 2_000;

/// `text` cut after [`ECHO_LIMIT`] characters, with `…(<k> more)` when `k` were cut.
pub(crate) fn clip(text: &str) -> Cow<'_, str> {
    match text.char_indices().nth(ECHO_LIMIT) {
        None => Cow::Borrowed(text),
        Some((cut, _)) => {
            let more = text[cut..].chars().count();
            Cow::Owned(format!("{}…({more} more)", &text[..cut]))
        }
    }
}

/// `text` as error sentences quote it: clipped by [`clip`], quoted as Rust's `{:?}` quotes a `&str`.
pub(crate) fn quoted(text: &str) -> String {
    format!("{:?}", clip(text).as_ref())
}

/// What kind of parse error an expression has: one variant per way an expression can be wrong.
///
/// ```
/// use shiftwork_hours::{Expr, ParseErrorKind};
/// let err = Expr::parse("Mon 09:00-09:00").unwrap_err();
/// assert_eq!(err.kind(), ParseErrorKind::EqualStartEnd);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The input is empty or only whitespace.
    Blank,
    /// A `TZ=` / `CRON_TZ=` prefix names no zone.
    MissingZoneName,
    /// The prefix names a zone the bundled database does not know.
    UnknownZone,
    /// A prefix is followed by no window.
    NoWindow,
    /// A `;`-separated segment is empty (a stray `;`).
    EmptyWindow,
    /// A segment is not `[days] HH:MM-HH:MM`.
    MalformedWindow,
    /// A day name is not one of Mon … Sun.
    UnknownDay,
    /// A day list has an empty item (a stray `,`).
    EmptyDay,
    /// The time range does not contain exactly one `-`.
    MalformedRange,
    /// A time has no `:`.
    MalformedTime,
    /// A time's hour is not two ASCII digits.
    MalformedHour,
    /// A time's minute is not two ASCII digits.
    MalformedMinute,
    /// `24:00` given as a window's start.
    TwentyFourAsStart,
    /// An hour above 23 or a minute above 59 (other than an end of `24:00`).
    OutOfRange,
    /// A window's start equals its end.
    EqualStartEnd,
}

impl ParseErrorKind {
    /// A stable machine name of the error's kind, as every `code()` of the family.
    pub fn code(&self) -> &'static str {
        match self {
            ParseErrorKind::Blank => "EXPRESSION_BLANK",
            ParseErrorKind::MissingZoneName => "EXPRESSION_MISSING_ZONE_NAME",
            ParseErrorKind::UnknownZone => "EXPRESSION_UNKNOWN_ZONE",
            ParseErrorKind::NoWindow => "EXPRESSION_NO_WINDOW",
            ParseErrorKind::EmptyWindow => "EXPRESSION_EMPTY_WINDOW",
            ParseErrorKind::MalformedWindow => "EXPRESSION_MALFORMED_WINDOW",
            ParseErrorKind::UnknownDay => "EXPRESSION_UNKNOWN_DAY",
            ParseErrorKind::EmptyDay => "EXPRESSION_EMPTY_DAY",
            ParseErrorKind::MalformedRange => "EXPRESSION_MALFORMED_RANGE",
            ParseErrorKind::MalformedTime => "EXPRESSION_MALFORMED_TIME",
            ParseErrorKind::MalformedHour => "EXPRESSION_MALFORMED_HOUR",
            ParseErrorKind::MalformedMinute => "EXPRESSION_MALFORMED_MINUTE",
            ParseErrorKind::TwentyFourAsStart => "EXPRESSION_TWENTY_FOUR_AS_START",
            ParseErrorKind::OutOfRange => "EXPRESSION_OUT_OF_RANGE",
            ParseErrorKind::EqualStartEnd => "EXPRESSION_EQUAL_START_END",
        }
    }
}

/// Why [`Expr::parse`](crate::Expr::parse) refused an input. Its `Display` is a stable sentence naming
/// the part that failed (`window "…": start time "…": malformed hour`); [`kind`](ParseError::kind) tells
/// which error it is.
///
/// ```
/// use shiftwork_hours::Expr;
/// let err = Expr::parse("9:00-13:00").unwrap_err();
/// assert_eq!(err.to_string(), r#"window "9:00-13:00": start time "9:00": malformed hour"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    kind: ParseErrorKind,
    text: String,
}

impl ParseError {
    pub(crate) fn new(kind: ParseErrorKind, text: String) -> Self {
        ParseError { kind, text }
    }

    /// Which error this is.
    pub fn kind(&self) -> ParseErrorKind {
        self.kind
    }

    /// A stable machine name of the error's kind (`EXPRESSION_MALFORMED_HOUR`, …), as every `code()`
    /// of the family.
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// Prefixes the text with `prefix` (naming the window or time it occurred in), keeping the kind.
    pub(crate) fn wrapped(mut self, prefix: &str) -> Self {
        self.text.insert_str(0, prefix);
        self
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for ParseError {}

/// Why [`parse_zone`](crate::parse_zone) refused a zone name.
///
/// ```
/// use shiftwork_hours::parse_zone;
/// let err = parse_zone("Mars/Olympus").unwrap_err();
/// assert_eq!(err.to_string(), r#"unknown time zone "Mars/Olympus": unknown time zone Mars/Olympus"#);
/// assert_eq!(parse_zone("  ").unwrap_err().to_string(), "zone must not be blank");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ZoneError {
    /// The name is empty or only whitespace.
    Blank,
    /// The bundled database has no zone of this name (exact, case-sensitive lookup).
    Unknown {
        /// The name as given.
        name: String,
    },
}

impl ZoneError {
    /// A stable machine name of the error's kind, as every `code()` of the family.
    pub fn code(&self) -> &'static str {
        match self {
            ZoneError::Blank => "ZONE_BLANK",
            ZoneError::Unknown { .. } => "ZONE_UNKNOWN",
        }
    }
}

impl fmt::Display for ZoneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ZoneError::Blank => f.write_str("zone must not be blank"),
            ZoneError::Unknown { name } => write!(f, "{}", unknown_zone_text(name)),
        }
    }
}

impl std::error::Error for ZoneError {}

/// The unknown-zone sentence, shared by the expression error and [`ZoneError`] so both read alike.
pub(crate) fn unknown_zone_text(name: &str) -> String {
    format!(
        "unknown time zone {}: unknown time zone {}",
        quoted(name),
        clip(name)
    )
}

/// Why a text is not a [`ShutdownMode`](crate::ShutdownMode).
///
/// ```
/// use shiftwork_hours::ShutdownMode;
/// let err = "soft".parse::<ShutdownMode>().unwrap_err();
/// assert_eq!(err.to_string(), "hours_shutdown must be graceful or immediate");
/// assert_eq!(err.given(), "soft");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModeError {
    given: String,
}

impl ModeError {
    pub(crate) fn new(given: &str) -> Self {
        ModeError {
            given: given.to_owned(),
        }
    }

    /// A stable machine name of the error's kind: `MODE_UNKNOWN`.
    pub fn code(&self) -> &'static str {
        "MODE_UNKNOWN"
    }

    /// The text that was given.
    pub fn given(&self) -> &str {
        &self.given
    }
}

impl fmt::Display for ModeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("hours_shutdown must be graceful or immediate")
    }
}

impl std::error::Error for ModeError {}
