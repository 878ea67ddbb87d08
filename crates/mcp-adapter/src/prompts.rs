//! The prompts (MCP `prompts/list`, `prompts/get`) — slash commands a person runs in their client —
//! and the completion of their arguments and of the resource templates' variables
//! (`completion/complete`).
//!
//! A prompt writes no file and calls no tool: it hands the model the instruction a person would type
//! (start the next ready unit, finish a unit, hand a review to another agent, take the next contract,
//! summarize the day for the work log), with the state it needs embedded as resources, so the model
//! calls the tools itself and the person sees each call. Each prompt is a definition — name, title,
//! description, arguments with their descriptions and how they complete — and `prompts/list`
//! renders them.
//!
//! Argument values are the client's text: each is bounded ([`MAX_ARGUMENT_CHARS`]) and its control
//! and bidirectional characters escaped before it is placed in a message.

use serde_json::{Value, json};
use shiftwork_seams::echo::{clip_echo, escape_controls};

use crate::resources::{Contents, Kind, Views};

/// The longest argument value a prompt takes, in characters.
pub const MAX_ARGUMENT_CHARS: usize = 2_000;

/// The longest wait `take_contract` asks `poll_next_task` for, in seconds (the tool's maximum).
pub const MAX_WAIT_SEC: u64 = 60;

/// The most values one completion answers (MCP's bound).
pub const MAX_COMPLETIONS: usize = 100;

/// Where an argument's completions come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completer {
    /// The unit ids of the job's plan, unfinished first.
    UnitIds,
    /// The unit statuses a clock-out takes.
    UnitStatuses,
    /// The agent names the contracts queue holds (targets and requesters).
    AgentNames,
    /// The contract ids the queue shows.
    ContractIds,
    /// IANA zone names, as hours expressions take them (`TZ=…`).
    Zones,
    /// Nothing to offer.
    Nothing,
}

/// One argument of a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptArg {
    /// Its name.
    pub name: &'static str,
    /// What it is, its format and its default.
    pub description: &'static str,
    /// Whether `prompts/get` needs it.
    pub required: bool,
    /// How it completes.
    pub completer: Completer,
}

/// One prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptDef {
    /// Its name (the slash command).
    pub name: &'static str,
    /// Its title.
    pub title: &'static str,
    /// What it does.
    pub description: &'static str,
    /// Its arguments, in order.
    pub arguments: &'static [PromptArg],
    /// The tool group it uses (listed only when that group is served).
    pub group: &'static str,
}

impl PromptDef {
    /// The `prompts/list` entry.
    pub fn descriptor(&self) -> Value {
        json!({
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "arguments": self.arguments.iter().map(|a| json!({
                "name": a.name,
                "description": a.description,
                "required": a.required,
            })).collect::<Vec<_>>(),
        })
    }
}

const UNIT_ID: PromptArg = PromptArg {
    name: "unit_id",
    description: "The unit's id in the plan; default: the plan's cursor (the next unit to run). Completes from the plan.",
    required: false,
    completer: Completer::UnitIds,
};

/// Every prompt there is, in listing order.
pub static PROMPTS: &[PromptDef] = &[
    PromptDef {
        name: "start_unit",
        title: "Start the next ready unit",
        description: "Clock in to the next ready unit of the job (or the one named) with shiftwork_clock_in and show its brief: what to do, the invariants, the handoff and the files it may touch.",
        arguments: &[UNIT_ID],
        group: "shiftwork",
    },
    PromptDef {
        name: "finish_unit",
        title: "Finish a unit",
        description: "Clock out a unit with shiftwork_clock_out, its history entry, handoff and cost filled in from this conversation, shown for approval before the call.",
        arguments: &[
            UNIT_ID,
            PromptArg {
                name: "status",
                description: "The unit's new status: done (default), blocked, in_progress, todo or dropped.",
                required: false,
                completer: Completer::UnitStatuses,
            },
        ],
        group: "shiftwork",
    },
    PromptDef {
        name: "hand_review",
        title: "Hand a review to another agent",
        description: "Dispatch a review of this conversation's work to another agent as a contract (dispatch_contract), with the files it must look at as inputs, and say how to follow it.",
        arguments: &[
            PromptArg {
                name: "agent",
                description: "The agent to review: 1-64 of A-Z a-z 0-9 . _ @ : -, starting with a letter or digit. Completes from the agents the contracts queue knows.",
                required: true,
                completer: Completer::AgentNames,
            },
            PromptArg {
                name: "focus",
                description: "What the reviewer should look at most (free text); default: the whole change.",
                required: false,
                completer: Completer::Nothing,
            },
        ],
        group: "contracts",
    },
    PromptDef {
        name: "take_contract",
        title: "Take the next contract",
        description: "Take the next contract handed to you (poll_next_task), do the work it asks for and fulfil it, or release it when you cannot.",
        arguments: &[PromptArg {
            name: "wait_sec",
            description: "Seconds poll_next_task waits for work when none is waiting: an integer from 0 (the default: answer at once) to 60.",
            required: false,
            completer: Completer::Nothing,
        }],
        group: "contracts",
    },
    PromptDef {
        name: "day_summary",
        title: "Today's summary for the work log",
        description: "Summarize today's work from the work log's items for the person, and add what was finished but not yet logged (worklog_append, once per piece of work).",
        arguments: &[PromptArg {
            name: "zone",
            description: "The IANA time zone whose day is today (Europe/London); default: the server's zone. Completes from the zone names hours expressions take.",
            required: false,
            completer: Completer::Zones,
        }],
        group: "worklog",
    },
];

/// The prompts a server of `groups` serves.
pub fn definitions(groups: &[&str]) -> Vec<&'static PromptDef> {
    PROMPTS.iter().filter(|p| groups.contains(&p.group)).collect()
}

/// Why a prompt or a completion was refused: a JSON-RPC `-32602` with this sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    /// No prompt of this name.
    #[error("unknown prompt '{0}'")]
    UnknownPrompt(String),
    /// An argument the prompt does not declare.
    #[error("prompt '{prompt}' takes no argument '{argument}'; known: {known}")]
    UnknownArgument {
        /// The prompt.
        prompt: &'static str,
        /// The argument, clipped.
        argument: String,
        /// The arguments it takes.
        known: String,
    },
    /// A required argument is missing.
    #[error("prompt '{prompt}' needs the argument '{argument}'")]
    Missing {
        /// The prompt.
        prompt: &'static str,
        /// The argument.
        argument: &'static str,
    },
    /// An argument that is not a string, or too long.
    #[error(
        "argument '{argument}' of prompt '{prompt}' must be a string of at most {MAX_ARGUMENT_CHARS} characters"
    )]
    Invalid {
        /// The prompt.
        prompt: &'static str,
        /// The argument.
        argument: &'static str,
    },
    /// A completion reference that names nothing served.
    #[error("{0}")]
    BadReference(String),
}

/// `prompts/get`: the prompt `name` with `arguments` (a JSON object of strings, or absent), as its
/// result object.
pub fn get(
    prompts: &[&'static PromptDef],
    views: &Views,
    checkpoint: &str,
    name: &str,
    arguments: Option<&Value>,
) -> Result<Value, PromptError> {
    let prompt = prompts
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| PromptError::UnknownPrompt(clip_echo(name)))?;
    let given = match arguments {
        None | Some(Value::Null) => serde_json::Map::new(),
        Some(Value::Object(map)) => map.clone(),
        Some(_) => {
            return Err(PromptError::BadReference(String::from(
                "params.arguments must be an object of strings",
            )));
        }
    };
    let mut values: Vec<(&'static str, Option<String>)> = Vec::new();
    for (key, _) in &given {
        if !prompt.arguments.iter().any(|a| a.name == key) {
            return Err(PromptError::UnknownArgument {
                prompt: prompt.name,
                argument: clip_echo(key),
                known: prompt
                    .arguments
                    .iter()
                    .map(|a| a.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    }
    for arg in prompt.arguments {
        let value = match given.get(arg.name) {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) if text.chars().count() <= MAX_ARGUMENT_CHARS => {
                Some(escape_controls(text.trim()).into_owned()).filter(|t| !t.is_empty())
            }
            Some(_) => {
                return Err(PromptError::Invalid {
                    prompt: prompt.name,
                    argument: arg.name,
                });
            }
        };
        if arg.required && value.is_none() {
            return Err(PromptError::Missing {
                prompt: prompt.name,
                argument: arg.name,
            });
        }
        values.push((arg.name, value));
    }
    let value = |name: &str| {
        values
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, v)| v.clone())
    };
    let embed = |uri: &str| views.read(uri).ok().map(|contents| embedded(&contents));
    let checkpoint = escape_controls(checkpoint).into_owned();
    let (text, attachments): (String, Vec<Value>) = match prompt.name {
        "start_unit" => {
            let unit = value("unit_id");
            let which = unit
                .as_deref()
                .map_or(String::from("the next ready unit (the plan's cursor)"), |u| {
                    format!("the unit '{u}'")
                });
            (
                format!(
                    "Start {which} of the job whose checkpoint is '{checkpoint}'.\n\n\
                     1. Call shiftwork_clock_in with checkpoint '{checkpoint}'{}.\n\
                     2. If it answers result \"brief\", show me the brief: the unit's title and what to do, its role, \
                     the job's invariants, the handoff's next action and open questions, what not to do, the files it \
                     may touch and what upstream units produced. Then start the work.\n\
                     3. If it answers \"escalate\", show me the question that needs a person and stop; if \"error\", \
                     show the reason and the units that are ready.\n\nThe job's plan now:",
                    unit.as_deref()
                        .map_or(String::new(), |u| format!(" and unit_id '{u}'"))
                ),
                embed("shiftwork://plan").into_iter().collect(),
            )
        }
        "finish_unit" => {
            let unit = value("unit_id");
            let status = value("status").unwrap_or_else(|| String::from("done"));
            let which = unit.as_deref().map_or(
                String::from("the unit this conversation worked on (the plan's cursor if unsure)"),
                |u| format!("the unit '{u}'"),
            );
            (
                format!(
                    "Finish {which} of the job whose checkpoint is '{checkpoint}' with status '{status}'.\n\n\
                     Prepare the arguments of shiftwork_clock_out from this conversation and show them to me before \
                     calling it:\n\
                     - checkpoint: '{checkpoint}'; unit_id: {}; status: '{status}';\n\
                     - history_entry: {{\"unit\": <the unit id>, \"outcome\": one line of what was achieved, \"notes\": what \
                     a successor must know, \"produced\": [{{\"kind\": \"commit\" or \"file\", \"ref\": …}}] for what was made}};\n\
                     - handoff_patch: {{\"next_action\": the next step for whoever comes next, \"open_questions\": questions \
                     left open, \"do_not\": mistakes to avoid}} (only what changed);\n\
                     - accounting: {{\"tokens\": the tokens this work used, \"duration_ms\": how long it took, \"model\": the \
                     model's name}}, estimates marked with \"estimate\": true.\n\
                     Then call it, and tell me the new cursor, or the reason if it refuses.",
                    unit.as_deref()
                        .map_or(String::from("<the unit id>"), |u| format!("'{u}'"))
                ),
                embed("shiftwork://status").into_iter().collect(),
            )
        }
        "hand_review" => {
            let agent = value("agent").unwrap_or_default();
            if shiftwork_contracts::AgentId::new(&agent).is_err() {
                return Err(PromptError::Invalid {
                    prompt: prompt.name,
                    argument: "agent",
                });
            }
            let focus = value("focus").map_or(String::new(), |f| format!(" Focus the review on: {f}."));
            (
                format!(
                    "Hand a review of the work of this conversation to the agent '{agent}'.{focus}\n\n\
                     Call dispatch_contract with target_agent '{agent}', a title starting with \"Review: \", a \
                     description of what changed and what to check, the files to review as inputs (their paths \
                     relative to workspace_root, the repository's root directory), and an idempotency_key naming \
                     this change, so a repeated call does not dispatch twice. Then tell me the contract_id, and \
                     that inspect_mesh_state (or the resource shiftwork://contracts/<contract_id>) shows when the \
                     review is fulfilled."
                ),
                embed("shiftwork://contracts").into_iter().collect(),
            )
        }
        "take_contract" => {
            let wait = match value("wait_sec") {
                None => 0,
                Some(text) => match text.parse::<u64>() {
                    Ok(seconds) if seconds <= MAX_WAIT_SEC => seconds,
                    _ => {
                        return Err(PromptError::Invalid {
                            prompt: prompt.name,
                            argument: "wait_sec",
                        });
                    }
                },
            };
            (
                format!(
                    "Take the next contract handed to me.\n\n\
                     1. Call poll_next_task with wait_sec {wait}. If it answers has_task false, say that nothing is \
                     waiting and stop.\n\
                     2. Otherwise read the contract: its title, description, inputs (verify_contract checks that the \
                     input files did not change since dispatch) and the output schema the result must follow.\n\
                     3. Do the work. If it takes long, call extend_ttl before the lease runs out.\n\
                     4. Call fulfill_contract with the contract_id, the claim_epoch, a result_summary and an output \
                     that follows the schema; if the work cannot be done, release_contract (someone else may) or \
                     fail_contract (nobody can), with the reason."
                ),
                Vec::new(),
            )
        }
        _ => {
            let zone = value("zone").map_or(String::from("the server's time zone"), |z| {
                format!("the zone {z}")
            });
            (
                format!(
                    "Summarize today's work (today in {zone}) for me in a few sentences, from the work log's items \
                     below and this conversation: what was finished, what is still open.\n\n\
                     Then, for each piece of work finished in this conversation that is not in the log yet, call \
                     worklog_append once with one plain past-tense sentence. If the log answers no_dir or no_file, \
                     tell me in one line and stop.\n\nToday's work log:"
                ),
                embed("shiftwork://worklog/today").into_iter().collect(),
            )
        }
    };
    let mut messages = vec![json!({"role": "user", "content": {"type": "text", "text": text}})];
    messages.extend(
        attachments
            .into_iter()
            .map(|content| json!({"role": "user", "content": content})),
    );
    Ok(json!({"description": prompt.description, "messages": messages}))
}

/// A resource's contents as an embedded resource of a prompt message.
fn embedded(contents: &Contents) -> Value {
    json!({
        "type": "resource",
        "resource": {"uri": contents.uri, "mimeType": contents.mime_type, "text": contents.text},
    })
}

/// `completion/complete`: the values for `argument` of the prompt or resource template `reference`
/// (its `params.ref`) that start with `value` (any case), and the result object.
pub fn complete(
    prompts: &[&'static PromptDef],
    views: &Views,
    reference: &Value,
    argument: &str,
    value: &str,
) -> Result<Value, PromptError> {
    let completer = match (
        reference.get("type").and_then(Value::as_str),
        reference.get("name").and_then(Value::as_str),
        reference.get("uri").and_then(Value::as_str),
    ) {
        (Some("ref/prompt"), Some(name), _) => {
            let prompt = prompts
                .iter()
                .find(|p| p.name == name)
                .ok_or_else(|| PromptError::UnknownPrompt(clip_echo(name)))?;
            prompt
                .arguments
                .iter()
                .find(|a| a.name == argument)
                .map_or(Completer::Nothing, |a| a.completer)
        }
        (Some("ref/resource"), _, Some(uri)) => {
            let template = views.templates().find(|t| t.uri == uri).ok_or_else(|| {
                PromptError::BadReference(format!("no resource template '{}'", clip_echo(uri)))
            })?;
            match (template.kind, template.variable) {
                (Kind::Brief, Some(v)) if v == argument => Completer::UnitIds,
                (Kind::Contract, Some(v)) if v == argument => Completer::ContractIds,
                _ => Completer::Nothing,
            }
        }
        _ => {
            return Err(PromptError::BadReference(String::from(
                "params.ref must be {\"type\": \"ref/prompt\", \"name\": …} or {\"type\": \"ref/resource\", \"uri\": …}",
            )));
        }
    };
    let candidates = candidates(views, completer);
    let wanted = value.to_lowercase();
    let matching: Vec<String> = candidates
        .into_iter()
        .filter(|c| c.to_lowercase().starts_with(&wanted))
        .collect();
    let total = matching.len();
    let values: Vec<String> = matching.into_iter().take(MAX_COMPLETIONS).collect();
    Ok(json!({"completion": {"values": values, "total": total, "hasMore": total > MAX_COMPLETIONS}}))
}

/// Every candidate value of a completer, in the order offered.
fn candidates(views: &Views, completer: Completer) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut unique = |values: Vec<String>| -> Vec<String> {
        values.into_iter().filter(|v| seen.insert(v.clone())).collect()
    };
    match completer {
        Completer::Nothing => Vec::new(),
        Completer::UnitStatuses => ["done", "blocked", "in_progress", "todo", "dropped"]
            .map(String::from)
            .to_vec(),
        Completer::Zones => chrono_tz::TZ_VARIANTS
            .iter()
            .map(|z| z.name().to_owned())
            .collect(),
        Completer::UnitIds => views.gathered_job().map_or_else(Vec::new, |job| {
            unique(
                job.waves
                    .iter()
                    .flatten()
                    .chain(&job.unplanned)
                    .chain(&job.finished)
                    .map(|u| u.id.clone())
                    .collect(),
            )
        }),
        Completer::AgentNames => match views.gathered_queue() {
            Some(Ok(queue)) => unique(
                queue
                    .claimed
                    .iter()
                    .flat_map(|c| [c.holder.clone(), c.requester.clone()])
                    .chain(
                        queue
                            .waiting
                            .iter()
                            .flat_map(|w| [w.target.clone(), w.requester.clone()]),
                    )
                    .chain(
                        queue
                            .ended
                            .iter()
                            .flat_map(|e| [e.target.clone(), e.requester.clone()]),
                    )
                    .collect(),
            ),
            _ => Vec::new(),
        },
        Completer::ContractIds => match views.gathered_queue() {
            Some(Ok(queue)) => unique(
                queue
                    .claimed
                    .iter()
                    .map(|c| c.id.clone())
                    .chain(queue.waiting.iter().map(|w| w.id.clone()))
                    .chain(queue.ended.iter().map(|e| e.id.clone()))
                    .collect(),
            ),
            _ => Vec::new(),
        },
    }
}
