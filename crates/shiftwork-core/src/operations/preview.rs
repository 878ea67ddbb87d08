//! Reads that change nothing and record nothing, for hosts that show a job's state to people and
//! agents without acting on it (an MCP server's resources): the brief a clock-in would give.

use std::path::Path;

use crate::decide::clock_in::{self as decide, Questions};
use crate::env::Env;
use crate::ledger;
use crate::paths::CheckpointPaths;
use crate::refusal::ShiftworkRefusal;
use crate::results::ClockIn;

/// What [`crate::clock_in`] would answer for `unit_id` (default: `plan.cursor`) now, without
/// recording a brief line, taking the checkpoint's lock or running a probe: relay questions count as
/// decision questions, as they do when probes are off. The checkpoint and its ledger are opened
/// under the same confinement as every call ([`Env::with_roots`]).
///
/// ```
/// use std::path::Path;
/// use std::sync::Arc;
/// use shiftwork_core::authoring::{create, CheckpointBuilder, Job};
/// use shiftwork_core::model::{PlannedUnit, Role, Text, UnitId};
/// use shiftwork_core::{ClockIn, Env};
/// use shiftwork_seams::{ManualClock, MemFs, MemHost};
///
/// let text = |t: &str| Text::new(t).unwrap();
/// let fs = MemFs::new();
/// fs.make_dirs("/repo/.git");
/// let env = Env::new(Arc::new(fs.clone()), Arc::new(ManualClock::new(chrono::DateTime::UNIX_EPOCH)), Arc::new(MemHost::new(7, "h")));
/// let cp = Path::new("/repo/.shiftwork/checkpoint.json");
/// let new = CheckpointBuilder::new(Job::new(text("j"), text("Goal."), text("make test")))
///     .unit(PlannedUnit::new(UnitId::new("a").unwrap(), text("A"), Role::Implementer, text("make a")))
///     .build()
///     .unwrap();
/// create(&env, cp, &new).unwrap();
/// let ClockIn::Brief(brief) = shiftwork_core::preview_brief(&env, cp, None).unwrap() else { panic!() };
/// assert_eq!(brief.unit().id.as_str(), "a");
/// assert!(fs.file("/repo/.shiftwork/checkpoint.json.log.jsonl").is_none(), "nothing was recorded");
/// ```
pub fn preview_brief(
    env: &Env,
    checkpoint: &Path,
    unit_id: Option<&str>,
) -> Result<ClockIn, ShiftworkRefusal> {
    let fs = env.fs.as_ref();
    let paths = CheckpointPaths::new(checkpoint);
    env.confine(&paths, &[])?;
    let (doc, _memory) = env.read_admitted(&paths, crate::admission::factor::CLOCK_IN)?;
    let cp = doc.view();
    if let Questions::Escalate(escalation) = decide::questions(&cp, false) {
        return Ok(ClockIn::Escalate(escalation));
    }
    let unit = match decide::select(&cp, unit_id) {
        Ok(unit) => unit,
        Err(stop) => return stop.answer(),
    };
    let with_budget = crate::budget::limits(&cp).is_some();
    let summary = ledger::scan(fs, &paths.ledger, &cp.ids(), with_budget);
    decide::admit(&cp, &unit, &summary)?;
    Ok(ClockIn::Brief(Box::new(decide::brief(&cp, &unit))))
}
