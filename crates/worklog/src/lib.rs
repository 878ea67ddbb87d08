//! `shiftwork-worklog` — records one finished piece of work as a checked item (`- [x] …`) in the first checklist
//! of the newest file of one configured directory, and tells whether such a checklist can be found.
//!
//! People keep a Markdown work log, one file per day; their agents tick off what they finished in it.
//! The crate has two layers:
//!
//! * [`core`] — the pure core: the checklist grammar, the description's normal form, the duplicate
//!   rule and the byte splice that inserts the new line. Text in, decision out.
//! * [`Worklog`] — the service: the choice of the log file, the decision orders of `append` and
//!   `check`, the append lock and the durable write, over the [`shiftwork_seams::Fs`] seam, with
//!   fixed result shapes and message sentences.
//!
//! ```
//! use shiftwork_seams::MemFs;
//! use shiftwork_worklog::{AppendStatus, Config, Worklog};
//!
//! let fs = MemFs::new();
//! fs.write_file("/notes/2026-09-06.md", b"# 2026-09-06\n");
//! let log = Worklog::new(Config::builder().dir("/notes").build(), fs.clone());
//! let result = log.append("Fixed the bug", false).unwrap();
//! assert_eq!(result.status, AppendStatus::Created);
//! assert_eq!(result.message, "\"2026-09-06.md\" had no checklist, so one was started with this item");
//! assert_eq!(fs.file("/notes/2026-09-06.md").unwrap(), b"# 2026-09-06\n\n- [x] Fixed the bug\n");
//! ```
//!
//! # What this crate never does
//!
//! * It never creates, renames or deletes a log file or a directory. It changes a log file only by
//!   inserting one run of text at one place — every existing byte stays: line endings, a missing final
//!   line break, the byte order mark. Its only other trace is the lock file
//!   `.worklog.lock` in the log directory, created by the first append.
//! * It never reveals where the log lives: no result, message or error holds a path, a directory's
//!   name, a link's target or any content of the file but the one line of the call.
//! * It touches the filesystem only through [`shiftwork_seams::Fs`], reads no environment variable and no clock,
//!   and writes no log output. Spans are not logs: an append opens two `tracing` spans at info level,
//!   `worklog.lock_wait` and `worklog.durable_write`, so a host's tracer shows where a slow append spent
//!   its time; they carry no field, so no path or content, and no event is ever emitted.
//!
//! # Design notes
//!
//! * The checklist grammar is deliberately small: items, list lines, fences, front matter and
//!   thematic breaks; no other Markdown construct is recognised, so the answer never depends on a
//!   Markdown library's version.
//! * The newest file by modification time is "today's" file: no date is computed and no name parsed,
//!   so work finished after midnight lands in the file the user started last.
//! * The parser scans bytes and stops at the end of the checklist, and the write streams the old bytes
//!   around the insertion: a 10 MB log costs one read and one write.
//! * A carriage return inside the first item's indent is copied as a space (see [`core::plan_append`]).
//! * An append chooses the file while it holds the append lock: the
//!   directory is looked at once without the lock, so that `no_dir` and `no_file` never touch the lock
//!   file, and listed again under it, and the newest file then is the one read and written. A
//!   file chosen before the lock could be yesterday's while another append, holding the lock, starts
//!   today's. `check` and a dry run take no lock: they write nothing, and a file is only ever replaced
//!   whole.
//! * Hostile input is bounded: a description over
//!   [`core::MAX_DESCRIPTION_BYTES`] or holding a control character or a bidirectional control other
//!   than whitespace is refused before anything is looked at; a log file is read up to
//!   [`MAX_LOG_BYTES`] and never blocks on a special file, and an append that would make it larger than
//!   that is refused, so the crate never writes a file its own reader refuses; a file name is always
//!   shown through [`quoted_name`].

pub mod core;

mod config;
mod error;
mod outcome;
mod service;

pub use config::{Config, ConfigBuilder};
pub use error::WorklogError;
pub use outcome::{AppendResult, AppendStatus, CheckResult, CheckStatus, LogItems, NotWritten, quoted_name};
pub use service::{LOCK_FILE_NAME, LOCK_TIMEOUT, MAX_LOG_BYTES, TEMP_PREFIX, TEMP_SUFFIX, Worklog};

/// The crate's README, run as a doc test so that its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
