//! `Fs::create_dir_all` on both filesystems, by one table (issue 28 item 5; threat classes: symlinks
//! on every component, a file or a link in the way, fault injection at every directory it creates).

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use shiftwork_seams::{FileKind, Fs, MemFs, Op, OsFs};

/// The same small tree on either filesystem, under `root`:
///
/// ```text
/// dir/            a directory, mode 0o755
/// file            a regular file
/// link_dir  -> dir
/// link_file -> file
/// dangling  -> nowhere/deeper      (nothing there)
/// loop1 -> loop2, loop2 -> loop1
/// ```
fn tree_on_disk() -> (tempfile::TempDir, PathBuf) {
    use std::os::unix::fs::{PermissionsExt, symlink};
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::create_dir(root.join("dir")).unwrap();
    std::fs::set_permissions(root.join("dir"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(root.join("file"), b"x").unwrap();
    symlink("dir", root.join("link_dir")).unwrap();
    symlink("file", root.join("link_file")).unwrap();
    symlink("nowhere/deeper", root.join("dangling")).unwrap();
    symlink("loop2", root.join("loop1")).unwrap();
    symlink("loop1", root.join("loop2")).unwrap();
    (tmp, root)
}

fn tree_in_memory() -> (MemFs, PathBuf) {
    let fs = MemFs::new();
    fs.make_dirs("/root/dir");
    fs.set_mode("/root/dir", 0o755);
    fs.write_file("/root/file", b"x");
    fs.symlink("dir", "/root/link_dir");
    fs.symlink("file", "/root/link_file");
    fs.symlink("nowhere/deeper", "/root/dangling");
    fs.symlink("loop2", "/root/loop1");
    fs.symlink("loop1", "/root/loop2");
    (fs, PathBuf::from("/root"))
}

/// What a call is expected to give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Ok,
    Kind(ErrorKind),
    /// An error known by its number only (`ELOOP` has no stable `ErrorKind`).
    Errno(i32),
}

/// One row: the path to create (relative to the tree's root), what the call gives, the directories
/// that must exist afterwards (mode 0o700 when new) and the paths that must not exist.
type Row = (
    &'static str,
    Expect,
    &'static [&'static str],
    &'static [&'static str],
);

#[rustfmt::skip]
const ROWS: &[Row] = &[
    // New directories, one or several levels, with the given mode.
    ("new", Expect::Ok, &["new"], &[]),
    ("new/a/b", Expect::Ok, &["new", "new/a", "new/a/b"], &[]),
    // Existing directories are left as they are (mode included); below them, new ones are made.
    ("dir", Expect::Ok, &[], &[]),
    ("dir/sub/deeper", Expect::Ok, &["dir/sub", "dir/sub/deeper"], &[]),
    // A link among the existing directories is followed, as any lookup follows it.
    ("link_dir/sub", Expect::Ok, &["dir/sub"], &[]),
    // `..` among the existing directories is looked up as usual.
    ("dir/../dir/x", Expect::Ok, &["dir/x"], &[]),
    // Something else in the way: refused, nothing created or replaced.
    ("file", Expect::Kind(ErrorKind::AlreadyExists), &[], &[]),
    ("file/sub", Expect::Kind(ErrorKind::NotADirectory), &[], &[]),
    ("link_file", Expect::Kind(ErrorKind::AlreadyExists), &[], &[]),
    ("link_file/sub", Expect::Kind(ErrorKind::NotADirectory), &[], &[]),
    // A link to nothing in the place of a directory to create is never followed to create its target.
    ("dangling", Expect::Errno(libc::ELOOP), &[], &["nowhere"]),
    ("dangling/x", Expect::Errno(libc::ELOOP), &[], &["nowhere"]),
    ("loop1/x", Expect::Errno(libc::ELOOP), &[], &[]),
    // `..` below the first directory to create is refused before anything is created.
    ("fresh/../x", Expect::Kind(ErrorKind::InvalidInput), &[], &["fresh", "x"]),
];

/// Runs every row on a fresh tree of `fs`, built by `tree`.
fn check<F: Fs>(name: &str, tree: impl Fn() -> (F, PathBuf, Box<dyn std::any::Any>)) {
    for &(path, expect, made, absent) in ROWS {
        let (fs, root, _keep) = tree();
        let got = match fs.create_dir_all(&root.join(path), 0o700) {
            Ok(()) => Expect::Ok,
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => Expect::Errno(libc::ELOOP),
            Err(e) => Expect::Kind(e.kind()),
        };
        assert_eq!(got, expect, "{name}: create_dir_all({path:?})");
        for dir in made {
            let meta = fs.symlink_metadata(&root.join(dir)).unwrap();
            assert_eq!(
                (meta.kind, meta.mode),
                (FileKind::Dir, 0o700),
                "{name}: {path:?} made {dir:?}"
            );
        }
        for missing in absent {
            assert!(
                fs.symlink_metadata(&root.join(missing)).is_err(),
                "{name}: {path:?} made {missing:?}"
            );
        }
        assert_eq!(
            fs.metadata(&root.join("dir")).unwrap().mode,
            0o755,
            "{name}: {path:?}"
        );
        assert_eq!(
            fs.symlink_metadata(&root.join("file")).unwrap().kind,
            FileKind::File
        );
    }
}

#[test]
fn os_fs_creates_directories_and_never_follows_a_link_into_new_ones() {
    check("OsFs", || {
        let (tmp, root) = tree_on_disk();
        (OsFs, root, Box::new(tmp))
    });
}

#[test]
fn mem_fs_creates_directories_like_os_fs() {
    check("MemFs", || {
        let (fs, root) = tree_in_memory();
        (fs, root, Box::new(()))
    });
}

/// A relative path is created from the working directory on `OsFs` and from `/` on `MemFs`; `/` and
/// the empty path already exist.
#[test]
fn relative_root_and_empty_paths() {
    let fs = MemFs::new();
    Fs::create_dir_all(&fs, Path::new("rel/a"), 0o700).unwrap();
    assert_eq!(fs.metadata(Path::new("/rel/a")).unwrap().kind, FileKind::Dir);
    for path in ["/", ""] {
        Fs::create_dir_all(&fs, Path::new(path), 0o700).unwrap();
        OsFs.create_dir_all(Path::new(path), 0o700).unwrap();
    }
}

/// Fault injection: the lookup counts as `Op::Stat` and each new directory as `Op::CreateDir`; a
/// failure at the nth directory keeps the ones before it, a crash stops there, and a retry after a
/// restart completes the rest.
#[test]
fn mem_fs_fails_or_crashes_at_each_directory_it_creates() {
    let fs = MemFs::new();
    Fs::create_dir_all(&fs, Path::new("/a/b/c"), 0o700).unwrap();
    assert_eq!((fs.count(Op::Stat), fs.count(Op::CreateDir)), (1, 3));
    for n in 1..=3u64 {
        let fs = MemFs::new();
        fs.fail_nth(Op::CreateDir, n, libc::ENOSPC);
        let err = Fs::create_dir_all(&fs, Path::new("/a/b/c"), 0o700).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENOSPC), "directory {n}");
        let made: Vec<bool> = ["/a", "/a/b", "/a/b/c"]
            .iter()
            .map(|p| fs.metadata(Path::new(p)).is_ok())
            .collect();
        let expected: Vec<bool> = (1..=3).map(|k| k < n).collect();
        assert_eq!(made, expected, "failure at directory {n}");
        Fs::create_dir_all(&fs, Path::new("/a/b/c"), 0o700).unwrap();

        let fs = MemFs::new();
        fs.crash_at(Op::CreateDir, n);
        assert!(Fs::create_dir_all(&fs, Path::new("/a/b/c"), 0o700).is_err());
        assert!(fs.crashed());
        assert!(
            Fs::create_dir_all(&fs, Path::new("/a"), 0o700).is_err(),
            "crashed: every call fails"
        );
        fs.restart();
        Fs::create_dir_all(&fs, Path::new("/a/b/c"), 0o700).unwrap();
    }
    let fs = MemFs::new();
    fs.fail_path(Op::CreateDir, "/a/b", libc::EACCES);
    let err = Fs::create_dir_all(&fs, Path::new("/a/b/c"), 0o700).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PermissionDenied);
    assert!(fs.metadata(Path::new("/a")).is_ok());
    fs.crash_at(Op::Stat, 1);
    assert!(
        Fs::create_dir_all(&fs, Path::new("/a"), 0o700).is_err(),
        "the lookup can fail too"
    );
}

/// `Fs::create_dir` is its own operation now, so a test can fail it without failing file creation.
#[test]
fn create_dir_counts_as_create_dir_not_create() {
    let fs = MemFs::new();
    fs.fail_nth(Op::Create, 1, libc::EIO);
    fs.create_dir(Path::new("/d"), 0o700).unwrap();
    assert_eq!((fs.count(Op::Create), fs.count(Op::CreateDir)), (0, 1));
    assert!(Op::ALL.contains(&Op::CreateDir) && Op::MUTATING.contains(&Op::CreateDir));
}

/// Through every forwarding impl and a trait object, the real method is reached (not the default's
/// `Unsupported`).
#[test]
fn forwarding_impls_reach_the_implementation() {
    let fs = MemFs::new();
    let as_dyn: &dyn Fs = &fs;
    as_dyn.create_dir_all(Path::new("/one"), 0o700).unwrap();
    std::sync::Arc::new(fs.clone())
        .create_dir_all(Path::new("/two"), 0o700)
        .unwrap();
    Box::new(fs.clone())
        .create_dir_all(Path::new("/three"), 0o700)
        .unwrap();
    Fs::create_dir_all(&&fs, Path::new("/four"), 0o700).unwrap();
    for p in ["/one", "/two", "/three", "/four"] {
        assert_eq!(fs.metadata(Path::new(p)).unwrap().kind, FileKind::Dir);
    }
}
