//! Where a workspace root may lie: inside one of the configured allowed roots, and never in
//! a system directory (`/proc`, `/sys`, `/dev`, `/etc`, `/boot` or beneath them), whatever is listed.
//!
//! The rule is applied to the canonical root (every symbolic link resolved) at dispatch, and again at
//! every later verification, so a root that is later swapped for a link into `/proc` reads its files as
//! refused.
//!
//! ```
//! use shiftwork_contracts::roots::AllowedRoots;
//! use std::path::Path;
//! let roots = AllowedRoots::from_values(None, Some("/home/me"), "/tmp").unwrap();
//! assert_eq!(roots.roots(), [Path::new("/home/me"), Path::new("/tmp")]);
//! let listed = AllowedRoots::from_values(Some("/srv/work, ~/code"), Some("/home/me"), "/tmp").unwrap();
//! assert_eq!(listed.roots(), [Path::new("/srv/work"), Path::new("/home/me/code")]);
//! use shiftwork_contracts::roots::RootsError;
//! assert_eq!(
//!     AllowedRoots::from_values(Some("relative/dir"), None, "/tmp"),
//!     Err(RootsError::NotAbsolute { entry: String::from("relative/dir") })
//! );
//! assert_eq!(shiftwork_contracts::roots::system_directory(Path::new("/proc/self")), Some("/proc"));
//! ```

use std::path::{Path, PathBuf};

use shiftwork_seams::Fs;

/// Directories no workspace root may be in or under, even when an allowed root contains them.
pub const SYSTEM_DIRECTORIES: [&str; 5] = ["/proc", "/sys", "/dev", "/etc", "/boot"];

/// The system directory `path` is in or under, if any (component-wise).
pub fn system_directory(path: &Path) -> Option<&'static str> {
    SYSTEM_DIRECTORIES.into_iter().find(|dir| path.starts_with(dir))
}

/// Why a configured list of allowed roots is refused ([`AllowedRoots::from_values`]). `Display` is
/// a sentence naming the entry (clipped).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RootsError {
    /// An entry starts with `~`, and no home directory was given.
    #[error(
        "the allowed root '{}' starts with ~ but there is no home directory",
        shiftwork_seams::echo::clip_echo(entry)
    )]
    NoHome {
        /// The entry as listed.
        entry: String,
    },
    /// An entry is not an absolute path once `~` is expanded.
    #[error(
        "the allowed root '{}' is not an absolute path",
        shiftwork_seams::echo::clip_echo(entry)
    )]
    NotAbsolute {
        /// The entry as listed.
        entry: String,
    },
    /// The list names no root (only separators and blanks).
    #[error("the list of allowed roots is empty")]
    Empty,
}

impl RootsError {
    /// A stable machine name: `ROOTS_NO_HOME`, `ROOTS_NOT_ABSOLUTE`, `ROOTS_EMPTY`.
    pub fn code(&self) -> &'static str {
        match self {
            RootsError::NoHome { .. } => "ROOTS_NO_HOME",
            RootsError::NotAbsolute { .. } => "ROOTS_NOT_ABSOLUTE",
            RootsError::Empty => "ROOTS_EMPTY",
        }
    }
}

impl shiftwork_seams::Coded for RootsError {
    fn code(&self) -> &'static str {
        RootsError::code(self)
    }
}

/// The directories workspace roots must lie in (each root itself or anything beneath it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedRoots {
    roots: Vec<PathBuf>,
}

impl Default for AllowedRoots {
    /// The user's home directory (from the password database) and the system's temporary directory
    /// `/tmp`. An embedder that knows better (the adapter reads `HOME` and `TMPDIR`) passes
    /// [`AllowedRoots::from_values`].
    fn default() -> Self {
        let mut roots: Vec<PathBuf> = home_from_passwd().into_iter().collect();
        roots.push(PathBuf::from("/tmp"));
        AllowedRoots { roots }
    }
}

impl AllowedRoots {
    /// Exactly `roots` (absolute paths; a relative one never matches).
    pub fn new(roots: impl IntoIterator<Item = impl Into<PathBuf>>) -> Self {
        AllowedRoots {
            roots: roots.into_iter().map(Into::into).collect(),
        }
    }

    /// The rule of the configuration: `list` is `DIR,DIR,…` (blanks around each entry ignored; a
    /// leading `~` is `home`); without a list, `home` (when known) and `temp_dir`. Every entry must be
    /// absolute after expansion; the error names the first that is not.
    pub fn from_values(list: Option<&str>, home: Option<&str>, temp_dir: &str) -> Result<Self, RootsError> {
        let home = home.filter(|h| !h.trim().is_empty());
        let Some(list) = list.filter(|l| !l.trim().is_empty()) else {
            let mut roots: Vec<PathBuf> = home.map(PathBuf::from).into_iter().collect();
            roots.push(PathBuf::from(temp_dir));
            return Ok(AllowedRoots { roots });
        };
        let mut roots = Vec::new();
        for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let expanded = match (entry.strip_prefix('~'), home) {
                (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
                    PathBuf::from(format!("{home}{rest}"))
                }
                (Some(_), None) => {
                    return Err(RootsError::NoHome {
                        entry: entry.to_owned(),
                    });
                }
                _ => PathBuf::from(entry),
            };
            if !expanded.is_absolute() {
                return Err(RootsError::NotAbsolute {
                    entry: entry.to_owned(),
                });
            }
            roots.push(expanded);
        }
        if roots.is_empty() {
            return Err(RootsError::Empty);
        }
        Ok(AllowedRoots { roots })
    }

    /// The configured roots, as given.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// True when the canonical path `root` is one of the allowed roots or beneath one, each allowed
    /// root taken in its canonical form through `fs` (a missing one allows nothing).
    pub fn allows(&self, fs: &dyn Fs, root: &Path) -> bool {
        self.roots.iter().any(|allowed| {
            allowed.is_absolute()
                && fs
                    .canonicalize(allowed)
                    .is_ok_and(|canonical| root.starts_with(&canonical))
        })
    }

    /// The roots joined by `, ` for a refusal's sentence.
    pub fn describe(&self) -> String {
        if self.roots.is_empty() {
            return String::from("(none)");
        }
        self.roots
            .iter()
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The home directory of the process's user in the password database (not the environment).
fn home_from_passwd() -> Option<PathBuf> {
    use std::ffi::CStr;
    use std::os::unix::ffi::OsStrExt;
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: `passwd` is plain data that getpwuid_r fills in; `buf` outlives every pointer it stores
    // there (the strings are read before `buf` is dropped); `result` is set to null or to `&passwd`.
    unsafe {
        let mut passwd: libc::passwd = std::mem::zeroed();
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(
            libc::getuid(),
            &mut passwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        );
        if rc != 0 || result.is_null() || passwd.pw_dir.is_null() {
            return None;
        }
        let dir = CStr::from_ptr(passwd.pw_dir);
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(dir.to_bytes()));
        (path.is_absolute() && path != Path::new("/")).then_some(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shiftwork_seams::MemFs;

    #[test]
    fn system_directories_are_matched_by_component() {
        for (path, expected) in [
            ("/proc", Some("/proc")),
            ("/proc/self/environ", Some("/proc")),
            ("/etc", Some("/etc")),
            ("/etcetera", None),
            ("/home/me/etc", None),
            ("/dev/shm/x", Some("/dev")),
            ("/boot/efi", Some("/boot")),
            ("/sys", Some("/sys")),
            ("/srv", None),
        ] {
            assert_eq!(system_directory(Path::new(path)), expected, "{path}");
        }
    }

    #[test]
    fn allows_the_roots_and_beneath_them_in_canonical_form() {
        let fs = MemFs::new();
        fs.make_dirs("/real/home");
        fs.make_dirs("/tmpx");
        fs.symlink("/real/home", "/home");
        let roots = AllowedRoots::new(["/home", "/tmpx", "/missing"]);
        assert!(roots.allows(&fs, Path::new("/real/home")));
        assert!(roots.allows(&fs, Path::new("/real/home/project")));
        assert!(roots.allows(&fs, Path::new("/tmpx/a")));
        assert!(!roots.allows(&fs, Path::new("/real")));
        assert!(!roots.allows(&fs, Path::new("/missing/a")));
        assert!(!roots.allows(&fs, Path::new("/tmpxy")));
    }

    #[test]
    fn the_default_names_the_temporary_directory() {
        assert!(AllowedRoots::default().roots().contains(&PathBuf::from("/tmp")));
    }
}
