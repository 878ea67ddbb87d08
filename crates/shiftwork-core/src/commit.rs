//! The clock-out's write sequence: log-then-commit with an intent record in the lock
//! file, so every clock-out either fully happens or leaves checkpoint and ledger as they were.
//!
//! Its flushes, each needed and none covered by another (the guide's checkpoint-format page has the
//! table and the timings): the temporary checkpoint (W2: recovery renames it into place once the line
//! is on disk), the lock file after the commit record (W3: the line may reach the disk as soon as it
//! is written, and without the record it could be neither recognised nor withdrawn), the ledger after
//! its line (W4: the commit point, on disk before the rename may be), and the directory after the
//! rename (W6: the answer is durable, and the rename cannot be lost while the lock's removal
//! survives); on the first clock-out also the lock file after the `ledger_created` record (W1). The
//! lock's identity lines, its removal and the ledger's index are not flushed.

use std::io;
use std::path::Path;

use shiftwork_seams::FileWriter;
use shiftwork_seams::durable::{Alphabet, ReplaceOptions, TempName, prepare_replace};

use crate::decide::clock_out::Commit;
use crate::env::Env;
use crate::ledger_index::Appended;
use crate::lock::CheckpointLock;
use crate::paths::CheckpointPaths;
use crate::records;
use crate::refusal::{FileError, ShiftworkRefusal, Written};

/// The temp-file naming of the new checkpoint: `<T's name>.<pid>.<8 lowercase hex>.tmp`.
pub(crate) fn temp_options(target: &Path, pid: u32) -> ReplaceOptions {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    ReplaceOptions {
        temp: TempName {
            prefix: format!("{name}.{pid}."),
            suffix: String::from(".tmp"),
            random_len: 8,
            alphabet: Alphabet::LowerHex,
        },
        keep_owner: true,
        mode_if_new: 0o644,
    }
}

/// The refusal of a ledger that cannot be written: the error at the ledger path.
fn ledger_unwritable(paths: &CheckpointPaths, e: &io::Error) -> ShiftworkRefusal {
    ShiftworkRefusal::LedgerUnwritable {
        path: paths.ledger_shown.clone(),
        error: FileError::of(e),
    }
}

/// The refusal of a checkpoint that cannot be replaced: the error at the checkpoint path as given,
/// whatever file failed.
fn checkpoint_unwritable(paths: &CheckpointPaths, e: &io::Error) -> ShiftworkRefusal {
    ShiftworkRefusal::CheckpointUnwritable {
        path: paths.shown.clone(),
        error: FileError::of(e),
    }
}

/// Runs the write steps under `lock` — open or create the ledger (its creation recorded first), write
/// and flush the temporary checkpoint, record the commit's intent, append the ledger line, rename the
/// checkpoint into place, flush the directory — for the decided `commit` of checkpoint `paths` (lock target `target`),
/// `last_byte` being the ledger's last byte as the gates read it. Once committed, the ledger's metadata
/// around the append (`None` when it could not be read after it), for the ledger's index.
pub(crate) fn run(
    env: &Env,
    lock: &mut CheckpointLock<'_>,
    paths: &CheckpointPaths,
    target: &Path,
    commit: &Commit,
    last_byte: Option<u8>,
) -> Result<Option<Appended>, ShiftworkRefusal> {
    let fs = env.fs.as_ref();
    let ledger_unwritable = |e: &io::Error| ledger_unwritable(paths, e);
    let checkpoint_unwritable = |e: &io::Error| checkpoint_unwritable(paths, e);
    let ledger_abs = paths.absolute(fs, &paths.ledger);
    let ledger_abs_text = ledger_abs.to_string_lossy().into_owned();
    let options = temp_options(target, env.host.pid());
    check_lock_records(lock, &options, &ledger_abs_text, commit.line.len())?;
    // W1: open the ledger, creating it (after an intent line) when missing.
    let (mut ledger, created) = match fs.open_append(&paths.ledger, false) {
        Ok(w) => (w, false),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            lock.add_intent(&records::ledger_created_intent(&ledger_abs_text))
                .map_err(|e| ledger_unwritable(&e))?;
            match fs.create_new(&paths.ledger, 0o644) {
                Ok(w) => (w, true),
                Err(e) => return Err(ledger_unwritable(&e)),
            }
        }
        Err(e) => return Err(ledger_unwritable(&e)),
    };
    let remove_created = |ledger: Box<dyn FileWriter>| {
        drop(ledger);
        if created {
            let _ = fs.remove_file(&paths.ledger);
        }
    };
    let before = match ledger.metadata() {
        Ok(m) => m,
        Err(e) => {
            remove_created(ledger);
            return Err(ledger_unwritable(&e));
        }
    };
    let pre = before.len;
    let bytes = records::appended(last_byte.filter(|_| pre > 0), &commit.line);
    // W2: the temp file, written and flushed.
    let prepared = match prepare_replace(fs, target, None, &[commit.document.as_bytes()], &options) {
        Ok(p) => p,
        Err(e) => {
            remove_created(ledger);
            return Err(checkpoint_unwritable(&e.source));
        }
    };
    // W3: the commit intent.
    let intent = records::commit_intent(
        &prepared.temp_name().to_string_lossy(),
        &ledger_abs_text,
        pre,
        &bytes,
    );
    if let Err(e) = lock.add_intent(&intent) {
        prepared.abort(fs);
        remove_created(ledger);
        return Err(checkpoint_unwritable(&e));
    }
    // W4: the accounting line, in one write, flushed.
    if let Err(e) = ledger.write_all(&bytes).and_then(|()| ledger.sync()) {
        let _ = ledger.set_len(pre).and_then(|()| ledger.sync());
        prepared.abort(fs);
        remove_created(ledger);
        return Err(ledger_unwritable(&e));
    }
    let after = ledger.metadata().ok();
    // W5: the rename (W6, the directory flush, is part of the commit and its failure is ignored).
    if let Err(e) = prepared.commit(fs) {
        let appended_len = pre + bytes.len() as u64;
        let still_ours = ledger.metadata().is_ok_and(|m| m.len == appended_len);
        if still_ours {
            let truncated = ledger.set_len(pre).and_then(|()| ledger.sync());
            if truncated.is_ok() {
                remove_created(ledger);
            } else {
                drop(ledger);
            }
        } else {
            drop(ledger);
            let marker = format!("{}\n", commit.marker);
            let _ = shiftwork_seams::durable::append_line(fs, &paths.ledger, marker.as_bytes(), false);
        }
        return Err(checkpoint_unwritable(&e.source));
    }
    Ok(after.map(|after| Appended {
        before,
        after,
        len: bytes.len() as u64,
    }))
}

/// Refuses, before the first write, intent records that would take the lock file past what a reader
/// of the lock reads (its first [`shiftwork_seams::lock_file::MAX_LOCK_READ`] bytes): recovery would
/// not see them. The bound counts both records at their longest: the ledger's
/// creation and the commit (a temp name of its fixed length, the longest offsets).
fn check_lock_records(
    lock: &CheckpointLock<'_>,
    options: &ReplaceOptions,
    ledger: &str,
    line_len: usize,
) -> Result<(), ShiftworkRefusal> {
    let temp = "0".repeat(options.temp.prefix.len() + options.temp.random_len + options.temp.suffix.len());
    let appended = vec![b'\n'; line_len + 2];
    let created = records::ledger_created_intent(ledger).len() + 1;
    let committed = records::commit_intent(&temp, ledger, u64::MAX, &appended).len() + 1;
    let total = lock.written() + created + committed;
    let limit = shiftwork_seams::lock_file::MAX_LOCK_READ;
    if total <= limit {
        return Ok(());
    }
    Err(ShiftworkRefusal::TooLargeToWrite {
        what: Written::LockRecords,
        size: Some(total as u64),
        limit: limit as u64,
    })
}

/// Without the lock, go only as far as 0.36.2's sentence requires, and never commit.
pub(crate) fn without_lock(
    env: &Env,
    paths: &CheckpointPaths,
    target: &Path,
    lock_error: &io::Error,
) -> ShiftworkRefusal {
    let fs = env.fs.as_ref();
    let ledger_unwritable = |e: &io::Error| ledger_unwritable(paths, e);
    let checkpoint_unwritable = |e: &io::Error| checkpoint_unwritable(paths, e);
    let (ledger, created) = match fs.open_append(&paths.ledger, false) {
        Ok(w) => (w, false),
        Err(e) if e.kind() == io::ErrorKind::NotFound => match fs.create_new(&paths.ledger, 0o644) {
            Ok(w) => (w, true),
            Err(e) => return ledger_unwritable(&e),
        },
        Err(e) => return ledger_unwritable(&e),
    };
    drop(ledger);
    let options = temp_options(target, env.host.pid());
    let dir = shiftwork_seams::durable::parent_dir(target);
    let refusal = match shiftwork_seams::durable::create_temp(fs, &dir, &options.temp) {
        Ok((temp, file)) => {
            drop(file);
            let _ = fs.remove_file(&temp);
            checkpoint_unwritable(lock_error)
        }
        Err(e) => checkpoint_unwritable(&e),
    };
    if created {
        let _ = fs.remove_file(&paths.ledger);
    }
    refusal
}
