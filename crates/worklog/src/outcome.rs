//! The results of `append` and `check` (WL-43, WL-49, WL-89) and their messages (§14).

use serde::Serialize;

/// What an append did (WL-43). Serializes to its snake_case name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AppendStatus {
    /// One item was appended to the checklist.
    Written,
    /// The file had no checklist; one was started with this item.
    Created,
    /// The checklist already has this item; nothing was written.
    Duplicate,
    /// A preview: nothing was written.
    DryRun,
    /// The description is blank; nothing was looked at.
    Empty,
    /// The log directory is not configured or does not exist.
    NoDir,
    /// The log directory holds no candidate file.
    NoFile,
}

/// What a check found (WL-49). Serializes to its snake_case name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    /// The log file has a checklist.
    Ok,
    /// The log directory is not configured or does not exist.
    NoDir,
    /// The log directory holds no candidate file.
    NoFile,
    /// The log file has no checklist yet.
    NoChecklist,
}

impl AppendStatus {
    /// The status's name as it appears in results (`"dry_run"`, `"no_dir"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            AppendStatus::Written => "written",
            AppendStatus::Created => "created",
            AppendStatus::Duplicate => "duplicate",
            AppendStatus::DryRun => "dry_run",
            AppendStatus::Empty => "empty",
            AppendStatus::NoDir => "no_dir",
            AppendStatus::NoFile => "no_file",
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

/// The result of an append (WL-43). Serializes to `{"status", "file", "line", "message"}` in that
/// order, `None` as `null` (WL-79, WL-89).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AppendResult {
    /// What happened.
    pub status: AppendStatus,
    /// The log file's name, without its directory; `None` when no file was reached.
    pub file: Option<String>,
    /// The line written (or that would have been); `None` when no file was reached. No terminator.
    pub line: Option<String>,
    /// The §14 message.
    pub message: String,
}

/// The result of a check (WL-49). Serializes to `{"status", "file", "items", "message"}` in that
/// order, `None` as `null` (WL-79, WL-89).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckResult {
    /// What was found.
    pub status: CheckStatus,
    /// The log file's name, without its directory; `None` for `no_dir` and `no_file`.
    pub file: Option<String>,
    /// How many items the checklist holds; `None` unless the status is `ok`.
    pub items: Option<u64>,
    /// The §14 message.
    pub message: String,
}

/// A log file's name as every message shows it (§14: `"{name}"`): in double quotes, escaped the way
/// Rust's `{:?}` escapes a string, so that a control character in a name (a line feed, an ESC) is
/// shown as `\n` or `\u{1b}` and never reaches a terminal raw. A plain name reads exactly `"{name}"`.
///
/// Our decision (issue 12): §14 writes `"{name}"` for names without such characters; a `"` or `\` in a
/// name is escaped too, so the quoting stays unambiguous.
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

/// The message templates of §14 (WL-72). Every message is built here, from a fixed text, the file's
/// name ([`quoted_name`]) and a count — never from an error value or a path (WL-71).
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
    pub(crate) fn unreached(status: AppendStatus, message: &str) -> Self {
        AppendResult {
            status,
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
