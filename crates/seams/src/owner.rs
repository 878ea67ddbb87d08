//! Whose files a process may trust: the one rule of the family, as OpenSSH's `StrictModes` judges the
//! files it reads. A file or directory is trusted when it belongs to the user the process runs as
//! (its effective user id) or to root, and neither its group nor other users may write it. Anyone
//! else could change it under the process, or plant files beside it.
//!
//! Callers that only read may decide that another user's file is acceptable (a read-only view of a
//! store someone else keeps); they still refuse one that others may write, which this rule reports
//! separately.
//!
//! ```
//! use shiftwork_seams::owner::{trusted, Untrusted};
//! assert_eq!(trusted(1000, 0o600, 1000), Ok(()));
//! assert_eq!(trusted(0, 0o644, 1000), Ok(()), "root's file");
//! assert_eq!(trusted(1001, 0o600, 1000), Err(Untrusted::OtherOwner { uid: 1001 }));
//! assert_eq!(trusted(1000, 0o664, 1000), Err(Untrusted::WritableByOthers { mode: 0o664 }));
//! assert_eq!(Untrusted::WritableByOthers { mode: 0o1777 }.to_string(), "may be written by other users (mode 1777)");
//! ```

/// Why a file is not trusted; its `Display` completes a sentence whose subject is the file ("the file
/// may be written by other users (mode 666)").
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Untrusted {
    /// It belongs to another user, neither this process's nor root.
    #[error("belongs to another user (uid {uid})")]
    OtherOwner {
        /// Its owner.
        uid: u32,
    },
    /// Its group or other users may write it.
    #[error("may be written by other users (mode {mode:o})")]
    WritableByOthers {
        /// Its twelve permission bits.
        mode: u32,
    },
}

/// Judges a file owned by `uid` with permission bits `mode` for a process running as `me` (see the
/// module notes): the write bits for group and others are judged first, then the owner.
pub fn trusted(uid: u32, mode: u32, me: u32) -> Result<(), Untrusted> {
    if mode & 0o022 != 0 {
        return Err(Untrusted::WritableByOthers { mode: mode & 0o7777 });
    }
    if uid != me && uid != 0 {
        return Err(Untrusted::OtherOwner { uid });
    }
    Ok(())
}

/// The effective user id of this process: the user whose files it trusts.
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(uid: u32, mode: u32, me: u32, expected: Result<(), Untrusted>) {
        assert_eq!(
            trusted(uid, mode, me),
            expected,
            "uid {uid} mode {mode:o} me {me}"
        );
    }

    /// The owner rule of StrictModes (issue 34 item 14): yours or root's, writable by nobody else;
    /// root's store is trusted by every user, another user's by none, and a group or world write bit
    /// is refused whoever owns the file.
    #[test]
    fn issue34_item14_yours_or_roots_and_writable_by_nobody_else() {
        for (uid, mode, me, expected) in [
            (1000, 0o600, 1000, Ok(())),
            (1000, 0o644, 1000, Ok(())),
            (0, 0o644, 1000, Ok(())),
            (0, 0o600, 0, Ok(())),
            (0, 0o4755, 1000, Ok(())),
            (1001, 0o600, 1000, Err(Untrusted::OtherOwner { uid: 1001 })),
            (1000, 0o600, 0, Err(Untrusted::OtherOwner { uid: 1000 })),
            (
                1000,
                0o620,
                1000,
                Err(Untrusted::WritableByOthers { mode: 0o620 }),
            ),
            (
                1000,
                0o602,
                1000,
                Err(Untrusted::WritableByOthers { mode: 0o602 }),
            ),
            (0, 0o1777, 1000, Err(Untrusted::WritableByOthers { mode: 0o1777 })),
            (
                1001,
                0o666,
                1000,
                Err(Untrusted::WritableByOthers { mode: 0o666 }),
            ),
            (1000, 0o100_644, 1000, Ok(())),
        ] {
            check(uid, mode, me, expected);
        }
    }
}
