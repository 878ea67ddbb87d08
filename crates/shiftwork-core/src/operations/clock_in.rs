//! `shiftwork_clock_in(checkpoint, unit_id?)`.

use std::path::Path;

use shiftwork_seams::ProbeStatus;

use crate::decide::clock_in::{self as decide, Questions, Relay};
use crate::env::Env;
use crate::json::Node;
use crate::ledger_index;
use crate::ledger_line::Event;
use crate::lock::{self, Acquired};
use crate::model::UnitId;
use crate::paths::CheckpointPaths;
use crate::records;
use crate::refusal::ShiftworkRefusal;
use crate::results::{ClockIn, Escalation};
use crate::view::Checkpoint;

/// `shiftwork_clock_in(checkpoint, unit_id?)`: the brief of a ready unit (`unit_id`, else the
/// cursor), recorded in the ledger; an escalation for an open question; success when every unit is
/// done.
pub fn clock_in(env: &Env, checkpoint: &Path, unit_id: Option<&UnitId>) -> Result<ClockIn, ShiftworkRefusal> {
    clock_in_arguments(env, checkpoint, unit_id.map(UnitId::as_str))
}

/// [`clock_in`] with the tool's `unit_id` argument as a client sent it: any text, the empty one
/// included (which names no unit: [`ShiftworkRefusal::UnknownUnit`], as bantamkit 0.36.2 answers).
/// For servers; a program passes a [`UnitId`] to [`clock_in`].
pub fn clock_in_arguments(
    env: &Env,
    checkpoint: &Path,
    unit_id: Option<&str>,
) -> Result<ClockIn, ShiftworkRefusal> {
    let fs = env.fs.as_ref();
    let paths = CheckpointPaths::new(checkpoint);
    env.confine(&paths, &[])?;
    let (doc, _memory) = env.read_admitted(&paths, crate::admission::factor::CLOCK_IN)?;
    let cp = doc.view();
    // Step 2: probes never run under the lock (SW-73).
    match decide::questions(&cp, env.probes) {
        Questions::None => {}
        Questions::Escalate(escalation) => return Ok(ClockIn::Escalate(escalation)),
        Questions::Probe(relays) => {
            if let Some(escalation) = run_probes(env, &paths, &cp, &relays) {
                return Ok(ClockIn::Escalate(escalation));
            }
        }
    }
    let unit = match decide::select(&cp, unit_id) {
        Ok(unit) => unit,
        Err(stop) => return stop.answer(),
    };
    // Steps 7–10 under the lock when it can be had (SW-73).
    let acquired = {
        let _wait = tracing::info_span!("shiftwork.lock_wait").entered();
        lock::acquire(env, &paths.lock_target(fs))
    };
    let held = match acquired {
        Acquired::Held(lock) => Some(lock),
        Acquired::TimedOut(_) | Acquired::Unavailable(_) => None,
    };
    // The in-flight units come from the ledger's index when it matches the ledger; the budget's
    // figures (its median needs every counted line) from a pass over the whole ledger.
    let ids = cp.ids();
    let (summary, known) = if crate::budget::limits(&cp).is_some() {
        ledger_index::scan(fs, &paths.ledger, &ids, true)
    } else {
        let known = ledger_index::read(fs, &paths.ledger, &ids);
        (known.summary(&ids), known)
    };
    decide::admit(&cp, &unit, &summary)?;
    let ts = records::timestamp(env.clock.now());
    let brief_line = records::brief_line(unit.role_str(), &ts, unit.id());
    // Issue 27 item 6: a line no ledger reader reads would leave the unit unbriefed.
    records::check_line(&brief_line)?;
    let line = records::appended(summary.last_byte, &brief_line);
    // Best-effort (SW-93): the brief is answered even when its record cannot be written.
    let appended = {
        let _write = tracing::info_span!("shiftwork.durable_write").entered();
        shiftwork_seams::durable::append_line_measured(fs, &paths.ledger, &line, true)
    };
    // Only a holder of the lock writes the index.
    if held.is_some()
        && let Ok(Some((before, after))) = appended
    {
        let appended = ledger_index::Appended {
            before,
            after,
            len: line.len() as u64,
        };
        ledger_index::record(fs, &paths.ledger, known, &appended, unit.id(), Event::Brief);
    }
    drop(held);
    Ok(ClockIn::Brief(Box::new(decide::brief(&cp, &unit))))
}

/// Runs the relays' probes in order from the repo root, all of them within one budget of
/// `env.probe_timeout`: each gets what is left of it, and a relay reached with
/// nothing left counts as timed out without running. The escalation of the first that does not
/// answer its relay, if any.
fn run_probes<'d, N: Node<'d>>(
    env: &Env,
    paths: &CheckpointPaths,
    cp: &Checkpoint<'d, N>,
    relays: &[Relay<'_>],
) -> Option<Escalation> {
    let root = paths.repo_root(env.fs.as_ref());
    let start = env.clock.monotonic();
    for relay in relays {
        let left = env
            .probe_timeout
            .saturating_sub(env.clock.monotonic().saturating_sub(start));
        let status = if left.is_zero() {
            ProbeStatus::TimedOut
        } else {
            env.host.run_probe(relay.probe, &root, left).status
        };
        match status {
            ProbeStatus::Exited(0) => continue,
            ProbeStatus::Exited(code) => return Some(decide::relay_failed(cp, relay, Some(code))),
            _ => return Some(decide::relay_failed(cp, relay, None)),
        }
    }
    None
}
