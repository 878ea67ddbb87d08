//! The tool errors (WL-66): the only conditions that are not an ordinary status.

use thiserror::Error;

/// Why a call failed. `Display` is exactly the §14 text; `file` is the log file's name without any
/// directory, `reason` the operating system's text for the error number ([`shiftwork_seams::os_reason`]).
/// No variant carries a path (WL-70).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WorklogError {
    /// E-utf8: the log file is not valid UTF-8 (WL-21).
    #[error("\"{file}\" is not valid UTF-8")]
    NotUtf8 {
        /// The log file's name.
        file: String,
    },
    /// E-read: the log file could not be read (WL-68).
    #[error("cannot read \"{file}\": {reason}")]
    Read {
        /// The log file's name.
        file: String,
        /// The operating system's text (WL-67).
        reason: String,
    },
    /// E-write: the lock file could not be opened or created, or a step of the durable write failed
    /// (WL-55, WL-61).
    #[error("cannot write \"{file}\": {reason}")]
    Write {
        /// The log file's name.
        file: String,
        /// The operating system's text (WL-67).
        reason: String,
    },
    /// E-lock: another append held the lock for the whole timeout (WL-61).
    #[error("cannot write \"{file}\": timed out waiting for another append to finish")]
    LockTimeout {
        /// The log file's name.
        file: String,
    },
    /// E-list: the log directory could not be listed (WL-15).
    #[error("cannot list the worklog directory: {reason}")]
    List {
        /// The operating system's text (WL-67).
        reason: String,
    },
    /// E-pattern: the configured pattern is not a valid regular expression (WL-12).
    #[error("the configured file pattern is not a valid regular expression")]
    Pattern,
}
