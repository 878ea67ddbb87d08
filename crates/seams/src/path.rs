//! Path resolution over [`Fs`].

use std::io;
use std::path::{Component, Path, PathBuf};

use crate::fs::{FileKind, Fs};

/// The most symbolic links followed before a chain counts as a loop (as Linux's `ELOOP`).
pub const MAX_LINK_HOPS: usize = 40;

/// Follows a chain of symbolic links at `path` to the path of the file at its end, which need not
/// exist (a dangling link resolves to its target's path). The parents are not resolved; only the
/// final component is followed. A path that is not a link is returned as is.
///
/// ```
/// use shiftwork_seams::{MemFs, path::resolve_link_chain};
/// use std::path::Path;
/// let fs = MemFs::new();
/// fs.write_file("/a/real.md", b"x");
/// fs.symlink("real.md", "/a/one");
/// fs.symlink("/a/one", "/a/two");
/// assert_eq!(resolve_link_chain(&fs, Path::new("/a/two")).unwrap(), Path::new("/a/real.md"));
/// ```
pub fn resolve_link_chain<F: Fs + ?Sized>(fs: &F, path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..=MAX_LINK_HOPS {
        match fs.symlink_metadata(&current) {
            Ok(meta) if meta.kind == FileKind::Symlink => {
                let target = fs.read_link(&current)?;
                current = if target.is_absolute() {
                    target
                } else {
                    crate::durable::parent_dir(&current).join(target)
                };
            }
            Ok(_) => return Ok(current),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(current),
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::from_raw_os_error(libc::ELOOP))
}

/// True when `inner` lies strictly inside `root`, comparing whole components.
///
/// ```
/// use shiftwork_seams::path::strictly_inside;
/// use std::path::Path;
/// assert!(strictly_inside(Path::new("/w/src/a.rs"), Path::new("/w")));
/// assert!(!strictly_inside(Path::new("/w"), Path::new("/w")));
/// assert!(!strictly_inside(Path::new("/wx/a"), Path::new("/w")));
/// ```
pub fn strictly_inside(inner: &Path, root: &Path) -> bool {
    inner != root && inner.starts_with(root)
}

/// True when `dir` lies strictly inside `root` and is a real directory there: every component from
/// `root` down to `dir` is a directory itself, none a symbolic link (checked without following links),
/// and none is `.` or `..`. A caller that must not be led out of `root` by a link (a search over a
/// directory a client may have replaced) checks this before listing `dir`.
///
/// ```
/// use shiftwork_seams::{MemFs, path::is_real_dir_inside};
/// use std::path::Path;
/// let fs = MemFs::new();
/// fs.make_dirs("/repo/.shiftwork/archive");
/// fs.make_dirs("/etc");
/// fs.symlink("/etc", "/repo/.shiftwork/linked");
/// let root = Path::new("/repo");
/// assert!(is_real_dir_inside(&fs, root, Path::new("/repo/.shiftwork/archive")));
/// assert!(!is_real_dir_inside(&fs, root, Path::new("/repo/.shiftwork/linked")));
/// assert!(!is_real_dir_inside(&fs, root, Path::new("/repo/.shiftwork/missing")));
/// assert!(!is_real_dir_inside(&fs, root, Path::new("/repo/../etc")));
/// assert!(!is_real_dir_inside(&fs, root, root));
/// ```
pub fn is_real_dir_inside<F: Fs + ?Sized>(fs: &F, root: &Path, dir: &Path) -> bool {
    let Ok(rest) = dir.strip_prefix(root) else {
        return false;
    };
    let mut current = root.to_path_buf();
    let mut depth = 0;
    for component in rest.components() {
        let Component::Normal(name) = component else {
            return false;
        };
        current.push(name);
        depth += 1;
        match fs.symlink_metadata(&current) {
            Ok(meta) if meta.kind == FileKind::Dir => {}
            _ => return false,
        }
    }
    depth > 0
}

/// The path of `path` with every symbolic link resolved, as Python's `os.path.realpath` (non-strict)
/// resolves it: made absolute against `cwd`, each component followed through its links (a link to an
/// absolute path starts again at `/`, a relative one continues from the link's directory), `..`
/// applied after the links before it are resolved, and components that do not exist (or cannot be
/// looked at) appended lexically, so a dangling final link resolves to its target's path. `None` for a
/// loop (more than [`MAX_LINK_HOPS`] links) or when a link cannot be read.
///
/// ```
/// use shiftwork_seams::{MemFs, path::realpath};
/// use std::path::Path;
/// let fs = MemFs::new();
/// fs.write_file("/r/real/cp.json", b"{}");
/// fs.symlink("../real/cp.json", "/r/.shiftwork/cp.json");
/// fs.symlink("/r/.shiftwork", "/r/link");
/// let cwd = Path::new("/r");
/// assert_eq!(realpath(&fs, Path::new("link/cp.json"), cwd).unwrap(), Path::new("/r/real/cp.json"));
/// assert_eq!(realpath(&fs, Path::new("/r/missing/../x"), cwd).unwrap(), Path::new("/r/x"));
/// fs.symlink("loop", "/r/loop");
/// assert_eq!(realpath(&fs, Path::new("/r/loop"), cwd), None);
/// ```
pub fn realpath<F: Fs + ?Sized>(fs: &F, path: &Path, cwd: &Path) -> Option<PathBuf> {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    let mut pending: Vec<std::ffi::OsString> = parts(&absolute);
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
                if hops > MAX_LINK_HOPS {
                    return None;
                }
                let target = fs.read_link(&candidate).ok()?;
                if target.is_absolute() {
                    resolved = PathBuf::from("/");
                }
                let mut more = parts(&target);
                more.reverse();
                pending.extend(more);
            }
            Ok(_) => resolved = candidate,
            Err(_) => {
                missing = true;
                resolved = candidate;
            }
        }
    }
    Some(resolved)
}

/// The normal and `..` components of a path, in order (`/` and `.` dropped).
fn parts(path: &Path) -> Vec<std::ffi::OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some(std::ffi::OsString::from("..")),
            _ => None,
        })
        .collect()
}
