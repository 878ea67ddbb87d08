//! Workspace root, pointers and fingerprints over [`shiftwork_seams::Fs`].
//!
//! Everything here runs with no store transaction open: the facade calls it between
//! transactions.
//!
//! ```
//! use shiftwork_contracts::fingerprint::fingerprint;
//! use shiftwork_seams::MemFs;
//! use std::path::Path;
//! let fs = MemFs::new();
//! fs.write_file("/w/a.txt", b"first\r\nmiddle\nlast\n");
//! let p = fingerprint(&fs, Path::new("/w/a.txt"), "a.txt").unwrap();
//! assert_eq!((p.size, p.first_line.as_str(), p.last_line.as_str()), (19, "first", "last"));
//! ```

use std::io;
use std::path::{Path, PathBuf};

use shiftwork_seams::{FileKind, Fs};

use crate::limits::{LINE_CHARS, MAX_POINTERS, MAX_TOTAL_POINTER_BYTES, SECRET_HEAD_BYTES};
use crate::model::{Drift, DriftReason, Pointer};
use crate::paths::{self, PathReason};
use crate::roots::{self, AllowedRoots};
use crate::wait::Cancel;

/// Why a workspace root was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootReason {
    /// Not an absolute path.
    NotAbsolute,
    /// Does not exist.
    NotFound,
    /// Permission denied.
    Unreadable,
    /// Not a directory.
    NotADirectory,
    /// `/`.
    FilesystemRoot,
    /// A component is a sensitive directory name.
    SensitiveLocation,
    /// In or under `/proc`, `/sys`, `/dev`, `/etc` or `/boot` (refused even when an allowed root holds
    /// it).
    SystemDirectory,
    /// Not inside any of the allowed roots.
    OutsideAllowedRoots,
}

impl RootReason {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            RootReason::NotAbsolute => "NOT_ABSOLUTE",
            RootReason::NotFound => "NOT_FOUND",
            RootReason::Unreadable => "UNREADABLE",
            RootReason::NotADirectory => "NOT_A_DIRECTORY",
            RootReason::FilesystemRoot => "FILESYSTEM_ROOT",
            RootReason::SensitiveLocation => "SENSITIVE_LOCATION",
            RootReason::SystemDirectory => "SYSTEM_DIRECTORY",
            RootReason::OutsideAllowedRoots => "OUTSIDE_ALLOWED_ROOTS",
        }
    }
}

/// How an I/O error is classified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Missing,
    Denied,
    /// The path turned out not to be a regular file when it was opened (a FIFO or a device swapped in
    /// after its metadata was read, or a directory): the non-blocking read refused it.
    NotAFile,
    /// The file grew past the bound of the read.
    TooLarge,
    Other,
}

fn classify(e: &io::Error) -> Class {
    if shiftwork_seams::is_not_regular_file(e) {
        return Class::NotAFile;
    }
    if shiftwork_seams::is_file_too_large(e) {
        return Class::TooLarge;
    }
    match e.raw_os_error() {
        Some(libc::EISDIR) => return Class::NotAFile,
        Some(libc::ENOENT) | Some(libc::ENOTDIR) | Some(libc::ELOOP) => return Class::Missing,
        Some(libc::EACCES) | Some(libc::EPERM) => return Class::Denied,
        _ => {}
    }
    match e.kind() {
        io::ErrorKind::NotFound => Class::Missing,
        io::ErrorKind::PermissionDenied => Class::Denied,
        _ => Class::Other,
    }
}

/// A root or path check failed for a reason the path rules do not classify: the caller answers
/// `IO_ERROR`.
#[derive(Debug)]
pub struct CouldNotRun {
    /// The path concerned, as the contract names it (relative), or `None` for the root.
    pub path: Option<String>,
    /// The error.
    pub error: io::Error,
}

/// Accepts a workspace root (an absolute, readable directory, not `/` or a sensitive or system
/// location, inside the allowed roots of [`crate::roots`]) and returns its
/// canonical form.
pub fn accept_root(
    fs: &dyn Fs,
    root: &str,
    allowed: &AllowedRoots,
) -> Result<Result<String, RootReason>, CouldNotRun> {
    if !root.starts_with('/') {
        return Ok(Err(RootReason::NotAbsolute));
    }
    let canonical = match fs.canonicalize(Path::new(root)) {
        Ok(p) => p,
        Err(e) => {
            return match classify(&e) {
                Class::Missing => Ok(Err(RootReason::NotFound)),
                Class::Denied => Ok(Err(RootReason::Unreadable)),
                Class::NotAFile | Class::TooLarge | Class::Other => Err(CouldNotRun { path: None, error: e }),
            };
        }
    };
    match fs.metadata(&canonical) {
        Ok(m) if m.kind == FileKind::Dir => {}
        Ok(_) => return Ok(Err(RootReason::NotADirectory)),
        Err(e) => {
            return match classify(&e) {
                Class::Missing => Ok(Err(RootReason::NotFound)),
                Class::Denied => Ok(Err(RootReason::Unreadable)),
                Class::NotAFile | Class::TooLarge | Class::Other => Err(CouldNotRun { path: None, error: e }),
            };
        }
    }
    let Some(text) = canonical.to_str().map(str::to_owned) else {
        return Ok(Err(RootReason::NotFound));
    };
    if canonical.parent().is_none() {
        return Ok(Err(RootReason::FilesystemRoot));
    }
    let lower = text.to_ascii_lowercase();
    if lower
        .split('/')
        .any(|c| paths::SENSITIVE_DIRECTORIES.contains(&c))
    {
        return Ok(Err(RootReason::SensitiveLocation));
    }
    Ok(place(fs, &canonical, allowed).map(|()| text))
}

/// The allowed-roots rule on a canonical root.
fn place(fs: &dyn Fs, canonical: &Path, allowed: &AllowedRoots) -> Result<(), RootReason> {
    if roots::system_directory(canonical).is_some() {
        return Err(RootReason::SystemDirectory);
    }
    if !allowed.allows(fs, canonical) {
        return Err(RootReason::OutsideAllowedRoots);
    }
    Ok(())
}

/// A path of a list that was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRefusal {
    /// The path as the caller wrote it (`None` for `TOO_MANY`).
    pub path: Option<String>,
    /// Why.
    pub reason: PathReason,
    /// The sensitive pattern matched, for `SENSITIVE_FILE`: a name pattern, or the kind of private
    /// key the file's first bytes are (one of [`paths::PRIVATE_KEY_CONTENTS`]).
    pub pattern: Option<&'static str>,
}

/// The outcome of accepting a list of paths.
#[derive(Debug)]
pub enum Accepted {
    /// Every path was accepted; their fingerprints, in list order.
    Pointers(Vec<Pointer>),
    /// A path was refused.
    Refused(PathRefusal),
    /// An I/O error the path rules do not classify.
    Io(CouldNotRun),
}

/// Accepts and fingerprints a list of pointer or artifact paths, in list order, stopping at
/// the first refusal.
pub fn accept_paths(fs: &dyn Fs, paths: &[String], root_as_written: &str, canonical_root: &str) -> Accepted {
    accept_paths_cancellable(fs, paths, root_as_written, canonical_root, &Cancel::new())
}

/// [`accept_paths`] that stops promptly once `cancel` is triggered: between files and between the
/// chunks of a file's hash, with [`Accepted::Io`] carrying [`cancelled`] (nothing is written by
/// accepting paths, so there is nothing to undo).
pub fn accept_paths_cancellable(
    fs: &dyn Fs,
    paths: &[String],
    root_as_written: &str,
    canonical_root: &str,
    cancel: &Cancel,
) -> Accepted {
    if paths.len() > MAX_POINTERS {
        return Accepted::Refused(PathRefusal {
            path: None,
            reason: PathReason::TooMany,
            pattern: None,
        });
    }
    let refuse = |path: &str, reason, pattern| {
        Accepted::Refused(PathRefusal {
            path: Some(path.to_owned()),
            reason,
            pattern,
        })
    };
    // A file that vanished or cannot be read is the caller's refusal; any other failure is I/O.
    let failed = |raw: &str, rel: String, error: io::Error| match classify(&error) {
        Class::Missing => refuse(raw, PathReason::FileMissing, None),
        Class::Denied => refuse(raw, PathReason::Unreadable, None),
        Class::NotAFile => refuse(raw, PathReason::NotAFile, None),
        Class::TooLarge => refuse(raw, PathReason::TooLarge, None),
        Class::Other => Accepted::Io(CouldNotRun {
            path: Some(rel),
            error,
        }),
    };
    let root = PathBuf::from(canonical_root);
    let mut seen: Vec<String> = Vec::new();
    let mut pointers = Vec::new();
    let mut total: u64 = 0;
    for raw in paths {
        if cancel.is_cancelled() {
            return Accepted::Io(CouldNotRun {
                path: Some(raw.clone()),
                error: cancelled(),
            });
        }
        let rel = match paths::normalize(raw, root_as_written, canonical_root) {
            Ok(rel) => rel,
            Err(reason) => return refuse(raw, reason, None),
        };
        if seen.contains(&rel) {
            return refuse(raw, PathReason::Duplicate, None);
        }
        seen.push(rel.clone());
        if let Some(pattern) = paths::sensitive(&rel) {
            return refuse(raw, PathReason::SensitiveFile, Some(pattern));
        }
        let full = root.join(&rel);
        let resolved = match fs.canonicalize(&full) {
            Ok(p) => p,
            Err(e) => return failed(raw, rel, e),
        };
        let Some(inner) = inside(&resolved, &root) else {
            return refuse(raw, PathReason::SymlinkEscape, None);
        };
        if let Some(pattern) = paths::sensitive(&inner) {
            return refuse(raw, PathReason::SensitiveFile, Some(pattern));
        }
        let meta = match fs.metadata(&resolved) {
            Ok(m) => m,
            Err(e) => return failed(raw, rel, e),
        };
        if meta.kind != FileKind::File {
            return refuse(raw, PathReason::NotAFile, None);
        }
        if meta.len > MAX_TOTAL_POINTER_BYTES || total.saturating_add(meta.len) > MAX_TOTAL_POINTER_BYTES {
            return refuse(raw, PathReason::TooLarge, None);
        }
        // The read is bounded by what the list may still hold, whatever the metadata said. The file's
        // first bytes are kept from the same pass: a private key is refused whatever its name, and
        // the refusal quotes none of it.
        let mut head = Vec::new();
        match fingerprint_cancellable(
            fs,
            &resolved,
            &rel,
            MAX_TOTAL_POINTER_BYTES - total,
            cancel,
            &mut head,
        ) {
            Ok(_) if paths::private_key_in(&head).is_some() => {
                return refuse(raw, PathReason::SensitiveFile, paths::private_key_in(&head));
            }
            Ok(p) => {
                total += p.size;
                pointers.push(p);
            }
            Err(e) => return failed(raw, rel, e),
        }
    }
    Accepted::Pointers(pointers)
}

/// The `/`-separated path of `resolved` relative to `root` when it lies strictly inside it.
fn inside(resolved: &Path, root: &Path) -> Option<String> {
    if !shiftwork_seams::path::strictly_inside(resolved, root) {
        return None;
    }
    let rel = resolved.strip_prefix(root).ok()?;
    let parts: Vec<&str> = rel
        .components()
        .map(|c| c.as_os_str().to_str())
        .collect::<Option<Vec<_>>>()?;
    Some(parts.join("/"))
}

/// Bytes of a line kept while streaming: enough for 120 characters of any UTF-8.
const LINE_KEEP: usize = LINE_CHARS * 4 + 8;

/// The first and last line of a file (informational parts of a pointer), fed chunk by chunk during
/// the hash pass.
#[derive(Debug, Default)]
struct Lines {
    first: Option<Vec<u8>>,
    current: Vec<u8>,
    current_len: u64,
    previous: Option<Vec<u8>>,
}

impl Lines {
    fn feed(&mut self, mut chunk: &[u8]) {
        while !chunk.is_empty() {
            match memchr_lf(chunk) {
                Some(i) => {
                    self.take(&chunk[..i]);
                    let line = strip_cr(std::mem::take(&mut self.current), self.current_len);
                    if self.first.is_none() {
                        self.first = Some(line.clone());
                    }
                    self.previous = Some(line);
                    self.current_len = 0;
                    chunk = &chunk[i + 1..];
                }
                None => {
                    self.take(chunk);
                    chunk = &[];
                }
            }
        }
    }

    fn take(&mut self, bytes: &[u8]) {
        let room = LINE_KEEP.saturating_sub(self.current.len());
        self.current.extend_from_slice(&bytes[..bytes.len().min(room)]);
        self.current_len += bytes.len() as u64;
    }

    fn finish(self) -> (String, String) {
        let unterminated = (self.current_len > 0).then_some(self.current);
        let first = self
            .first
            .clone()
            .or_else(|| unterminated.clone())
            .unwrap_or_default();
        let last = unterminated.or(self.previous).unwrap_or_default();
        (line_text(&first), line_text(&last))
    }
}

fn memchr_lf(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', bytes)
}

/// Drops a CR that directly precedes the LF (only visible when the whole line was kept).
fn strip_cr(mut line: Vec<u8>, len: u64) -> Vec<u8> {
    if len as usize == line.len() && line.last() == Some(&b'\r') {
        line.pop();
    }
    line
}

fn line_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).chars().take(LINE_CHARS).collect()
}

/// Fingerprints the file at `path` in one streamed pass; `rel` becomes the pointer's
/// path. The read is bounded by [`MAX_TOTAL_POINTER_BYTES`].
pub fn fingerprint(fs: &dyn Fs, path: &Path, rel: &str) -> io::Result<Pointer> {
    fingerprint_within(fs, path, rel, MAX_TOTAL_POINTER_BYTES)
}

/// [`fingerprint`] reading at most `limit` bytes: a longer file is refused with
/// [`shiftwork_seams::file_too_large`] after `limit + 1` bytes (a file that grows, or a
/// device, is never read without end).
pub fn fingerprint_within(fs: &dyn Fs, path: &Path, rel: &str, limit: u64) -> io::Result<Pointer> {
    fingerprint_cancellable(fs, path, rel, limit, &Cancel::new(), &mut Vec::new())
}

/// The error of a file operation stopped because the call was cancelled: kind
/// [`io::ErrorKind::Interrupted`] (test it with [`is_cancelled`]).
pub fn cancelled() -> io::Error {
    io::Error::new(io::ErrorKind::Interrupted, Cancelled)
}

/// True for the error of [`cancelled`].
pub fn is_cancelled(error: &io::Error) -> bool {
    error.get_ref().is_some_and(|inner| inner.is::<Cancelled>())
}

#[derive(Debug, thiserror::Error)]
#[error("the call was cancelled")]
struct Cancelled;

/// [`fingerprint_within`] that stops between chunks once `cancel` is triggered ([`cancelled`]), and
/// keeps the file's first [`SECRET_HEAD_BYTES`] in `head`.
fn fingerprint_cancellable(
    fs: &dyn Fs,
    path: &Path,
    rel: &str,
    limit: u64,
    cancel: &Cancel,
    head: &mut Vec<u8>,
) -> io::Result<Pointer> {
    let mut lines = Lines::default();
    let digest = hash(fs, path, limit, cancel, &mut |chunk| {
        let room = SECRET_HEAD_BYTES.saturating_sub(head.len());
        head.extend_from_slice(&chunk[..chunk.len().min(room)]);
        lines.feed(chunk);
    })?;
    let (first_line, last_line) = lines.finish();
    Ok(Pointer {
        path: rel.to_owned(),
        size: digest.len,
        sha256: shiftwork_seams::hash::hex(&digest.sha256),
        first_line,
        last_line,
    })
}

/// Streams `path` through SHA-256 with the seam's non-blocking regular-file read, at most `limit`
/// bytes (the one hashing path of this crate; the `mid-hash` failpoint of the kill tests sits in it, after the
/// first chunk). A triggered `cancel` stops it before the next chunk ([`cancelled`]).
fn hash(
    fs: &dyn Fs,
    path: &Path,
    limit: u64,
    cancel: &Cancel,
    also: &mut dyn FnMut(&[u8]),
) -> io::Result<shiftwork_seams::hash::FileDigest> {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    let mut read: u64 = 0;
    if cancel.is_cancelled() {
        return Err(cancelled());
    }
    let len = fs.read_chunks(path, shiftwork_seams::hash::CHUNK_SIZE, &mut |chunk| {
        if cancel.is_cancelled() {
            return Err(cancelled());
        }
        read += chunk.len() as u64;
        if read > limit {
            return Err(shiftwork_seams::file_too_large());
        }
        hasher.update(chunk);
        also(chunk);
        #[cfg(feature = "test-failpoints")]
        crate::failpoints::hit("mid-hash");
        Ok(())
    })?;
    Ok(shiftwork_seams::hash::FileDigest {
        len,
        sha256: hasher.finalize().into(),
    })
}

/// Verification could not run: the pointer concerned and the error.
#[derive(Debug)]
pub struct VerifyFailed {
    /// The pointer's path.
    pub path: String,
    /// The error.
    pub error: io::Error,
}

/// Verifies a baseline: the drift of the pointers that fail, in baseline order. A root
/// that now resolves outside the allowed roots or into a system directory reads every pointer as
/// `PATH_REFUSED`.
pub fn verify(
    fs: &dyn Fs,
    root: &str,
    pointers: &[Pointer],
    allowed: &AllowedRoots,
) -> Result<Vec<Drift>, VerifyFailed> {
    verify_cancellable(fs, root, pointers, allowed, &Cancel::new())
}

/// [`verify`] that stops promptly once `cancel` is triggered — between pointers and between the
/// chunks of a hash — as a [`VerifyFailed`] carrying [`cancelled`].
pub fn verify_cancellable(
    fs: &dyn Fs,
    root: &str,
    pointers: &[Pointer],
    allowed: &AllowedRoots,
    cancel: &Cancel,
) -> Result<Vec<Drift>, VerifyFailed> {
    let canonical = match fs.canonicalize(Path::new(root)) {
        Ok(p) if place(fs, &p, allowed).is_err() => {
            return Ok(pointers
                .iter()
                .map(|p| drift(p, DriftReason::PathRefused, None))
                .collect());
        }
        Ok(p) => Some(p),
        Err(e) if classify(&e) != Class::Other => None,
        Err(error) => {
            return Err(VerifyFailed {
                path: pointers.first().map(|p| p.path.clone()).unwrap_or_default(),
                error,
            });
        }
    };
    let mut drifted = Vec::new();
    for pointer in pointers {
        if cancel.is_cancelled() {
            return Err(VerifyFailed {
                path: pointer.path.clone(),
                error: cancelled(),
            });
        }
        let found = match &canonical {
            Some(root) => check_one(fs, root, pointer, cancel)?,
            None => Some((DriftReason::FileMissing, None)),
        };
        if let Some((reason, actual_size)) = found {
            drifted.push(drift(pointer, reason, actual_size));
        }
    }
    Ok(drifted)
}

fn drift(pointer: &Pointer, reason: DriftReason, actual_size: Option<u64>) -> Drift {
    Drift {
        path: pointer.path.clone(),
        reason,
        expected_size: pointer.size,
        actual_size,
        hint: hint(&pointer.path, reason, pointer.size, actual_size, &pointer.sha256),
    }
}

fn check_one(
    fs: &dyn Fs,
    root: &Path,
    pointer: &Pointer,
    cancel: &Cancel,
) -> Result<Option<(DriftReason, Option<u64>)>, VerifyFailed> {
    let fail = |error| VerifyFailed {
        path: pointer.path.clone(),
        error,
    };
    let missing = Ok(Some((DriftReason::FileMissing, None)));
    let resolved = match fs.canonicalize(&root.join(&pointer.path)) {
        Ok(p) => p,
        Err(e) if classify(&e) == Class::Other => return Err(fail(e)),
        Err(_) => return missing,
    };
    match inside(&resolved, root) {
        Some(inner) if paths::sensitive(&inner).is_none() => {}
        _ => return Ok(Some((DriftReason::PathRefused, None))),
    }
    let meta = match fs.metadata(&resolved) {
        Ok(m) => m,
        Err(e) if classify(&e) == Class::Other => return Err(fail(e)),
        Err(_) => return missing,
    };
    if meta.kind != FileKind::File {
        return missing;
    }
    if meta.len != pointer.size {
        return Ok(Some((DriftReason::SizeMismatch, Some(meta.len))));
    }
    // At most one byte more than the baseline is read: a file that grows, or streams without end
    // while its metadata says otherwise, is a size mismatch, not an endless read.
    let digest = match hash(fs, &resolved, pointer.size, cancel, &mut |_| ()) {
        Ok(d) => d,
        Err(e) if classify(&e) == Class::TooLarge => {
            return Ok(Some((DriftReason::SizeMismatch, Some(pointer.size + 1))));
        }
        Err(e) if classify(&e) == Class::Other => return Err(fail(e)),
        Err(_) => return missing,
    };
    if digest.len != pointer.size {
        return Ok(Some((DriftReason::SizeMismatch, Some(digest.len))));
    }
    if digest.hex() != pointer.sha256 {
        return Ok(Some((DriftReason::ContentChanged, Some(digest.len))));
    }
    Ok(None)
}

/// What to do about a file that drifted, in one sentence.
pub fn hint(path: &str, reason: DriftReason, size: u64, actual: Option<u64>, sha256: &str) -> String {
    match reason {
        DriftReason::FileMissing => {
            format!("restore {path} (baseline {size} bytes), then call verify_contract")
        }
        DriftReason::SizeMismatch => format!(
            "{path} is {} bytes, the baseline is {size}; restore it, then call verify_contract",
            actual.unwrap_or(0)
        ),
        DriftReason::ContentChanged => format!(
            "{path} differs from the baseline (sha256 {}); restore it, e.g. with git stash, then call verify_contract",
            sha256.get(..12).unwrap_or(sha256)
        ),
        DriftReason::PathRefused => format!(
            "{path} now resolves outside the workspace root or to a protected file; restore the original file"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shiftwork_seams::MemFs;

    fn lines_of(bytes: &[u8], chunk: usize) -> (String, String) {
        let mut l = Lines::default();
        for c in bytes.chunks(chunk.max(1)) {
            l.feed(c);
        }
        l.finish()
    }

    fn check_lines(bytes: &[u8], first: &str, last: &str) {
        for chunk in [1, 2, 3, 7, 4096] {
            assert_eq!(
                lines_of(bytes, chunk),
                (first.to_owned(), last.to_owned()),
                "{bytes:?} chunk {chunk}"
            );
        }
    }

    #[test]
    fn ct38_first_and_last_lines() {
        check_lines(b"", "", "");
        check_lines(b"one", "one", "one");
        check_lines(b"one\n", "one", "one");
        check_lines(b"a\nb\nc\n", "a", "c");
        check_lines(b"a\r\nb\r\n", "a", "b");
        check_lines(b"a\nb\r", "a", "b\r");
        check_lines(b"\n", "", "");
        check_lines(b"\n\n", "", "");
        check_lines(b"x\n\n", "x", "");
        check_lines(b"\xff\xfeok\n", "\u{fffd}\u{fffd}ok", "\u{fffd}\u{fffd}ok");
        let long = "é".repeat(300);
        let cut: String = "é".repeat(120);
        check_lines(format!("{long}\r\nz").as_bytes(), &cut, "z");
        check_lines(format!("a\n{long}\r\n").as_bytes(), "a", &cut);
    }

    #[test]
    fn ct37_fingerprint_matches_fixture() {
        let fs = MemFs::new();
        fs.write_file(
            "/w/src/lib.rs",
            b"pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
        );
        let p = fingerprint(&fs, Path::new("/w/src/lib.rs"), "src/lib.rs").unwrap();
        assert_eq!(p.size, 48);
        assert_eq!(
            p.sha256,
            "821d282d75c051d9a2a445ad8ef1551004aba5b3322d7a354c8a2abcd15af1e6"
        );
        assert_eq!(p.first_line, "pub fn add(a: i32, b: i32) -> i32 {");
        assert_eq!(p.last_line, "}");
    }

    #[test]
    fn ct43_hints() {
        let sha = "821d282d75c051d9a2a445ad8ef1551004aba5b3322d7a354c8a2abcd15af1e6";
        assert_eq!(
            hint("a", DriftReason::FileMissing, 48, None, sha),
            "restore a (baseline 48 bytes), then call verify_contract"
        );
        assert_eq!(
            hint("a", DriftReason::SizeMismatch, 48, Some(53), sha),
            "a is 53 bytes, the baseline is 48; restore it, then call verify_contract"
        );
        assert_eq!(
            hint("a", DriftReason::ContentChanged, 48, Some(48), sha),
            "a differs from the baseline (sha256 821d282d75c0); restore it, e.g. with git stash, then call verify_contract"
        );
        assert_eq!(
            hint("a", DriftReason::PathRefused, 48, None, sha),
            "a now resolves outside the workspace root or to a protected file; restore the original file"
        );
    }
}
