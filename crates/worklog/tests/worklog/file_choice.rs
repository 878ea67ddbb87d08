//! Choosing the log file (§3): the directory, candidates, the newest file, the pattern, no caching.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

use shiftwork_seams::{MemFs, Op};
use shiftwork_worklog::{AppendStatus, CheckStatus, WorklogError};

use crate::support::{DIR, M_NO_DIR, M_NO_FILE, NAME, at, file_path, log, log_with, memfs_with};

fn chosen(fs: &MemFs, pattern: Option<&str>) -> Option<String> {
    log_with(fs, pattern).check().unwrap().file
}

/// WL-14: a configured directory reached through a symbolic link is present; one that cannot be
/// examined is `no_dir`.
#[test]
fn wl14_directory_presence() {
    let fs = memfs_with(b"- [x] a\n");
    fs.symlink(DIR, "/via-link");
    let linked = shiftwork_worklog::Worklog::new(
        shiftwork_worklog::Config::builder().dir("/via-link").build(),
        fs.clone(),
    );
    assert_eq!(linked.check().unwrap().file.as_deref(), Some(NAME));
    fs.fail_path(Op::Stat, DIR, libc::EACCES);
    let check = log(&fs).check().unwrap();
    assert_eq!(
        (check.status, check.message.as_str()),
        (CheckStatus::NoDir, M_NO_DIR)
    );
}

/// WL-15: only the entries directly inside the directory are listed; files in subdirectories are never
/// candidates.
#[test]
fn wl15_no_descent_into_subdirectories() {
    let fs = MemFs::new();
    fs.write_file("/log/sub/deep.md", b"- [x] a\n");
    let check = log(&fs).check().unwrap();
    assert_eq!(
        (check.status, check.message.as_str()),
        (CheckStatus::NoFile, M_NO_FILE)
    );
}

/// WL-16: hidden entries (the product's own temporary and lock files, editor swap files), links to
/// directories, dangling links, link loops, directories and special files are never candidates, even
/// when newest; a link to a regular file is; so is a non-hidden editor backup.
#[test]
fn wl16_candidates() {
    let fs = memfs_with(b"- [x] a\n");
    fs.set_mtime(file_path(), at(0));
    let newer = [
        "/log/.worklog-Abc123XYZ0.tmp",
        "/log/.worklog.lock",
        "/log/.2026-09-06.md.swp",
        "/log/subdir/x.md",
    ];
    for (i, p) in newer.iter().enumerate() {
        fs.write_file(p, b"- [x] hidden\n");
        fs.set_mtime(p, at(10 + i as u64));
    }
    fs.set_mtime("/log/subdir", at(50));
    fs.symlink("subdir", "/log/to-dir.md");
    fs.symlink("nothing-here.md", "/log/dangling.md");
    fs.symlink("loop-b.md", "/log/loop-a.md");
    fs.symlink("loop-a.md", "/log/loop-b.md");
    fs.create_special("/log/fifo.md");
    assert_eq!(chosen(&fs, None).as_deref(), Some(NAME));

    fs.write_file("/elsewhere/real.md", b"- [x] a\n");
    fs.set_mtime("/elsewhere/real.md", at(100));
    fs.symlink("/elsewhere/real.md", "/log/link.md");
    assert_eq!(chosen(&fs, None).as_deref(), Some("link.md"));

    fs.write_file("/log/#notes.md#", b"autosave\n");
    fs.set_mtime("/log/#notes.md#", at(200));
    assert_eq!(chosen(&fs, None).as_deref(), Some("#notes.md#"));
    assert_eq!(chosen(&fs, Some(r"\.md$")).as_deref(), Some("link.md"));
}

/// WL-16 (1), DV-21: a name that is not valid UTF-8 is never a candidate, even when it is newest.
#[test]
fn wl16_names_that_are_not_utf8_are_skipped() {
    let fs = memfs_with(b"- [x] a\n");
    let odd = Path::new(std::ffi::OsStr::from_bytes(b"/log/\xFFnewest.md"));
    fs.write_file(odd, b"- [x] odd\n");
    fs.set_mtime(file_path(), at(0));
    fs.set_mtime(odd, at(100));
    assert_eq!(chosen(&fs, None).as_deref(), Some(NAME));
}

/// WL-17 (DV-12): the latest modification time at full precision wins (a nanosecond counts), the time
/// of the file a link resolves to; a tie goes to the greatest name byte-wise.
#[test]
fn wl17_newest_with_nanoseconds_and_byte_wise_ties() {
    let fs = MemFs::new();
    fs.write_file("/log/z.md", b"- [x] a\n");
    fs.write_file("/log/a.md", b"- [x] a\n");
    fs.set_mtime("/log/z.md", at(5));
    fs.set_mtime("/log/a.md", at(5) + Duration::from_nanos(1));
    assert_eq!(chosen(&fs, None).as_deref(), Some("a.md"));

    let fs = MemFs::new();
    for name in ["B.md", "a.md", "é.md", "z.md"] {
        fs.write_file(Path::new(DIR).join(name), b"- [x] a\n");
        fs.set_mtime(Path::new(DIR).join(name), at(7));
    }
    assert_eq!(chosen(&fs, None).as_deref(), Some("é.md"), "0xC3 sorts after 'z'");

    let fs = MemFs::new();
    fs.write_file("/log/plain.md", b"- [x] a\n");
    fs.write_file("/target/t.md", b"- [x] a\n");
    fs.symlink("/target/t.md", "/log/link.md");
    fs.set_mtime("/log/plain.md", at(10));
    fs.set_mtime("/target/t.md", at(20));
    assert_eq!(
        chosen(&fs, None).as_deref(),
        Some("link.md"),
        "the target's time counts"
    );
}

/// WL-18: no date is computed and no name parsed: the newest file wins whatever its name says.
#[test]
fn wl18_no_date_from_names() {
    let fs = MemFs::new();
    fs.write_file("/log/2026-09-07.md", b"- [x] a\n");
    fs.write_file("/log/2026-09-06.md", b"- [x] a\n");
    fs.set_mtime("/log/2026-09-07.md", at(0));
    fs.set_mtime("/log/2026-09-06.md", at(60));
    assert_eq!(chosen(&fs, None).as_deref(), Some("2026-09-06.md"));
}

/// WL-11 (DV-19): search semantics on the name only, anchors as written, case-sensitive unless `(?i)`,
/// and `$` does not match before a final line feed in a name.
#[test]
fn wl11_pattern_semantics() {
    let fs = MemFs::new();
    fs.write_file("/log/notes.md.bak", b"- [x] a\n");
    fs.set_mtime("/log/notes.md.bak", at(1));
    assert_eq!(chosen(&fs, Some("md")).as_deref(), Some("notes.md.bak"));
    assert_eq!(chosen(&fs, Some(r"\.md$")), None);
    assert_eq!(
        chosen(&fs, Some("log")),
        None,
        "matched against the name, never the path"
    );
    fs.write_file("/log/NOTES.MD", b"- [x] a\n");
    fs.set_mtime("/log/NOTES.MD", at(2));
    assert_eq!(chosen(&fs, Some(r"\.md")).as_deref(), Some("notes.md.bak"));
    assert_eq!(chosen(&fs, Some(r"(?i)\.md$")).as_deref(), Some("NOTES.MD"));
    fs.write_file("/log/lf.md\n", b"- [x] a\n");
    fs.set_mtime("/log/lf.md\n", at(3));
    assert_eq!(chosen(&fs, Some(r"\.md$")), None);
    assert_eq!(chosen(&fs, Some(r"^lf")).as_deref(), Some("lf.md\n"));
}

/// WL-12: an invalid pattern fails each call at step 3 — after the directory test, before the listing
/// — and its message never quotes the pattern.
#[test]
fn wl12_invalid_pattern_reported_per_call() {
    let fs = memfs_with(b"- [x] a\n");
    let log = log_with(&fs, Some("(secret-pattern"));
    for _ in 0..3 {
        let e = log.check().unwrap_err();
        assert_eq!(e, WorklogError::Pattern);
        assert!(!e.to_string().contains("secret-pattern"));
        assert_eq!(log.append("x", false).unwrap_err(), WorklogError::Pattern);
        assert_eq!(log.append("x", true).unwrap_err(), WorklogError::Pattern);
    }
    assert_eq!(fs.count(Op::List), 0);
    assert_eq!(fs.count(Op::Lock), 0);
}

/// WL-13: nothing is cached between calls: a newer file, a changed content, a removed file are seen
/// by the next call.
#[test]
fn wl13_no_caching_between_calls() {
    let fs = memfs_with(b"- [x] a\n");
    fs.set_mtime(file_path(), at(0));
    let log = log(&fs);
    assert_eq!(log.check().unwrap().items, Some(1));
    fs.write_file(file_path(), b"- [x] a\n- [x] b\n");
    fs.set_mtime(file_path(), at(1));
    assert_eq!(log.check().unwrap().items, Some(2));
    fs.write_file("/log/2026-09-07.md", b"# new day\n");
    fs.set_mtime("/log/2026-09-07.md", at(2));
    assert_eq!(log.check().unwrap().file.as_deref(), Some("2026-09-07.md"));
    let result = log.append("first of the day", false).unwrap();
    assert_eq!(
        (result.status, result.file.as_deref()),
        (AppendStatus::Created, Some("2026-09-07.md"))
    );
}
