//! `Fs::lock`: excludes threads and other processes, times out, and is released when its holder dies.
//!
//! The multi-process cases re-run this test binary as the child process (`lock_child_process`), which
//! does nothing unless `SEAMS_LOCK_CHILD` is set.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use shiftwork_seams::{Fs, MemFs, OsFs};

fn child(mode: &str, path: &Path) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "lock::lock_child_process",
        "--exact",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("SEAMS_LOCK_CHILD", mode)
    .env("SEAMS_LOCK_PATH", path)
    .stdout(Stdio::piped());
    cmd
}

/// The child side: `try` tries for 300 ms and prints `got` or `timeout`; `hold` takes the lock, prints
/// `held` and sleeps until killed.
#[test]
fn lock_child_process() {
    let Ok(mode) = std::env::var("SEAMS_LOCK_CHILD") else {
        return;
    };
    let path = PathBuf::from(std::env::var("SEAMS_LOCK_PATH").unwrap());
    match mode.as_str() {
        "try" => match OsFs.lock(&path, Duration::from_millis(300)) {
            Ok(_guard) => println!("@@got"),
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => println!("@@timeout"),
            Err(e) => println!("@@error {e}"),
        },
        "hold" => {
            let _guard = OsFs.lock(&path, Duration::from_secs(10)).unwrap();
            // Its own line: the parent reads exactly one line, then closes the pipe.
            println!("\n@@held");
            std::thread::sleep(Duration::from_secs(60));
        }
        other => panic!("unknown child mode {other}"),
    }
}

fn child_says(out: &[u8]) -> String {
    String::from_utf8_lossy(out)
        .lines()
        .find_map(|l| l.split_once("@@").map(|(_, said)| said.trim().to_owned()))
        .unwrap_or_default()
}

#[test]
fn os_lock_excludes_another_process_until_released() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".test.lock");
    let guard = OsFs.lock(&path, Duration::from_secs(1)).unwrap();
    let out = child("try", &path).output().unwrap();
    assert_eq!(child_says(&out.stdout), "timeout");
    drop(guard);
    let out = child("try", &path).output().unwrap();
    assert_eq!(child_says(&out.stdout), "got");
}

#[test]
fn os_lock_is_released_by_the_os_when_the_holder_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".test.lock");
    let mut holder = child("hold", &path).spawn().unwrap();
    let mut reader = BufReader::new(holder.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("@@held") {
        line.clear();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "the holder ended without taking the lock"
        );
    }
    let err = match OsFs.lock(&path, Duration::from_millis(100)) {
        Ok(_) => panic!("the lock was not held by the child"),
        Err(e) => e,
    };
    assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
    holder.kill().unwrap(); // SIGKILL: no destructor runs in the child
    holder.wait().unwrap();
    assert!(OsFs.lock(&path, Duration::from_secs(5)).is_ok());
}

#[test]
fn os_lock_file_is_created_with_0644_and_never_written() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".test.lock");
    drop(OsFs.lock(&path, Duration::from_secs(1)).unwrap());
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(meta.len(), 0);
    assert_eq!(meta.permissions().mode() & 0o777, 0o644 & !current_umask());
    // An existing lock file is reused (opened read-only) even without write permission.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    drop(OsFs.lock(&path, Duration::from_secs(1)).unwrap());
}

fn current_umask() -> u32 {
    let dir = tempfile::tempdir().unwrap();
    let probe = dir.path().join("p");
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .unwrap();
    use std::os::unix::fs::PermissionsExt;
    0o666 & !std::fs::metadata(&probe).unwrap().permissions().mode()
}

fn threads_exclude_each_other(fs: Arc<dyn Fs>, path: PathBuf) {
    let inside = Arc::new(AtomicUsize::new(0));
    let max = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let (fs, path, inside, max) = (
                Arc::clone(&fs),
                path.clone(),
                Arc::clone(&inside),
                Arc::clone(&max),
            );
            std::thread::spawn(move || {
                for _ in 0..20 {
                    let _g = fs.lock(&path, Duration::from_secs(30)).unwrap();
                    let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    max.fetch_max(now, Ordering::SeqCst);
                    std::thread::yield_now();
                    inside.fetch_sub(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(max.load(Ordering::SeqCst), 1);
}

#[test]
fn os_lock_excludes_threads_of_one_process() {
    let dir = tempfile::tempdir().unwrap();
    threads_exclude_each_other(Arc::new(OsFs), dir.path().join(".l"));
}

#[test]
fn mem_lock_excludes_threads_and_times_out() {
    let fs = MemFs::new();
    fs.make_dirs("/d");
    threads_exclude_each_other(Arc::new(fs.clone()), PathBuf::from("/d/.l"));
    let held = fs.lock(Path::new("/d/.l"), Duration::from_secs(1)).unwrap();
    let err = fs
        .lock(Path::new("/d/.l"), Duration::from_millis(20))
        .err()
        .unwrap();
    assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
    drop(held);
    assert!(fs.lock(Path::new("/d/.l"), Duration::from_millis(20)).is_ok());
    // A forced timeout, for testing a caller's timeout path without waiting.
    fs.lock_times_out("/d/.l");
    let err = fs
        .lock(Path::new("/d/.l"), Duration::from_secs(10))
        .err()
        .unwrap();
    assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
}

#[test]
fn mem_lock_held_by_a_crashed_process_is_released_on_restart() {
    let fs = MemFs::new();
    fs.make_dirs("/d");
    let guard = fs.lock(Path::new("/d/.l"), Duration::from_secs(1)).unwrap();
    std::mem::forget(guard); // the holder "dies" without unlocking
    fs.restart();
    assert!(fs.lock(Path::new("/d/.l"), Duration::from_millis(20)).is_ok());
}

/// Issue 12 item 7 (a special file in a lock's place): a FIFO where the lock file should be is refused
/// at once instead of blocking the open, and a dangling symbolic link in its place never creates the
/// link's target somewhere else.
#[test]
fn os_lock_refuses_a_fifo_and_never_creates_through_a_dangling_link() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join(".fifo.lock");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let started = std::time::Instant::now();
    let err = OsFs
        .lock(&fifo, Duration::from_secs(1))
        .err()
        .expect("a FIFO is no lock file");
    assert!(shiftwork_seams::is_not_regular_file(&err), "{err}");
    assert!(started.elapsed() < Duration::from_secs(1));

    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let target = elsewhere.join("created-by-the-lock");
    let link = dir.path().join(".dangling.lock");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert!(OsFs.lock(&link, Duration::from_secs(1)).is_err());
    assert!(!target.exists(), "the lock created its link's target");
    // A link to an existing regular file is still followed, as before.
    std::fs::write(&target, b"").unwrap();
    assert!(OsFs.lock(&link, Duration::from_secs(1)).is_ok());
}
