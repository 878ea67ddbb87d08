//! The service: the decision orders of `append` and `check` over
//! `shiftwork_seams::Fs`, with the choice of the log file, the strict UTF-8 read, the append lock
//! and the durable write.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use regex::Regex;
use shiftwork_seams::durable::{ReplaceOptions, replace_durably_as};
use shiftwork_seams::{FileKind, Fs, LockGuard, Metadata, is_file_too_large, not_regular_file, os_reason};

use crate::config::Config;
use crate::core::{self, AppendPlan};
use crate::error::WorklogError;
use crate::outcome::{AppendResult, AppendStatus, CheckResult, CheckStatus, LogItems, NotWritten, messages};

/// The append lock's file, directly inside the log directory. Hidden, so never a candidate.
pub const LOCK_FILE_NAME: &str = ".worklog.lock";

/// How long an append waits for the lock.
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// The most bytes of a log file a call reads: 64 MiB. A larger file is refused with
/// [`WorklogError::TooLarge`] after reading at most this much of it, so no file (a 3 GB log, a link
/// swapped for `/dev/zero`) makes a call's memory grow without bound.
///
/// Why this bound: a daily Markdown log is kilobytes; 64 MiB is far beyond any, and far
/// above the 10 MB file the benchmarks append to.
pub const MAX_LOG_BYTES: u64 = 64 * 1024 * 1024;

/// The temporary file's name starts with this…
pub const TEMP_PREFIX: &str = ".worklog-";

/// …and ends with this; between them, ten random characters of `[A-Za-z0-9]`.
pub const TEMP_SUFFIX: &str = ".tmp";

/// The work log of one configured directory, over a filesystem seam.
///
/// `append` and `check` take `&self` and may run concurrently from many threads; concurrent
/// appends, from this process or others, are serialised by the append lock.
///
/// ```
/// use shiftwork_seams::MemFs;
/// use shiftwork_worklog::{AppendStatus, CheckStatus, Config, NotWritten, Worklog};
///
/// let fs = MemFs::new();
/// fs.write_file("/notes/2026-09-06.md", b"# 2026-09-06\n\n- [x] a\n");
/// let log = Worklog::new(Config::builder().dir("/notes").pattern(r"\.md$").build(), fs.clone());
/// let result = log.append("Fixed the bug", false).unwrap();
/// assert_eq!(result.status, AppendStatus::Written);
/// assert_eq!(result.file.as_deref(), Some("2026-09-06.md"));
/// assert_eq!(fs.file("/notes/2026-09-06.md").unwrap(), b"# 2026-09-06\n\n- [x] a\n- [x] Fixed the bug\n");
/// let again = log.append("Fixed   the bug", false).unwrap();
/// assert_eq!(again.status, AppendStatus::NotWritten(NotWritten::Duplicate));
/// assert_eq!(log.check().unwrap().items, Some(2));
/// assert_eq!(log.check().unwrap().status, CheckStatus::Ok);
/// ```
#[derive(Debug)]
pub struct Worklog<F: Fs> {
    config: Config,
    fs: F,
    /// The compiled pattern: compiled at most once; `None` inside when it does not compile.
    pattern: OnceLock<Option<Regex>>,
}

/// Where the search for the log file led.
enum Located {
    NoDir,
    NoFile {
        pattern: bool,
    },
    File {
        name: String,
        path: PathBuf,
        lock: PathBuf,
        /// The listing showed `.worklog.lock` as something other than a regular file.
        lock_special: bool,
    },
}

impl<F: Fs> Worklog<F> {
    /// A work log over `fs`. Never fails: an invalid pattern is reported by each call.
    pub fn new(config: Config, fs: F) -> Self {
        Worklog {
            config,
            fs,
            pattern: OnceLock::new(),
        }
    }

    /// The configuration this log was built with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Records one finished piece of work as a checked item, or answers why it wrote nothing.
    ///
    /// First, before anything is looked at, a description over
    /// [`crate::core::MAX_DESCRIPTION_BYTES`] or holding a control character or a bidirectional
    /// control other than whitespace is refused with a [`WorklogError`]. Then, in this order: a blank
    /// description answers [`NotWritten::Empty`] before any filesystem access; a missing directory
    /// [`NotWritten::NoDir`]; an invalid pattern or a failed listing is an error; a directory without a
    /// candidate file [`NotWritten::NoFile`] — all decided without the append lock, which they never
    /// touch.
    ///
    /// Then, unless `dry_run`, the append lock is taken, and everything that leads to the write is
    /// done while it is held, until the write has completed or failed: the directory is listed again
    /// and the newest candidate chosen (a file chosen before the lock
    /// could be yesterday's while another append, holding the lock, starts today's); the file is read
    /// and must be UTF-8; then [`AppendStatus::Created`], [`NotWritten::Duplicate`] or
    /// [`AppendStatus::Written`]. An append that would make the file larger than [`MAX_LOG_BYTES`] is
    /// refused ([`WorklogError::WouldBeTooLarge`]). Only `Written` and `Created` write; a dry run
    /// answers [`NotWritten::DryRun`] (or `Duplicate`) with the line it would write.
    ///
    /// A dry run takes no lock: it writes nothing, and a file is only ever replaced whole, so it
    /// reads one consistent version of the newest file, as `check` does.
    pub fn append(&self, description: &str, dry_run: bool) -> Result<AppendResult, WorklogError> {
        if description.len() > core::MAX_DESCRIPTION_BYTES {
            return Err(WorklogError::DescriptionTooLong {
                bytes: description.len(),
            });
        }
        if let Some((position, character)) = core::first_control_character(description) {
            return Err(WorklogError::ControlCharacter { character, position });
        }
        let normalized = core::normalize(description);
        if normalized.is_empty() {
            return Ok(AppendResult::unreached(NotWritten::Empty, messages::EMPTY));
        }
        let (name, path, lock, lock_special) = match self.locate()?.file() {
            Ok(file) => file,
            Err(unreached) => return Ok(unreached),
        };
        if dry_run {
            let (_, text) = self.read(&name, &path, false)?;
            return Ok(match plan(&name, &text, &normalized)? {
                AppendPlan::Duplicate { line } => AppendResult::reached(
                    NotWritten::Duplicate.into(),
                    &name,
                    line,
                    messages::duplicate(&name),
                ),
                AppendPlan::Insert {
                    created: true, line, ..
                } => AppendResult::reached(NotWritten::DryRun.into(), &name, line, messages::dry_new(&name)),
                AppendPlan::Insert { line, .. } => {
                    AppendResult::reached(NotWritten::DryRun.into(), &name, line, messages::dry(&name))
                }
            });
        }
        // The guard is dropped on every way out of this function, after the write completed or failed.
        let _lock = {
            let _wait = tracing::info_span!("worklog.lock_wait").entered();
            self.lock(&lock, lock_special, &name)?
        };
        // Issue 27 item 8: the file is chosen again now that the lock is held, so no append that held it
        // before us (and perhaps started a newer file) is missed.
        let (name, path, ..) = match self.locate()?.file() {
            Ok(file) => file,
            Err(unreached) => return Ok(unreached),
        };
        let (meta, text) = self.read(&name, &path, true)?;
        let (created, line, offset, insertion) = match plan(&name, &text, &normalized)? {
            AppendPlan::Duplicate { line } => {
                return Ok(AppendResult::reached(
                    NotWritten::Duplicate.into(),
                    &name,
                    line,
                    messages::duplicate(&name),
                ));
            }
            AppendPlan::Insert {
                created,
                line,
                offset,
                insertion,
            } => (created, line, offset, insertion),
        };
        // WL-96: the new content is streamed as prefix, insertion and suffix, never assembled.
        let bytes = text.as_bytes();
        let parts: [&[u8]; 3] = [&bytes[..offset], insertion.as_bytes(), &bytes[offset..]];
        let options = ReplaceOptions::hidden(TEMP_PREFIX, TEMP_SUFFIX);
        // WL-55: a failed directory flush after the rename is ignored; the content is in place.
        let written = {
            let _write = tracing::info_span!("worklog.durable_write").entered();
            replace_durably_as(&self.fs, &path, meta.as_ref(), &parts, &options)
        };
        written.map_err(|e| WorklogError::Write {
            file: name.clone(),
            reason: os_reason(&e.source),
        })?;
        Ok(if created {
            AppendResult::reached(AppendStatus::Created, &name, line, messages::created(&name))
        } else {
            AppendResult::reached(AppendStatus::Written, &name, line, messages::written(&name))
        })
    }

    /// Tells whether the log can be reached. Never writes, never takes the lock, and
    /// reports the file's name and item count only. It needs no lock: it writes nothing, and
    /// an append replaces a file whole, so the read sees one version or the other.
    pub fn check(&self) -> Result<CheckResult, WorklogError> {
        let (name, path) = match self.locate()? {
            Located::NoDir => return Ok(CheckResult::unreached(CheckStatus::NoDir, messages::NO_DIR)),
            Located::NoFile { pattern } => {
                return Ok(CheckResult::unreached(
                    CheckStatus::NoFile,
                    no_file_message(pattern),
                ));
            }
            Located::File { name, path, .. } => (name, path),
        };
        let (_, text) = self.read(&name, &path, false)?;
        Ok(match core::find_checklist(&text) {
            Some(list) => CheckResult::ok(&name, list.items as u64),
            None => CheckResult::no_checklist(&name),
        })
    }

    /// The items of the log's checklist, for a person to read what was done (a web view of the
    /// team's work): the newest file's name and its checklist's items in order, each item's text
    /// as written after its box. Like [`Worklog::check`] it never writes and takes no lock, and it
    /// names the file only, never a path; `status` says what [`Worklog::check`] would (the items are
    /// empty unless it is [`CheckStatus::Ok`]).
    ///
    /// ```
    /// use shiftwork_seams::MemFs;
    /// use shiftwork_worklog::{CheckStatus, Config, Worklog};
    /// let fs = MemFs::new();
    /// fs.write_file("/notes/2026-09-06.md", b"# 2026-09-06\n\n- [x] Fixed the login bug\n- [ ] Review\n");
    /// let log = Worklog::new(Config::from_values(Some("/notes"), None, None), fs);
    /// let today = log.items().unwrap();
    /// assert_eq!((today.status, today.file.as_deref()), (CheckStatus::Ok, Some("2026-09-06.md")));
    /// assert_eq!(today.items[0].text, "Fixed the login bug");
    /// assert!(today.items[0].checked && !today.items[1].checked);
    /// ```
    pub fn items(&self) -> Result<LogItems, WorklogError> {
        let (name, path) = match self.locate()? {
            Located::NoDir => return Ok(LogItems::unreached(CheckStatus::NoDir)),
            Located::NoFile { .. } => return Ok(LogItems::unreached(CheckStatus::NoFile)),
            Located::File { name, path, .. } => (name, path),
        };
        let (_, text) = self.read(&name, &path, false)?;
        let items = core::checklist_items(&text);
        Ok(LogItems {
            status: if core::find_checklist(&text).is_some() {
                CheckStatus::Ok
            } else {
                CheckStatus::NoChecklist
            },
            file: Some(name),
            items,
        })
    }

    /// The log directory, the pattern, the listing and the newest candidate.
    fn locate(&self) -> Result<Located, WorklogError> {
        let Some(dir) = &self.config.dir else {
            return Ok(Located::NoDir);
        };
        match self.fs.metadata(dir) {
            Ok(meta) if meta.kind == FileKind::Dir => {}
            _ => return Ok(Located::NoDir), // WL-14: missing, not a directory, or not examinable
        }
        let pattern = self.pattern()?;
        let entries = self.fs.list_dir(dir).map_err(|e| WorklogError::List {
            reason: os_reason(&e),
        })?;
        let mut newest: Option<(SystemTime, String)> = None;
        let mut lock_special = false;
        for entry in entries {
            let Ok(name) = entry.name.into_string() else {
                continue;
            };
            if name == LOCK_FILE_NAME {
                lock_special = entry.metadata.as_ref().is_ok_and(|m| m.kind != FileKind::File);
            }
            if name.starts_with('.') {
                continue;
            }
            let Ok(meta) = entry.metadata else { continue };
            if meta.kind != FileKind::File || pattern.is_some_and(|re| !re.is_match(&name)) {
                continue;
            }
            // WL-17: the latest modification time wins; a tie goes to the greatest name, byte-wise.
            let newer = newest
                .as_ref()
                .is_none_or(|(time, best)| (meta.modified, name.as_bytes()) > (*time, best.as_bytes()));
            if newer {
                newest = Some((meta.modified, name));
            }
        }
        Ok(match newest {
            Some((_, name)) => Located::File {
                path: dir.join(&name),
                lock: dir.join(LOCK_FILE_NAME),
                lock_special,
                name,
            },
            None => Located::NoFile {
                pattern: pattern.is_some(),
            },
        })
    }

    /// The compiled pattern, `None` when none is configured (compiled at most once).
    fn pattern(&self) -> Result<Option<&Regex>, WorklogError> {
        let Some(source) = &self.config.pattern else {
            return Ok(None);
        };
        self.pattern
            .get_or_init(|| Regex::new(source).ok())
            .as_ref()
            .map(Some)
            .ok_or(WorklogError::Pattern)
    }

    /// The append lock in the log directory.
    ///
    /// A lock file that the listing showed as anything but a regular file
    /// (`special`: a FIFO, a socket, a device, or a link to one) is refused before it is opened ("Not
    /// a regular file"), because opening a FIFO for reading waits for a writer that never comes. The
    /// listing already holds the entry's kind, so this costs no call of its own.
    fn lock(&self, lock: &Path, special: bool, name: &str) -> Result<Box<dyn LockGuard>, WorklogError> {
        let write_error = |e: &io::Error| WorklogError::Write {
            file: name.to_owned(),
            reason: os_reason(e),
        };
        if special {
            return Err(write_error(&not_regular_file()));
        }
        self.fs.lock(lock, LOCK_TIMEOUT).map_err(|e| match e.kind() {
            io::ErrorKind::TimedOut => WorklogError::LockTimeout {
                file: name.to_owned(),
            },
            _ => write_error(&e),
        })
    }

    /// The whole file as UTF-8 text, with the target's metadata when `with_meta` (the
    /// owner, group and mode a write keeps). The read is bounded by [`MAX_LOG_BYTES`] and never
    /// blocks: a FIFO or a device swapped in after the listing is refused as "Not a regular file"
    /// (the seam opens without blocking and checks the file after opening), also while the append lock
    /// is held.
    fn read(
        &self,
        name: &str,
        path: &Path,
        with_meta: bool,
    ) -> Result<(Option<Metadata>, String), WorklogError> {
        let read_error = |e: io::Error| {
            if is_file_too_large(&e) {
                WorklogError::TooLarge {
                    file: name.to_owned(),
                }
            } else {
                WorklogError::Read {
                    file: name.to_owned(),
                    reason: os_reason(&e),
                }
            }
        };
        let meta = if with_meta {
            Some(self.fs.metadata(path).map_err(read_error)?)
        } else {
            None
        };
        let bytes = self.fs.read_limited(path, MAX_LOG_BYTES).map_err(read_error)?;
        let not_utf8 = || WorklogError::NotUtf8 {
            file: name.to_owned(),
        };
        if looks_wide(&bytes) {
            return Err(not_utf8());
        }
        let text = String::from_utf8(bytes).map_err(|_| not_utf8())?;
        Ok((meta, text))
    }
}

/// True when valid-looking bytes are really UTF-16 or UTF-32 text without a byte order mark: at least
/// one byte in four is NUL.
///
/// A file in UTF-16 or UTF-32 fails as not UTF-8, with or without a byte order mark.
/// Without a mark, such a file can be valid UTF-8 byte for byte when its characters are ASCII (`"a\n"`
/// in UTF-16LE is `61 00 0A 00`), and appending UTF-8 to it would corrupt it. Such a file is half NUL
/// bytes (UTF-16) or three quarters (UTF-32). A file with a stray NUL — for
/// example written by an older version that let a NUL through in a description — is read as text like
/// any other; only a file that is a quarter NUL or more is taken for UTF-16 or UTF-32 and refused.
fn looks_wide(bytes: &[u8]) -> bool {
    let nuls = memchr::memchr_iter(0, bytes).count();
    nuls > 0 && nuls >= bytes.len().div_ceil(4)
}

/// [`core::plan_append`], refused when the planned insertion would make the file larger than its
/// reader reads ([`MAX_LOG_BYTES`]): every writer checks its readers' limits first.
fn plan(name: &str, text: &str, normalized: &str) -> Result<AppendPlan, WorklogError> {
    let plan = core::plan_append(text, normalized);
    if let AppendPlan::Insert { insertion, .. } = &plan {
        let after = text.len() as u64 + insertion.len() as u64;
        if after > MAX_LOG_BYTES {
            return Err(WorklogError::WouldBeTooLarge {
                file: name.to_owned(),
            });
        }
    }
    Ok(plan)
}

impl Located {
    /// The file's name, path, lock path and whether the lock file is special; or, when no file was
    /// reached, the answer of an append.
    fn file(self) -> Result<(String, PathBuf, PathBuf, bool), AppendResult> {
        match self {
            Located::File {
                name,
                path,
                lock,
                lock_special,
            } => Ok((name, path, lock, lock_special)),
            Located::NoDir => Err(AppendResult::unreached(NotWritten::NoDir, messages::NO_DIR)),
            Located::NoFile { pattern } => Err(AppendResult::unreached(
                NotWritten::NoFile,
                no_file_message(pattern),
            )),
        }
    }
}

fn no_file_message(pattern: bool) -> &'static str {
    if pattern {
        messages::NO_MATCH
    } else {
        messages::NO_FILE
    }
}
