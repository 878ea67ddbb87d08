//! The tool errors: the only conditions that are not an ordinary status.

use thiserror::Error;

use crate::core::MAX_DESCRIPTION_BYTES;
use crate::outcome::quoted_name as q;
use crate::service::MAX_LOG_BYTES;

/// Why a call failed: nothing was written. `Display` is a fixed sentence (the `worklog_append` tool's
/// error text); `file` is the log file's name without any directory, `reason` the operating system's
/// text for the error number ([`shiftwork_seams::os_reason`]). No variant carries a path. Every name is
/// shown quoted by [`crate::quoted_name`]: a plain name reads `"{name}"`, and a control character in a
/// name is escaped.
///
/// Four variants refuse hostile input before anything is written:
/// [`DescriptionTooLong`](WorklogError::DescriptionTooLong),
/// [`ControlCharacter`](WorklogError::ControlCharacter), [`TooLarge`](WorklogError::TooLarge) and
/// [`WouldBeTooLarge`](WorklogError::WouldBeTooLarge).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum WorklogError {
    /// The description is longer than [`MAX_DESCRIPTION_BYTES`]. Decided
    /// before anything else, so nothing is looked at or written.
    ///
    /// ```
    /// use shiftwork_seams::MemFs;
    /// use shiftwork_worklog::{Config, Worklog, WorklogError};
    /// let log = Worklog::new(Config::default(), MemFs::new());
    /// let err = log.append(&"a".repeat(5_000), false).unwrap_err();
    /// assert_eq!(err, WorklogError::DescriptionTooLong { bytes: 5_000 });
    /// assert_eq!(
    ///     err.to_string(),
    ///     "the description is 5000 bytes long; a description may hold at most 4096 bytes, so nothing was written"
    /// );
    /// ```
    #[error(
        "the description is {bytes} bytes long; a description may hold at most {MAX_DESCRIPTION_BYTES} \
         bytes, so nothing was written"
    )]
    DescriptionTooLong {
        /// The description's length in bytes, as sent.
        bytes: usize,
    },
    /// The description holds a control character or a bidirectional control that is not whitespace
    /// (see [`crate::core::first_control_character`]). Decided before
    /// anything else, so nothing is looked at or written. The character is named by its code point and
    /// its standard abbreviation (`U+001B (ESC)`, `U+202E (RLO)`).
    ///
    /// ```
    /// use shiftwork_seams::MemFs;
    /// use shiftwork_worklog::{Config, Worklog, WorklogError};
    /// let log = Worklog::new(Config::default(), MemFs::new());
    /// let err = log.append("Fixed \u{1B}[31mthe bug", false).unwrap_err();
    /// assert_eq!(err, WorklogError::ControlCharacter { character: '\u{1B}', position: 7 });
    /// assert_eq!(
    ///     err.to_string(),
    ///     "the description holds the control character U+001B (ESC) at character 7; a description may \
    ///      hold no control character other than whitespace, so nothing was written"
    /// );
    /// ```
    #[error(
        "the description holds the control character {} at character {position}; a description may hold \
         no control character other than whitespace, so nothing was written",
        control_name(*.character)
    )]
    ControlCharacter {
        /// The character.
        character: char,
        /// Its position in the description as sent, counted in characters from 1.
        position: usize,
    },
    /// The log file is not valid UTF-8 (a file in UTF-16 or UTF-32 is not either, with or without a
    /// byte order mark).
    #[error("{} is not valid UTF-8", q(.file))]
    NotUtf8 {
        /// The log file's name.
        file: String,
    },
    /// The log file is larger than [`MAX_LOG_BYTES`]: it is refused after reading at most that much
    /// of it, and left as it is. Its sentence reads like [`Read`](WorklogError::Read)'s, with its own
    /// reason.
    #[error(
        "cannot read {}: the file is larger than {MAX_LOG_BYTES} bytes ({} MiB), the most a log file may hold",
        q(.file),
        MAX_LOG_BYTES >> 20
    )]
    TooLarge {
        /// The log file's name.
        file: String,
    },
    /// The append would make the log file larger than [`MAX_LOG_BYTES`], the most a read of it takes
    /// (every writer checks its readers' limits first). Decided after the
    /// file was read and the new line planned, before anything is written; a dry run gives the same
    /// answer. A `duplicate` writes nothing and is never refused so.
    #[error(
        "cannot write {}: the file would be larger than {MAX_LOG_BYTES} bytes ({} MiB), the most a log file \
         may hold, so nothing was written",
        q(.file),
        MAX_LOG_BYTES >> 20
    )]
    WouldBeTooLarge {
        /// The log file's name.
        file: String,
    },
    /// The log file could not be read.
    #[error("cannot read {}: {reason}", q(.file))]
    Read {
        /// The log file's name.
        file: String,
        /// The operating system's text.
        reason: String,
    },
    /// The lock file could not be opened or created, or a step of the durable write failed; the log
    /// file is as it was.
    #[error("cannot write {}: {reason}", q(.file))]
    Write {
        /// The log file's name.
        file: String,
        /// The operating system's text.
        reason: String,
    },
    /// Another append held the lock for the whole [`LOCK_TIMEOUT`](crate::LOCK_TIMEOUT).
    #[error("cannot write {}: timed out waiting for another append to finish", q(.file))]
    LockTimeout {
        /// The log file's name.
        file: String,
    },
    /// The log directory could not be listed.
    #[error("cannot list the worklog directory: {reason}")]
    List {
        /// The operating system's text.
        reason: String,
    },
    /// The configured file-name pattern is not a valid regular expression.
    #[error("the configured file pattern is not a valid regular expression")]
    Pattern,
}

impl WorklogError {
    /// A stable machine name for the error, in the vocabulary of the statuses (`no_dir`, …):
    /// `description_too_long`, `control_character`, `not_utf8`, `too_large`, `would_be_too_large`,
    /// `read`, `write`, `lock_timeout`, `list`, `pattern`. For a caller that counts or logs errors
    /// without quoting the sentence.
    ///
    /// ```
    /// use shiftwork_seams::MemFs;
    /// use shiftwork_worklog::{Config, Worklog};
    /// let log = Worklog::new(Config::default(), MemFs::new());
    /// assert_eq!(log.append(&"a".repeat(5_000), false).unwrap_err().code(), "description_too_long");
    /// ```
    pub fn code(&self) -> &'static str {
        match self {
            WorklogError::DescriptionTooLong { .. } => "description_too_long",
            WorklogError::ControlCharacter { .. } => "control_character",
            WorklogError::NotUtf8 { .. } => "not_utf8",
            WorklogError::TooLarge { .. } => "too_large",
            WorklogError::WouldBeTooLarge { .. } => "would_be_too_large",
            WorklogError::Read { .. } => "read",
            WorklogError::Write { .. } => "write",
            WorklogError::LockTimeout { .. } => "lock_timeout",
            WorklogError::List { .. } => "list",
            WorklogError::Pattern => "pattern",
        }
    }
}

impl shiftwork_seams::Coded for WorklogError {
    fn code(&self) -> &'static str {
        WorklogError::code(self)
    }
}

/// `U+XXXX (NAME)` for a control character: its code point and, for the C0 and C1 sets, DEL and the
/// bidirectional controls, its standard abbreviation.
fn control_name(c: char) -> String {
    const C0: [&str; 32] = [
        "NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "HT", "LF", "VT", "FF", "CR", "SO",
        "SI", "DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB", "ESC", "FS", "GS",
        "RS", "US",
    ];
    const C1: [&str; 32] = [
        "PAD", "HOP", "BPH", "NBH", "IND", "NEL", "SSA", "ESA", "HTS", "HTJ", "VTS", "PLD", "PLU", "RI",
        "SS2", "SS3", "DCS", "PU1", "PU2", "STS", "CCH", "MW", "SPA", "EPA", "SOS", "SGC", "SCI", "CSI",
        "ST", "OSC", "PM", "APC",
    ];
    const BIDI_EMBEDDINGS: [&str; 5] = ["LRE", "RLE", "PDF", "LRO", "RLO"];
    const BIDI_ISOLATES: [&str; 4] = ["LRI", "RLI", "FSI", "PDI"];
    let code = u32::from(c);
    let name = match code {
        0x00..=0x1F => C0.get(code as usize),
        0x7F => Some(&"DEL"),
        0x80..=0x9F => C1.get((code - 0x80) as usize),
        0x061C => Some(&"ALM"),
        0x200E => Some(&"LRM"),
        0x200F => Some(&"RLM"),
        0x202A..=0x202E => BIDI_EMBEDDINGS.get((code - 0x202A) as usize),
        0x2066..=0x2069 => BIDI_ISOLATES.get((code - 0x2066) as usize),
        _ => None,
    };
    match name {
        Some(name) => format!("U+{code:04X} ({name})"),
        None => format!("U+{code:04X}"),
    }
}

#[cfg(test)]
mod tests {
    use super::control_name;

    /// Every control character is named by its code point, and the C0, DEL and C1 ones by their
    /// abbreviation too.
    #[test]
    fn control_names() {
        for (c, name) in [
            ('\u{0}', "U+0000 (NUL)"),
            ('\u{7}', "U+0007 (BEL)"),
            ('\u{8}', "U+0008 (BS)"),
            ('\u{1B}', "U+001B (ESC)"),
            ('\u{7F}', "U+007F (DEL)"),
            ('\u{80}', "U+0080 (PAD)"),
            ('\u{9B}', "U+009B (CSI)"),
            ('\u{9F}', "U+009F (APC)"),
            ('\u{61C}', "U+061C (ALM)"),
            ('\u{200F}', "U+200F (RLM)"),
            ('\u{202E}', "U+202E (RLO)"),
            ('\u{2069}', "U+2069 (PDI)"),
            ('a', "U+0061"),
        ] {
            assert_eq!(control_name(c), name);
        }
    }
}
