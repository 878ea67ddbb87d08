//! Crash recovery: replays the intent lines of a dead holder's lock file, rolling a commit
//! forward or back, removing a ledger it created empty and its temp files. Idempotent.

use std::path::{Path, PathBuf};

use shiftwork_seams::Fs;

use crate::json::{self, Json};

/// Recovers from the lock file `contents` left by a dead holder of target `target`.
pub fn recover(fs: &dyn Fs, target: &Path, contents: &str) {
    let mut lines = contents.split('\n');
    let holder = lines.next().unwrap_or("").trim().to_owned();
    let is_ours = lines.next().is_some_and(|l| l.starts_with("host "));
    let dir = shiftwork_seams::durable::parent_dir(target);
    if is_ours {
        let intents: Vec<Json> = lines.filter_map(|l| json::parse(l).ok()).collect();
        let mut committed = false;
        for intent in &intents {
            if let Some(commit) = intent.get("commit") {
                committed |= replay_commit(fs, target, &dir, commit);
            }
        }
        // The ledger index's temp file, if the holder died writing the index after its commit.
        for intent in &intents {
            let ledger = intent
                .get("commit")
                .and_then(|c| c.get("ledger"))
                .or_else(|| intent.get("ledger_created"));
            if let Some(ledger) = ledger.and_then(Json::as_str) {
                crate::ledger_index::remove_leftover(fs, Path::new(ledger));
            }
        }
        if !committed {
            for intent in &intents {
                if let Some(ledger) = intent.get("ledger_created").and_then(Json::as_str)
                    && fs.metadata(Path::new(ledger)).is_ok_and(|m| m.len == 0)
                {
                    let _ = fs.remove_file(Path::new(ledger));
                }
            }
        }
    }
    remove_temps(fs, target, &dir, &holder);
}

/// Rolls one commit intent forward or back; true when it rolled forward.
fn replay_commit(fs: &dyn Fs, target: &Path, dir: &Path, commit: &Json) -> bool {
    let (Some(temp), Some(ledger), Some(pre), Some(len), Some(sha)) = (
        commit.get("temp").and_then(Json::as_str),
        commit.get("ledger").and_then(Json::as_str),
        commit
            .get("pre")
            .and_then(Json::as_number)
            .and_then(|n| n.as_whole()),
        commit
            .get("len")
            .and_then(Json::as_number)
            .and_then(|n| n.as_whole()),
        commit.get("sha256").and_then(Json::as_str),
    ) else {
        return false;
    };
    let (Ok(pre), Ok(len)) = (u64::try_from(pre), u64::try_from(len)) else {
        return false;
    };
    let ledger = PathBuf::from(ledger);
    let temp_path = dir.join(temp);
    let Some(end) = pre.checked_add(len) else {
        return false;
    };
    // The ledger is streamed: only the bytes of the line are kept, never the whole ledger.
    let mut line = Vec::new();
    let mut size = 0u64;
    let read = fs.read_chunks(&ledger, shiftwork_seams::hash::CHUNK_SIZE, &mut |chunk| {
        let from = size;
        size += chunk.len() as u64;
        let lo = pre.clamp(from, size);
        let hi = end.clamp(from, size);
        if lo < hi {
            // Both offsets lie inside this chunk, so they fit in `usize`.
            line.extend_from_slice(&chunk[(lo - from) as usize..(hi - from) as usize]);
        }
        Ok(())
    });
    if read.is_err() {
        size = 0;
        line.clear();
    }
    let line_present =
        size >= end && shiftwork_seams::hash::hex(&shiftwork_seams::hash::sha256(&line)) == sha;
    if line_present {
        if fs.symlink_metadata(&temp_path).is_ok() && fs.rename(&temp_path, target).is_ok() {
            let _ = fs.sync_dir(dir);
        }
        return true;
    }
    if size > pre
        && size <= end
        && let Ok(mut file) = fs.open_append(&ledger, false)
    {
        let _ = file.set_len(pre).and_then(|()| file.sync());
    }
    let _ = fs.remove_file(&temp_path);
    false
}

/// Removes `<T's name>.<holder>.<8 hex>.tmp` files beside the target, the dead holder's temporary checkpoints.
fn remove_temps(fs: &dyn Fs, target: &Path, dir: &Path, holder: &str) {
    if holder.is_empty() || !holder.bytes().all(|b| b.is_ascii_digit()) {
        return;
    }
    let Some(name) = target.file_name().and_then(|n| n.to_str()) else {
        return;
    };
    let prefix = format!("{name}.{holder}.");
    let Ok(entries) = fs.list_dir(dir) else {
        return;
    };
    for entry in entries {
        let Some(entry_name) = entry.name.to_str() else {
            continue;
        };
        let Some(rest) = entry_name
            .strip_prefix(&prefix)
            .and_then(|r| r.strip_suffix(".tmp"))
        else {
            continue;
        };
        if rest.len() == 8 && rest.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            let _ = fs.remove_file(&dir.join(entry_name));
        }
    }
}
