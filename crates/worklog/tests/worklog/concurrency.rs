//! Concurrency (§12): appends from many threads and processes through the same log directory lose
//! nothing (WL-60, WL-63, AS-43); the lock is released when its holder dies (WL-60).

use std::collections::BTreeSet;
use std::fs;
use std::io::{BufReader, Read, Write};
use std::path::Path;
use std::sync::Barrier;

use shiftwork_seams::{Fs, OsFs};
use shiftwork_worklog::NotWritten;
use shiftwork_worklog::{AppendStatus, Config, LOCK_FILE_NAME, Worklog};

use crate::support::{child_role, read_marked_line, spawn_child};

const PROCESSES: usize = 8;
const ITEMS_PER_PROCESS: usize = 50;

fn os_log(dir: &Path) -> Worklog<OsFs> {
    Worklog::new(Config::builder().dir(dir).build(), OsFs)
}

/// Asserts that `path` holds `"- [x] a\n"` followed by exactly the lines of `expected`, each once, in
/// any order, and nothing else; and that no temporary file remains beside it.
fn assert_all_present(path: &Path, expected: &BTreeSet<String>) {
    let text = fs::read_to_string(path).unwrap();
    let rest = text.strip_prefix("- [x] a\n").expect("the first line is kept");
    let lines: Vec<&str> = rest.lines().collect();
    assert!(rest.ends_with('\n'));
    let found: BTreeSet<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    assert_eq!(lines.len(), found.len(), "a line was written twice");
    assert_eq!(&found, expected);
    let temps: Vec<_> = fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(temps.is_empty(), "{temps:?}");
    let list = shiftwork_worklog::core::find_checklist(&text).unwrap();
    assert_eq!(
        list.items,
        expected.len() + 1,
        "the file is still one valid checklist"
    );
}

/// WL-63, WL-60, AS-43 (a): eight processes append fifty distinct items each to one file at the same
/// time; all 400 lines are present, once each, and every other byte is unchanged.
#[test]
fn wl63_eight_processes_append_fifty_items_each() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("2026-09-06.md");
    fs::write(&path, "- [x] a\n").unwrap();
    let mut children: Vec<_> = (0..PROCESSES)
        .map(|p| {
            spawn_child(
                "concurrency::child_appender",
                &format!("appender {p}"),
                dir.path(),
            )
        })
        .collect();
    // Start them all at once: each waits for a line on stdin after it has started.
    for child in &mut children {
        read_marked_line(&mut BufReader::new(child.stdout.as_mut().unwrap()), "ready");
    }
    for child in &mut children {
        child.stdin.as_mut().unwrap().write_all(b"go\n").unwrap();
    }
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    }
    let expected: BTreeSet<String> = (0..PROCESSES)
        .flat_map(|p| (0..ITEMS_PER_PROCESS).map(move |i| format!("- [x] process {p} item {i}")))
        .collect();
    assert_all_present(&path, &expected);
}

/// Child entry point of `wl63_eight_processes_append_fifty_items_each`.
#[test]
#[ignore = "child process of wl63_eight_processes_append_fifty_items_each"]
fn child_appender() {
    let Some((role, dir)) = child_role() else { return };
    let p = role.strip_prefix("appender ").unwrap();
    let mut out = std::io::stdout().lock();
    writeln!(out, "ready").unwrap();
    out.flush().unwrap();
    let mut go = String::new();
    std::io::stdin().read_line(&mut go).unwrap();
    let log = os_log(&dir);
    for i in 0..ITEMS_PER_PROCESS {
        let result = log.append(&format!("process {p} item {i}"), false).unwrap();
        assert_eq!(result.status, AppendStatus::Written);
    }
}

/// WL-60 (threads of one process), AS-43 (a): twenty threads append distinct items at once; none is
/// lost.
#[test]
fn wl60_as43_twenty_threads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("2026-09-06.md");
    fs::write(&path, "- [x] a\n").unwrap();
    let log = os_log(dir.path());
    let barrier = Barrier::new(20);
    std::thread::scope(|s| {
        for n in 1..=20 {
            let (log, barrier) = (&log, &barrier);
            s.spawn(move || {
                barrier.wait();
                assert_eq!(
                    log.append(&format!("item {n}"), false).unwrap().status,
                    AppendStatus::Written
                );
            });
        }
    });
    let expected = (1..=20).map(|n| format!("- [x] item {n}")).collect();
    assert_all_present(&path, &expected);
}

/// WL-63, AS-43 (b): five concurrent appends of the same sentence: exactly one writes, four answer
/// `duplicate`, and the line occurs once.
#[test]
fn wl63_as43_same_sentence_written_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("2026-09-06.md");
    fs::write(&path, "- [x] a\n").unwrap();
    let barrier = Barrier::new(5);
    let statuses: Vec<AppendStatus> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..5)
            .map(|_| {
                let (barrier, dir) = (&barrier, dir.path());
                // A log per thread, as separate server processes would each have.
                s.spawn(move || {
                    let log = os_log(dir);
                    barrier.wait();
                    log.append("same", false).unwrap().status
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(
        statuses.iter().filter(|s| **s == AppendStatus::Written).count(),
        1
    );
    assert_eq!(
        statuses
            .iter()
            .filter(|s| **s == AppendStatus::NotWritten(NotWritten::Duplicate))
            .count(),
        4
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), "- [x] a\n- [x] same\n");
}

/// WL-60: the lock is `flock` on a file description of the holder: while another process holds it an
/// append waits, and when that process is killed the operating system releases it and the append
/// completes. (No duration is asserted: the append is checked to be still waiting while the holder
/// lives, which it must be whatever the speed of the machine.)
#[test]
fn wl60_lock_released_when_the_holder_dies() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("2026-09-06.md");
    fs::write(&path, "- [x] a\n").unwrap();
    let mut holder = spawn_child("concurrency::child_lock_holder", "holder", dir.path());
    let mut stdout = BufReader::new(holder.stdout.take().unwrap());
    read_marked_line(&mut stdout, "locked");
    std::thread::scope(|s| {
        let waiting = s.spawn(|| os_log(dir.path()).append("after the crash", false));
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert!(!waiting.is_finished(), "the append did not wait for the lock");
        assert_eq!(fs::read_to_string(&path).unwrap(), "- [x] a\n");
        holder.kill().unwrap();
        holder.wait().unwrap();
        assert_eq!(waiting.join().unwrap().unwrap().status, AppendStatus::Written);
    });
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "- [x] a\n- [x] after the crash\n"
    );
    assert!(dir.path().join(LOCK_FILE_NAME).exists());
}

/// Child entry point of `wl60_lock_released_when_the_holder_dies`: takes the append lock, says so and
/// waits to be killed.
#[test]
#[ignore = "child process of wl60_lock_released_when_the_holder_dies"]
fn child_lock_holder() {
    let Some((_, dir)) = child_role() else { return };
    let _guard = OsFs
        .lock(&dir.join(LOCK_FILE_NAME), std::time::Duration::from_secs(1))
        .unwrap();
    let mut out = std::io::stdout().lock();
    writeln!(out, "locked").unwrap();
    out.flush().unwrap();
    let mut never = String::new();
    let _ = std::io::stdin().read_line(&mut never);
}

/// Waits until `ready` holds, for at most ten seconds (a bound on a hang, not a measured duration).
fn wait_until(what: &str, ready: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !ready() {
        assert!(std::time::Instant::now() < deadline, "never happened: {what}");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Issue 27 item 8 (class: choose, then lock): an append chooses the log file while it holds the
/// append lock. Another append holds the lock; ours lists the directory (only yesterday's file) and
/// asks for the lock; while it waits, the other append starts today's file, already with an item, and
/// lets go. Ours must land in today's file, the newest once it holds the lock — never in yesterday's
/// file after today's has items. Deterministic: `MemFs` counts the lock requests, so the new file is
/// created only once our append is waiting for the lock.
#[test]
fn issue27_item8_choose_then_lock_the_file_is_chosen_under_the_lock() {
    use shiftwork_seams::{MemFs, Op};

    use crate::support::{DIR, at, log};

    let fs = MemFs::new();
    let yesterday = Path::new(DIR).join("2026-09-06.md");
    let today = Path::new(DIR).join("2026-09-07.md");
    fs.write_file(&yesterday, b"# 2026-09-06\n\n- [x] yesterday\n");
    fs.set_mtime(&yesterday, at(100));
    let other = fs
        .lock(
            &Path::new(DIR).join(LOCK_FILE_NAME),
            std::time::Duration::from_secs(1),
        )
        .unwrap();
    let requested = fs.count(Op::Lock);
    std::thread::scope(|s| {
        let ours = s.spawn(|| log(&fs).append("late item", false));
        wait_until("the append asks for the lock", || fs.count(Op::Lock) > requested);
        fs.write_file(&today, b"# 2026-09-07\n\n- [x] today\n");
        fs.set_mtime(&today, at(200));
        drop(other);
        let result = ours.join().unwrap().unwrap();
        assert_eq!(result.status, AppendStatus::Written);
        assert_eq!(result.file.as_deref(), Some("2026-09-07.md"));
    });
    assert_eq!(
        fs.file(&today).unwrap(),
        b"# 2026-09-07\n\n- [x] today\n- [x] late item\n"
    );
    assert_eq!(fs.file(&yesterday).unwrap(), b"# 2026-09-06\n\n- [x] yesterday\n");
}

/// Issue 27 item 8 (class: choose, then lock), the other ways the directory can change while an
/// append waits for the lock: the chosen file is removed (the append answers `no_file` and writes
/// nothing), or replaced by a file with the sentence already in it (`duplicate`). A dry run and
/// `check` never take the lock (WL-50, WL-62): they write nothing, and the file they read is replaced
/// atomically (WL-56), so they answer from one consistent look at the directory.
#[test]
fn issue27_item8_choose_then_lock_a_changed_directory_is_seen_under_the_lock() {
    use shiftwork_seams::{MemFs, Op};

    use crate::support::{DIR, at, has_lock_file, log};

    type Change = fn(&MemFs, &Path);
    let rows: [(&str, Change, AppendStatus); 2] = [
        (
            "removed",
            |fs, path| fs.remove_file(path).unwrap(),
            AppendStatus::NotWritten(NotWritten::NoFile),
        ),
        (
            "replaced",
            |fs, path| {
                fs.write_file(path, b"- [x] late item\n");
                fs.set_mtime(path, at(300));
            },
            AppendStatus::NotWritten(NotWritten::Duplicate),
        ),
    ];
    for (case, change, expected) in rows {
        let fs = MemFs::new();
        let path = Path::new(DIR).join("2026-09-06.md");
        fs.write_file(&path, b"- [x] a\n");
        let other = fs
            .lock(
                &Path::new(DIR).join(LOCK_FILE_NAME),
                std::time::Duration::from_secs(1),
            )
            .unwrap();
        let requested = fs.count(Op::Lock);
        std::thread::scope(|s| {
            let ours = s.spawn(|| log(&fs).append("late item", false));
            wait_until("the append asks for the lock", || fs.count(Op::Lock) > requested);
            change(&fs, &path);
            drop(other);
            assert_eq!(ours.join().unwrap().unwrap().status, expected, "{case}");
        });
        let after = fs.file(&path);
        assert!(
            after.is_none() || after.as_deref() == Some(&b"- [x] late item\n"[..]),
            "{case}: nothing written: {after:?}"
        );
    }
    // Neither a dry run nor `check` asks for the lock.
    let fs = MemFs::new();
    fs.write_file(Path::new(DIR).join("2026-09-06.md"), b"- [x] a\n");
    let log = log(&fs);
    assert_eq!(
        log.append("b", true).unwrap().status,
        AppendStatus::NotWritten(NotWritten::DryRun)
    );
    assert_eq!(log.check().unwrap().items, Some(1));
    assert_eq!(fs.count(Op::Lock), 0);
    assert!(!has_lock_file(&fs));
}
