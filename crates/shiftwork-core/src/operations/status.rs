//! `shiftwork_status(checkpoint, search?)`.

use std::path::Path;

use crate::decide;
use crate::env::Env;
use crate::paths::CheckpointPaths;
use crate::refusal::ShiftworkRefusal;
use crate::results::Status;
use crate::roots::Confined;

/// `shiftwork_status(checkpoint, search?)`: counts, never writing, never reading the ledger;
/// with `search`, the matching lines of the archive.
pub fn status(env: &Env, checkpoint: &Path, search: Option<&str>) -> Result<Status, ShiftworkRefusal> {
    let fs = env.fs.as_ref();
    let paths = CheckpointPaths::new(checkpoint);
    let archive = search.map(|_| paths.shiftwork_dir(fs).join("archive"));
    match &archive {
        Some(archive) => env.confine(&paths, &[(Confined::Archive, archive, &paths.shown)])?,
        None => env.confine(&paths, &[])?,
    }
    let (doc, _memory) = env.read_admitted(&paths, crate::admission::factor::STATUS)?;
    let found = search
        .zip(archive)
        .map(|(query, archive)| crate::search::search(fs, &paths.repo_root(fs), &archive, query));
    Ok(decide::plan::status(&doc.view(), found))
}
