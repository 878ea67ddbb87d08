//! Integration tests on the real filesystem (`OsFs`) in a temporary directory (WL-100): owner, group
//! and mode kept, the symbolic link kept, no temporary file after success or failure, the lock file
//! hidden and never a candidate.

use std::fs;
use std::io::{BufReader, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::Path;

use shiftwork_seams::OsFs;
use shiftwork_worklog::NotWritten;
use shiftwork_worklog::{AppendStatus, CheckStatus, Config, LOCK_FILE_NAME, Worklog};

use crate::support::{child_role, read_marked_line, set_mtime, spawn_child};

fn os_log(dir: &Path) -> Worklog<OsFs> {
    Worklog::new(Config::builder().dir(dir).build(), OsFs)
}

/// Every hidden temporary file under `dir` (one level of subdirectories included).
fn temp_files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().unwrap().is_dir() {
            out.extend(temp_files(&entry.path()));
        } else if name.starts_with(".worklog-") && name.ends_with(".tmp") {
            out.push(name);
        }
    }
    out
}

/// WL-100, AS-42 (a), WL-54, DV-6: the twelve permission bits and, running as root, an owner and group
/// other than the writer's are kept by the write.
#[test]
fn wl100_as42_mode_and_owner_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("2026-09-06.md");
    fs::write(&path, "- [x] a\n").unwrap();
    let root = effective_uid() == 0;
    if root {
        std::os::unix::fs::chown(&path, Some(1234), Some(5678)).unwrap();
    }
    for mode in [0o644, 0o6754, 0o1600] {
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        let ino = fs::metadata(&path).unwrap().ino();
        let description = format!("mode {mode:o}");
        assert_eq!(
            os_log(dir.path()).append(&description, false).unwrap().status,
            AppendStatus::Written
        );
        let meta = fs::metadata(&path).unwrap();
        assert_eq!(meta.mode() & 0o7777, mode, "mode kept");
        assert_ne!(meta.ino(), ino, "WL-57: a new inode");
        if root {
            assert_eq!((meta.uid(), meta.gid()), (1234, 5678), "owner and group kept");
        }
    }
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "- [x] a\n- [x] mode 644\n- [x] mode 6754\n- [x] mode 1600\n"
    );
    assert!(temp_files(dir.path()).is_empty());
}

fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and touches no memory of ours.
    unsafe { libc::geteuid() }
}

/// WL-100, AS-42 (b), WL-52 (DV-7), WL-20: a symbolically linked log file is written through, stays a
/// link with the same target, is reported by the link's name; no directory keeps a temporary file.
#[test]
fn wl100_as42_symlink_kept() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("archive")).unwrap();
    let target = dir.path().join("archive/2026-09-06.md");
    fs::write(&target, "- [x] a\n").unwrap();
    let link = dir.path().join("today.md");
    symlink("archive/2026-09-06.md", &link).unwrap();
    let result = os_log(dir.path()).append("b", false).unwrap();
    assert_eq!(result.status, AppendStatus::Written);
    assert_eq!(result.file.as_deref(), Some("today.md"));
    assert_eq!(
        result.message,
        "one item was appended to the checklist in \"today.md\""
    );
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(fs::read_link(&link).unwrap(), Path::new("archive/2026-09-06.md"));
    assert_eq!(fs::read_to_string(&target).unwrap(), "- [x] a\n- [x] b\n");
    assert!(temp_files(dir.path()).is_empty());
}

/// WL-100, WL-16, WL-59: after an append the lock file exists, is empty, hidden and never a
/// candidate even when it is the newest entry; `check` and dry runs never create it (WL-50, WL-62).
#[test]
fn wl100_lock_file_hidden_never_a_candidate() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("2026-09-06.md");
    fs::write(&path, "- [x] a\n").unwrap();
    let lock = dir.path().join(LOCK_FILE_NAME);
    let log = os_log(dir.path());
    assert_eq!(log.check().unwrap().status, CheckStatus::Ok);
    assert_eq!(
        log.append("dry", true).unwrap().status,
        AppendStatus::NotWritten(NotWritten::DryRun)
    );
    assert!(!lock.exists());
    assert!(log.append("b", false).unwrap().written());
    assert_eq!(fs::metadata(&lock).unwrap().len(), 0);
    set_mtime(&path, 0);
    set_mtime(&lock, 100);
    assert_eq!(log.check().unwrap().file.as_deref(), Some("2026-09-06.md"));
    assert!(log.append("c", false).unwrap().written());
    assert!(lock.exists(), "the lock file is never deleted");
    assert!(temp_files(dir.path()).is_empty());
}

/// WL-100, WL-55: a write that fails on the real filesystem leaves the file as it was and no temporary
/// file. The failure is real: a child process runs with a file-size limit smaller than the new content,
/// so writing the temporary file fails with `EFBIG`.
#[test]
fn wl100_failed_write_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("2026-09-06.md");
    let before = "- [x] a\n".repeat(8);
    fs::write(&path, &before).unwrap();
    let mut child = spawn_child("os_fs::child_with_file_size_limit", "efbig", dir.path());
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let error = read_marked_line(&mut stdout, "error: ");
    std::io::copy(&mut stdout, &mut std::io::sink()).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(error, "cannot write \"2026-09-06.md\": File too large");
    assert_eq!(fs::read_to_string(&path).unwrap(), before);
    assert!(temp_files(dir.path()).is_empty());
}

/// Child entry point of `wl100_failed_write_leaves_nothing` (runs only when re-invoked by it).
#[test]
#[ignore = "child process of wl100_failed_write_leaves_nothing"]
fn child_with_file_size_limit() {
    let Some((role, dir)) = child_role() else { return };
    assert_eq!(role, "efbig");
    let limit = libc::rlimit {
        rlim_cur: 32,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: plain system calls on values owned here; this process only runs this test.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &limit), 0);
    }
    let error = os_log(&dir).append("b", false).unwrap_err();
    let mut out = std::io::stdout().lock();
    writeln!(out, "error: {error}").unwrap();
    out.flush().unwrap();
}
