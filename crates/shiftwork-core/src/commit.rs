//! The clock-out's write sequence (§13.2, W1–W6): log-then-commit with an intent record in the lock
//! file, so every clock-out either fully happens or leaves checkpoint and ledger as they were.

use std::io;
use std::path::{Path, PathBuf};

use shiftwork_seams::FileWriter;
use shiftwork_seams::durable::{Alphabet, ReplaceOptions, TempName, prepare_replace};

use crate::env::Env;
use crate::json::{self, Json};
use crate::lock::CheckpointLock;
use crate::paths::{CheckpointPaths, os_error_tail};

/// What the write sequence needs.
pub(crate) struct Commit<'a> {
    /// The checkpoint's paths as given.
    pub paths: &'a CheckpointPaths,
    /// The lock target `T` (the file replaced).
    pub target: &'a Path,
    /// The new checkpoint bytes.
    pub document: &'a str,
    /// The accounting line, without its LF.
    pub line: &'a str,
    /// The ledger's last byte before this call (SW-16).
    pub last_byte: Option<u8>,
    /// For the uncommitted marker: role, ts, unit.
    pub marker: (&'a str, &'a str, &'a str),
}

/// The temp-file naming of W2: `<T's name>.<pid>.<8 lowercase hex>.tmp`.
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

fn absolute(env: &Env, path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_path_buf();
    }
    env.fs
        .canonicalize(Path::new("."))
        .map(|cwd| cwd.join(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// Runs W1–W6 under `lock` and answers `Ok(())` or the refusal sentence.
pub(crate) fn run(env: &Env, lock: &mut CheckpointLock<'_>, c: &Commit<'_>) -> Result<(), String> {
    let fs = env.fs.as_ref();
    let ledger_unwritable = |e: &io::Error| {
        format!(
            "accounting log unwritable, checkpoint untouched: {}",
            os_error_tail(e, &c.paths.ledger_shown)
        )
    };
    let checkpoint_unwritable = |e: &io::Error| {
        format!(
            "checkpoint unwritable, last log line uncommitted: {}",
            os_error_tail(e, &c.paths.shown)
        )
    };
    let ledger_abs = absolute(env, &c.paths.ledger);
    let ledger_abs_text = ledger_abs.to_string_lossy().into_owned();
    // W1: open the ledger, creating it (after an intent line) when missing.
    let (mut ledger, created) = match fs.open_append(&c.paths.ledger, false) {
        Ok(w) => (w, false),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let intent = json::to_ledger_text(&Json::Object(json::object([(
                "ledger_created",
                Json::str(ledger_abs_text.as_str()),
            )])));
            lock.add_intent(&intent).map_err(|e| ledger_unwritable(&e))?;
            match fs.create_new(&c.paths.ledger, 0o644) {
                Ok(w) => (w, true),
                Err(e) => return Err(ledger_unwritable(&e)),
            }
        }
        Err(e) => return Err(ledger_unwritable(&e)),
    };
    let remove_created = |ledger: Box<dyn FileWriter>| {
        drop(ledger);
        if created {
            let _ = fs.remove_file(&c.paths.ledger);
        }
    };
    let pre = match ledger.metadata() {
        Ok(m) => m.len,
        Err(e) => {
            remove_created(ledger);
            return Err(ledger_unwritable(&e));
        }
    };
    let mut bytes = Vec::with_capacity(c.line.len() + 2);
    if pre > 0 && c.last_byte.is_some_and(|b| b != b'\n') {
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(c.line.as_bytes());
    bytes.push(b'\n');
    // W2: the temp file, written and flushed.
    let options = temp_options(c.target, env.host.pid());
    let prepared = match prepare_replace(fs, c.target, None, &[c.document.as_bytes()], &options) {
        Ok(p) => p,
        Err(e) => {
            remove_created(ledger);
            return Err(checkpoint_unwritable(&e.source));
        }
    };
    // W3: the commit intent.
    let intent = json::to_ledger_text(&Json::Object(json::object([(
        "commit",
        Json::Object(json::object([
            (
                "temp",
                Json::String(prepared.temp_name().to_string_lossy().into_owned()),
            ),
            ("ledger", Json::str(ledger_abs_text.as_str())),
            ("pre", crate::budget::int(i128::from(pre))),
            ("len", crate::budget::int(bytes.len() as i128)),
            (
                "sha256",
                Json::String(shiftwork_seams::hash::hex(&shiftwork_seams::hash::sha256(&bytes))),
            ),
        ])),
    )])));
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
            let (role, ts, unit) = c.marker;
            let marker = format!("{}\n", crate::ledger::uncommitted_line(role, ts, unit));
            let _ = shiftwork_seams::durable::append_line(fs, &c.paths.ledger, marker.as_bytes(), false);
        }
        return Err(checkpoint_unwritable(&e.source));
    }
    Ok(())
}

/// SW-105: without the lock, go only as far as 0.36.2's sentence requires, and never commit.
pub(crate) fn without_lock(env: &Env, c: &Commit<'_>, lock_error: &io::Error) -> String {
    let fs = env.fs.as_ref();
    let (ledger, created) = match fs.open_append(&c.paths.ledger, false) {
        Ok(w) => (w, false),
        Err(e) if e.kind() == io::ErrorKind::NotFound => match fs.create_new(&c.paths.ledger, 0o644) {
            Ok(w) => (w, true),
            Err(e) => {
                return format!(
                    "accounting log unwritable, checkpoint untouched: {}",
                    os_error_tail(&e, &c.paths.ledger_shown)
                );
            }
        },
        Err(e) => {
            return format!(
                "accounting log unwritable, checkpoint untouched: {}",
                os_error_tail(&e, &c.paths.ledger_shown)
            );
        }
    };
    drop(ledger);
    let options = temp_options(c.target, env.host.pid());
    let dir = shiftwork_seams::durable::parent_dir(c.target);
    let result = match shiftwork_seams::durable::create_temp(fs, &dir, &options.temp) {
        Ok((temp, file)) => {
            drop(file);
            let _ = fs.remove_file(&temp);
            lock_error
        }
        Err(e) => {
            if created {
                let _ = fs.remove_file(&c.paths.ledger);
            }
            return format!(
                "checkpoint unwritable, last log line uncommitted: {}",
                os_error_tail(&e, &c.paths.shown)
            );
        }
    };
    if created {
        let _ = fs.remove_file(&c.paths.ledger);
    }
    format!(
        "checkpoint unwritable, last log line uncommitted: {}",
        os_error_tail(result, &c.paths.shown)
    )
}
