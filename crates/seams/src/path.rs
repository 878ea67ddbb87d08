//! Path resolution over [`Fs`].

use std::io;
use std::path::{Path, PathBuf};

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
