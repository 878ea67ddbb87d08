//! Starting a job: a new checkpoint built from typed parts ([`CheckpointBuilder`]), judged by the
//! checkpoint's schema and by the planner before anything is written — a duplicate id, an unknown
//! dependency or a cycle is refused with the planner's own sentence — and [`create`]d durably, never
//! over an existing file.
//!
//! ```
//! use std::path::Path;
//! use std::sync::Arc;
//! use shiftwork_core::authoring::{create, CheckpointBuilder, Job};
//! use shiftwork_core::model::{PlannedUnit, Role, Text, UnitId};
//! use shiftwork_core::{Env, ShiftworkRefusal};
//! use shiftwork_seams::{ManualClock, MemFs, MemHost};
//!
//! let text = |t: &str| Text::new(t).unwrap();
//! let id = |t: &str| UnitId::new(t).unwrap();
//! let job = Job::new(text("parser-job"), text("Ship the new parser"), text("cargo test passes"))
//!     .with_constraints(vec![text("no new dependencies")]);
//! let lexer = PlannedUnit::new(id("lexer"), text("Write the lexer"), Role::Implementer, text("cargo test -p lexer"));
//! let parser = PlannedUnit::new(id("parser"), text("Write the parser"), Role::Implementer, text("cargo test -p parser"))
//!     .depends_on([id("lexer")]);
//! let new = CheckpointBuilder::new(job.clone()).unit(lexer.clone()).unit(parser).build().unwrap();
//! assert_eq!(new.plan().batches, [vec!["lexer"], vec!["parser"]]);
//!
//! let fs = MemFs::new();
//! let env = Env::new(Arc::new(fs.clone()), Arc::new(ManualClock::new(chrono::DateTime::UNIX_EPOCH)), Arc::new(MemHost::new(7, "h")));
//! let path = Path::new("/repo/.shiftwork/checkpoint.json");
//! create(&env, path, &new).unwrap();
//! assert_eq!(shiftwork_core::plan_checkpoint(&env, path).unwrap().ready(), ["lexer"]);
//! // Never over an existing checkpoint.
//! assert!(matches!(create(&env, path, &new), Err(ShiftworkRefusal::CheckpointExists { .. })));
//!
//! // The planner's refusals, before anything is written.
//! let cycle = PlannedUnit::new(id("a"), text("A"), Role::Planner, text("true")).depends_on([id("a")]);
//! let refused = CheckpointBuilder::new(job).unit(cycle).build().unwrap_err();
//! assert_eq!(refused.to_string(), "the graph has a cycle: a -> a");
//! ```

use std::io;
use std::path::{Path, PathBuf};

use shiftwork_seams::{FileKind, Fs};

use crate::budget::BudgetDimension;
use crate::env::Env;
use crate::json::{self, Json, Object};
use crate::lock::{self, Acquired};
use crate::model::{Artifact, Extras, PlannedUnit, Role, Text};
use crate::paths::CheckpointPaths;
use crate::refusal::{FileError, ShiftworkRefusal};
use crate::results::Plan;

/// Where a job's checkpoint is by convention, below the repository root.
pub const CHECKPOINT_PATH: &str = ".shiftwork/checkpoint.json";

/// The job of a new checkpoint: what it is for and how its end is judged.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// Its id.
    pub id: Text,
    /// Its goal.
    pub goal: Text,
    /// What "done" means (a command, a condition).
    pub done_definition: Text,
    /// What every unit must keep true (each brief repeats them).
    pub constraints: Vec<Text>,
    /// The models each role may use (a role named here allows only these).
    pub roles: Vec<(Role, Vec<Text>)>,
    /// The working agreements, when the job keeps a list (at most 20).
    pub agreements: Option<Vec<Text>>,
    /// The budget's limits (each at least 1).
    pub budget: Vec<(BudgetDimension, u64)>,
    /// Other members of `job` the model does not name (`kind`, `experiment`), free-form ([`Extras`]);
    /// the checkpoint's schema judges them when the checkpoint is built.
    pub extras: Extras,
}

impl Job {
    /// A job with its id, goal and definition of done; no constraint, roles, agreements or budget.
    pub fn new(id: Text, goal: Text, done_definition: Text) -> Job {
        Job {
            id,
            goal,
            done_definition,
            constraints: Vec::new(),
            roles: Vec::new(),
            agreements: None,
            budget: Vec::new(),
            extras: Extras::default(),
        }
    }

    /// This job with its constraints.
    pub fn with_constraints(mut self, constraints: Vec<Text>) -> Job {
        self.constraints = constraints;
        self
    }

    /// This job allowing `role` only the `models` (a clock-out of a unit in that role must name one
    /// of them); a role given twice keeps the last list.
    ///
    /// ```
    /// use shiftwork_core::authoring::Job;
    /// use shiftwork_core::model::{Role, Text};
    /// use shiftwork_core::BudgetDimension;
    /// let text = |t: &str| Text::new(t).unwrap();
    /// let job = Job::new(text("j"), text("Ship it."), text("make test"))
    ///     .with_role(Role::Reviewer, [text("claude-opus-4")])
    ///     .with_agreements([text("small commits")])
    ///     .with_budget(BudgetDimension::Tokens, 2_000_000);
    /// assert_eq!(job.roles, [(Role::Reviewer, vec![text("claude-opus-4")])]);
    /// assert_eq!(job.agreements, Some(vec![text("small commits")]));
    /// assert_eq!(job.budget, [(BudgetDimension::Tokens, 2_000_000)]);
    /// ```
    pub fn with_role(mut self, role: Role, models: impl IntoIterator<Item = Text>) -> Job {
        let models: Vec<Text> = models.into_iter().collect();
        match self.roles.iter_mut().find(|(r, _)| *r == role) {
            Some((_, existing)) => *existing = models,
            None => self.roles.push((role, models)),
        }
        self
    }

    /// This job keeping a list of working agreements (at most 20; the clock-out adds and retires
    /// them). An empty list still makes the job keep one.
    pub fn with_agreements(mut self, agreements: impl IntoIterator<Item = Text>) -> Job {
        self.agreements = Some(agreements.into_iter().collect());
        self
    }

    /// This job with a budget `limit` (at least 1) in `dimension`; a dimension given twice keeps the
    /// last limit.
    pub fn with_budget(mut self, dimension: BudgetDimension, limit: u64) -> Job {
        match self.budget.iter_mut().find(|(d, _)| *d == dimension) {
            Some((_, existing)) => *existing = limit,
            None => self.budget.push((dimension, limit)),
        }
        self
    }

    fn to_json(&self) -> Json {
        let texts = |items: &[Text]| Json::strings(items.iter().map(Text::as_str));
        let mut o = json::object([
            ("id", Json::str(self.id.as_str())),
            ("goal", Json::str(self.goal.as_str())),
            ("done_definition", Json::str(self.done_definition.as_str())),
            ("constraints", texts(&self.constraints)),
        ]);
        if !self.roles.is_empty() {
            let roles: Object = self
                .roles
                .iter()
                .map(|(role, models)| (role.as_str().to_owned(), texts(models)))
                .collect();
            o.insert(String::from("roles"), Json::Object(roles));
        }
        if let Some(agreements) = &self.agreements {
            o.insert(String::from("agreements"), texts(agreements));
        }
        if !self.budget.is_empty() {
            let budget: Object = self
                .budget
                .iter()
                .map(|(dim, limit)| (dim.as_str().to_owned(), crate::budget::int(i128::from(*limit))))
                .collect();
            o.insert(String::from("budget"), Json::Object(budget));
        }
        for (k, v) in &self.extras {
            o.entry(k.clone()).or_insert_with(|| v.clone());
        }
        Json::Object(o)
    }
}

/// The repository's state as a new checkpoint records it (an agent keeps it current).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoState {
    /// The branch.
    pub branch: Text,
    /// The commit checked out.
    pub head_sha: Text,
    /// Whether the working tree has changes.
    pub dirty: bool,
}

impl RepoState {
    /// A state nobody looked at: branch and commit `unknown`, not dirty.
    pub fn unknown() -> RepoState {
        RepoState {
            branch: Text::read("unknown"),
            head_sha: Text::read("unknown"),
            dirty: false,
        }
    }

    /// The branch and commit of the Git repository at `root`, read from its files (`.git/HEAD`, the
    /// branch's ref or `packed-refs`; a `.git` file of a linked worktree is followed), every read
    /// bounded; `None` when `root` holds no repository that can be read so. No `git` process runs, so
    /// whether the tree is dirty is not known: `dirty` is `false`.
    ///
    /// ```
    /// use shiftwork_core::authoring::RepoState;
    /// let fs = shiftwork_seams::MemFs::new();
    /// fs.write_file("/r/.git/HEAD", b"ref: refs/heads/main\n");
    /// fs.write_file("/r/.git/refs/heads/main", b"abc1234def\n");
    /// let state = RepoState::read(&fs, std::path::Path::new("/r")).unwrap();
    /// assert_eq!((state.branch.as_str(), state.head_sha.as_str()), ("main", "abc1234def"));
    /// ```
    pub fn read(fs: &dyn Fs, root: &Path) -> Option<RepoState> {
        const SMALL: u64 = 64 * 1024;
        let read = |path: &Path, limit: u64| -> Option<String> {
            let bytes = fs.read_limited(path, limit).ok()?;
            String::from_utf8(bytes).ok()
        };
        let dot_git = root.join(".git");
        let git_dir = match fs.metadata(&dot_git).ok()?.kind {
            FileKind::Dir => dot_git,
            FileKind::File => {
                let text = read(&dot_git, SMALL)?;
                let target = PathBuf::from(text.trim().strip_prefix("gitdir:")?.trim());
                if target.is_absolute() {
                    target
                } else {
                    root.join(target)
                }
            }
            _ => return None,
        };
        let common = read(&git_dir.join("commondir"), SMALL)
            .map(|c| git_dir.join(c.trim()))
            .unwrap_or_else(|| git_dir.clone());
        let head = read(&git_dir.join("HEAD"), SMALL)?;
        let head = head.trim();
        let Some(reference) = head.strip_prefix("ref:").map(str::trim) else {
            let sha = Text::new(head).ok()?;
            return Some(RepoState {
                branch: Text::read("HEAD"),
                head_sha: sha,
                dirty: false,
            });
        };
        let branch = Text::new(reference.strip_prefix("refs/heads/").unwrap_or(reference)).ok()?;
        let loose = [git_dir.join(reference), common.join(reference)]
            .iter()
            .find_map(|p| read(p, SMALL))
            .map(|s| s.trim().to_owned());
        let packed = || {
            read(&common.join("packed-refs"), 16 * 1024 * 1024)?
                .lines()
                .find_map(|line| {
                    let (sha, name) = line.split_once(' ')?;
                    (name.trim() == reference).then(|| sha.to_owned())
                })
        };
        let sha = loose.filter(|s| !s.is_empty()).or_else(packed);
        Some(RepoState {
            branch,
            head_sha: sha
                .and_then(|s| Text::new(s).ok())
                .unwrap_or_else(|| Text::read("none")),
            dirty: false,
        })
    }
}

/// Builds a new checkpoint: a job, its units, the repository's state. Nothing is judged until
/// [`CheckpointBuilder::build`].
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointBuilder {
    job: Job,
    units: Vec<PlannedUnit>,
    repo: RepoState,
    next_action: Option<Text>,
    artifacts: Vec<Artifact>,
}

impl CheckpointBuilder {
    /// A checkpoint of `job` with no unit yet and an [unknown](RepoState::unknown) repository state.
    pub fn new(job: Job) -> CheckpointBuilder {
        CheckpointBuilder {
            job,
            units: Vec::new(),
            repo: RepoState::unknown(),
            next_action: None,
            artifacts: Vec::new(),
        }
    }

    /// Adds a unit (the plan keeps the order they are added in).
    pub fn unit(mut self, unit: PlannedUnit) -> CheckpointBuilder {
        self.units.push(unit);
        self
    }

    /// Adds units.
    pub fn units(mut self, units: impl IntoIterator<Item = PlannedUnit>) -> CheckpointBuilder {
        self.units.extend(units);
        self
    }

    /// Records the repository's state.
    pub fn repo(mut self, repo: RepoState) -> CheckpointBuilder {
        self.repo = repo;
        self
    }

    /// Sets the handoff's next action (by default the title of the first unit to do).
    pub fn next_action(mut self, next_action: Text) -> CheckpointBuilder {
        self.next_action = Some(next_action);
        self
    }

    /// Adds one of the job's files.
    pub fn artifact(mut self, artifact: Artifact) -> CheckpointBuilder {
        self.artifacts.push(artifact);
        self
    }

    /// The checkpoint, judged as every reader judges one — the schema, unique unit ids, the planner
    /// (an unknown dependency, a cycle, a `touches` that is not a repository-relative path, a review
    /// of a unit that is not a dependency or is of the same role) — with the first refusal's
    /// sentence; its cursor is the first unit of the first wave (the cursor rule of a clock-out).
    pub fn build(self) -> Result<NewCheckpoint, ShiftworkRefusal> {
        let Some(first) = self.units.first() else {
            return Err(ShiftworkRefusal::NoUnits);
        };
        let first_id = first.id.as_str().to_owned();
        let mut doc = self.document(&first_id);
        // The schema first (the author's own values may be quoted), then what every reader checks.
        crate::schema::validate_to_write(&doc).map_err(ShiftworkRefusal::Invalid)?;
        let ids: Vec<&str> = self.units.iter().map(|u| u.id.as_str()).collect();
        if let Some(i) = crate::planner::first_repeat(&ids) {
            return Err(ShiftworkRefusal::DuplicateId {
                id: ids[i].to_owned(),
            });
        }
        crate::decide::plan::plan_checks(&crate::Checkpoint::new(&doc))?;
        let cursor = crate::next_cursor(&doc, &first_id);
        let next_action = match &self.next_action {
            Some(text) => text.as_str().to_owned(),
            None => self.units.iter().find(|u| u.id == cursor.as_str()).map_or_else(
                || first.title.as_str().to_owned(),
                |u| u.title.as_str().to_owned(),
            ),
        };
        if let Some(root) = doc.as_object_mut() {
            if let Some(Json::Object(plan)) = root.get_mut("plan") {
                plan.insert(String::from("cursor"), Json::String(cursor));
            }
            if let Some(Json::Object(handoff)) = root.get_mut("handoff") {
                handoff.insert(String::from("next_action"), Json::String(next_action));
            }
        }
        let text = json::to_checkpoint_text(&doc);
        // Read back as every reader reads it (its bound, its checks), and planned as the plan tool plans it.
        let placed = crate::checkpoint::parse_in_place(text.clone().into_bytes())?;
        let view = placed.view();
        let batches = crate::decide::plan::plan_checks(&view)?;
        let summary = crate::ledger::LedgerSummary::default();
        let plan = crate::decide::plan::plan(&view, &batches, view.budget_limits().map(|_| &summary));
        Ok(NewCheckpoint { text, plan })
    }

    /// The document, its cursor `cursor` and its next action to be set.
    fn document(&self, cursor: &str) -> Json {
        let repo = json::object([
            ("branch", Json::str(self.repo.branch.as_str())),
            ("head_sha", Json::str(self.repo.head_sha.as_str())),
            ("dirty", Json::Bool(self.repo.dirty)),
        ]);
        let artifacts = self
            .artifacts
            .iter()
            .map(|a| {
                Json::Object(json::object([
                    ("path", Json::str(a.path.as_str())),
                    ("role", Json::str(a.role.as_str())),
                ]))
            })
            .collect();
        Json::Object(json::object([
            ("version", Json::int(1)),
            ("job", self.job.to_json()),
            (
                "plan",
                Json::Object(json::object([
                    ("cursor", Json::str(cursor)),
                    (
                        "units",
                        Json::Array(self.units.iter().map(PlannedUnit::to_json).collect()),
                    ),
                ])),
            ),
            (
                "state",
                Json::Object(json::object([
                    ("repo", Json::Object(repo)),
                    ("artifacts", Json::Array(artifacts)),
                    ("external", Json::Array(Vec::new())),
                ])),
            ),
            ("history", Json::Array(Vec::new())),
            ("retro", Json::Array(Vec::new())),
            (
                "handoff",
                Json::Object(json::object([
                    ("next_action", Json::str(cursor)),
                    ("open_questions", Json::Array(Vec::new())),
                    ("do_not", Json::Array(Vec::new())),
                ])),
            ),
        ]))
    }
}

/// A checkpoint that passed every check, ready to be [`create`]d: its text and its plan.
#[derive(Debug, Clone, PartialEq)]
pub struct NewCheckpoint {
    text: String,
    plan: Plan,
}

impl NewCheckpoint {
    /// The checkpoint's text, as [`create`] writes it (two-space indented JSON and a final newline).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Its plan, as `shiftwork_plan` answers it: the waves, the cursor, the holds.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }
}

/// The conventional checkpoint of the repository holding `cwd`: `.shiftwork/checkpoint.json` below
/// the nearest directory from `cwd` upwards that holds an entry `.git`, else below `cwd`.
///
/// ```
/// use std::path::Path;
/// let fs = shiftwork_seams::MemFs::new();
/// fs.make_dirs("/w/repo/.git");
/// fs.make_dirs("/w/repo/src/deep");
/// let path = shiftwork_core::authoring::default_checkpoint(&fs, Path::new("/w/repo/src/deep"));
/// assert_eq!(path, Path::new("/w/repo/.shiftwork/checkpoint.json"));
/// assert_eq!(shiftwork_core::authoring::default_checkpoint(&fs, Path::new("/w")), Path::new("/w/.shiftwork/checkpoint.json"));
/// ```
pub fn default_checkpoint(fs: &dyn Fs, cwd: &Path) -> PathBuf {
    let root = cwd
        .ancestors()
        .find(|dir| fs.symlink_metadata(&dir.join(".git")).is_ok())
        .unwrap_or(cwd);
    root.join(CHECKPOINT_PATH)
}

/// Writes `checkpoint` at `path`, a path where nothing is yet: its missing directories are created,
/// then, under the checkpoint's lock, the file is written to a temporary file beside it, flushed and
/// renamed into place (a durable atomic write). Refused — nothing written — when a file or a link is
/// at `path` ([`ShiftworkRefusal::CheckpointExists`]), when the environment is confined and `path`
/// resolves outside its roots, or when the lock stays held; a write that fails leaves nothing at
/// `path` ([`ShiftworkRefusal::NotCreated`]; directories it created stay).
pub fn create(env: &Env, path: &Path, checkpoint: &NewCheckpoint) -> Result<(), ShiftworkRefusal> {
    let fs = env.fs.as_ref();
    let paths = CheckpointPaths::new(path);
    env.confine(&paths, &[])?;
    let exists = || ShiftworkRefusal::CheckpointExists {
        path: paths.shown.clone(),
    };
    let not_created = |e: &io::Error| ShiftworkRefusal::NotCreated {
        path: paths.shown.clone(),
        error: FileError::of(e),
    };
    if fs.symlink_metadata(path).is_ok() {
        return Err(exists());
    }
    // The missing parents, as `mkdir -p` under a usual umask; a link to nothing is never followed to
    // create its target.
    fs.create_dir_all(&shiftwork_seams::durable::parent_dir(path), 0o755)
        .map_err(|e| not_created(&e))?;
    let target = paths.lock_target(fs);
    let acquired = {
        let _wait = tracing::info_span!("shiftwork.lock_wait").entered();
        lock::acquire(env, &target)
    };
    let held = match acquired {
        Acquired::Held(held) => held,
        Acquired::TimedOut(holder) => {
            return Err(ShiftworkRefusal::Locked {
                path: holder.path,
                pid: holder.pid,
                host: holder.host,
                since: holder.since,
            });
        }
        Acquired::Unavailable(e) => return Err(not_created(&e)),
    };
    // Looked at again under the lock: another writer may have been first.
    if fs.symlink_metadata(path).is_ok() || fs.symlink_metadata(&target).is_ok() {
        held.release();
        return Err(exists());
    }
    let written = {
        let _write = tracing::info_span!("shiftwork.durable_write").entered();
        let options = crate::commit::temp_options(&target, env.host.pid());
        shiftwork_seams::durable::prepare_replace(fs, &target, None, &[checkpoint.text.as_bytes()], &options)
            .and_then(|prepared| prepared.commit(fs))
    };
    held.release();
    written.map(|_| ()).map_err(|e| not_created(&e.source))
}
