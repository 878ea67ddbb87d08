//! Fault injection at every step of an append on `MemFs` (WL-55, WL-56, WL-91): every operation the
//! append performs is failed in turn, and then the process is "killed" at every mutating step.

use shiftwork_seams::{Fs, MemFs, Op};
use shiftwork_worklog::NotWritten;
use shiftwork_worklog::{AppendStatus, WorklogError};

use crate::support::{DIR, NAME, file_path, log, temp_files};

const BEFORE: &[u8] = b"# 2026-09-06\r\n\r\n- [x] a\r\n\r\nNotes\r\n";
const AFTER: &[u8] = b"# 2026-09-06\r\n\r\n- [x] a\r\n- [x] b\r\n\r\nNotes\r\n";

/// The §21 log file, owned by another user so that the owner step runs, reached through a symbolic
/// link so that the link-resolution steps run too.
fn fixture() -> MemFs {
    let fs = MemFs::new();
    fs.write_file("/log/archive/2026-09-06.real", BEFORE);
    fs.set_owner("/log/archive/2026-09-06.real", 1234, 5678);
    fs.set_mode("/log/archive/2026-09-06.real", 0o640);
    fs.symlink("archive/2026-09-06.real", file_path());
    fs
}

/// What a failure of the nth call of `op` must produce: `None` for a step whose failure is ignored
/// (the directory flush after the rename, WL-55), else the error.
fn expected(op: Op, n: u64) -> Option<Result<AppendStatus, String>> {
    let write = |reason: &str| Some(Err(format!("cannot write \"{NAME}\": {reason}")));
    match (op, n) {
        // The first stat examines the directory (WL-14) before the lock, the second once more under
        // it (issue 27 item 8: the file is chosen under the lock): a failure of either is `no_dir`.
        (Op::Stat, 1 | 2) => Some(Ok(AppendStatus::NotWritten(NotWritten::NoDir))),
        // The third reads the target's owner and mode in step 7.
        (Op::Stat, 3) => Some(Err(format!("cannot read \"{NAME}\": Permission denied"))),
        (Op::Stat, _) | (Op::Resolve, _) => write("Permission denied"),
        (Op::List, _) => Some(Err("cannot list the worklog directory: Permission denied".into())),
        (Op::Read, _) => Some(Err(format!("cannot read \"{NAME}\": Permission denied"))),
        (Op::Lock | Op::Create | Op::Write | Op::SetOwner | Op::SetMode | Op::Fsync | Op::Rename, _) => {
            write("Permission denied")
        }
        (Op::SyncDir, _) => None,
        other => panic!("the append performed an unexpected operation {other:?}"),
    }
}

/// Every call of every operation of a successful append, failed in turn with `EACCES`: the outcome
/// is the expected error (or, for the final directory flush, success); after a failure the target is
/// byte-identical, its link intact and no temporary file is left.
#[test]
fn wl55_wl91_failure_at_every_step() {
    let baseline = fixture();
    assert_eq!(
        log(&baseline).append("b", false).unwrap().status,
        AppendStatus::Written
    );
    assert_eq!(baseline.file(file_path()).unwrap(), AFTER);
    let mut steps = 0;
    for op in Op::ALL {
        for n in 1..=baseline.count(op) {
            steps += 1;
            let fs = fixture();
            fs.fail_nth(op, n, libc::EACCES);
            let outcome = log(&fs).append("b", false);
            let what = format!("{op:?} #{n}");
            match expected(op, n) {
                None => {
                    assert_eq!(outcome.unwrap().status, AppendStatus::Written, "{what}");
                    assert_eq!(fs.file(file_path()).unwrap(), AFTER, "{what}");
                }
                Some(expected) => {
                    assert_eq!(
                        outcome.map(|r| r.status).map_err(|e| e.to_string()),
                        expected,
                        "{what}"
                    );
                    assert_eq!(fs.file(file_path()).unwrap(), BEFORE, "{what}: the file changed");
                }
            }
            let meta = fs.metadata(&file_path()).unwrap();
            assert_eq!((meta.uid, meta.gid, meta.mode), (1234, 5678, 0o640), "{what}");
            assert_eq!(
                fs.read_link(&file_path()).unwrap(),
                std::path::Path::new("archive/2026-09-06.real"),
                "{what}"
            );
            assert!(temp_files(&fs).is_empty(), "{what}: a temporary file remains");
        }
    }
    assert!(steps >= 12, "only {steps} steps were exercised");
}

/// WL-56, WL-57: the process dies at each mutating step. Afterwards the log file holds either the old
/// or the new content, never a mix; a leftover temporary file is hidden and never a candidate; and a
/// "new process" appends normally.
#[test]
fn wl56_wl57_crash_at_every_step() {
    let baseline = fixture();
    assert!(log(&baseline).append("b", false).unwrap().written());
    for op in Op::MUTATING {
        for n in 1..=baseline.count(op) {
            let fs = fixture();
            fs.crash_at(op, n);
            let outcome = log(&fs).append("b", false);
            assert!(fs.crashed(), "{op:?} #{n}");
            fs.restart();
            let content = fs.file(file_path()).unwrap();
            assert!(content == BEFORE || content == AFTER, "{op:?} #{n}: {content:?}");
            assert_eq!(
                outcome.is_ok(),
                content == AFTER || op == Op::SyncDir,
                "{op:?} #{n}"
            );
            let check = log(&fs).check().unwrap();
            assert_eq!(
                check.file.as_deref(),
                Some(NAME),
                "{op:?} #{n}: a leftover became a candidate"
            );
            let again = log(&fs).append("b", false).unwrap().status;
            let expected = if content == AFTER {
                AppendStatus::NotWritten(NotWritten::Duplicate)
            } else {
                AppendStatus::Written
            };
            assert_eq!(again, expected, "{op:?} #{n}");
            assert_eq!(fs.file(file_path()).unwrap(), AFTER, "{op:?} #{n}");
        }
    }
}

/// WL-91: `MemFs` fails each capability with a chosen error number, and makes the lock time out.
#[test]
fn wl91_each_capability_fails_on_demand() {
    let cases: [(Op, i32, &str); 6] = [
        (Op::Stat, libc::EACCES, "cannot read"),
        (
            Op::List,
            libc::EIO,
            "cannot list the worklog directory: Input/output error",
        ),
        (
            Op::Read,
            libc::ENOENT,
            "cannot read \"2026-09-06.md\": No such file or directory",
        ),
        (
            Op::Resolve,
            libc::ELOOP,
            "cannot write \"2026-09-06.md\": Too many levels of symbolic links",
        ),
        (
            Op::Rename,
            libc::EXDEV,
            "cannot write \"2026-09-06.md\": Invalid cross-device link",
        ),
        (
            Op::Lock,
            libc::EACCES,
            "cannot write \"2026-09-06.md\": Permission denied",
        ),
    ];
    for (op, errno, text) in cases {
        let fs = fixture();
        let n = if op == Op::Stat { 3 } else { 1 };
        fs.fail_nth(op, n, errno);
        let e = log(&fs).append("b", false).unwrap_err();
        assert!(e.to_string().starts_with(text), "{op:?}: {e}");
    }
    let fs = fixture();
    fs.lock_times_out(std::path::Path::new(DIR).join(shiftwork_worklog::LOCK_FILE_NAME));
    assert!(matches!(
        log(&fs).append("b", false),
        Err(WorklogError::LockTimeout { .. })
    ));
}
