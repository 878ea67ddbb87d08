//! Embedding `seams`: replace a file durably, append ledger lines, hash a file and hold a lock, first
//! on the real filesystem and then on the in-memory one with a failure injected; then a lock file whose
//! staleness rule is the caller's.
//!
//! Run: `cargo run -p examples --example seams_durable_write`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;

use shiftwork_seams::durable::{ReplaceOptions, append_line, replace_durably};
use shiftwork_seams::hash::sha256_file;
use shiftwork_seams::lock_file::{self, Acquired, ExistingLock, LockFileOptions, Staleness};
use shiftwork_seams::{Clock, Fs, Host, MemFs, Op, OsFs, OsHost, SystemClock};

/// A lock file is stale when the process it names is gone.
struct HolderGone;

impl Staleness for HolderGone {
    fn is_stale(&self, lock: &ExistingLock<'_>) -> bool {
        let pid = std::str::from_utf8(lock.contents)
            .ok()
            .and_then(|t| t.trim().parse().ok());
        !pid.is_some_and(|pid| OsHost.is_pid_alive(pid))
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let notes = dir.path().join("notes.md");
    std::fs::write(&notes, "# Today\n")?;

    // A durable replace: the new content appears all at once, or not at all.
    let opts = ReplaceOptions::hidden(".example-", ".tmp");
    {
        let _lock = OsFs.lock(&dir.path().join(".example.lock"), Duration::from_secs(10))?;
        replace_durably(
            &OsFs,
            &notes,
            &[b"# Today\n", b"- [x] Wrote the example\n"],
            &opts,
        )?;
    }
    print!("notes.md now reads:\n{}", std::fs::read_to_string(&notes)?);

    // An append of one line, flushed.
    let ledger = dir.path().join("ledger.jsonl");
    append_line(&OsFs, &ledger, b"{\"event\":\"example\"}\n", true)?;
    let digest = sha256_file(&OsFs, &ledger, &mut |_| ())?;
    println!("ledger.jsonl: {} bytes, sha256 {}", digest.len, digest.hex());

    // The same replace on MemFs, with the rename made to fail: nothing is lost.
    let fs = MemFs::new();
    fs.write_file("/notes.md", b"# Today\n");
    fs.fail_nth(Op::Rename, 1, libc_enospc());
    let err = replace_durably(&fs, Path::new("/notes.md"), &[b"changed"], &opts).unwrap_err();
    println!(
        "in memory, the replace failed at {:?} ({}); the file still reads {:?}",
        err.step,
        shiftwork_seams::os_reason(&err.source),
        String::from_utf8(fs.file("/notes.md").unwrap())?
    );

    // A lock file left by a process that is gone is broken; one held by a live process is waited for.
    let lock = dir.path().join("notes.md.lock");
    std::fs::write(&lock, "4194304\n")?; // no such pid
    let clock = SystemClock::new();
    let options = LockFileOptions::default();
    let head = format!("{}\n", OsHost.pid());
    let deadline = clock.monotonic() + options.wait;
    match lock_file::acquire(
        &OsFs,
        &clock,
        &lock,
        head.as_bytes(),
        &options,
        deadline,
        &HolderGone,
    ) {
        Acquired::Held(held) => {
            println!("took {} after breaking a stale lock", held.path().display());
            held.release();
        }
        Acquired::TimedOut(_) => println!("the lock is held"),
        Acquired::Unavailable(e) => println!("no lock: {}", shiftwork_seams::os_reason(&e)),
    }
    Ok(())
}

/// `ENOSPC` on Linux and macOS.
fn libc_enospc() -> i32 {
    28
}
