//! The results of `append` and `check` and their messages.

use serde::Serialize;

/// What an append did: it wrote the item ([`Written`](AppendStatus::Written),
/// [`Created`](AppendStatus::Created)), or it wrote nothing, and the [`NotWritten`] reason says why.
/// Serializes to its status name: `written`, `created`, or the reason's (`duplicate`, `dry_run`,
/// `empty`, `no_dir`, `no_file`).
///
/// ```
/// use shiftwork_worklog::{AppendStatus, NotWritten};
/// let status = AppendStatus::NotWritten(NotWritten::NoDir);
/// assert_eq!(status.as_str(), "no_dir");
/// assert_eq!(serde_json::to_string(&status).unwrap(), r#""no_dir""#);
/// assert!(!status.is_written() && AppendStatus::Created.is_written());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AppendStatus {
    /// Written: one item was appended to the file's checklist.
    Written,
    /// Written: the file had no checklist, so one was started with this item at the file's end.
    Created,
    /// Nothing was written, for this reason.
    NotWritten(NotWritten),
}

/// Why an append wrote nothing. None of these is a failure of the call (those are
/// [`WorklogError`](crate::WorklogError)s), but each one means the item is not in the log.
/// Serializes to its snake_case name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NotWritten {
    /// The checklist already holds this item (compared with runs of whitespace collapsed), so there
    /// is nothing to add. Sending the same item twice is harmless.
    Duplicate,
    /// The call was a preview (`dry_run`): the answer shows the line that would be written.
    DryRun,
    /// The description is blank, so there is nothing to write; nothing was looked at.
    Empty,
    /// No log directory is configured, or it does not exist (or is not a directory). The user sets
    /// one up; the crate never creates it.
    NoDir,
    /// The log directory holds no file that can be the log (none matching the configured pattern,
    /// when there is one). The user starts one; the crate never creates it.
    NoFile,
}

/// What a check found. Serializes to its snake_case name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    /// The log file has a checklist.
    Ok,
    /// No log directory is configured, or it does not exist.
    NoDir,
    /// The log directory holds no file that can be the log.
    NoFile,
    /// The log file has no checklist yet; the next append will start one.
    NoChecklist,
}

impl AppendStatus {
    /// The status's name as it appears in results (`"written"`, `"dry_run"`, `"no_dir"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            AppendStatus::Written => "written",
            AppendStatus::Created => "created",
            AppendStatus::NotWritten(why) => why.as_str(),
        }
    }

    /// True when the item was written ([`Written`](AppendStatus::Written) or
    /// [`Created`](AppendStatus::Created)).
    pub fn is_written(self) -> bool {
        matches!(self, AppendStatus::Written | AppendStatus::Created)
    }
}

impl From<NotWritten> for AppendStatus {
    fn from(why: NotWritten) -> Self {
        AppendStatus::NotWritten(why)
    }
}

impl Serialize for AppendStatus {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl NotWritten {
    /// The reason's name as it appears in results (`"duplicate"`, `"dry_run"`, `"empty"`,
    /// `"no_dir"`, `"no_file"`).
    pub fn as_str(self) -> &'static str {
        match self {
            NotWritten::Duplicate => "duplicate",
            NotWritten::DryRun => "dry_run",
            NotWritten::Empty => "empty",
            NotWritten::NoDir => "no_dir",
            NotWritten::NoFile => "no_file",
        }
    }
}

impl CheckStatus {
    /// The status's name as it appears in results (`"ok"`, `"no_checklist"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            CheckStatus::Ok => "ok",
            CheckStatus::NoDir => "no_dir",
            CheckStatus::NoFile => "no_file",
            CheckStatus::NoChecklist => "no_checklist",
        }
    }
}

/// The answer of an append: whether it wrote the item and, if not, why; the file's name, the line and
/// a sentence to show the user. Serializes to `{"status", "file", "line", "message"}` in that order,
/// `None` as `null`.
///
/// An `Ok` answer does not mean the item was written: a missing log directory, a log not started
/// yet, a duplicate and a preview all answer `Ok` with a [`NotWritten`] reason. The type is
/// `#[must_use]`, so an answer cannot be dropped unseen; look at [`written`](AppendResult::written)
/// or match [`status`](AppendResult::status):
///
/// ```
/// use shiftwork_seams::MemFs;
/// use shiftwork_worklog::{AppendStatus, Config, NotWritten, Worklog};
///
/// let log = Worklog::new(Config::builder().dir("/notes").build(), MemFs::new());
/// let result = log.append("Fixed the bug", false).unwrap();
/// assert!(!result.written());
/// match result.status {
///     AppendStatus::Written | AppendStatus::Created => unreachable!(),
///     AppendStatus::NotWritten(NotWritten::NoDir | NotWritten::NoFile) => {
///         // The log is not set up: tell the user, in one line.
///         assert_eq!(result.message, "the worklog directory is not configured or does not exist");
///     }
///     AppendStatus::NotWritten(_) => unreachable!(),
/// }
/// ```
///
/// Dropping an answer is a warning (an error under `#![deny(unused_must_use)]`):
///
/// ```compile_fail
/// #![deny(unused_must_use)]
/// use shiftwork_seams::MemFs;
/// use shiftwork_worklog::{Config, Worklog, WorklogError};
///
/// fn tick_off(log: &Worklog<MemFs>) -> Result<(), WorklogError> {
///     log.append("Fixed the bug", false)?; // `no_dir` would pass unseen
///     Ok(())
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[must_use = "an append may write nothing (no log directory, no log file, a duplicate, a preview): \
              look at `written()` or match `status`"]
pub struct AppendResult {
    /// What happened.
    pub status: AppendStatus,
    /// The log file's name, without its directory; `None` when no file was reached.
    pub file: Option<String>,
    /// The line written (or that would have been); `None` when no file was reached. No terminator.
    pub line: Option<String>,
    /// One sentence saying what happened, fit to repeat to the user; it names the file (quoted by
    /// [`quoted_name`]) and never a path.
    pub message: String,
}

/// The answer of a check: what was found, the file's name, how many items its checklist holds, and
/// a sentence to show the user. Serializes to `{"status", "file", "items", "message"}` in that order,
/// `None` as `null`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[must_use = "a check changes nothing: its answer is all it gives"]
pub struct CheckResult {
    /// What was found.
    pub status: CheckStatus,
    /// The log file's name, without its directory; `None` for `no_dir` and `no_file`.
    pub file: Option<String>,
    /// How many items the checklist holds; `None` unless the status is `ok`.
    pub items: Option<u64>,
    /// One sentence saying what was found, fit to repeat to the user; it names the file (quoted by
    /// [`quoted_name`]) and never a path.
    pub message: String,
}

/// The items of the log's checklist ([`crate::Worklog::items`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogItems {
    /// What was found, as [`crate::Worklog::check`] says it.
    pub status: CheckStatus,
    /// The log file's name, without its directory; `None` for `no_dir` and `no_file`.
    pub file: Option<String>,
    /// The checklist's items in order; empty unless the status is `ok`.
    pub items: Vec<crate::core::ChecklistItem>,
}

impl LogItems {
    pub(crate) fn unreached(status: CheckStatus) -> LogItems {
        LogItems {
            status,
            file: None,
            items: Vec::new(),
        }
    }
}

/// A log file's name as every message shows it: in double quotes, escaped the way
/// Rust's `{:?}` escapes a string, so that a control character in a name (a line feed, an ESC) is
/// shown as `\n` or `\u{1b}` and never reaches a terminal raw. A plain name reads exactly `"{name}"`.
///
/// A `"` or `\` in a name is escaped too, so the quoting stays unambiguous.
///
/// ```
/// use shiftwork_worklog::quoted_name;
/// assert_eq!(quoted_name("2026-09-06.md"), r#""2026-09-06.md""#);
/// assert_eq!(quoted_name("café.md"), r#""café.md""#);
/// assert_eq!(quoted_name("a\nb\u{1b}[31m.md"), r#""a\nb\u{1b}[31m.md""#);
/// ```
pub fn quoted_name(name: &str) -> String {
    format!("{name:?}")
}

/// The message templates. Every message is built here, from a fixed text, the file's
/// name ([`quoted_name`]) and a count — never from an error value or a path.
pub(crate) mod messages {
    use super::quoted_name as q;

    pub const EMPTY: &str = "the description is empty, so there is nothing to write";
    pub const NO_DIR: &str = "the worklog directory is not configured or does not exist";
    pub const NO_FILE: &str = "the worklog directory holds no files";
    pub const NO_MATCH: &str = "no file in the worklog directory matches the configured pattern";

    pub fn written(name: &str) -> String {
        format!("one item was appended to the checklist in {}", q(name))
    }
    pub fn created(name: &str) -> String {
        format!("{} had no checklist, so one was started with this item", q(name))
    }
    pub fn duplicate(name: &str) -> String {
        format!("{} already has this item, so nothing was written", q(name))
    }
    pub fn dry(name: &str) -> String {
        format!("one item would be appended to the checklist in {}", q(name))
    }
    pub fn dry_new(name: &str) -> String {
        format!(
            "{} has no checklist; one would be started with this item",
            q(name)
        )
    }
    pub fn ok(name: &str, items: u64) -> String {
        format!("{} has a checklist with {items} items", q(name))
    }
    pub fn no_checklist(name: &str) -> String {
        format!("{} has no checklist yet; the next append will start one", q(name))
    }
}

impl AppendResult {
    /// True when the item was written: the status is [`Written`](AppendStatus::Written) or
    /// [`Created`](AppendStatus::Created).
    pub fn written(&self) -> bool {
        self.status.is_written()
    }

    /// Why nothing was written, or `None` when the item was written.
    ///
    /// ```
    /// use shiftwork_seams::MemFs;
    /// use shiftwork_worklog::{Config, NotWritten, Worklog};
    ///
    /// let fs = MemFs::new();
    /// fs.write_file("/notes/today.md", b"- [x] Fixed the bug\n");
    /// let log = Worklog::new(Config::builder().dir("/notes").build(), fs);
    /// let again = log.append("Fixed the bug", false).unwrap();
    /// assert_eq!(again.not_written(), Some(NotWritten::Duplicate));
    /// assert_eq!(log.append("Fixed another", false).unwrap().not_written(), None);
    /// ```
    pub fn not_written(&self) -> Option<NotWritten> {
        match self.status {
            AppendStatus::NotWritten(why) => Some(why),
            AppendStatus::Written | AppendStatus::Created => None,
        }
    }

    pub(crate) fn unreached(status: NotWritten, message: &str) -> Self {
        AppendResult {
            status: AppendStatus::NotWritten(status),
            file: None,
            line: None,
            message: message.to_owned(),
        }
    }

    pub(crate) fn reached(status: AppendStatus, name: &str, line: String, message: String) -> Self {
        AppendResult {
            status,
            file: Some(name.to_owned()),
            line: Some(line),
            message,
        }
    }
}

impl CheckResult {
    pub(crate) fn unreached(status: CheckStatus, message: &str) -> Self {
        CheckResult {
            status,
            file: None,
            items: None,
            message: message.to_owned(),
        }
    }

    pub(crate) fn ok(name: &str, items: u64) -> Self {
        CheckResult {
            status: CheckStatus::Ok,
            file: Some(name.to_owned()),
            items: Some(items),
            message: messages::ok(name, items),
        }
    }

    pub(crate) fn no_checklist(name: &str) -> Self {
        CheckResult {
            status: CheckStatus::NoChecklist,
            file: Some(name.to_owned()),
            items: None,
            message: messages::no_checklist(name),
        }
    }
}
