//! The `shiftwork` group: `shiftwork_plan`, `shiftwork_clock_in`, `shiftwork_clock_out`,
//! `shiftwork_status` and `work_plan` over `shiftwork-core`, answering as bantamkit's shift-work
//! tools do (`shiftwork-core`'s crate docs say what that compatibility means).
//!
//! This module only decodes arguments (an undeclared one refused, number tokens kept as the client
//! wrote them), builds the real seams and renders answers; every rule lives in `shiftwork-core`.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value, json};
use shiftwork_core::json::{self as sjson, Json, Object};
use shiftwork_core::{Answer, ClockOutArguments, Env, MemoryBudget, ShiftworkRefusal};

use crate::registry::{
    Answered, DemoStep, Group, Handler, Hints, INVALID_ARGUMENT, Outcome, Prefetched, ToolDef,
    UNKNOWN_ARGUMENT, Verdict, unknown_argument_sentence,
};
use crate::settings::{Setting, Settings};

mod schema;

/// `--probes`: run relay probes. Off by default: a probe is a shell command taken from the
/// checkpoint, which any client can write through `handoff_patch`, and it runs with the server's
/// environment and rights.
pub const PROBES: Setting = Setting {
    flag: "--probes",
    env: Some("SHIFTWORK_PROBES"),
    takes_value: false,
    help: "shiftwork: run relay probes (shell commands from the checkpoint) at clock-in; off by default",
};

/// `--no-probes`: relay questions count as decision questions; no shell probe runs. This is the
/// default; the switch stays accepted, and wins over `--probes`.
pub const NO_PROBES: Setting = Setting {
    flag: "--no-probes",
    env: Some("SHIFTWORK_NO_PROBES"),
    takes_value: false,
    help: "shiftwork: never run relay probes (the default); wins over --probes",
};

/// `--memory-budget`: the memory the shift-work calls in flight may hold at once. Each call
/// reserves its peak, a multiple of its checkpoint's size, before it reads; a call that does not
/// fit waits up to 30 s and is then refused busy, one that needs more than the whole budget at once
/// (both as tool errors). Default: half the machine's physical memory.
pub const MEMORY_BUDGET: Setting = Setting {
    flag: "--memory-budget",
    env: Some("SHIFTWORK_MEMORY_BUDGET"),
    takes_value: true,
    help: "shiftwork: memory the calls in flight may hold, in bytes or with K, M, G (KiB, MiB, GiB); default half the machine's memory",
};

/// `--roots DIR,…`: over HTTP, the directories the shift-work tools may open files in — every
/// checkpoint path, and the ledger, lock, archive and briefs beside it, must resolve (links
/// followed) inside one of them, else the call is refused naming the rule. Default: the directory
/// `serve` started in. Over stdio the local user is trusted and no root applies.
pub const ROOTS: Setting = Setting {
    flag: "--roots",
    env: Some("SHIFTWORK_ROOTS"),
    takes_value: true,
    help: "shiftwork, HTTP: comma list of directories the checkpoint paths must resolve inside (default: the directory serve started in)",
};

/// The group.
pub static GROUP: Group = Group {
    name: "shiftwork",
    instructions: "shiftwork: plan a job's units in a JSON checkpoint (work_plan, shiftwork_plan), brief one agent per ready unit (shiftwork_clock_in), record each unit's end and cost (shiftwork_clock_out), summarize (shiftwork_status).",
    settings: &[
        PROBES,
        NO_PROBES,
        MEMORY_BUDGET,
        ROOTS,
        crate::resources::CHECKPOINT,
    ],
    build,
    demo_settings,
    demo,
    try_next: &[
        "shiftwork-mcp call work_plan '{\"nodes\": [{\"id\": \"a\"}, {\"id\": \"b\", \"depends_on\": [\"a\"]}]}'",
        "shiftwork-mcp init --example   # a plan to start a job of your own from (save it, then: shiftwork-mcp init plan.toml)",
    ],
    try_in_demo: &[
        "shiftwork-mcp call shiftwork_plan '{\"checkpoint\": \".shiftwork/checkpoint.json\"}' --pretty",
        "shiftwork-mcp plan --checkpoint .shiftwork/checkpoint.json",
        "shiftwork-mcp watch --once",
    ],
    command: None,
};

fn build(settings: &Settings) -> Result<Vec<ToolDef>, String> {
    Ok(tools(Arc::new(env(settings)?)))
}

/// The environment the group's calls run in, from the settings: probes, the memory budget, and over
/// HTTP the roots (the resources read the job through the same one).
pub(crate) fn env(settings: &Settings) -> Result<Env, String> {
    let probes = settings.switch(&PROBES) && !settings.switch(&NO_PROBES);
    let budget = match settings.value(&MEMORY_BUDGET) {
        Some(text) => parse_bytes(text).ok_or_else(|| {
            format!(
                "{} takes a number of bytes, optionally with K, M or G (KiB, MiB, GiB): got '{}'",
                MEMORY_BUDGET.flag,
                shiftwork_seams::echo::echo(text)
            )
        })?,
        None => physical_memory() / 2,
    };
    let env = Env::os()
        .with_probes(probes)
        .with_memory_budget(MemoryBudget::new(budget));
    Ok(match roots(settings)? {
        Some(roots) => env.with_roots(roots),
        None => env,
    })
}

/// The roots of a server over HTTP (`--roots`, else the working directory); none over stdio.
pub(crate) fn roots(settings: &Settings) -> Result<Option<Vec<PathBuf>>, String> {
    if settings.value(&crate::http::HTTP).is_none() {
        return Ok(None);
    }
    let roots: Vec<PathBuf> = match settings.value(&ROOTS) {
        Some(list) => list
            .split(',')
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .map(PathBuf::from)
            .collect(),
        None => vec![std::env::current_dir().map_err(|e| {
            format!(
                "{} defaults to the working directory, which cannot be read: {e}",
                ROOTS.flag
            )
        })?],
    };
    if roots.is_empty() {
        return Err(format!("{} takes a comma list of directories", ROOTS.flag));
    }
    Ok(Some(roots))
}

/// A size in bytes: digits, optionally followed by `K`, `M`, `G` or `KiB`, `MiB`, `GiB` (any case,
/// powers of 1,024: `4GiB`, `512m`), or `B`.
fn parse_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let number: u64 = text[..digits].parse().ok()?;
    let shift = match text[digits..].trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" => 10,
        "m" | "mib" => 20,
        "g" | "gib" => 30,
        _ => return None,
    };
    number.checked_mul(1 << shift)
}

/// The machine's physical memory in bytes (4 GiB when the system does not say).
fn physical_memory() -> u64 {
    // SAFETY: `sysconf` only reads a system value.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    match (u64::try_from(pages), u64::try_from(size)) {
        (Ok(p), Ok(s)) if p > 0 && s > 0 => p.saturating_mul(s),
        _ => 4 << 30,
    }
}

/// The five tools over `env` (tests pass an environment of in-memory seams). With `env.probes`,
/// `shiftwork_clock_in` says it runs commands: `openWorldHint` true and a description that says so.
pub fn tools(env: Arc<Env>) -> Vec<ToolDef> {
    let (clock_in_description, clock_in_hints) = if env.probes {
        (
            CLOCK_IN_WITH_PROBES,
            Hints {
                open_world: true,
                ..Hints::local(false, false, false)
            },
        )
    } else {
        (CLOCK_IN_DESCRIPTION, Hints::local(false, false, false))
    };
    let plan_env = Arc::clone(&env);
    let status_env = Arc::clone(&env);
    let in_env = Arc::clone(&env);
    let out_env = env;
    vec![
        tool(
            "shiftwork_plan",
            "Shift work: plan",
            PLAN_DESCRIPTION,
            vec![("checkpoint", schema::checkpoint())],
            &["checkpoint"],
            schema::plan_output(),
            Hints::READ_ONLY,
            Arc::new(move |args| {
                decode(args, "shiftwork_plan", |a| {
                    let checkpoint = a.string("checkpoint")?;
                    Ok(answered(
                        "shiftwork_plan",
                        &shiftwork_core::plan_checkpoint(&plan_env, Path::new(&checkpoint)),
                    ))
                })
            }),
        ),
        tool(
            "shiftwork_clock_in",
            "Shift work: clock in",
            clock_in_description,
            vec![
                ("checkpoint", schema::checkpoint()),
                ("unit_id", schema::clock_in_unit()),
            ],
            &["checkpoint"],
            schema::clock_in_output(),
            clock_in_hints,
            Arc::new(move |args| {
                decode(args, "shiftwork_clock_in", |a| {
                    let checkpoint = a.string("checkpoint")?;
                    let unit = a.optional_string("unit_id")?;
                    Ok(answered(
                        "shiftwork_clock_in",
                        &shiftwork_core::clock_in_arguments(&in_env, Path::new(&checkpoint), unit.as_deref()),
                    ))
                })
            }),
        ),
        tool(
            "shiftwork_clock_out",
            "Shift work: clock out",
            CLOCK_OUT_DESCRIPTION,
            std::iter::once(("checkpoint", schema::checkpoint()))
                .chain(schema::clock_out_arguments())
                .collect(),
            &[
                "checkpoint",
                "unit_id",
                "status",
                "handoff_patch",
                "history_entry",
            ],
            schema::clock_out_output(),
            Hints::local(false, true, false),
            Arc::new(move |args| {
                decode(args, "shiftwork_clock_out", |a| {
                    let mut request = ClockOutArguments::new(
                        a.string("checkpoint")?,
                        a.string("unit_id")?,
                        a.string("status")?,
                        a.object("handoff_patch")?,
                        a.object("history_entry")?,
                    );
                    request.accounting = a.optional("accounting", Kind::Object)?;
                    request.agent_id = a.optional("agent_id", Kind::String)?;
                    request.agreements = a.optional("agreements", Kind::Object)?;
                    request.conclusion = a.optional("conclusion", Kind::Object)?;
                    request.follow_ups = a.optional("follow_ups", Kind::Array)?;
                    // Over HTTP the caller is who its credentials say (issue 29 item 3).
                    // The credentials' agent passed the family's grammar when it was authenticated.
                    let authenticated = args
                        .context()
                        .agent()
                        .and_then(|a| shiftwork_core::AgentId::new(a).ok());
                    let request = match &authenticated {
                        Some(agent) => request.acting_as(agent),
                        None => Ok(request),
                    };
                    let result = request.and_then(|r| shiftwork_core::clock_out_arguments(&out_env, &r));
                    Ok(answered("shiftwork_clock_out", &result))
                })
            }),
        ),
        tool(
            "shiftwork_status",
            "Shift work: status",
            STATUS_DESCRIPTION,
            vec![("checkpoint", schema::checkpoint()), ("search", schema::search())],
            &["checkpoint"],
            schema::status_output(),
            Hints::READ_ONLY,
            Arc::new(move |args| {
                decode(args, "shiftwork_status", |a| {
                    let checkpoint = a.string("checkpoint")?;
                    let search = a.optional_string("search")?;
                    Ok(answered(
                        "shiftwork_status",
                        &shiftwork_core::status(&status_env, Path::new(&checkpoint), search.as_deref()),
                    ))
                })
            }),
        ),
        ToolDef {
            prefetch: Some(prefetch_work_plan),
            ..work_plan_tool()
        },
    ]
}

/// `work_plan`'s arguments read while the request line is decoded, when they are in the plain form
/// ([`shiftwork_core::planner::PlainNodes`]): the 175 kB of a 3,000-node call are then read once,
/// not validated by the wire and read again by the handler.
fn prefetch_work_plan(text: &str) -> Option<Prefetched<'_>> {
    let read = shiftwork_core::planner::PlainNodes::read(text)?;
    Some(Prefetched {
        len: read.end(),
        keys: vec![Cow::Borrowed("nodes")],
        run: Box::new(move || answered("work_plan", &read.plan())),
    })
}

fn work_plan_tool() -> ToolDef {
    tool(
        "work_plan",
        "Work plan: batch a dependency graph",
        WORK_PLAN_DESCRIPTION,
        vec![("nodes", schema::nodes())],
        &["nodes"],
        schema::work_plan_output(),
        Hints::READ_ONLY,
        Arc::new(move |args| {
            // The plain form of the arguments is read without building a value tree; any other
            // text takes the general path, which answers the same for the texts both read.
            if let Some(planned) = args.raw().and_then(shiftwork_core::planner::work_plan_text) {
                return answered("work_plan", &planned);
            }
            decode(args, "work_plan", |a| {
                let nodes = a.required("nodes", Kind::Array)?;
                Ok(answered("work_plan", &shiftwork_core::work_plan(&nodes)))
            })
        }),
    )
}

const PLAN_DESCRIPTION: &str = "Read a shift-work checkpoint and answer which units may run now: result \"plan\" with the waves, the ready units and the cursor, plus holds (units that touch one file), budget and ranking when the checkpoint uses them. Writes nothing. A ready unit other than plan.cursor can be clocked out only after shiftwork_clock_in has briefed it. Refusals are answers with result \"error\", not protocol errors. To batch an arbitrary graph without a file, use work_plan.";

const CLOCK_IN_DESCRIPTION: &str = "Brief one ready unit of a shift-work checkpoint for the agent that will do it: result \"brief\" with the unit, its role, the job's invariants, the handoff and what upstream units produced; appends a brief line to <checkpoint>.log.jsonl and never changes the checkpoint. Other results: \"escalate\" (a person is needed), \"success\" (every unit done or dropped), \"error\" (not ready, a file conflict, the budget). Relays escalate like decisions: their probe shell commands from the repo root run only under --probes. Refusals are answers, not protocol errors. Call shiftwork_clock_out when the unit ends.";

const CLOCK_IN_WITH_PROBES: &str = "Brief one ready unit of a shift-work checkpoint for the agent that will do it: result \"brief\" with the unit, its role, the job's invariants, the handoff and what upstream units produced; appends a brief line to <checkpoint>.log.jsonl and never changes the checkpoint. Other results: \"escalate\" (a person is needed), \"success\" (every unit done or dropped), \"error\" (not ready, a file conflict, the budget). Runs commands: relay probes are shell commands from the repo root, with the server's rights (30 s total). Refusals are answers, not protocol errors. Call shiftwork_clock_out when the unit ends.";

const CLOCK_OUT_DESCRIPTION: &str = "Record the end of a unit of a shift-work checkpoint: sets its status, merges handoff_patch, pushes history_entry, moves plan.cursor to the next ready unit and appends the accounting line to <checkpoint>.log.jsonl. Result \"ok\" with the new cursor, or \"error\" with a reason (unit not the cursor nor briefed, a model job.roles forbids, a bad accounting line, a document the schema refuses, a lock held…). A refusal or a failure writes nothing: checkpoint and ledger stay as they were. Refusals are answers, not protocol errors. To see what is ready next, use shiftwork_plan.";

const STATUS_DESCRIPTION: &str = "Summarize a shift-work checkpoint: result \"status\" with the cursor, units per status, open questions and the last history entry; with search, also the matching lines of its .shiftwork/archive/ files. Reads only; never the ledger. Refusals are answers with result \"error\", not protocol errors. To see which units may run, use shiftwork_plan.";

const WORK_PLAN_DESCRIPTION: &str = "Batch a dependency graph given inline: result \"plan\" with the waves of nodes that may run in parallel (higher priority first), plus held when nodes declare the files they touch (no wave holds two writers of one path). Refuses a malformed node, a duplicate id, an unknown dependency or a cycle with result \"error\" (an answer, not a protocol error). Opens no file; for a checkpoint use shiftwork_plan.";

#[allow(clippy::too_many_arguments)]
fn tool(
    name: &'static str,
    title: &'static str,
    description: &'static str,
    arguments: Vec<crate::schema::Member>,
    required: &[&str],
    output_schema: Value,
    hints: Hints,
    handler: Handler,
) -> ToolDef {
    let properties: Map<String, Value> = arguments
        .into_iter()
        .map(|(name, schema)| (name.to_owned(), schema))
        .collect();
    ToolDef {
        name,
        title,
        description,
        input_schema: json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        }),
        output_schema,
        hints,
        unknown_argument,
        handler,
        prefetch: None,
    }
}

fn unknown_argument(tool: &str, key: &str, _all: &[&str], known: &[&str]) -> Answered {
    Answered::tool_error(
        Some(UNKNOWN_ARGUMENT),
        format!(
            "Error executing tool {tool}: {}",
            unknown_argument_sentence(key, known)
        ),
    )
}

/// Runs `f` over decoded arguments and renders its answer, or refuses the arguments as a tool error
/// (`Error executing tool <tool>: <detail>`).
///
/// The arguments are read once, from the exact text the client sent ([`Arguments::raw`]) with the
/// core's own JSON reader: number tokens survive as written — integers wider than 64 bits, `5`
/// against `5.0` — and key order is the client's. Only when the way in kept no text are they taken
/// from the decoded map, and then a number the map can no longer hold exactly (an integer beyond 64
/// bits, which arrives there as a float) is refused rather than written changed.
fn decode(
    args: &crate::registry::Arguments,
    tool: &str,
    f: impl FnOnce(&mut Args) -> Result<Answered, String>,
) -> Answered {
    let refuse = |detail: String| {
        Answered::tool_error(
            Some(INVALID_ARGUMENT),
            format!("Error executing tool {tool}: {detail}"),
        )
    };
    let decoded = match args.raw() {
        Some(raw) => match sjson::parse(raw) {
            Ok(Json::Object(members)) => members,
            Ok(Json::Null) => Object::default(),
            Ok(_) => return refuse(String::from("the arguments must be an object")),
            Err(e) => return refuse(format!("the arguments are not JSON this server reads: {e}")),
        },
        None => match from_map(args.map()) {
            Ok(members) => members,
            Err(detail) => return refuse(detail),
        },
    };
    match f(&mut Args { members: decoded }) {
        Ok(outcome) => outcome,
        Err(detail) => refuse(detail),
    }
}

/// A checkpoint tool's result: its answer, or — for a refusal that is not about the call's inputs,
/// memory admission (`ShiftworkRefusal::is_answer`) — a tool error in the frame of an argument
/// refusal, `Error executing tool <tool>: <sentence>` (a choice of ours, beyond bantamkit, which
/// has no memory admission), so that a client retries it rather than reads it as the checkpoint's
/// answer. The verdict carries the refusal's code, so the server's log line and metrics name it
/// without quoting the sentence.
fn answered<T: Answer>(tool: &str, result: &Result<T, ShiftworkRefusal>) -> Answered {
    match result {
        Ok(_) => Answered::result(rendered(result)),
        Err(refusal) if !refusal.is_answer() => Answered::tool_error(
            Some(refusal.code()),
            format!("Error executing tool {tool}: {refusal}"),
        ),
        Err(refusal) => Answered {
            outcome: rendered(result),
            verdict: Verdict::Refusal(refusal.code()),
        },
    }
}

/// The answer object's JSON text of a checkpoint operation's result, as the tool's
/// `structuredContent` holds it (the resources show the same).
pub(crate) fn structured<T: Answer>(result: &Result<T, ShiftworkRefusal>) -> String {
    let mut structured = String::with_capacity(result.size_hint());
    result.emit(&mut sjson::Formatter::new(
        &mut structured,
        sjson::Style::STRUCTURED,
    ));
    structured
}

/// An answer as the tool's result: the `structuredContent` text and the indented text block, both
/// written straight from the answer's tokens (the text block already as the JSON string the message
/// carries).
fn rendered(answer: &impl Answer) -> Outcome {
    let mut structured = String::with_capacity(answer.size_hint());
    answer.emit(&mut sjson::Formatter::new(
        &mut structured,
        sjson::Style::STRUCTURED,
    ));
    // The indented text, escaped, is a little over twice the one-line text.
    let mut text = String::with_capacity(structured.len() * 5 / 2 + 64);
    text.push('"');
    answer.emit(&mut sjson::Formatter::new(
        &mut text,
        sjson::Style::ANSWER.escaped(),
    ));
    text.push('"');
    Outcome::Prerendered {
        structured,
        text_json: Some(text),
    }
}

/// The arguments of a decoded map (no raw text kept), refusing a number the map holds only
/// approximately: an integer token beyond 64 bits, which `serde_json` keeps as its nearest double.
fn from_map(map: &Map<String, Value>) -> Result<Object, String> {
    fn exact(value: &Value) -> Result<(), String> {
        match value {
            Value::Number(n) if n.is_f64() => {
                let f = n.as_f64().unwrap_or(f64::NAN);
                // A whole double at or past 2^63 in magnitude is what an integer too wide for 64 bits
                // becomes; its digits are gone.
                if f.is_finite() && f.fract() == 0.0 && f.abs() >= 9_223_372_036_854_775_808.0 {
                    return Err(format!(
                        "the number {n} arrived as a 64-bit float, so its exact digits are unknown; it is not written changed"
                    ));
                }
                Ok(())
            }
            Value::Array(items) => items.iter().try_for_each(exact),
            Value::Object(members) => members.values().try_for_each(exact),
            _ => Ok(()),
        }
    }
    map.iter()
        .map(|(key, value)| {
            exact(value).map_err(|why| format!("argument '{key}': {why}"))?;
            Ok((key.clone(), Json::from_serde(value)))
        })
        .collect()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    String,
    Object,
    Array,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::String => "a string",
            Kind::Object => "an object",
            Kind::Array => "an array",
        }
    }

    fn matches(self, v: &Json) -> bool {
        matches!(
            (self, v),
            (Kind::String, Json::String(_)) | (Kind::Object, Json::Object(_)) | (Kind::Array, Json::Array(_))
        )
    }
}

struct Args {
    members: Object,
}

impl Args {
    /// The argument as our JSON value, taken out of the arguments (each is read once); a string
    /// holding JSON text of an array, object, boolean or null is replaced by that value for
    /// arguments that are not plain strings (`"null"` for `unit_id` is null).
    fn value(&mut self, key: &str, plain_string: bool) -> Option<Json> {
        let v = self.members.swap_remove(key)?;
        if !plain_string
            && let Json::String(text) = &v
            && let Ok(parsed) = sjson::parse(text)
            && matches!(
                parsed,
                Json::Array(_) | Json::Object(_) | Json::Bool(_) | Json::Null
            )
        {
            return Some(parsed);
        }
        Some(v)
    }

    fn required(&mut self, key: &str, kind: Kind) -> Result<Json, String> {
        let plain = kind == Kind::String && matches!(key, "checkpoint" | "unit_id" | "status");
        match self.value(key, plain) {
            None => Err(format!("missing required argument '{key}'")),
            Some(v) if kind.matches(&v) => Ok(v),
            Some(_) => Err(format!("argument '{key}' must be {}", kind.name())),
        }
    }

    fn string(&mut self, key: &str) -> Result<String, String> {
        match self.required(key, Kind::String)? {
            Json::String(s) => Ok(s),
            _ => Err(format!("argument '{key}' must be a string")),
        }
    }

    fn object(&mut self, key: &str) -> Result<Object, String> {
        match self.required(key, Kind::Object)? {
            Json::Object(o) => Ok(o),
            _ => Err(format!("argument '{key}' must be an object")),
        }
    }

    fn optional(&mut self, key: &str, kind: Kind) -> Result<Option<Json>, String> {
        match self.value(key, false) {
            None | Some(Json::Null) => Ok(None),
            Some(v) if kind.matches(&v) => Ok(Some(v)),
            Some(_) => Err(format!("argument '{key}' must be {} or null", kind.name())),
        }
    }

    fn optional_string(&mut self, key: &str) -> Result<Option<String>, String> {
        Ok(match self.optional(key, Kind::String)? {
            Some(Json::String(s)) => Some(s),
            _ => None,
        })
    }
}

fn demo_settings(_root: &Path) -> Vec<(&'static Setting, String)> {
    Vec::new()
}

/// The demo's checkpoint: three units, one done, a reviewer after the builder.
const DEMO_CHECKPOINT: &str = r##"{"version": 1, "job": {"id": "demo", "goal": "Ship the demo.", "done_definition": "make test passes", "constraints": ["keep the API stable"]}, "plan": {"cursor": "build", "units": [{"id": "scaffold", "title": "Scaffold", "brief_path": "briefs/scaffold.md", "status": "done", "role": "implementer", "depends_on": [], "verify": "make scaffold"}, {"id": "build", "title": "Build the core", "brief_path": "briefs/build.md", "status": "todo", "role": "implementer", "depends_on": ["scaffold"], "verify": "make test"}, {"id": "review", "title": "Review the core", "brief_path": "briefs/review.md", "status": "todo", "role": "reviewer", "depends_on": ["build"], "verify": "make review"}]}, "state": {"repo": {"branch": "main", "head_sha": "abc1234", "dirty": false}, "artifacts": [{"path": "docs/spec.md", "role": "spec"}], "external": []}, "history": [], "retro": [], "handoff": {"next_action": "Build the core.", "open_questions": [], "do_not": ["do not touch vendor/"]}}"##;

fn demo(root: &Path) -> Vec<DemoStep> {
    let checkpoint = root.join(".shiftwork").join("checkpoint.json");
    let cp = checkpoint.to_string_lossy().into_owned();
    let write_to = checkpoint.clone();
    vec![
        DemoStep::Say(String::from(
            "A job of three units in a checkpoint: plan it, brief the ready unit, record its end.",
        )),
        DemoStep::Prepare(
            format!("write {cp}"),
            Box::new(move || {
                let doc = sjson::parse(DEMO_CHECKPOINT).map_err(std::io::Error::other)?;
                if let Some(dir) = write_to.parent() {
                    std::fs::create_dir_all(dir)?;
                }
                std::fs::write(&write_to, sjson::to_checkpoint_text(&doc))
            }),
        ),
        DemoStep::Call("shiftwork_plan", json!({"checkpoint": cp})),
        DemoStep::Call("shiftwork_clock_in", json!({"checkpoint": cp})),
        DemoStep::Call(
            "shiftwork_clock_out",
            json!({
                "checkpoint": cp,
                "unit_id": "build",
                "status": "done",
                "handoff_patch": {"next_action": "Review the core."},
                "history_entry": {"unit": "build", "outcome": "core built, tests green"},
                "accounting": {"tokens": 41250, "duration_ms": 95000, "model": "claude-sonnet-4"},
            }),
        ),
        DemoStep::Call("shiftwork_status", json!({"checkpoint": cp})),
    ]
}
