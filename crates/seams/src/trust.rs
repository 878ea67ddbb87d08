//! Whose files a process may act on: the rule OpenSSH applies to its own files under `StrictModes`.
//! A file (or the directory that holds it) is trusted when it belongs to the process's user or to
//! root, and neither its group nor other users may write it; whoever else could change it could
//! change what the process believes.
//!
//! ```
//! use shiftwork_seams::trust::{Distrust, strict_modes};
//! assert_eq!(strict_modes(0o600, 1000, 1000), Ok(()));
//! assert_eq!(strict_modes(0o644, 0, 1000), Ok(()), "root's file");
//! assert_eq!(strict_modes(0o666, 1000, 1000), Err(Distrust::WritableByOthers { mode: 0o666 }));
//! assert_eq!(strict_modes(0o600, 1001, 1000), Err(Distrust::OwnedByAnother { uid: 1001 }));
//! assert_eq!(Distrust::WritableByOthers { mode: 0o1777 }.to_string(), "may be written by other users (mode 1777)");
//! ```

/// Why a file is not trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Distrust {
    /// Its group or other users may write it.
    #[error("may be written by other users (mode {mode:o})")]
    WritableByOthers {
        /// Its twelve permission bits.
        mode: u32,
    },
    /// It belongs to a user who is neither the process's nor root.
    #[error("belongs to another user (uid {uid})")]
    OwnedByAnother {
        /// Its owner.
        uid: u32,
    },
}

/// Whether a file of permission bits `mode`, owned by `uid`, may be trusted by the user `me`: owned
/// by `me` or by root, and not writable by its group or by others. The mode is judged first.
pub fn strict_modes(mode: u32, uid: u32, me: u32) -> Result<(), Distrust> {
    if mode & 0o022 != 0 {
        return Err(Distrust::WritableByOthers { mode: mode & 0o7777 });
    }
    if uid != me && uid != 0 {
        return Err(Distrust::OwnedByAnother { uid });
    }
    Ok(())
}

/// The process's effective user id, the `me` of [`strict_modes`].
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}
