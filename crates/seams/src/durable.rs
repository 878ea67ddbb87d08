//! Durable writes built from [`Fs`] primitives: the atomic replace and the line append.
//!
//! This is the one implementation of the write sequence every crate uses, so a fault injected by
//! [`crate::MemFs`] at any primitive reaches it: a unique temporary file in the target's directory,
//! created exclusively, written, given the target's owner and mode, flushed, renamed over the target,
//! and the directory flushed.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::fs::{FileWriter, Fs, Metadata};
use crate::path::resolve_link_chain;

/// How temporary files are named: `prefix`, then `random_len` random characters, then `suffix`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TempName {
    /// Text before the random part (for example `.worklog-`).
    pub prefix: String,
    /// Text after the random part (for example `.tmp`).
    pub suffix: String,
    /// How many random characters.
    pub random_len: usize,
    /// The characters the random part is drawn from.
    pub alphabet: Alphabet,
}

/// The characters a [`TempName`]'s random part is drawn from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alphabet {
    /// `[A-Za-z0-9]`.
    Alphanumeric,
    /// `[0-9a-f]`.
    LowerHex,
}

impl TempName {
    /// Draws one name.
    pub fn draw(&self) -> String {
        let mut name = String::with_capacity(self.prefix.len() + self.random_len + self.suffix.len());
        name.push_str(&self.prefix);
        for _ in 0..self.random_len {
            name.push(match self.alphabet {
                Alphabet::Alphanumeric => fastrand::alphanumeric(),
                Alphabet::LowerHex => {
                    let d = fastrand::u8(0..16);
                    char::from(if d < 10 { b'0' + d } else { b'a' + d - 10 })
                }
            });
        }
        name.push_str(&self.suffix);
        name
    }
}

/// Options of a durable replace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplaceOptions {
    /// How the temporary file is named.
    pub temp: TempName,
    /// Give the new file the target's owner and group when they differ from the writer's. A failure
    /// to do so fails the replace: a file's owner is never changed silently.
    pub keep_owner: bool,
    /// Permission bits for the new file when the target does not exist yet.
    pub mode_if_new: u32,
}

impl ReplaceOptions {
    /// Options with an alphanumeric random part of ten characters, owner kept, `0o644` for a new file.
    ///
    /// ```
    /// let opts = shiftwork_seams::durable::ReplaceOptions::hidden(".worklog-", ".tmp");
    /// let name = opts.temp.draw();
    /// assert!(name.starts_with(".worklog-") && name.ends_with(".tmp") && name.len() == 9 + 10 + 4);
    /// ```
    pub fn hidden(prefix: &str, suffix: &str) -> Self {
        ReplaceOptions {
            temp: TempName {
                prefix: prefix.to_owned(),
                suffix: suffix.to_owned(),
                random_len: 10,
                alphabet: Alphabet::Alphanumeric,
            },
            keep_owner: true,
            mode_if_new: 0o644,
        }
    }
}

/// The step of a durable replace that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplaceStep {
    /// Following the target's symbolic links or reading its metadata.
    Inspect,
    /// Creating the temporary file.
    CreateTemp,
    /// Writing the new content.
    Write,
    /// Giving the temporary file the target's owner and group.
    Owner,
    /// Giving the temporary file the target's permission bits.
    Mode,
    /// Flushing the temporary file.
    Fsync,
    /// Renaming the temporary file over the target.
    Rename,
}

/// A failed durable replace: the target is as it was and the temporary file is gone (best effort).
#[derive(Debug, Error)]
#[error("durable replace failed at step {step:?}: {source}")]
pub struct ReplaceError {
    /// The step that failed.
    pub step: ReplaceStep,
    /// The operating-system error.
    #[source]
    pub source: io::Error,
}

/// What a successful replace reports.
#[derive(Debug)]
pub struct Replaced {
    /// The file that was replaced (the end of the target's chain of symbolic links).
    pub target: PathBuf,
    /// The error of the final directory flush, if it failed. The new content is in place either way.
    pub dir_sync_error: Option<io::Error>,
}

/// A temporary file written, flushed and ready to be renamed over its target.
#[derive(Debug)]
#[must_use = "a prepared replace leaves its temporary file behind unless committed or aborted"]
pub struct PreparedReplace {
    target: PathBuf,
    temp: PathBuf,
    dir: PathBuf,
}

/// Replaces the file at `path` with the concatenation of `parts`, durably and atomically.
///
/// A symbolic link at `path` (or a chain of them) is written through: the file at the end of the
/// chain is replaced and the links stay as they were. The new file gets the target's twelve permission
/// bits and (with [`ReplaceOptions::keep_owner`]) its owner and group, as `target_meta` gives them or
/// as they are now when it is `None`. On any failure before the rename completes, the target is left
/// exactly as it was and the temporary file is removed.
///
/// ```
/// use shiftwork_seams::{Fs, MemFs, durable::{replace_durably, ReplaceOptions}};
/// use std::path::Path;
///
/// let fs = MemFs::new();
/// fs.write_file("/data/real.md", b"old");
/// fs.symlink("real.md", "/data/link.md");
/// replace_durably(&fs, Path::new("/data/link.md"), &[b"ne", b"w"], &ReplaceOptions::hidden(".t-", ".tmp")).unwrap();
/// assert_eq!(fs.file("/data/real.md").unwrap(), b"new");
/// assert_eq!(fs.read_link(Path::new("/data/link.md")).unwrap(), Path::new("real.md"));
/// ```
pub fn replace_durably<F: Fs + ?Sized>(
    fs: &F,
    path: &Path,
    parts: &[&[u8]],
    options: &ReplaceOptions,
) -> Result<Replaced, ReplaceError> {
    replace_durably_as(fs, path, None, parts, options)
}

/// [`replace_durably`] with the target's owner and mode taken from `target_meta` (as read earlier by
/// the caller) instead of a fresh stat.
pub fn replace_durably_as<F: Fs + ?Sized>(
    fs: &F,
    path: &Path,
    target_meta: Option<&Metadata>,
    parts: &[&[u8]],
    options: &ReplaceOptions,
) -> Result<Replaced, ReplaceError> {
    let target = resolve_link_chain(fs, path).map_err(|source| ReplaceError {
        step: ReplaceStep::Inspect,
        source,
    })?;
    prepare_replace(fs, &target, target_meta, parts, options)?.commit(fs)
}

/// The first half of a replace: writes `parts` to a new temporary file beside `target` (which must
/// already be the end of any symbolic-link chain), with the target's owner and mode, and flushes it.
/// Nothing is visible at `target` until [`PreparedReplace::commit`].
pub fn prepare_replace<F: Fs + ?Sized>(
    fs: &F,
    target: &Path,
    target_meta: Option<&Metadata>,
    parts: &[&[u8]],
    options: &ReplaceOptions,
) -> Result<PreparedReplace, ReplaceError> {
    let fail = |step| move |source| ReplaceError { step, source };
    let meta = match target_meta {
        Some(meta) => Some(meta.clone()),
        None => match fs.metadata(target) {
            Ok(meta) => Some(meta),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(fail(ReplaceStep::Inspect)(e)),
        },
    };
    let dir = parent_dir(target);
    let (temp, mut file) = create_temp(fs, &dir, &options.temp).map_err(fail(ReplaceStep::CreateTemp))?;
    let prepared = PreparedReplace {
        target: target.to_path_buf(),
        temp,
        dir,
    };
    let result = (|| {
        for part in parts {
            file.write_all(part).map_err(fail(ReplaceStep::Write))?;
        }
        let mode = match &meta {
            Some(meta) => {
                if options.keep_owner {
                    let own = file.metadata().map_err(fail(ReplaceStep::Owner))?;
                    if own.uid != meta.uid || own.gid != meta.gid {
                        file.set_owner(meta.uid, meta.gid)
                            .map_err(fail(ReplaceStep::Owner))?;
                    }
                }
                meta.mode
            }
            None => options.mode_if_new,
        };
        file.set_mode(mode).map_err(fail(ReplaceStep::Mode))?;
        file.sync().map_err(fail(ReplaceStep::Fsync))
    })();
    drop(file);
    match result {
        Ok(()) => Ok(prepared),
        Err(e) => {
            prepared.abort(fs);
            Err(e)
        }
    }
}

impl PreparedReplace {
    /// The temporary file's path.
    pub fn temp_path(&self) -> &Path {
        &self.temp
    }

    /// The temporary file's name.
    pub fn temp_name(&self) -> &OsStr {
        self.temp.file_name().unwrap_or_default()
    }

    /// The file this replace will replace.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Renames the temporary file over the target and flushes the directory. If the rename fails, the
    /// temporary file is removed and the target is as it was.
    pub fn commit<F: Fs + ?Sized>(self, fs: &F) -> Result<Replaced, ReplaceError> {
        if let Err(source) = fs.rename(&self.temp, &self.target) {
            self.abort(fs);
            return Err(ReplaceError {
                step: ReplaceStep::Rename,
                source,
            });
        }
        let dir_sync_error = fs.sync_dir(&self.dir).err();
        Ok(Replaced {
            target: self.target,
            dir_sync_error,
        })
    }

    /// Removes the temporary file (best effort); the target is untouched.
    pub fn abort<F: Fs + ?Sized>(self, fs: &F) {
        let _ = fs.remove_file(&self.temp);
    }
}

/// The directory holding `path` (`.` for a bare file name).
pub fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Creates a new, uniquely named file in `dir` (mode `0o600`), drawing another name on a collision.
pub fn create_temp<F: Fs + ?Sized>(
    fs: &F,
    dir: &Path,
    name: &TempName,
) -> io::Result<(PathBuf, Box<dyn FileWriter>)> {
    const ATTEMPTS: usize = 64;
    let mut last = None;
    for _ in 0..ATTEMPTS {
        let path = dir.join(OsString::from(name.draw()));
        match fs.create_new(&path, 0o600) {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::from(io::ErrorKind::AlreadyExists)))
}

/// Appends `bytes` to the file at `path` in one write and flushes it (creating the file when `create`
/// is set and it is missing).
///
/// ```
/// use shiftwork_seams::{MemFs, durable::append_line};
/// use std::path::Path;
/// let fs = MemFs::new();
/// fs.make_dirs("/log");
/// append_line(&fs, Path::new("/log/a.jsonl"), b"{}\n", true).unwrap();
/// append_line(&fs, Path::new("/log/a.jsonl"), b"{}\n", true).unwrap();
/// assert_eq!(fs.file("/log/a.jsonl").unwrap(), b"{}\n{}\n");
/// ```
pub fn append_line<F: Fs + ?Sized>(fs: &F, path: &Path, bytes: &[u8], create: bool) -> io::Result<()> {
    append_line_measured(fs, path, bytes, create).map(|_| ())
}

/// [`append_line`], answering the file's metadata just before the write and just after the flush
/// (`None` when either cannot be read; the append does not depend on them): what a caller that keeps
/// a summary of the file beside it needs to tell that its own append alone changed the file.
///
/// ```
/// use shiftwork_seams::{MemFs, durable::append_line_measured};
/// use std::path::Path;
/// let fs = MemFs::new();
/// fs.write_file("/log/a.jsonl", b"{}\n");
/// let (before, after) = append_line_measured(&fs, Path::new("/log/a.jsonl"), b"{}\n", false).unwrap().unwrap();
/// assert_eq!((before.len, after.len), (3, 6));
/// assert!(before.same_file(&after) && after.changed > before.changed);
/// ```
pub fn append_line_measured<F: Fs + ?Sized>(
    fs: &F,
    path: &Path,
    bytes: &[u8],
    create: bool,
) -> io::Result<Option<(Metadata, Metadata)>> {
    let mut file = fs.open_append(path, create)?;
    let before = file.metadata().ok();
    file.write_all(bytes)?;
    file.sync()?;
    Ok(before.zip(file.metadata().ok()))
}
