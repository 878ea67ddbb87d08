//! `shiftwork-seams` — the I/O boundary of the shiftwork workspace.
//!
//! The core crates (`shiftwork-core`, `worklog`, `contracts`) decide; this crate does. It holds the
//! three seam traits through which every core reads time, touches files and asks about its host, a
//! real implementation of each and an in-memory double for tests:
//!
//! | seam | production | tests |
//! |---|---|---|
//! | [`Clock`] — now, monotonic time, sleeping, waiting for a [`Signal`] | [`SystemClock`] | [`ManualClock`] |
//! | [`Fs`] — read, list, metadata, create files and directories, append, rename, lock | [`OsFs`] | [`MemFs`] (fault injection) |
//! | [`Host`] — own pid and host name, pid liveness, shell probes | [`OsHost`] | [`MemHost`] |
//!
//! On top of the [`Fs`] primitives it builds, once for the whole workspace, the mechanisms the cores
//! share: the durable atomic replace and the line append ([`durable`]), streaming SHA-256 ([`hash`]),
//! path resolution ([`path`]) and the lock-file protocol ([`lock_file`]: a lock that is a file
//! created exclusively, for interoperation with programs that know nothing of `flock(2)`; the rule
//! that says when its holder is gone is the caller's). Because they are built from primitives,
//! [`MemFs`] can fail or "crash" any step of them, and every crate tests that a failure at any step
//! loses nothing. The rule of whose files a process trusts (yours or root's, writable by nobody else)
//! lives here once too ([`owner`]).
//!
//! # What this crate never does
//!
//! It knows nothing of checkpoints, checklists, contracts or operating hours (it holds only the one
//! agent-id grammar every crate shares, [`agent`]); it never reads the
//! environment; it logs nothing. Its errors are `std::io::Error`s (the OS error number kept), plus
//! [`durable::ReplaceError`], which names the step of a replace that failed.
//!
//! It also holds the family's one error, [`Error`]: every error of a shiftwork crate converts into it
//! with `?`, and its [`Coded::code`] names the error's kind the same way in every crate.
//!
//! # Platform
//!
//! POSIX (Linux, macOS). [`OsFs::lock`] is `flock(2)`, released by the OS when the holder dies.

pub mod agent;
mod clock;
pub mod durable;
pub mod echo;
mod error;
mod fs;
pub mod hash;
mod host;
pub mod lock_file;
mod mem_fs;
mod os_fs;
pub mod owner;
pub mod path;
#[cfg(target_os = "linux")]
mod probe_supervisor;

pub use clock::{Clock, ManualClock, Signal, SystemClock, WeakSignal};
pub use error::{Coded, Error};
pub use fs::{DirEntry, FileKind, FileWriter, Fs, LockGuard, Metadata};
pub use host::{Host, MemHost, OsHost, PROBE_KILL_GRACE, PROBE_OUTPUT_CAP, ProbeOutcome, ProbeStatus};
pub use mem_fs::{MemFs, Op, ReadHold};
pub use os_fs::{OsFs, network_filesystem};

/// The operating system's text for an error, without the ` (os error N)` that Rust appends and without
/// any path: `Permission denied`, `No space left on device`. An error without an OS error number reads
/// `Input/output error`.
///
/// ```
/// let e = std::io::Error::from_raw_os_error(libc::EACCES);
/// assert_eq!(shiftwork_seams::os_reason(&e), "Permission denied");
/// assert_eq!(shiftwork_seams::os_reason(&std::io::Error::other("/secret/path")), "Input/output error");
/// ```
pub fn os_reason(error: &std::io::Error) -> String {
    if is_not_regular_file(error) {
        return NotRegularFile.to_string();
    }
    let code = error.raw_os_error().unwrap_or(libc::EIO);
    let text = std::io::Error::from_raw_os_error(code).to_string();
    let suffix = format!(" (os error {code})");
    text.strip_suffix(&suffix).unwrap_or(&text).to_owned()
}

/// The error of a read whose path leads to something other than a regular file or a directory (a FIFO,
/// a socket, a device): [`Fs::read`], [`Fs::read_chunks`] and [`Fs::read_limited`] open without
/// blocking and refuse such a file after opening, so a FIFO never blocks a reader and `/dev/zero` is
/// never read. Its kind is [`std::io::ErrorKind::InvalidInput`]; [`os_reason`] reads `Not a regular file`.
///
/// ```
/// let e = shiftwork_seams::not_regular_file();
/// assert!(shiftwork_seams::is_not_regular_file(&e));
/// assert_eq!(shiftwork_seams::os_reason(&e), "Not a regular file");
/// ```
pub fn not_regular_file() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, NotRegularFile)
}

/// True for the error of [`not_regular_file`].
pub fn is_not_regular_file(error: &std::io::Error) -> bool {
    error.get_ref().is_some_and(|inner| inner.is::<NotRegularFile>())
}

/// The error of a bounded read ([`Fs::read_limited`]) of a file longer than its bound: `EFBIG`, which
/// [`os_reason`] reads as `File too large`.
pub fn file_too_large() -> std::io::Error {
    std::io::Error::from_raw_os_error(libc::EFBIG)
}

/// True for the error of [`file_too_large`].
pub fn is_file_too_large(error: &std::io::Error) -> bool {
    error.raw_os_error() == Some(libc::EFBIG)
}

#[derive(Debug, thiserror::Error)]
#[error("Not a regular file")]
struct NotRegularFile;

/// The crate's README, run as a doc test so that its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
