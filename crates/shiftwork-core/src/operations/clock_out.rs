//! `shiftwork_clock_out(…)`: under the lock, gather, let the gates judge, commit.

use std::collections::HashMap;

use shiftwork_seams::FileKind;

use crate::admission::Reservation;
use crate::checkpoint;
use crate::commit;
use crate::decide::clock_out::{self as decide, ClockOutArguments, Gathered};
use crate::env::Env;
use crate::ledger::LedgerSummary;
use crate::ledger_index;
use crate::ledger_line::Event;
use crate::lock::{self, Acquired, LockHolder};
use crate::paths::CheckpointPaths;
use crate::refusal::ShiftworkRefusal;
use crate::request::ClockOut;
use crate::results::ClockedOut;
use crate::roots::Confined;

/// `shiftwork_clock_out` of a typed request: its arguments judged as the tool's are
/// ([`clock_out_arguments`]).
pub fn clock_out(env: &Env, request: &ClockOut) -> Result<ClockedOut, ShiftworkRefusal> {
    clock_out_arguments(env, &request.to_arguments())
}

/// `shiftwork_clock_out` of the arguments as a client sent them, judged in bantamkit's order. Every
/// refusal writes nothing; a success has appended the accounting line and replaced the checkpoint
/// durably.
pub fn clock_out_arguments(env: &Env, args: &ClockOutArguments) -> Result<ClockedOut, ShiftworkRefusal> {
    let fs = env.fs.as_ref();
    let paths = CheckpointPaths::new(&args.checkpoint);
    if env.roots.is_some() {
        let root = paths.repo_root(fs);
        let briefs: Vec<(std::path::PathBuf, &str)> = decide::brief_paths(args)
            .into_iter()
            .map(|b| (root.join(b), b))
            .collect();
        let checks: Vec<(Confined, &std::path::Path, &str)> = briefs
            .iter()
            .map(|(path, shown)| (Confined::Brief, path.as_path(), *shown))
            .collect();
        env.confine(&paths, &checks)?;
    }
    let target = paths.lock_target(fs);
    // Memory admission, before the lock is waited for (issue 27 item 7).
    let size = fs.metadata(&paths.given).map_or(0, |m| m.len);
    let bytes = if size > checkpoint::MAX_CHECKPOINT_BYTES {
        0
    } else {
        size.saturating_mul(crate::admission::factor::CLOCK_OUT_READ)
    };
    let mut memory = env.memory.reserve(env.clock.as_ref(), bytes, size)?;
    // Gate 0.
    let mut acquired = {
        let _wait = tracing::info_span!("shiftwork.lock_wait").entered();
        lock::acquire(env, &target)
    };
    if let Acquired::TimedOut(holder) = acquired {
        return Err(locked(holder));
    }
    let result = judge_and_commit(env, args, &paths, &target, &mut acquired, &mut memory);
    if let Acquired::Held(lock) = acquired {
        lock.release();
    }
    result
}

fn locked(holder: LockHolder) -> ShiftworkRefusal {
    ShiftworkRefusal::Locked {
        path: holder.path,
        pid: holder.pid,
        host: holder.host,
        since: holder.since,
    }
}

fn judge_and_commit(
    env: &Env,
    args: &ClockOutArguments,
    paths: &CheckpointPaths,
    target: &std::path::Path,
    acquired: &mut Acquired<'_>,
    memory: &mut Reservation<'_>,
) -> Result<ClockedOut, ShiftworkRefusal> {
    let fs = env.fs.as_ref();
    // Gate 1: read in place, then built to be changed — once the memory it will take is reserved:
    // the text and its tape, the document built (which can be many times its text) and its new text.
    let placed = {
        let _read = tracing::info_span!("shiftwork.checkpoint_read").entered();
        checkpoint::read_in_place(fs, paths)?
    };
    let size_hint = placed.tape().text().len();
    let held = (size_hint + placed.tape().extra_bytes()) as u64;
    let built = placed.tape().root().built_bytes() as u64;
    let rendered = (2 * size_hint as u64 + 65_536).min(checkpoint::MAX_CHECKPOINT_BYTES + 65_536);
    let needed = held + built + built / 4 + rendered;
    memory.ensure(env.clock.as_ref(), needed, size_hint as u64)?;
    let doc = placed.build();
    drop(placed);
    let cp = doc.view();
    // The ledger is read for gate 3 only when gate 2 can pass: through its index, which names the
    // ledger's state it describes, or whole when the index does not match the ledger.
    let (summary, known) = match cp.unit(&args.unit_id) {
        Some(unit) => {
            let known = ledger_index::read(fs, &paths.ledger, &cp.ids());
            let mut briefed = vec![false; unit.index() + 1];
            briefed[unit.index()] = known.briefed(&args.unit_id);
            let summary = LedgerSummary {
                briefed,
                last_byte: known.last_byte,
                ..LedgerSummary::default()
            };
            (summary, Some(known))
        }
        None => (LedgerSummary::default(), None),
    };
    let gathered = Gathered {
        log: paths.ledger_shown.clone(),
        brief_files: brief_files(env, paths, args),
        size_hint: size_hint + size_hint / 4 + 4096,
    };
    let last_byte = summary.last_byte;
    let decided = decide::clock_out(doc.into_json(), &summary, &gathered, args, env.clock.now())?;
    match acquired {
        Acquired::Held(lock) => {
            let _write = tracing::info_span!("shiftwork.durable_write").entered();
            let appended = commit::run(env, lock, paths, target, &decided, last_byte)?;
            // Still under the lock: the index of the ledger as this commit left it.
            if let (Some(appended), Some(known)) = (appended, known) {
                ledger_index::record(fs, &paths.ledger, known, &appended, &args.unit_id, Event::Absent);
            }
        }
        Acquired::Unavailable(e) => return Err(commit::without_lock(env, paths, target, e)),
        Acquired::TimedOut(holder) => return Err(locked(holder.clone())),
    }
    Ok(decided.answer)
}

/// For the follow-ups check: whether each follow-up brief that may be looked at is a regular file below the repo root.
fn brief_files(env: &Env, paths: &CheckpointPaths, args: &ClockOutArguments) -> HashMap<String, bool> {
    let briefs = decide::brief_paths(args);
    if briefs.is_empty() {
        return HashMap::new();
    }
    let fs = env.fs.as_ref();
    let root = paths.repo_root(fs);
    briefs
        .into_iter()
        .map(|brief| {
            let is_file = fs
                .metadata(&root.join(brief))
                .is_ok_and(|m| m.kind == FileKind::File);
            (brief.to_owned(), is_file)
        })
        .collect()
}
