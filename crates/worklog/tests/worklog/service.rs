//! The service's decision orders (§8, §10), what each outcome touches (WL-42, WL-50, WL-62), the lock
//! file (§12) and the errors (§13).

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use shiftwork_seams::{DirEntry, FileKind, FileWriter, Fs, LockGuard, MemFs, Metadata, Op};
use shiftwork_worklog::NotWritten;
use shiftwork_worklog::{
    AppendResult, AppendStatus, CheckStatus, Config, LOCK_FILE_NAME, Worklog, WorklogError,
};

use crate::support::{
    DIR, Msg, NAME, file_path, has_lock_file, log, log_with, memfs_with, snapshot, temp_files,
};

fn lock_path() -> PathBuf {
    Path::new(DIR).join(LOCK_FILE_NAME)
}

/// The operations that change a filesystem, counted on `MemFs`.
fn writes(fs: &MemFs) -> u64 {
    [
        Op::Create,
        Op::OpenAppend,
        Op::Write,
        Op::Append,
        Op::Rename,
        Op::Remove,
        Op::SetLen,
        Op::SetMode,
        Op::SetOwner,
        Op::Lock,
    ]
    .iter()
    .map(|op| fs.count(*op))
    .sum()
}

/// WL-41 step 1: a blank description is `empty` before any filesystem access.
#[test]
fn wl41_empty_before_any_filesystem_access() {
    let fs = memfs_with(b"- [x] a\n");
    fs.fail_path(Op::Stat, DIR, libc::EACCES);
    assert_eq!(
        log(&fs).append(" \u{3000}", false).unwrap().status,
        AppendStatus::NotWritten(NotWritten::Empty)
    );
    assert!(Op::ALL.iter().all(|op| fs.count(*op) == 0));
}

/// WL-41: each step wins over the ones after it — the lock over the read, the read over UTF-8, the
/// missing checklist over the duplicate test, the duplicate over the dry run.
#[test]
fn wl41_decision_order() {
    // Step 6 before step 7: a held lock is reported even though the read would fail.
    let fs = memfs_with(b"- [x] a\n");
    fs.lock_times_out(lock_path());
    fs.fail_path(Op::Read, file_path(), libc::EACCES);
    assert_eq!(
        log(&fs).append("x", false).unwrap_err(),
        WorklogError::LockTimeout { file: NAME.into() }
    );
    // …but a dry run takes no lock, so it reaches the read.
    assert_eq!(
        log(&fs).append("x", true).unwrap_err(),
        WorklogError::Read {
            file: NAME.into(),
            reason: "Permission denied".into()
        }
    );
    // Step 7: a read failure comes before the UTF-8 test.
    let fs = memfs_with(b"\xFF");
    fs.fail_path(Op::Read, file_path(), libc::EIO);
    assert_eq!(
        log(&fs).check().unwrap_err().to_string(),
        "cannot read \"2026-09-06.md\": Input/output error"
    );
    // Step 8 with dry_run: the "no checklist" preview (M-dry-new), nothing written.
    let fs = memfs_with(b"# T\n");
    let before = snapshot(&fs);
    assert_eq!(
        log(&fs).append("x", true).unwrap(),
        AppendResult {
            status: AppendStatus::NotWritten(NotWritten::DryRun),
            file: Some(NAME.into()),
            line: Some("- [x] x".into()),
            message: Msg::DryNew.text().into()
        }
    );
    assert_eq!(snapshot(&fs), before);
}

/// WL-41 (the lock's release), WL-58: the lock is released on every way out — after a duplicate,
/// after a failed read, after a failed write — so the next append is not kept waiting.
#[test]
fn wl41_wl58_lock_released_on_every_path() {
    let fs = memfs_with(b"- [x] a\n");
    let log = log(&fs);
    assert_eq!(
        log.append("a", false).unwrap().status,
        AppendStatus::NotWritten(NotWritten::Duplicate)
    );
    fs.fail_nth(Op::Read, 1, libc::EACCES);
    assert!(matches!(log.append("b", false), Err(WorklogError::Read { .. })));
    fs.fail_nth(Op::Rename, 1, libc::ENOSPC);
    assert!(matches!(log.append("b", false), Err(WorklogError::Write { .. })));
    fs.write_file(file_path(), b"\xFF");
    assert!(matches!(
        log.append("b", false),
        Err(WorklogError::NotUtf8 { .. })
    ));
    fs.write_file(file_path(), b"- [x] a\n");
    // Each append above released the lock; this one would wait ten seconds and fail otherwise.
    let guard = fs.lock(&lock_path(), Duration::ZERO).unwrap();
    drop(guard);
    assert_eq!(log.append("b", false).unwrap().status, AppendStatus::Written);
    assert_eq!(fs.count(Op::Lock), 6);
}

/// WL-42, WL-62: `empty`, `no_dir`, `no_file`, `dry_run` and the errors of steps 3–4 leave the
/// filesystem exactly as it was and never touch the lock file; a non-dry-run duplicate may leave
/// only the lock file behind.
#[test]
fn wl42_wl62_refusals_write_nothing() {
    let fs = memfs_with(b"- [x] a\n");
    fs.make_dirs("/empty");
    let before = snapshot(&fs);
    let empty_dir = Worklog::new(Config::builder().dir("/empty").build(), fs.clone());
    let outcomes = [
        log(&fs).append("", false).map(|r| r.status),
        Worklog::new(Config::default(), fs.clone())
            .append("x", false)
            .map(|r| r.status),
        empty_dir.append("x", false).map(|r| r.status),
        log_with(&fs, Some("nomatch"))
            .append("x", false)
            .map(|r| r.status),
        log(&fs).append("x", true).map(|r| r.status),
        log(&fs).append("a", true).map(|r| r.status),
        log_with(&fs, Some("[")).append("x", false).map(|r| r.status),
    ];
    assert_eq!(
        outcomes,
        [
            Ok(AppendStatus::NotWritten(NotWritten::Empty)),
            Ok(AppendStatus::NotWritten(NotWritten::NoDir)),
            Ok(AppendStatus::NotWritten(NotWritten::NoFile)),
            Ok(AppendStatus::NotWritten(NotWritten::NoFile)),
            Ok(AppendStatus::NotWritten(NotWritten::DryRun)),
            Ok(AppendStatus::NotWritten(NotWritten::Duplicate)),
            Err(WorklogError::Pattern),
        ]
    );
    fs.fail_path(Op::List, DIR, libc::EACCES);
    assert!(matches!(
        log(&fs).append("x", false),
        Err(WorklogError::List { .. })
    ));
    fs.clear_faults();
    assert_eq!(snapshot(&fs), before);
    assert_eq!(writes(&fs), 0);

    assert_eq!(
        log(&fs).append("a", false).unwrap().status,
        AppendStatus::NotWritten(NotWritten::Duplicate)
    );
    let mut after = snapshot(&fs);
    assert!(has_lock_file(&fs));
    after.retain(|e| e.path != lock_path());
    assert_eq!(after, before);
}

/// WL-1: a write changes the log file only; no file or directory is created, renamed or removed
/// besides the lock file and the call's own temporary file, which is gone afterwards.
#[test]
fn wl1_only_the_log_file_changes() {
    let fs = memfs_with(b"# T\n");
    fs.write_file("/log/other.md", b"- [x] keep\n");
    fs.set_mtime("/log/other.md", crate::support::at(0));
    fs.set_mtime(file_path(), crate::support::at(10));
    let before: Vec<PathBuf> = fs.paths();
    assert_eq!(log(&fs).append("x", false).unwrap().status, AppendStatus::Created);
    let mut after = fs.paths();
    after.retain(|p| *p != lock_path());
    assert_eq!(after, before);
    assert_eq!(fs.file("/log/other.md").unwrap(), b"- [x] keep\n");
    assert_eq!(fs.file(file_path()).unwrap(), b"# T\n\n- [x] x\n");
}

/// WL-43: the result fields per outcome; `line` never includes a terminator.
#[test]
fn wl43_result_fields() {
    let fs = memfs_with(b"- [x] a\r\n");
    let r = log(&fs).append("b", false).unwrap();
    assert_eq!(r.line.as_deref(), Some("- [x] b"));
    assert_eq!(fs.file(file_path()).unwrap(), b"- [x] a\r\n- [x] b\r\n");
    let r = log(&fs).append("b", false).unwrap();
    assert_eq!(
        (r.status, r.file.as_deref(), r.line.as_deref()),
        (
            AppendStatus::NotWritten(NotWritten::Duplicate),
            Some(NAME),
            Some("- [x] b")
        )
    );
}

/// WL-49, WL-50, WL-51: `check` decides in order, never writes or locks, and reports a name and a
/// count only.
#[test]
fn wl49_to_wl51_check() {
    let fs = memfs_with(b"---\nsecret: front\n---\n- [x] private item text\n");
    fs.lock_times_out(lock_path()); // a check never asks for the lock
    let before = snapshot(&fs);
    let r = log(&fs).check().unwrap();
    assert_eq!(r.status, CheckStatus::Ok);
    assert_eq!(r.message, "\"2026-09-06.md\" has a checklist with 1 items");
    let json = serde_json::to_string(&r).unwrap();
    assert!(!json.contains("private") && !json.contains("secret"));
    let check_no_list = memfs_with(b"just prose\n");
    let r = log(&check_no_list).check().unwrap();
    assert_eq!((r.status, r.items), (CheckStatus::NoChecklist, None));
    assert_eq!(snapshot(&fs), before);
    assert_eq!(writes(&fs) + writes(&check_no_list), 0);
}

/// WL-58, WL-59: the lock file sits directly in the log directory, is created with mode 0644, is never
/// written to and never deleted; an existing one is reused.
#[test]
fn wl58_wl59_the_lock_file() {
    let fs = memfs_with(b"- [x] a\n");
    assert!(!has_lock_file(&fs));
    assert!(log(&fs).append("b", false).unwrap().written());
    let meta = fs.symlink_metadata(&lock_path()).unwrap();
    assert_eq!((meta.kind, meta.mode, meta.len), (FileKind::File, 0o644, 0));
    assert!(log(&fs).append("c", false).unwrap().written());
    let again = fs.symlink_metadata(&lock_path()).unwrap();
    assert_eq!((again.ino, again.len), (meta.ino, 0));
    assert_eq!(
        log(&fs).check().unwrap().file.as_deref(),
        Some(NAME),
        "the lock is never a candidate"
    );
}

/// WL-61: a lock file that can be neither opened nor created fails the append with its reason.
#[test]
fn wl61_lock_cannot_be_opened() {
    let fs = memfs_with(b"- [x] a\n");
    fs.fail_path(Op::Lock, lock_path(), libc::EROFS);
    assert_eq!(
        log(&fs).append("b", false).unwrap_err().to_string(),
        "cannot write \"2026-09-06.md\": Read-only file system"
    );
    assert_eq!(fs.file(file_path()).unwrap(), b"- [x] a\n");
    assert_eq!(
        log(&fs).append("b", true).unwrap().status,
        AppendStatus::NotWritten(NotWritten::DryRun),
        "DV-14: a dry run needs no lock"
    );
}

/// WL-54 (owner, group and mode as read in step 7), WL-55 (a refused owner change fails the write):
/// the product never silently changes a log file's owner.
#[test]
fn wl54_wl55_owner_change_refused() {
    let fs = memfs_with(b"- [x] a\n");
    fs.set_owner(file_path(), 1000, 1000);
    fs.set_mode(file_path(), 0o2640);
    fs.fail_nth(Op::SetOwner, 1, libc::EPERM);
    assert_eq!(
        log(&fs).append("b", false).unwrap_err().to_string(),
        "cannot write \"2026-09-06.md\": Operation not permitted"
    );
    assert_eq!(fs.file(file_path()).unwrap(), b"- [x] a\n");
    assert!(temp_files(&fs).is_empty());
    assert!(log(&fs).append("b", false).unwrap().written());
    let meta = fs.metadata(&file_path()).unwrap();
    assert_eq!((meta.uid, meta.gid, meta.mode), (1000, 1000, 0o2640));
}

/// WL-53: the temporary file is created exclusively in the target's directory, named `.worklog-`,
/// ten characters of `[A-Za-z0-9]`, `.tmp`; a name collision draws another name.
#[test]
fn wl53_temporary_file_name() {
    let fs = memfs_with(b"- [x] a\n");
    let recorder = Recorder::new(fs.clone());
    fs.fail_nth(Op::Create, 1, libc::EEXIST); // a collision: another name is drawn
    let log = Worklog::new(Config::builder().dir(DIR).build(), recorder.clone());
    assert_eq!(log.append("b", false).unwrap().status, AppendStatus::Written);
    let created = recorder.created();
    assert_eq!(created.len(), 2);
    for path in &created {
        assert_eq!(path.parent(), Some(Path::new(DIR)));
        let name = path.file_name().unwrap().to_str().unwrap();
        let random = name
            .strip_prefix(".worklog-")
            .unwrap()
            .strip_suffix(".tmp")
            .unwrap();
        assert_eq!(random.len(), 10);
        assert!(random.chars().all(|c| c.is_ascii_alphanumeric()), "{name}");
    }
    assert_ne!(created[0], created[1]);
    assert!(temp_files(&fs).is_empty());
}

/// WL-67: the reason is the OS text without "(os error N)"; an error without a number reads
/// `Input/output error`, and an error's own display text (which may hold a path) is never used.
#[test]
fn wl67_reasons() {
    let reasons = [
        (libc::EACCES, "Permission denied"),
        (libc::ENOSPC, "No space left on device"),
        (libc::EROFS, "Read-only file system"),
        (libc::EDQUOT, "Disk quota exceeded"),
        (libc::EPERM, "Operation not permitted"),
        (libc::EISDIR, "Is a directory"),
    ];
    for (errno, text) in reasons {
        let fs = memfs_with(b"- [x] a\n");
        fs.fail_nth(Op::Write, 1, errno);
        let e = log(&fs).append("b", false).unwrap_err();
        assert_eq!(e.to_string(), format!("cannot write \"2026-09-06.md\": {text}"));
    }
    let fs = memfs_with(b"- [x] a\n");
    let log = Worklog::new(Config::builder().dir(DIR).build(), Recorder::failing_reads(fs));
    assert_eq!(
        log.check().unwrap_err().to_string(),
        "cannot read \"2026-09-06.md\": Input/output error"
    );
}

/// WL-66: nothing but the five conditions is an error — in particular not a missing checklist, a
/// duplicate or a file that vanished between listing and a successful later call.
#[test]
fn wl66_only_the_listed_errors() {
    let fs = memfs_with(b"- [x] a\n");
    fs.fail_nth(Op::Read, 1, libc::ENOENT); // the file vanished after the listing
    assert_eq!(
        log(&fs).check().unwrap_err().to_string(),
        "cannot read \"2026-09-06.md\": No such file or directory"
    );
    assert!(log(&fs).check().is_ok());
}

/// WL-68 (DV-8): a read failure names the file only.
#[test]
fn wl68_read_failure() {
    let fs = memfs_with(b"- [x] a\n");
    fs.fail_path(Op::Read, file_path(), libc::EISDIR);
    let e = log(&fs).append("b", false).unwrap_err();
    assert_eq!(
        e,
        WorklogError::Read {
            file: NAME.into(),
            reason: "Is a directory".into()
        }
    );
}

/// A filesystem that records the temporary files created through it, and can fail every read (whole,
/// chunked or bounded) with an error that carries no OS error number and holds a path in its text.
#[derive(Clone)]
struct Recorder {
    inner: MemFs,
    created: std::sync::Arc<std::sync::Mutex<Vec<PathBuf>>>,
    fail_reads: bool,
}

impl Recorder {
    fn new(inner: MemFs) -> Self {
        Recorder {
            inner,
            created: Default::default(),
            fail_reads: false,
        }
    }
    fn failing_reads(inner: MemFs) -> Self {
        Recorder {
            fail_reads: true,
            ..Recorder::new(inner)
        }
    }
    fn created(&self) -> Vec<PathBuf> {
        self.created.lock().unwrap().clone()
    }
}

impl Fs for Recorder {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        if self.fail_reads {
            return Err(io::Error::other(format!("{} is on fire", path.display())));
        }
        self.inner.read(path)
    }
    fn read_chunks(
        &self,
        path: &Path,
        n: usize,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<u64> {
        if self.fail_reads {
            return Err(io::Error::other(format!("{} is on fire", path.display())));
        }
        self.inner.read_chunks(path, n, sink)
    }
    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.inner.metadata(path)
    }
    fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.inner.symlink_metadata(path)
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        self.inner.list_dir(path)
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.inner.canonicalize(path)
    }
    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        self.inner.read_link(path)
    }
    fn create_new(&self, path: &Path, mode: u32) -> io::Result<Box<dyn FileWriter>> {
        self.created.lock().unwrap().push(path.to_path_buf());
        self.inner.create_new(path, mode)
    }
    fn open_append(&self, path: &Path, create: bool) -> io::Result<Box<dyn FileWriter>> {
        self.inner.open_append(path, create)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.inner.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.inner.remove_file(path)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.inner.sync_dir(path)
    }
    fn lock(&self, path: &Path, timeout: Duration) -> io::Result<Box<dyn LockGuard>> {
        self.inner.lock(path, timeout)
    }
}

/// WL-96: the new content reaches the temporary file as three writes — the old bytes before the
/// offset, the insertion, the old bytes after it — never assembled into a new string first.
#[test]
fn wl96_streamed_as_prefix_insertion_suffix() {
    let fs = memfs_with(b"- [x] a\n\nafter\n");
    assert!(log(&fs).append("b", false).unwrap().written());
    assert_eq!(fs.count(Op::Write), 3);
    assert_eq!(fs.file(file_path()).unwrap(), b"- [x] a\n- [x] b\n\nafter\n");
}

/// WL-72: every message of the table, produced by the service, with its exact text.
#[test]
fn wl72_every_message_text() {
    let fs = memfs_with(b"- [x] a\n");
    let log = log(&fs);
    let messages = [
        (
            log.append(" ", false).unwrap().message,
            Msg::Empty.text().to_owned(),
        ),
        (
            log.append("a", false).unwrap().message,
            Msg::Duplicate.text().to_owned(),
        ),
        (log.append("b", true).unwrap().message, Msg::Dry.text().to_owned()),
        (
            log.append("b", false).unwrap().message,
            Msg::Written.text().to_owned(),
        ),
        (
            log.check().unwrap().message,
            "\"2026-09-06.md\" has a checklist with 2 items".to_owned(),
        ),
    ];
    for (got, expected) in messages {
        assert_eq!(got, expected);
    }
    fs.write_file(file_path(), b"# T\n");
    assert_eq!(
        log.check().unwrap().message,
        "\"2026-09-06.md\" has no checklist yet; the next append will start one"
    );
    assert_eq!(log.append("c", true).unwrap().message, Msg::DryNew.text());
    assert_eq!(log.append("c", false).unwrap().message, Msg::Created.text());
    let none = Worklog::new(Config::default(), fs.clone());
    assert_eq!(none.check().unwrap().message, crate::support::M_NO_DIR);
}
