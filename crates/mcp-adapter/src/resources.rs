//! The resources a client reads without a tool call (MCP `resources/list`,
//! `resources/templates/list`, `resources/read`): the job's plan as text and as a Mermaid chart, its
//! status, a unit's brief, the contracts queue and one contract, the hours gate's state and the
//! items of today's work log.
//!
//! Each resource is a definition — its URI (or URI template), name, title, description and MIME type
//! — and `resources/list` and `resources/templates/list` are renderings of those definitions. A read goes through the same library calls, and the
//! same confinement, as the tools that read the same state:
//!
//! - the job is the checkpoint named by `--checkpoint` (default `.shiftwork/checkpoint.json`), and
//!   every read of it first passes the shift-work tools' roots check (`--roots` over HTTP,
//!   [`shiftwork_core::Env::confine_checkpoint`]); the plan pictures come from the live view's gathered job
//!   ([`shiftwork_watch::gather::job`], which never writes), the status from
//!   [`shiftwork_core::status`] and a unit's brief from [`shiftwork_core::preview_brief`] (what a
//!   clock-in would answer, recorded nowhere);
//! - the queue is read as the live view reads it ([`shiftwork_watch::gather::ContractsReader`]: a
//!   store opened read-only, never created, leaving no `-wal` or `-shm` file), and one contract
//!   through the `inspect_mesh_state` tool's own call on that store;
//! - the hours state is the live view's hours line of `--hours`;
//! - the work log's items come from [`shiftwork_worklog::Worklog::items`]: the file's name and its
//!   items, never a path, as the work-log tools answer.
//!
//! Which resources exist depends on the groups served: a resource is listed only when the group whose
//! tools read the same state is.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};
use shiftwork_contracts::location::Location;
use shiftwork_core::Env;
use shiftwork_seams::{Clock, Fs, OsFs, SystemClock};
use shiftwork_watch::gather::{self, ContractsReader, HoursWatch, StoreLocation};
use shiftwork_watch::snapshot::{Contracts as Queue, Job};
use shiftwork_worklog::Worklog;

use crate::settings::{Setting, Settings};

/// `--checkpoint PATH` / `SHIFTWORK_CHECKPOINT`: the job the resources and prompts show.
pub const CHECKPOINT: Setting = Setting {
    flag: "--checkpoint",
    env: Some("SHIFTWORK_CHECKPOINT"),
    takes_value: true,
    help: "shiftwork: the checkpoint the resources and prompts show (default .shiftwork/checkpoint.json)",
};

/// `--hours EXPR` / `SHIFTWORK_HOURS`: the operating hours whose gate the hours resource shows.
pub const HOURS: Setting = Setting {
    flag: "--hours",
    env: Some("SHIFTWORK_HOURS"),
    takes_value: true,
    help: "hours: the operating hours the shiftwork://hours resource shows (e.g. 'TZ=Europe/London Mon-Fri 09:00-17:30')",
};

/// Where a job's checkpoint is by convention (the live view's default too).
pub const DEFAULT_CHECKPOINT: &str = ".shiftwork/checkpoint.json";

/// How long a client may keep a list of resources, templates or prompts (`ttlMs`): they never change
/// while a server runs.
pub const LIST_TTL_MS: u64 = crate::server::TOOLS_TTL_MS;

/// What a resource shows, and so what changes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// The checkpoint and its ledger.
    Checkpoint,
    /// The contracts store.
    Store,
    /// The work log's directory.
    Worklog,
    /// The clock: the hours gate opens and closes.
    Hours,
}

/// What a resource reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The plan as text.
    PlanText,
    /// The plan as a Mermaid flowchart.
    PlanMermaid,
    /// The job's status.
    Status,
    /// A unit's brief (template).
    Brief,
    /// The contracts queue.
    Queue,
    /// One contract (template).
    Contract,
    /// The hours gate.
    Hours,
    /// Today's work-log items.
    Worklog,
}

impl Kind {
    /// What changes it.
    pub fn source(self) -> Source {
        match self {
            Kind::PlanText | Kind::PlanMermaid | Kind::Status | Kind::Brief => Source::Checkpoint,
            Kind::Queue | Kind::Contract => Source::Store,
            Kind::Hours => Source::Hours,
            Kind::Worklog => Source::Worklog,
        }
    }
}

/// One resource, or one resource template (a URI with one `{variable}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceDef {
    /// Its URI, or its URI template (RFC 6570, one simple variable).
    pub uri: &'static str,
    /// Its name.
    pub name: &'static str,
    /// Its title.
    pub title: &'static str,
    /// What it holds and when to read it.
    pub description: &'static str,
    /// Its MIME type.
    pub mime_type: &'static str,
    /// What it reads.
    pub kind: Kind,
    /// The template's variable (`None` for a resource).
    pub variable: Option<&'static str>,
}

impl ResourceDef {
    /// The `resources/list` entry of a resource, or the `resources/templates/list` entry of a
    /// template.
    pub fn descriptor(&self) -> Value {
        let key = if self.variable.is_some() {
            "uriTemplate"
        } else {
            "uri"
        };
        json!({
            key: self.uri,
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "mimeType": self.mime_type,
        })
    }

    /// The template's variable's value in `uri`, when `uri` is an instance of this template: the
    /// text between its fixed prefix and suffix, percent-decoded, non-empty, without `/`.
    pub fn matches(&self, uri: &str) -> Option<String> {
        let variable = self.variable?;
        let placeholder = format!("{{{variable}}}");
        let (prefix, suffix) = self.uri.split_once(&placeholder)?;
        let raw = uri.strip_prefix(prefix)?.strip_suffix(suffix)?;
        if raw.is_empty() || raw.contains('/') {
            return None;
        }
        percent_decode(raw).filter(|v| !v.is_empty())
    }

    /// The URI of this template's instance for `value` (percent-encoding what RFC 6570's simple
    /// expansion encodes).
    pub fn instance(&self, value: &str) -> String {
        let variable = self.variable.unwrap_or_default();
        self.uri
            .replace(&format!("{{{variable}}}"), &percent_encode(value))
    }
}

/// Every resource and template a server of `groups` serves, in listing order; `hours` says whether
/// `--hours` names an expression.
pub fn definitions(groups: &[&str], hours: bool) -> Vec<ResourceDef> {
    let served = |g: &str| groups.contains(&g);
    let mut defs = Vec::new();
    if served("shiftwork") {
        defs.extend([
            ResourceDef {
                uri: "shiftwork://plan",
                name: "plan",
                title: "The job's plan",
                description: "The job's plan as text: its waves of units in run order (the first wave may run now), the units held apart because they touch one file, the finished units. Read it to see where the job stands before clocking in; shiftwork_plan answers the same as JSON.",
                mime_type: "text/plain",
                kind: Kind::PlanText,
                variable: None,
            },
            ResourceDef {
                uri: "shiftwork://plan.mmd",
                name: "plan.mmd",
                title: "The job's plan as a Mermaid chart",
                description: "The job's plan as a Mermaid flowchart, one node per unit, edges from each unit to the units that depend on it; labels are inert text. For a person's Markdown view.",
                mime_type: "text/vnd.mermaid",
                kind: Kind::PlanMermaid,
                variable: None,
            },
            ResourceDef {
                uri: "shiftwork://status",
                name: "status",
                title: "The job's status",
                description: "The job's status as shiftwork_status answers it: the cursor, the number of units per status, the open questions and the last history entry (JSON).",
                mime_type: "application/json",
                kind: Kind::Status,
                variable: None,
            },
            ResourceDef {
                uri: "shiftwork://units/{unit_id}/brief",
                name: "unit-brief",
                title: "A unit's brief",
                description: "What shiftwork_clock_in would answer for the unit now — its brief (role, invariants, handoff, do_not, files, upstream results), an escalation or a refusal — without recording a brief line (JSON). unit_id: a unit id of the plan.",
                mime_type: "application/json",
                kind: Kind::Brief,
                variable: Some("unit_id"),
            },
        ]);
    }
    if served("contracts") {
        defs.extend([
            ResourceDef {
                uri: "shiftwork://contracts",
                name: "contracts",
                title: "The contracts queue",
                description: "The contracts queue: the count per status, every claimed contract (soonest lease end first, with holder and epoch), the oldest waiting ones and the last ended ones (JSON). For one contract in full, read shiftwork://contracts/{contract_id}.",
                mime_type: "application/json",
                kind: Kind::Queue,
                variable: None,
            },
            ResourceDef {
                uri: "shiftwork://contracts/{contract_id}",
                name: "contract",
                title: "One contract",
                description: "One contract in full, as inspect_mesh_state answers with its contract_id: status, parties, lease, inputs, result (JSON). contract_id: a UUID from the queue or a dispatch.",
                mime_type: "application/json",
                kind: Kind::Contract,
                variable: Some("contract_id"),
            },
        ]);
    }
    if served("hours") && hours {
        defs.push(ResourceDef {
            uri: "shiftwork://hours",
            name: "hours",
            title: "The hours gate",
            description: "Whether the server's operating hours (--hours) are open now, and when they next open or close, in the server's zone (JSON).",
            mime_type: "application/json",
            kind: Kind::Hours,
            variable: None,
        });
    }
    if served("worklog") {
        defs.push(ResourceDef {
            uri: "shiftwork://worklog/today",
            name: "worklog-today",
            title: "Today's work log",
            description: "The items of the checklist of the current work log (the newest file of the log directory): each item's text and whether it is ticked, with the file's name and never its path (JSON).",
            mime_type: "application/json",
            kind: Kind::Worklog,
            variable: None,
        });
    }
    defs
}

/// Why a resource could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// No resource has this URI (MCP: `-32602`, "Resource not found").
    #[error("Resource not found: {uri}")]
    NotFound {
        /// The URI, clipped.
        uri: String,
    },
}

/// The contents of one read: its text and MIME type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contents {
    /// The resource's URI as read.
    pub uri: String,
    /// Its MIME type.
    pub mime_type: &'static str,
    /// Its text.
    pub text: String,
}

impl Contents {
    /// The `resources/read` result (`ttlMs` 0: the state changes at any time; subscribe instead).
    pub fn result(&self) -> Value {
        json!({
            "contents": [{"uri": self.uri, "mimeType": self.mime_type, "text": self.text}],
            "ttlMs": 0,
            "cacheScope": "private",
        })
    }
}

/// The state the resources read, built once from the server's settings; nothing is opened before the
/// first read.
pub struct Views {
    defs: Vec<ResourceDef>,
    checkpoint: PathBuf,
    env: Option<Arc<Env>>,
    fs: Arc<dyn Fs>,
    clock: Arc<dyn Clock>,
    store: Option<StoreLocation>,
    reader: Mutex<Option<ContractsReader>>,
    worklog: Option<Worklog<OsFs>>,
    hours: Option<HoursWatch>,
}

impl std::fmt::Debug for Views {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Views")
            .field("resources", &self.defs.len())
            .field("checkpoint", &self.checkpoint)
            .finish_non_exhaustive()
    }
}

impl Views {
    /// The views of a server of `groups` with `settings` (an invalid `--hours` is a start-up error).
    pub fn build(groups: &[&str], settings: &Settings) -> Result<Views, String> {
        let served = |g: &str| groups.contains(&g);
        let checkpoint = PathBuf::from(settings.value(&CHECKPOINT).unwrap_or(DEFAULT_CHECKPOINT));
        let env = if served("shiftwork") {
            Some(Arc::new(crate::groups::shiftwork::env(settings)?))
        } else {
            None
        };
        let store = if served("contracts") {
            match crate::groups::contracts::config(settings)?.location {
                Ok(Location::File(path)) => Some(StoreLocation::Sqlite(path)),
                Ok(Location::Postgres(url)) => Some(StoreLocation::Postgres(url)),
                Err(_) => None,
            }
        } else {
            None
        };
        let hours = match settings.value(&HOURS).filter(|_| served("hours")) {
            Some(text) => {
                let zone =
                    crate::groups::hours::server_zone(settings, &crate::groups::hours::ZONE, "--hours")?;
                Some(HoursWatch::parse(text, zone, zone).map_err(|e| {
                    format!(
                        "{} / {} must be an operating-hours expression: {e}",
                        HOURS.flag,
                        HOURS.env.unwrap_or_default()
                    )
                })?)
            }
            None => None,
        };
        let worklog = served("worklog").then(|| Worklog::new(crate::groups::worklog::config(settings), OsFs));
        Ok(Views {
            defs: definitions(groups, hours.is_some()),
            checkpoint,
            env,
            fs: Arc::new(OsFs),
            clock: Arc::new(SystemClock::new()),
            store,
            reader: Mutex::new(None),
            worklog,
            hours,
        })
    }

    /// Views of the given parts (tests, embedders): `env` confines the checkpoint's reads.
    pub fn of_parts(
        groups: &[&str],
        checkpoint: PathBuf,
        env: Arc<Env>,
        store: Option<StoreLocation>,
        worklog: Option<Worklog<OsFs>>,
        hours: Option<HoursWatch>,
    ) -> Views {
        Views {
            defs: definitions(groups, hours.is_some()),
            checkpoint,
            env: Some(env.clone()),
            fs: env.fs.clone(),
            clock: env.clock.clone(),
            store,
            reader: Mutex::new(None),
            worklog,
            hours,
        }
    }

    /// Every resource and template served.
    pub fn definitions(&self) -> &[ResourceDef] {
        &self.defs
    }

    /// The resources (no variable).
    pub fn resources(&self) -> impl Iterator<Item = &ResourceDef> {
        self.defs.iter().filter(|d| d.variable.is_none())
    }

    /// The templates.
    pub fn templates(&self) -> impl Iterator<Item = &ResourceDef> {
        self.defs.iter().filter(|d| d.variable.is_some())
    }

    /// The files whose changes may change a resource of `source`, for the change watcher: the
    /// checkpoint and its ledger, the SQLite store and its log, the work log's directory.
    pub fn files(&self, source: Source) -> Vec<PathBuf> {
        match source {
            Source::Checkpoint if self.env.is_some() => gather::checkpoint_files(&self.checkpoint).to_vec(),
            Source::Store => self.store.as_ref().map(StoreLocation::files).unwrap_or_default(),
            Source::Worklog => self
                .worklog
                .as_ref()
                .and_then(|w| w.config().dir.clone())
                .into_iter()
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Whether the store is a server (PostgreSQL), whose commits no file shows.
    pub fn store_is_server(&self) -> bool {
        matches!(self.store, Some(StoreLocation::Postgres(_)))
    }

    /// The definition and the variable's value `uri` names, if any.
    pub fn find(&self, uri: &str) -> Option<(&ResourceDef, Option<String>)> {
        self.defs.iter().find_map(|d| match d.variable {
            None => (d.uri == uri).then_some((d, None)),
            Some(_) => d.matches(uri).map(|v| (d, Some(v))),
        })
    }

    /// Reads the resource at `uri`.
    pub fn read(&self, uri: &str) -> Result<Contents, ReadError> {
        let not_found = || ReadError::NotFound {
            uri: shiftwork_seams::echo::clip_echo(uri),
        };
        let (def, value) = self.find(uri).ok_or_else(not_found)?;
        let text = match (def.kind, value.as_deref()) {
            (Kind::PlanText, _) => self.job(shiftwork_watch::picture::text),
            (Kind::PlanMermaid, _) => self.job(shiftwork_watch::picture::mermaid),
            (Kind::Status, _) => self.status(),
            (Kind::Brief, Some(unit)) => self.brief(unit).ok_or_else(not_found)?,
            (Kind::Queue, _) => self.queue().to_string(),
            (Kind::Contract, Some(id)) => self.contract(id).ok_or_else(not_found)?,
            (Kind::Hours, _) => self.hours().to_string(),
            (Kind::Worklog, _) => self.worklog().to_string(),
            (Kind::Brief | Kind::Contract, None) => return Err(not_found()),
        };
        let text = self.scrub(text);
        Ok(Contents {
            uri: uri.to_owned(),
            mime_type: def.mime_type,
            text: if def.mime_type == "application/json" {
                json_inert(&text)
            } else {
                text
            },
        })
    }

    /// `text` with every path and URL of the server's own files put as their names: a sentence of
    /// the live view's (a store not there yet, a checkpoint that cannot be read) names the file, as
    /// the work-log tools do, never where it is: no resource holds a path.
    fn scrub(&self, mut text: String) -> String {
        for (long, short) in self.paths() {
            if !long.is_empty() && text.contains(&long) {
                text = text.replace(&long, &short);
            }
        }
        text
    }

    /// The server's paths and URLs as a text may show them, longest first, each with what replaces it.
    fn paths(&self) -> Vec<(String, String)> {
        let name = |path: &std::path::Path| {
            path.file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        };
        let mut found: Vec<PathBuf> = Vec::new();
        let mut with = |path: &std::path::Path| {
            found.push(path.to_path_buf());
            if let Ok(cwd) = std::env::current_dir() {
                found.push(cwd.join(path));
            }
            if let Ok(real) = std::fs::canonicalize(path) {
                found.push(real);
            }
        };
        with(&self.checkpoint);
        let mut pairs: Vec<(String, String)> = Vec::new();
        match &self.store {
            Some(StoreLocation::Sqlite(path)) => with(path),
            Some(location @ StoreLocation::Postgres(url)) => {
                pairs.push((url.clone(), String::from("the PostgreSQL store")));
                pairs.push((location.shown(), String::from("the PostgreSQL store")));
            }
            None => {}
        }
        if let Some(dir) = self.worklog.as_ref().and_then(|w| w.config().dir.clone()) {
            with(&dir);
        }
        pairs.extend(found.iter().map(|p| (p.to_string_lossy().into_owned(), name(p))));
        pairs.sort_by_key(|(long, _)| std::cmp::Reverse(long.len()));
        pairs
    }

    /// The job as the live view gathers it, drawn by `draw`; the refusal's sentence when the
    /// checkpoint is outside the roots or cannot be read.
    fn job(&self, draw: impl Fn(&Job) -> String) -> String {
        if let Some(env) = &self.env
            && let Err(refusal) = env.confine_checkpoint(&self.checkpoint)
        {
            return refusal.to_string();
        }
        match gather::job(self.fs.as_ref(), &self.checkpoint).body {
            Ok(job) => draw(&job),
            Err(sentence) => sentence,
        }
    }

    /// The gathered job, when the checkpoint may be read and is valid (completion).
    pub fn gathered_job(&self) -> Option<Job> {
        let env = self.env.as_ref()?;
        env.confine_checkpoint(&self.checkpoint).ok()?;
        gather::job(self.fs.as_ref(), &self.checkpoint).body.ok()
    }

    fn status(&self) -> String {
        match &self.env {
            Some(env) => {
                crate::groups::shiftwork::structured(&shiftwork_core::status(env, &self.checkpoint, None))
            }
            None => String::from("{}"),
        }
    }

    /// The brief of `unit`, or `None` when the plan has no such unit.
    fn brief(&self, unit: &str) -> Option<String> {
        let env = self.env.as_ref()?;
        let previewed = shiftwork_core::preview_brief(env, &self.checkpoint, Some(unit));
        if matches!(&previewed, Err(refusal) if refusal.code() == "UNKNOWN_UNIT") {
            return None;
        }
        Some(crate::groups::shiftwork::structured(&previewed))
    }

    /// Runs `read` on the store's reader (opened read-only on first use), or `None` without a store.
    fn with_reader<T>(&self, read: impl FnOnce(&mut ContractsReader) -> T) -> Option<T> {
        let location = self.store.clone()?;
        let mut reader = self.reader.lock().unwrap_or_else(PoisonError::into_inner);
        let reader = reader.get_or_insert_with(|| ContractsReader::new(location, None, self.clock.clone()));
        Some(read(reader))
    }

    /// The queue as the live view gathers it.
    pub fn gathered_queue(&self) -> Option<Result<Queue, String>> {
        let fs = self.fs.clone();
        self.with_reader(|reader| reader.read(fs.as_ref()).body)
    }

    fn queue(&self) -> Value {
        match self.gathered_queue() {
            None => json!({"error": "this server serves no contracts store"}),
            Some(Err(sentence)) => json!({"error": sentence}),
            Some(Ok(queue)) => queue_json(&queue),
        }
    }

    /// One contract as `inspect_mesh_state` answers it, or `None` when the store has no such contract
    /// (or is not there to ask).
    fn contract(&self, id: &str) -> Option<String> {
        let fs = self.fs.clone();
        let store = self.with_reader(|reader| reader.store(fs.as_ref()))?.ok()??;
        let contracts = shiftwork_contracts::Contracts::builder(store)
            .fs(self.fs.clone())
            .real_ids()
            .build();
        let mut args = serde_json::Map::new();
        args.insert(String::from("contract_id"), Value::from(id));
        // An id that is no UUID names no contract.
        let answer = shiftwork_contracts::args::try_call(
            &contracts,
            "inspect_mesh_state",
            &args,
            &shiftwork_contracts::DefaultAgent::Unset,
            &shiftwork_contracts::wait::Cancel::new(),
        )
        .ok()?;
        let found = answer
            .get("contracts")
            .and_then(Value::as_array)
            .is_some_and(|list| !list.is_empty());
        found.then(|| answer.to_string())
    }

    fn hours(&self) -> Value {
        match &self.hours {
            None => json!({"error": "this server has no --hours expression"}),
            Some(watch) => {
                let line = watch.line(self.clock.now());
                json!({
                    "expression": line.expression,
                    "in_hours": line.in_hours,
                    "next_change": line.next_change.map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
                    "next": line.next_local,
                })
            }
        }
    }

    /// When the hours gate next opens or closes.
    pub fn next_hours_change(&self) -> Option<chrono::DateTime<chrono::Utc>> {
        self.hours
            .as_ref()
            .and_then(|w| w.line(self.clock.now()).next_change)
    }

    fn worklog(&self) -> Value {
        match &self.worklog {
            None => json!({"error": "this server serves no work log"}),
            Some(log) => match (log.items(), log.check()) {
                (Ok(read), Ok(check)) => json!({
                    "status": read.status.as_str(),
                    "file": read.file,
                    "items": read.items.iter().map(|item| json!({
                        "checked": item.checked,
                        "text": shiftwork_seams::echo::escape_controls(&item.text),
                    })).collect::<Vec<_>>(),
                    "message": check.message,
                }),
                (Err(e), _) | (_, Err(e)) => json!({"status": e.code(), "message": e.to_string()}),
            },
        }
    }
}

/// The queue as JSON: counts per status, then the claimed, waiting and ended contracts.
fn queue_json(queue: &Queue) -> Value {
    let at = |t: &chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let counts: serde_json::Map<String, Value> = queue
        .counts
        .iter()
        .map(|c| (c.status.clone(), Value::from(c.count)))
        .collect();
    json!({
        "counts": counts,
        "past_deadline": queue.past_deadline,
        "claimed": queue.claimed.iter().map(|c| json!({
            "contract_id": c.id, "title": c.title, "holder": c.holder, "requester": c.requester,
            "claim_epoch": c.epoch, "lease_ends": c.lease_ends.as_ref().map(at),
        })).collect::<Vec<_>>(),
        "waiting": queue.waiting.iter().map(|w| json!({
            "contract_id": w.id, "title": w.title, "target": w.target, "requester": w.requester,
            "queued_at": at(&w.queued_at),
        })).collect::<Vec<_>>(),
        "ended": queue.ended.iter().map(|e| json!({
            "contract_id": e.id, "title": e.title, "target": e.target, "requester": e.requester,
            "status": e.status, "reason": e.reason, "ended_at": e.ended_at.as_ref().map(at),
        })).collect::<Vec<_>>(),
    })
}

/// A JSON text with every control and bidirectional character a JSON writer leaves raw (C1
/// controls, DEL, the line and paragraph separators, the bidirectional marks, embeddings, overrides
/// and isolates) written as its `\uXXXX` escape: the same JSON value, shown inert by a client that
/// prints the text as it is. Such a character can only stand inside a string of valid JSON, where
/// the escape means the same.
fn json_inert(text: &str) -> String {
    if !text.chars().any(shiftwork_seams::echo::is_control_or_bidi) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if shiftwork_seams::echo::is_control_or_bidi(c) && !matches!(c, '\n' | '\r' | '\t') {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Percent-decodes `text`; `None` when an escape is malformed or the bytes are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Percent-encodes every byte but RFC 3986's unreserved characters (RFC 6570 simple expansion).
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 35 item 2 (THREATS "control characters"): the JSON of a resource shows no raw
    /// bidirectional or C1 control, and means the same.
    #[test]
    fn issue35_item2_json_texts_are_made_inert_and_mean_the_same() {
        let value = serde_json::json!({"title": "a\u{202e}b\u{85}c\u{2028}d\u{1b}e", "n": 1});
        let text = value.to_string();
        let inert = json_inert(&text);
        assert!(
            !inert.chars().any(shiftwork_seams::echo::is_control_or_bidi),
            "{inert}"
        );
        assert_eq!(serde_json::from_str::<Value>(&inert).unwrap(), value);
        assert_eq!(json_inert("{\"a\":1}"), "{\"a\":1}");
    }

    /// Issue 35 item 2: a template's variable round-trips through its URI, whatever it holds, and
    /// a URI with another shape is no instance.
    #[test]
    fn issue35_item2_template_instances_round_trip() {
        let defs = definitions(&["shiftwork", "contracts"], false);
        let brief = defs.iter().find(|d| d.kind == Kind::Brief).unwrap();
        for value in ["build", "a b/c", "é:@%", "x{y}"] {
            let uri = brief.instance(value);
            assert_eq!(brief.matches(&uri).as_deref(), Some(value), "{uri}");
        }
        for uri in [
            "shiftwork://units//brief",
            "shiftwork://units/a/b/brief",
            "shiftwork://units/a",
            "shiftwork://units/%zz/brief",
            "shiftwork://units/%ff/brief",
        ] {
            assert_eq!(brief.matches(uri), None, "{uri}");
        }
    }
}
