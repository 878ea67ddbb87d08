//! `shiftwork_plan(checkpoint)`.

use std::path::Path;

use crate::decide;
use crate::env::Env;
use crate::ledger;
use crate::paths::CheckpointPaths;
use crate::refusal::ShiftworkRefusal;
use crate::results::Plan;

/// `shiftwork_plan(checkpoint)`: the batch view of the checkpoint, never writing. The ledger is
/// read only when the checkpoint declares `job.budget`.
///
/// ```
/// use shiftwork_core::Answer;
/// let fs = shiftwork_seams::MemFs::new();
/// fs.write_file("/r/.shiftwork/cp.json", b"{}");
/// let env = shiftwork_core::Env::new(
///     std::sync::Arc::new(fs),
///     std::sync::Arc::new(shiftwork_seams::ManualClock::new(chrono::DateTime::UNIX_EPOCH)),
///     std::sync::Arc::new(shiftwork_seams::MemHost::new(1, "h")),
/// );
/// let refused = shiftwork_core::plan_checkpoint(&env, std::path::Path::new("/r/.shiftwork/cp.json")).unwrap_err();
/// assert_eq!(refused.to_string(), "checkpoint invalid: JSON does not match schema at 'root': 'version' is a required property");
/// ```
pub fn plan_checkpoint(env: &Env, checkpoint: &Path) -> Result<Plan, ShiftworkRefusal> {
    let fs = env.fs.as_ref();
    let paths = CheckpointPaths::new(checkpoint);
    env.confine(&paths, &[])?;
    let (doc, _memory) = env.read_admitted(&paths, crate::admission::factor::PLAN)?;
    let cp = doc.view();
    let view = decide::plan::plan_checks(&cp)?;
    let summary = crate::budget::limits(&cp)
        .is_some()
        .then(|| ledger::scan(fs, &paths.ledger, &cp.ids(), true));
    Ok(decide::plan::plan(&cp, &view, summary.as_ref()))
}
