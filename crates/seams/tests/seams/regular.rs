//! Issue 12, item 7 (hangs and unbounded memory): every read opens without blocking, refuses what is not
//! a regular file after opening, and a bounded read never holds more than its bound.

use std::path::Path;
use std::time::{Duration, Instant};

use shiftwork_seams::{Fs, MemFs, OsFs, is_file_too_large, is_not_regular_file, os_reason};

/// What one read of `path` gave: `Ok(len)` or the error's reason.
fn outcome(result: std::io::Result<Vec<u8>>) -> Result<usize, String> {
    result.map(|b| b.len()).map_err(|e| os_reason(&e))
}

fn check(fs: &dyn Fs, path: &Path, limit: u64, expected: Result<usize, &str>) {
    let expected = expected.map_err(str::to_owned);
    let started = Instant::now();
    assert_eq!(
        outcome(fs.read_limited(path, limit)),
        expected,
        "read_limited {path:?} {limit}"
    );
    if limit == u64::MAX {
        assert_eq!(outcome(fs.read(path)), expected, "read {path:?}");
        let mut total = 0usize;
        let chunks = fs.read_chunks(path, 7, &mut |c| {
            total += c.len();
            Ok(())
        });
        assert_eq!(
            chunks.map(|n| n as usize).map_err(|e| os_reason(&e)),
            expected,
            "read_chunks {path:?}"
        );
    }
    assert!(started.elapsed() < Duration::from_secs(5), "{path:?} blocked");
}

#[test]
fn reads_of_special_files_never_block_and_are_refused_by_class() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let file = dir.path().join("file");
    std::fs::write(&file, b"0123456789").unwrap();
    let link = dir.path().join("link-to-fifo");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    for (path, limit, expected) in [
        (file.as_path(), u64::MAX, Ok(10)),
        (file.as_path(), 10, Ok(10)),
        (file.as_path(), 9, Err("File too large")),
        (fifo.as_path(), u64::MAX, Err("Not a regular file")),
        (link.as_path(), u64::MAX, Err("Not a regular file")),
        (Path::new("/dev/zero"), u64::MAX, Err("Not a regular file")),
        (Path::new("/dev/null"), u64::MAX, Err("Not a regular file")),
        (dir.path(), u64::MAX, Err("Is a directory")),
        (
            Path::new("/nonexistent/x"),
            u64::MAX,
            Err("No such file or directory"),
        ),
    ] {
        check(&OsFs, path, limit, expected);
    }
    assert!(is_not_regular_file(&OsFs.read(&fifo).unwrap_err()));
    assert!(is_file_too_large(&OsFs.read_limited(&file, 3).unwrap_err()));
}

#[test]
fn memfs_refuses_the_same_classes() {
    let fs = MemFs::new();
    fs.write_file("/d/file", b"0123456789");
    fs.create_special("/d/fifo");
    for (path, limit, expected) in [
        ("/d/file", u64::MAX, Ok(10)),
        ("/d/file", 9, Err("File too large")),
        ("/d/fifo", u64::MAX, Err("Not a regular file")),
        ("/d", u64::MAX, Err("Is a directory")),
    ] {
        check(&fs, Path::new(path), limit, expected);
    }
}
