//! `MemFs`'s model of a POSIX filesystem, case by case.

use std::io::ErrorKind;
use std::path::Path;
use std::time::{Duration, SystemTime};

use shiftwork_seams::{FileKind, Fs, MemFs, Op};

fn p(s: &str) -> &Path {
    Path::new(s)
}

#[test]
fn symlinks_resolve_relative_absolute_dangling_and_loops() {
    let fs = MemFs::new();
    fs.write_file("/w/src/lib.rs", b"x");
    fs.symlink("src/lib.rs", "/w/rel");
    fs.symlink("/w/src", "/w/abs_dir");
    fs.symlink("missing", "/w/dangling");
    fs.symlink("/w/l2", "/w/l1");
    fs.symlink("/w/l1", "/w/l2");
    fs.symlink("../../etc/passwd", "/w/src/out");
    assert_eq!(fs.canonicalize(p("/w/rel")).unwrap(), p("/w/src/lib.rs"));
    assert_eq!(
        fs.canonicalize(p("/w/abs_dir/lib.rs")).unwrap(),
        p("/w/src/lib.rs")
    );
    assert_eq!(
        fs.canonicalize(p("/w/abs_dir/../rel")).unwrap(),
        p("/w/src/lib.rs")
    );
    assert_eq!(
        fs.canonicalize(p("/w/dangling")).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert_eq!(
        fs.canonicalize(p("/w/l1")).unwrap_err().raw_os_error(),
        Some(libc::ELOOP)
    );
    assert_eq!(
        fs.canonicalize(p("/w/src/out")).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert_eq!(
        fs.symlink_metadata(p("/w/dangling")).unwrap().kind,
        FileKind::Symlink
    );
    assert_eq!(fs.metadata(p("/w/rel")).unwrap().kind, FileKind::File);
    assert_eq!(fs.read_link(p("/w/rel")).unwrap(), p("src/lib.rs"));
    assert_eq!(
        fs.read_link(p("/w/src/lib.rs")).unwrap_err().raw_os_error(),
        Some(libc::EINVAL)
    );
    assert_eq!(
        fs.metadata(p("/w/src/lib.rs/x")).unwrap_err().raw_os_error(),
        Some(libc::ENOTDIR)
    );
}

#[test]
fn list_dir_reports_each_entry_following_links() {
    let fs = MemFs::new();
    fs.write_file("/d/a.md", b"aa");
    fs.make_dirs("/d/sub/deeper");
    fs.symlink("a.md", "/d/link.md");
    fs.symlink("nowhere", "/d/dangling");
    fs.create_special("/d/fifo");
    let mut entries: Vec<(String, Result<FileKind, ErrorKind>)> = fs
        .list_dir(p("/d"))
        .unwrap()
        .into_iter()
        .map(|e| {
            (
                e.name.into_string().unwrap(),
                e.metadata.map(|m| m.kind).map_err(|e| e.kind()),
            )
        })
        .collect();
    entries.sort();
    assert_eq!(
        entries,
        [
            ("a.md".to_owned(), Ok(FileKind::File)),
            ("dangling".to_owned(), Err(ErrorKind::NotFound)),
            ("fifo".to_owned(), Ok(FileKind::Other)),
            ("link.md".to_owned(), Ok(FileKind::File)),
            ("sub".to_owned(), Ok(FileKind::Dir)),
        ]
    );
    assert_eq!(
        fs.list_dir(p("/d/a.md")).unwrap_err().raw_os_error(),
        Some(libc::ENOTDIR)
    );
    assert_eq!(fs.list_dir(p("/nope")).unwrap_err().kind(), ErrorKind::NotFound);
}

#[test]
fn create_new_is_exclusive_even_over_a_dangling_link() {
    let fs = MemFs::new();
    fs.write_file("/d/f", b"1");
    fs.symlink("ghost", "/d/dangling");
    assert_eq!(
        fs.create_new(p("/d/f"), 0o600).err().unwrap().kind(),
        ErrorKind::AlreadyExists
    );
    assert_eq!(
        fs.create_new(p("/d/dangling"), 0o600).err().unwrap().kind(),
        ErrorKind::AlreadyExists
    );
    assert_eq!(
        fs.create_new(p("/missing/f"), 0o600).err().unwrap().kind(),
        ErrorKind::NotFound
    );
    let mut w = fs.create_new(p("/d/g"), 0o640).unwrap();
    w.write_all(b"hello").unwrap();
    assert_eq!(fs.metadata(p("/d/g")).unwrap().mode, 0o640);
    assert_eq!(fs.file("/d/g").unwrap(), b"hello");
}

#[test]
fn a_writer_follows_its_inode_across_a_rename_and_after_removal() {
    let fs = MemFs::new();
    fs.make_dirs("/d");
    let mut w = fs.create_new(p("/d/tmp"), 0o600).unwrap();
    w.write_all(b"ab").unwrap();
    let ino = w.metadata().unwrap().ino;
    fs.rename(p("/d/tmp"), p("/d/final")).unwrap();
    w.write_all(b"cd").unwrap();
    assert_eq!(fs.file("/d/final").unwrap(), b"abcd");
    assert_eq!(fs.metadata(p("/d/final")).unwrap().ino, ino);
    assert!(fs.file("/d/tmp").is_none());
    w.set_len(1).unwrap();
    assert_eq!(fs.file("/d/final").unwrap(), b"a");
}

#[test]
fn rename_replaces_a_link_not_its_target_and_remove_removes_the_link() {
    let fs = MemFs::new();
    fs.write_file("/d/real", b"real");
    fs.symlink("real", "/d/link");
    fs.write_file("/d/new", b"new");
    fs.rename(p("/d/new"), p("/d/link")).unwrap();
    assert_eq!(fs.file("/d/real").unwrap(), b"real");
    assert_eq!(fs.symlink_metadata(p("/d/link")).unwrap().kind, FileKind::File);
    fs.symlink("real", "/d/link2");
    fs.remove_file(p("/d/link2")).unwrap();
    assert_eq!(fs.file("/d/real").unwrap(), b"real");
    assert_eq!(
        fs.remove_file(p("/d")).unwrap_err().raw_os_error(),
        Some(libc::EISDIR)
    );
}

#[test]
fn open_append_creates_only_when_asked_and_counts_appends() {
    let fs = MemFs::new();
    fs.make_dirs("/d");
    assert_eq!(
        fs.open_append(p("/d/l"), false).err().unwrap().kind(),
        ErrorKind::NotFound
    );
    let mut w = fs.open_append(p("/d/l"), true).unwrap();
    w.write_all(b"1\n").unwrap();
    let mut w2 = fs.open_append(p("/d/l"), false).unwrap();
    w2.write_all(b"2\n").unwrap();
    assert_eq!(fs.file("/d/l").unwrap(), b"1\n2\n");
    assert_eq!((fs.count(Op::Append), fs.count(Op::Write)), (2, 0));
    assert_eq!(
        fs.open_append(p("/d"), true).err().unwrap().raw_os_error(),
        Some(libc::EISDIR)
    );
}

#[test]
fn fail_path_fails_every_call_on_that_path_only() {
    let fs = MemFs::new();
    fs.write_file("/d/secret", b"s");
    fs.write_file("/d/open", b"o");
    fs.fail_path(Op::Read, "/d/secret", libc::EACCES);
    for _ in 0..2 {
        assert_eq!(
            fs.read(p("/d/secret")).unwrap_err().kind(),
            ErrorKind::PermissionDenied
        );
    }
    assert_eq!(fs.read(p("/d/open")).unwrap(), b"o");
    fs.clear_faults();
    assert_eq!(fs.read(p("/d/secret")).unwrap(), b"s");
}

#[test]
fn fail_nth_counts_from_the_moment_it_is_armed() {
    let fs = MemFs::new();
    fs.write_file("/f", b"x");
    fs.read(p("/f")).unwrap();
    fs.fail_nth(Op::Read, 2, libc::EIO);
    assert!(fs.read(p("/f")).is_ok());
    assert_eq!(fs.read(p("/f")).unwrap_err().raw_os_error(), Some(libc::EIO));
    assert!(fs.read(p("/f")).is_ok());
}

#[test]
fn a_crash_stops_every_later_operation_until_restart() {
    let fs = MemFs::new();
    fs.make_dirs("/d");
    fs.crash_at(Op::Create, 1);
    assert!(fs.create_new(p("/d/a"), 0o600).is_err());
    assert!(fs.crashed());
    assert!(fs.metadata(p("/d")).is_err());
    assert!(fs.file("/d/a").is_none(), "the crashed create did nothing");
    fs.restart();
    assert!(fs.metadata(p("/d")).is_ok());
}

#[test]
fn reads_can_be_held_until_released() {
    let fs = MemFs::new();
    fs.write_file("/big", &[1u8; 10]);
    let hold = fs.hold_reads("/big");
    let reader = {
        let fs = fs.clone();
        std::thread::spawn(move || {
            let mut n = 0;
            fs.read_chunks(p("/big"), 4, &mut |c| {
                n += c.len();
                Ok(())
            })
            .map(|len| (len, n))
        })
    };
    assert!(hold.wait_entered(Duration::from_secs(10)));
    fs.write_file("/big", &[2u8; 3]); // the file changes while the reader waits
    hold.release();
    assert_eq!(reader.join().unwrap().unwrap(), (3, 3));
}

#[test]
fn metadata_reports_mode_owner_and_settable_mtime() {
    let fs = MemFs::new();
    fs.write_file("/f", b"abc");
    let t = SystemTime::UNIX_EPOCH + Duration::new(1_790_000_000, 123_456_789);
    fs.set_mtime("/f", t);
    fs.set_mode("/f", 0o4755);
    fs.set_owner("/f", 7, 8);
    let m = fs.metadata(p("/f")).unwrap();
    assert_eq!(
        (m.kind, m.len, m.modified, m.mode, m.uid, m.gid),
        (FileKind::File, 3, t, 0o4755, 7, 8)
    );
    let before = m.modified;
    let mut w = fs.open_append(p("/f"), false).unwrap();
    w.write_all(b"d").unwrap();
    assert_ne!(
        fs.metadata(p("/f")).unwrap().modified,
        before,
        "a write moves the mtime"
    );
}

/// Issue 36 item 4: the status-change time moves with every change of contents or attributes — a
/// write, a truncation, a mode, an owner, a modification time put back, a rename — on `MemFs` as on
/// the real filesystem, so a summary kept beside a file can tell that the file changed since.
#[test]
fn the_status_change_time_moves_with_every_change_issue36_item4() {
    let fs = MemFs::new();
    fs.write_file("/f", b"abc");
    let changed = |fs: &dyn Fs, path: &Path| fs.metadata(path).unwrap().changed;
    let mut last = changed(&fs, p("/f"));
    let mut step = |what: &str, fs: &dyn Fs, path: &Path| {
        let now = changed(fs, path);
        assert!(now > last, "{what} did not move the status-change time");
        last = now;
    };
    let mut w = fs.open_append(p("/f"), false).unwrap();
    w.write_all(b"d").unwrap();
    step("a write", &fs, p("/f"));
    w.set_len(2).unwrap();
    step("a truncation", &fs, p("/f"));
    w.set_mode(0o600).unwrap();
    step("a mode", &fs, p("/f"));
    let modified = fs.metadata(p("/f")).unwrap().modified;
    fs.set_mtime("/f", modified);
    step("a modification time put back", &fs, p("/f"));
    fs.write_file("/f", b"ab");
    step("a rewrite of the same length", &fs, p("/f"));
    fs.rename(p("/f"), p("/g")).unwrap();
    step("a rename", &fs, p("/g"));
    w.sync().unwrap();
    assert_eq!(changed(&fs, p("/g")), last, "a flush changes nothing");

    // The real filesystem reports the kernel's ctime.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::write(&path, b"abc").unwrap();
    let before = shiftwork_seams::OsFs.metadata(&path).unwrap();
    let ctime = std::os::unix::fs::MetadataExt::ctime(&std::fs::metadata(&path).unwrap());
    let since_epoch = before.changed.duration_since(SystemTime::UNIX_EPOCH).unwrap();
    assert_eq!(since_epoch.as_secs() as i64, ctime);
    let file = std::fs::File::options().write(true).open(&path).unwrap();
    file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .unwrap();
    assert!(shiftwork_seams::OsFs.metadata(&path).unwrap().changed >= before.changed);
}

#[test]
fn relative_paths_are_relative_to_the_root() {
    let fs = MemFs::new();
    fs.write_file("notes/a.md", b"a");
    assert_eq!(fs.read(p("/notes/a.md")).unwrap(), b"a");
    assert_eq!(fs.canonicalize(p("notes/./a.md")).unwrap(), p("/notes/a.md"));
}
