//! Path strings and the files around a checkpoint: the normalized path of answers and error tails
//! (SW-18), the ledger path (SW-91), the lock target (SW-99), the repo root and the shiftwork
//! directory (§1.3), and OS error tails (SW-32).

use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

use shiftwork_seams::{FileKind, Fs};

use crate::json::python_string_literal;

/// The most symbolic links followed while resolving the lock target before giving up (a loop).
const MAX_LINKS: usize = 40;

/// The files of one checkpoint, as named by the `checkpoint` argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointPaths {
    /// The argument as given (used for I/O, relative to the working directory).
    pub given: PathBuf,
    /// The argument normalized as 0.36.2 prints it (SW-18).
    pub shown: String,
    /// The ledger, `<shown>.log.jsonl`, beside the path as given (SW-91).
    pub ledger: PathBuf,
    /// The ledger path as printed.
    pub ledger_shown: String,
}

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
        }
    }
}

/// Normalizes a path string as 0.36.2 prints it (SW-18): empty and `.` components dropped, `..`
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

/// An OS error tail as 0.36.2 renders it on POSIX (SW-32): `[Errno 2] No such file or directory:
/// 'nope/cp.json'`.
///
/// ```
/// let e = std::io::Error::from_raw_os_error(21);
/// assert_eq!(shiftwork_core::paths::os_error_tail(&e, "adir"), "[Errno 21] Is a directory: 'adir'");
/// ```
pub fn os_error_tail(error: &io::Error, shown_path: &str) -> String {
    let shown = python_string_literal(&shiftwork_seams::echo::clip_echo(shown_path));
    if shiftwork_seams::is_not_regular_file(error) {
        // No OS error number exists for "not a regular file": the reason alone, then the path.
        return format!("{}: {shown}", shiftwork_seams::os_reason(error));
    }
    let code = error.raw_os_error().unwrap_or(5);
    let text = shiftwork_seams::os_reason(&io::Error::from_raw_os_error(code));
    format!("[Errno {code}] {text}: {shown}")
}

/// The lock target `T` (SW-99): `path` made absolute against the working directory, every symbolic
/// link resolved (a dangling final link resolves to its target's path), missing components appended
/// lexically. When resolution fails (a link loop), the path as given.
///
/// ```
/// use shiftwork_seams::MemFs;
/// use std::path::Path;
/// let fs = MemFs::new();
/// fs.write_file("/r/real/cp.json", b"{}");
/// fs.symlink("../real/cp.json", "/r/.shiftwork/cp.json");
/// let t = shiftwork_core::paths::lock_target(&fs, Path::new("/r/.shiftwork/cp.json"));
/// assert_eq!(t, Path::new("/r/real/cp.json"));
/// ```
pub fn lock_target<F: Fs + ?Sized>(fs: &F, path: &Path) -> PathBuf {
    resolve(fs, path).unwrap_or_else(|| path.to_path_buf())
}

fn resolve<F: Fs + ?Sized>(fs: &F, path: &Path) -> Option<PathBuf> {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        fs.canonicalize(Path::new(".")).ok()?.join(path)
    };
    let mut pending: Vec<OsString> = components(&absolute);
    pending.reverse();
    let mut resolved = PathBuf::from("/");
    let mut hops = 0;
    let mut missing = false;
    while let Some(name) = pending.pop() {
        if name == ".." {
            resolved.pop();
            continue;
        }
        let candidate = resolved.join(&name);
        if missing {
            resolved = candidate;
            continue;
        }
        match fs.symlink_metadata(&candidate) {
            Ok(meta) if meta.kind == FileKind::Symlink => {
                hops += 1;
                if hops > MAX_LINKS {
                    return None;
                }
                let target = fs.read_link(&candidate).ok()?;
                if target.is_absolute() {
                    resolved = PathBuf::from("/");
                }
                let mut more = components(&target);
                more.reverse();
                pending.extend(more);
            }
            Ok(_) => resolved = candidate,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                missing = true;
                resolved = candidate;
            }
            Err(_) => {
                missing = true;
                resolved = candidate;
            }
        }
    }
    Some(resolved)
}

fn components(path: &Path) -> Vec<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect()
}

/// The directory holding the checkpoint as given, made absolute lexically.
fn checkpoint_dir<F: Fs + ?Sized>(fs: &F, checkpoint: &Path) -> PathBuf {
    let absolute = if checkpoint.is_absolute() {
        checkpoint.to_path_buf()
    } else {
        fs.canonicalize(Path::new("."))
            .unwrap_or_else(|_| PathBuf::from("/"))
            .join(checkpoint)
    };
    let mut parts: Vec<OsString> = Vec::new();
    for c in components(&absolute) {
        if c == ".." {
            parts.pop();
        } else {
            parts.push(c);
        }
    }
    parts.pop();
    let mut dir = PathBuf::from("/");
    dir.extend(parts);
    dir
}

/// The shiftwork directory (§1.3): the checkpoint's directory when it is named `.shiftwork`, else
/// `<checkpoint's directory>/.shiftwork`.
pub fn shiftwork_dir<F: Fs + ?Sized>(fs: &F, checkpoint: &Path) -> PathBuf {
    let dir = checkpoint_dir(fs, checkpoint);
    if dir.file_name().is_some_and(|n| n == ".shiftwork") {
        dir
    } else {
        dir.join(".shiftwork")
    }
}

/// The repo root (§1.3): the nearest directory from the checkpoint's own directory upwards holding an
/// entry `.git`; without one, the parent of the shiftwork directory.
///
/// ```
/// use shiftwork_seams::MemFs;
/// use std::path::Path;
/// let fs = MemFs::new();
/// fs.create_dir_all("/w/repo/.git");
/// fs.write_file("/w/repo/.shiftwork/cp.json", b"{}");
/// assert_eq!(shiftwork_core::paths::repo_root(&fs, Path::new("/w/repo/.shiftwork/cp.json")), Path::new("/w/repo"));
/// ```
pub fn repo_root<F: Fs + ?Sized>(fs: &F, checkpoint: &Path) -> PathBuf {
    let start = checkpoint_dir(fs, checkpoint);
    let mut dir = Some(start.as_path());
    while let Some(d) = dir {
        if fs.symlink_metadata(&d.join(".git")).is_ok() {
            return d.to_path_buf();
        }
        dir = d.parent();
    }
    let sw = shiftwork_dir(fs, checkpoint);
    sw.parent().map(Path::to_path_buf).unwrap_or(sw)
}
