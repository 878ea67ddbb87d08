//! Issue 12: hostile input as normal input. One test per class of input that broke, named after the
//! class, each failing on the code before the fix.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use shiftwork_core::Env;
use shiftwork_core::json;

use super::support::*;

/// A repository on the real filesystem holding `.git/` and `.shiftwork/cp.json` with EX.
fn os_repo() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    std::fs::create_dir_all(dir.path().join(".shiftwork")).unwrap();
    let cp = dir.path().join(".shiftwork/cp.json");
    std::fs::write(&cp, json::to_checkpoint_text(&ex())).unwrap();
    (dir, cp)
}

fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

/// Item 7: a checkpoint path that leads to a FIFO, a device or a file past 256 MB is refused at once —
/// never blocking, never reading the device, never keeping the checkpoint's lock.
#[test]
fn checkpoint_paths_that_are_not_regular_files_are_refused_without_blocking_issue12_item7() {
    let (dir, _) = os_repo();
    let env = Env::os();
    let fifo = dir.path().join(".shiftwork/fifo.json");
    mkfifo(&fifo);
    let big = dir.path().join(".shiftwork/big.json");
    let file = std::fs::File::create(&big).unwrap();
    file.set_len(shiftwork_core::checkpoint::MAX_CHECKPOINT_BYTES + 1)
        .unwrap();
    drop(file);
    let shown = |p: &Path| p.to_string_lossy().into_owned();
    let cases: [(PathBuf, String); 4] = [
        (fifo.clone(), format!("Not a regular file: '{}'", shown(&fifo))),
        (
            PathBuf::from("/dev/zero"),
            String::from("Not a regular file: '/dev/zero'"),
        ),
        (
            PathBuf::from("/dev/stdin"),
            String::from("Not a regular file: '/dev/stdin'"),
        ),
        (
            big.clone(),
            format!("[Errno 27] File too large: '{}'", shown(&big)),
        ),
    ];
    for (path, tail) in cases {
        let cp = shown(&path);
        let expected = compact(&shiftwork_core::answer::refusal(&format!(
            "checkpoint unreadable: {tail}"
        )));
        let start = Instant::now();
        assert_eq!(
            compact(&shiftwork_core::status(&env, &cp, None)),
            expected,
            "{cp}"
        );
        assert_eq!(
            compact(&shiftwork_core::plan_checkpoint(&env, &cp)),
            expected,
            "{cp}"
        );
        assert_eq!(
            compact(&shiftwork_core::clock_in(&env, &cp, None)),
            expected,
            "{cp}"
        );
        let mut args = out_args("U3", "done");
        args.checkpoint = cp.clone();
        // Twice: the first refusal released the lock, so the second is not a lock timeout.
        for _ in 0..2 {
            assert_eq!(compact(&shiftwork_core::clock_out(&env, &args)), expected, "{cp}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(4),
            "{cp} took {:?}",
            start.elapsed()
        );
    }
    assert!(!dir.path().join(".shiftwork/fifo.json.lock").exists());
    assert!(!dir.path().join(".shiftwork/fifo.json.log.jsonl").exists());
}

fn search_of(env: &Env, checkpoint: &str, query: &str) -> String {
    compact(
        shiftwork_core::status(env, checkpoint, Some(query))
            .get("search")
            .unwrap(),
    )
}

/// Item 1: the status search reads only a real archive directory inside the repository — an archive,
/// or a shiftwork directory, that is a link out of it finds nothing — and reads a bounded amount: a
/// 3 GB file or a FIFO in the archive answers at once.
#[test]
fn status_search_over_an_archive_that_leads_out_of_the_repository_or_past_its_bound_issue12_item1() {
    let none = |q: &str| format!(r#"{{"query": "{q}", "matches": [], "truncated": false}}"#);
    // `archive` itself a link to a directory of secrets.
    let fx = Fx::new(&ex());
    fx.fs.write_file("/etc/shadow", b"root:$6$secret\n");
    fx.fs.symlink("/etc", "/.shiftwork/archive");
    assert_eq!(search_of(&fx.env, CP, "root:"), none("root:"));
    // A link on the way: the shiftwork directory itself links out of the repository.
    let fx = Fx::empty();
    fx.fs.create_dir_all("/repo/.git");
    fx.fs.write_file(
        "/home/u/.shiftwork/cp.json",
        json::to_checkpoint_text(&ex()).as_bytes(),
    );
    fx.fs
        .write_file("/home/u/.shiftwork/archive/creds.txt", b"token=hunter2\n");
    fx.fs.symlink("/home/u/.shiftwork", "/repo/.shiftwork");
    assert_eq!(
        search_of(&fx.env, "/repo/.shiftwork/cp.json", "token"),
        none("token")
    );
    // A linked directory below a real archive is not followed either (SW-139).
    let fx = Fx::new(&ex());
    fx.fs.write_file("/.shiftwork/archive/ok.txt", b"token here\n");
    fx.fs.write_file("/outside/deep/x.txt", b"token there\n");
    fx.fs.symlink("/outside", "/.shiftwork/archive/sub");
    assert_eq!(
        search_of(&fx.env, CP, "token"),
        r#"{"query": "token", "matches": [{"file": "ok.txt", "line": 1, "text": "token here"}], "truncated": false}"#
    );

    // On the real filesystem: a FIFO is skipped without blocking, a 3 GB file is read only up to the
    // search's bound, and the answer says the search stopped.
    let (dir, cp) = os_repo();
    let archive = dir.path().join(".shiftwork/archive");
    std::fs::create_dir_all(&archive).unwrap();
    mkfifo(&archive.join("a-fifo"));
    let mut big = std::fs::File::create(archive.join("b-big.log")).unwrap();
    std::io::Write::write_all(&mut big, b"needle at the start\n").unwrap();
    big.set_len(3 * 1024 * 1024 * 1024).unwrap();
    drop(big);
    std::fs::write(archive.join("c-after.log"), b"needle after the bound\n").unwrap();
    let start = Instant::now();
    let found = search_of(&Env::os(), &cp.to_string_lossy(), "needle");
    assert_eq!(
        found,
        r#"{"query": "needle", "matches": [{"file": "b-big.log", "line": 1, "text": "needle at the start"}], "truncated": true}"#
    );
    assert!(start.elapsed() < Duration::from_secs(20), "{:?}", start.elapsed());
}

/// Item 1: an archive of more entries than one search lists stops at the bound and says so.
#[test]
fn status_search_over_an_archive_of_too_many_entries_stops_at_its_bound_issue12_item1() {
    let fx = Fx::new(&ex());
    for i in 0..=shiftwork_core::search::MAX_ENTRIES {
        fx.fs
            .write_file(format!("/.shiftwork/archive/d{}/f{i}", i % 100), b"x\n");
    }
    assert!(search_of(&fx.env, CP, "needle").ends_with(r#""truncated": true}"#));
}
