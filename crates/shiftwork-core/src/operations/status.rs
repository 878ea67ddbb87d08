//! `shiftwork_status(checkpoint, search?)` (§8).

use crate::decide;
use crate::env::Env;
use crate::paths::CheckpointPaths;
use crate::refusal::Refusal;
use crate::results::Status;

/// `shiftwork_status(checkpoint, search?)` (SW-65): counts, never writing, never reading the ledger;
/// with `search`, the matching lines of the archive (SW-139).
pub fn status(env: &Env, checkpoint: &str, search: Option<&str>) -> Result<Status, Refusal> {
    let fs = env.fs.as_ref();
    let paths = CheckpointPaths::new(checkpoint);
    let (doc, _memory) = env.read_admitted(&paths, crate::admission::factor::STATUS)?;
    let found = search.map(|query| {
        let archive = paths.shiftwork_dir(fs).join("archive");
        crate::search::search(fs, &paths.repo_root(fs), &archive, query)
    });
    Ok(decide::plan::status(&doc.view(), found))
}
