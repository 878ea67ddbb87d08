//! Path strings and the files around a checkpoint: the normalized path of answers and error tails
//!, the ledger path, the lock target, the repo root and the shiftwork
//! directory, and OS error tails.
//!
//! An operation resolves its checkpoint's paths once, into one [`CheckpointPaths`]: the strings are
//! computed when it is made, and what needs the filesystem (the working directory, the lock target,
//! the repo root) at most once, when first asked for.

use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use shiftwork_seams::Fs;

use crate::refusal::FileError;

/// The files of one checkpoint, as named by the `checkpoint` argument.
#[derive(Debug, Clone)]
pub struct CheckpointPaths {
    /// The argument as given (used for I/O, relative to the working directory).
    pub given: PathBuf,
    /// The argument normalized as 0.36.2 prints it.
    pub shown: String,
    /// The ledger, `<shown>.log.jsonl`, beside the path as given.
    pub ledger: PathBuf,
    /// The ledger path as printed.
    pub ledger_shown: String,
    /// The working directory, once asked for (`None` when it cannot be resolved).
    cwd: OnceLock<Option<PathBuf>>,
}

impl PartialEq for CheckpointPaths {
    fn eq(&self, other: &Self) -> bool {
        (&self.given, &self.shown, &self.ledger, &self.ledger_shown)
            == (&other.given, &other.shown, &other.ledger, &other.ledger_shown)
    }
}

impl Eq for CheckpointPaths {}

impl CheckpointPaths {
    /// The paths for a `checkpoint` argument.
    ///
    /// ```
    /// let p = shiftwork_core::CheckpointPaths::new("./.shiftwork//cp.json");
    /// assert_eq!(p.shown, ".shiftwork/cp.json");
    /// assert_eq!(p.ledger_shown, ".shiftwork/cp.json.log.jsonl");
    /// ```
    pub fn new(checkpoint: impl AsRef<Path>) -> Self {
        let given = checkpoint.as_ref().to_path_buf();
        let shown = normalize(&given.as_os_str().to_string_lossy());
        let ledger_shown = format!("{shown}.log.jsonl");
        let mut ledger = normalize_os(&given);
        ledger.push(".log.jsonl");
        CheckpointPaths {
            given,
            shown,
            ledger: PathBuf::from(ledger),
            ledger_shown,
            cwd: OnceLock::new(),
        }
    }

    /// The working directory, resolved once.
    fn cwd<F: Fs + ?Sized>(&self, fs: &F) -> Option<&Path> {
        self.cwd
            .get_or_init(|| fs.canonicalize(Path::new(".")).ok())
            .as_deref()
    }

    /// `path` made absolute against the working directory (as given when that cannot be resolved).
    pub fn absolute<F: Fs + ?Sized>(&self, fs: &F, path: &Path) -> PathBuf {
        if path.is_absolute() {
            return path.to_path_buf();
        }
        self.cwd(fs)
            .map(|cwd| cwd.join(path))
            .unwrap_or_else(|| path.to_path_buf())
    }

    /// The lock target `T`: the checkpoint made absolute against the working directory, every
    /// symbolic link resolved (a dangling final link resolves to its target's path), missing
    /// components appended lexically ([`shiftwork_seams::path::realpath`]). When resolution fails (a
    /// link loop, no working directory), the path as given.
    ///
    /// ```
    /// use shiftwork_seams::MemFs;
    /// let fs = MemFs::new();
    /// fs.write_file("/r/real/cp.json", b"{}");
    /// fs.symlink("../real/cp.json", "/r/.shiftwork/cp.json");
    /// let paths = shiftwork_core::CheckpointPaths::new("/r/.shiftwork/cp.json");
    /// assert_eq!(paths.lock_target(&fs), std::path::Path::new("/r/real/cp.json"));
    /// ```
    pub fn lock_target<F: Fs + ?Sized>(&self, fs: &F) -> PathBuf {
        let resolved = if self.given.is_absolute() {
            shiftwork_seams::path::realpath(fs, &self.given, Path::new("/"))
        } else {
            self.cwd(fs)
                .and_then(|cwd| shiftwork_seams::path::realpath(fs, &self.given, cwd))
        };
        resolved.unwrap_or_else(|| self.given.clone())
    }

    /// The directory holding the checkpoint as given, made absolute lexically.
    fn checkpoint_dir<F: Fs + ?Sized>(&self, fs: &F) -> PathBuf {
        let absolute = if self.given.is_absolute() {
            self.given.clone()
        } else {
            self.cwd(fs).unwrap_or(Path::new("/")).join(&self.given)
        };
        let mut parts: Vec<OsString> = Vec::new();
        for c in absolute.components() {
            match c {
                Component::Normal(n) => parts.push(n.to_os_string()),
                Component::ParentDir => {
                    parts.pop();
                }
                _ => {}
            }
        }
        parts.pop();
        let mut dir = PathBuf::from("/");
        dir.extend(parts);
        dir
    }

    /// The shiftwork directory: the checkpoint's directory when it is named `.shiftwork`, else
    /// `<checkpoint's directory>/.shiftwork`.
    ///
    /// ```
    /// let fs = shiftwork_seams::MemFs::new();
    /// let paths = shiftwork_core::CheckpointPaths::new("/w/jobs/cp.json");
    /// assert_eq!(paths.shiftwork_dir(&fs), std::path::Path::new("/w/jobs/.shiftwork"));
    /// ```
    pub fn shiftwork_dir<F: Fs + ?Sized>(&self, fs: &F) -> PathBuf {
        let dir = self.checkpoint_dir(fs);
        if dir.file_name().is_some_and(|n| n == ".shiftwork") {
            dir
        } else {
            dir.join(".shiftwork")
        }
    }

    /// The repo root: the nearest directory from the checkpoint's own directory upwards holding
    /// an entry `.git`; without one, the parent of the shiftwork directory.
    ///
    /// ```
    /// use shiftwork_seams::MemFs;
    /// let fs = MemFs::new();
    /// fs.make_dirs("/w/repo/.git");
    /// fs.write_file("/w/repo/.shiftwork/cp.json", b"{}");
    /// let paths = shiftwork_core::CheckpointPaths::new("/w/repo/.shiftwork/cp.json");
    /// assert_eq!(paths.repo_root(&fs), std::path::Path::new("/w/repo"));
    /// ```
    pub fn repo_root<F: Fs + ?Sized>(&self, fs: &F) -> PathBuf {
        let start = self.checkpoint_dir(fs);
        let mut dir = Some(start.as_path());
        while let Some(d) = dir {
            if fs.symlink_metadata(&d.join(".git")).is_ok() {
                return d.to_path_buf();
            }
            dir = d.parent();
        }
        let sw = self.shiftwork_dir(fs);
        sw.parent().map(Path::to_path_buf).unwrap_or(sw)
    }
}

/// Normalizes a path string as 0.36.2 prints it: empty and `.` components dropped, `..`
/// kept, no trailing `/`, exactly two leading slashes kept, three or more become one, `.` when empty.
///
/// ```
/// use shiftwork_core::paths::normalize;
/// assert_eq!(normalize("a//b/./c/"), "a/b/c");
/// assert_eq!(normalize("./cp.json"), "cp.json");
/// assert_eq!(normalize("a/../b"), "a/../b");
/// assert_eq!(normalize("//x"), "//x");
/// assert_eq!(normalize("///x"), "/x");
/// assert_eq!(normalize(""), ".");
/// ```
pub fn normalize(path: &str) -> String {
    let leading = path.bytes().take_while(|&b| b == b'/').count();
    let prefix = match leading {
        0 => "",
        2 => "//",
        _ => "/",
    };
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    let body = parts.join("/");
    if prefix.is_empty() && body.is_empty() {
        return String::from(".");
    }
    format!("{prefix}{body}")
}

fn normalize_os(path: &Path) -> OsString {
    let bytes = path.as_os_str().as_bytes();
    let leading = bytes.iter().take_while(|&&b| b == b'/').count();
    let mut out: Vec<u8> = match leading {
        0 => Vec::new(),
        2 => b"//".to_vec(),
        _ => b"/".to_vec(),
    };
    let mut first = true;
    for part in bytes
        .split(|&b| b == b'/')
        .filter(|p| !p.is_empty() && *p != b".")
    {
        if !first {
            out.push(b'/');
        }
        out.extend_from_slice(part);
        first = false;
    }
    if out.is_empty() {
        out.push(b'.');
    }
    OsString::from_vec(out)
}

/// An OS error tail as 0.36.2 renders it on POSIX: `[Errno 2] No such file or directory:
/// 'nope/cp.json'` ([`FileError::tail`] of the error).
///
/// ```
/// let e = std::io::Error::from_raw_os_error(21);
/// assert_eq!(shiftwork_core::paths::os_error_tail(&e, "adir"), "[Errno 21] Is a directory: 'adir'");
/// ```
pub fn os_error_tail(error: &io::Error, shown_path: &str) -> String {
    FileError::of(error).tail(shown_path)
}
