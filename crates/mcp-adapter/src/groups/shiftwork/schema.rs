//! The `inputSchema` and `outputSchema` of the shift-work tools: every argument with what it is, its
//! format and its default, and every answer as the `result` variants it takes, each member typed.
//!
//! The answers are the core's (`shiftwork_core::answer`); these schemas describe them and a test
//! holds every answer to them. Output roots stay open objects with `result` required: a branch names
//! the members of its `result`, and members the checkpoint holds verbatim (a unit, the handoff) are
//! open objects whose known members are typed.

use serde_json::{Value, json};

use crate::schema::{
    Member, agent_id, any_object, array, boolean, branch, constant, integer, item, map_of, nullable, object,
    one_of, record, string, strings, variants, with,
};

/// The unit statuses of a checkpoint.
const STATUSES: [&str; 5] = ["todo", "in_progress", "done", "blocked", "dropped"];

/// The roles of a unit.
const ROLES: [&str; 3] = ["planner", "implementer", "reviewer"];

/// The `checkpoint` argument of every checkpoint tool.
pub fn checkpoint() -> Value {
    string(
        "The checkpoint file (usually .shiftwork/checkpoint.json): absolute, or from the server's directory; over HTTP within --roots.",
    )
}

/// `shiftwork_clock_in`'s `unit_id`.
pub fn clock_in_unit() -> Value {
    string("The unit to brief; it must be in shiftwork_plan's ready. Default: plan.cursor.")
}

/// `shiftwork_status`'s `search`.
pub fn search() -> Value {
    string(
        "Words a line must all hold (any case) in the files under .shiftwork/archive/; at most 50 matches. Default: no search.",
    )
}

/// A question of the handoff: a text, or a relay or decision question.
fn question() -> Value {
    json!({"anyOf": [
        {"type": "string"},
        item(
            vec![
                ("q", string("The question.")),
                ("kind", one_of(&["relay", "decision"], "relay: a shell probe answers it; decision: a person must.")),
                ("probe", string("relay: the shell command whose exit status answers it.")),
            ],
            &["q", "kind"],
        ),
    ]})
}

fn produced() -> Value {
    array(
        item(
            vec![
                ("kind", string("What kind of thing: commit, file, pr, doc…")),
                ("ref", string("Where it is: a sha, a path, a URL.")),
            ],
            &["kind", "ref"],
        ),
        "What the unit produced.",
    )
}

/// The arguments of `shiftwork_clock_out` after `checkpoint`, in schema order.
pub fn clock_out_arguments() -> Vec<Member> {
    vec![
        (
            "unit_id",
            string(
                "The unit that ended: plan.cursor, or a unit shiftwork_clock_in briefed since its last clock-out.",
            ),
        ),
        ("status", one_of(&STATUSES, "The unit's new status.")),
        (
            "handoff_patch",
            object(
                vec![
                    ("next_action", string("What the next agent does first.")),
                    (
                        "open_questions",
                        array(
                            question(),
                            "Questions left open; a decision one escalates the next clock-in.",
                        ),
                    ),
                    ("do_not", strings("Things the next agent must not do.")),
                    ("notes", string("Free notes.")),
                ],
                &[],
                "Changes to the handoff, shallow-merged (a key given replaces its value); {} for none.",
            ),
        ),
        (
            "history_entry",
            object(
                vec![
                    ("unit", string("The unit's id.")),
                    ("outcome", string("What came of it, in a sentence.")),
                    ("notes", string("Free notes.")),
                    ("produced", produced()),
                ],
                &[],
                "The unit's outcome (unit and outcome required), pushed onto the history ring of 5.",
            ),
        ),
        (
            "accounting",
            object(
                vec![
                    ("tokens", with(integer("Tokens the unit used."), "minimum", 0)),
                    (
                        "duration_ms",
                        with(integer("Wall time the unit took, in ms."), "minimum", 0),
                    ),
                    (
                        "model",
                        string("The model that did it; job.roles may restrict it."),
                    ),
                    (
                        "cache_read_tokens",
                        with(integer("Tokens read from a prompt cache."), "minimum", 0),
                    ),
                    ("tool_uses", with(integer("Tool calls made."), "minimum", 0)),
                    ("note", string("A free note.")),
                    ("estimate", boolean("true when the figures are estimates.")),
                ],
                &[],
                "The unit's cost, appended to <checkpoint>.log.jsonl (tokens and duration_ms required; other keys kept). Default: no line.",
            ),
        ),
        (
            "agent_id",
            agent_id(
                "Who did the unit, for the ledger line only. Default: none; over HTTP the authenticated caller (no other).",
            ),
        ),
        (
            "agreements",
            object(
                vec![
                    ("adopt", strings("Texts to add.")),
                    ("retire", strings("Texts to remove.")),
                ],
                &[],
                "Changes to job.agreements (at most 20).",
            ),
        ),
        (
            "conclusion",
            object(
                vec![
                    (
                        "outcome",
                        one_of(&["resolved", "inconclusive", "stopped"], "How the job ended."),
                    ),
                    ("evidence", strings("What shows it.")),
                    ("supported", string("The hypothesis supported, if any.")),
                ],
                &["outcome", "evidence"],
                "The job's conclusion; only from a unit with concludes: true.",
            ),
        ),
        (
            "follow_ups",
            array(
                item(
                    vec![
                        ("id", string("A new unit id.")),
                        ("title", string("One line.")),
                        ("role", one_of(&ROLES, "Who does it.")),
                        ("brief_path", string("Its brief, a repository path.")),
                        ("depends_on", strings("Unit ids that must be done first.")),
                        ("touches", strings("Repository paths it writes.")),
                        ("verify", string("The command that checks it.")),
                    ],
                    &["id", "title", "role", "brief_path"],
                ),
                "New units appended to the plan, status todo.",
            ),
        ),
    ]
}

/// `work_plan`'s `nodes`.
pub fn nodes() -> Value {
    array(
        json!({
            "type": "object",
            "properties": {
                "id": string("The node's id, unique."),
                "depends_on": strings("Nodes that must run in an earlier wave. Default none."),
                "priority": integer("Higher runs first within a wave. Default 0."),
                "touches": strings("Paths it writes; no wave holds two writers of one path. Default none."),
            },
            "required": ["id"],
        }),
        "The graph, one object per node.",
    )
}

/// The refusal branch of every tool: `{"result": "error", "reason"}`.
fn error() -> Value {
    branch(
        vec![
            ("result", constant("error", "Refused; nothing was written.")),
            (
                "reason",
                string(
                    "Why, in one sentence (at most 2,000 characters). Refusals are answers, not protocol errors.",
                ),
            ),
        ],
        &["result", "reason"],
    )
}

fn ids(description: &str) -> Value {
    strings(description)
}

/// The members every plan answer opens with.
fn plan_members(with_ready: bool) -> Vec<Member> {
    let mut members = vec![
        ("result", constant("plan", "The batch view.")),
        (
            "batches",
            array(
                json!({"type": "array", "items": {"type": "string"}}),
                "The waves, in order: each a list of ids that may run in parallel, higher priority first.",
            ),
        ),
    ];
    if with_ready {
        members.push((
            "ready",
            ids("The first wave: the units that may be clocked in now."),
        ));
    }
    members.extend([
        (
            "sequence",
            ids("Every id in run order: the waves one after another."),
        ),
        ("width", integer("The longest wave's length.")),
    ]);
    members
}

fn held() -> Member {
    (
        "held",
        array(
            item(
                vec![
                    ("id", string("The held unit or node.")),
                    ("batch", integer("The first wave it was held out of, from 0.")),
                    ("by", string("The one that claimed the path in that wave.")),
                    ("path", string("The path both touch, normalized.")),
                ],
                &["id", "batch", "by", "path"],
            ),
            "Units kept out of a wave because another in it touches the same file; only when touches are declared.",
        ),
    )
}

fn required_of(members: &[Member], optional: &[&str]) -> Vec<&'static str> {
    members
        .iter()
        .map(|(name, _)| *name)
        .filter(|n| !optional.contains(n))
        .collect()
}

fn result(values: &[&str]) -> Value {
    one_of(values, "Which answer this is; error is a refusal.")
}

/// `shiftwork_plan`'s answers.
pub fn plan_output() -> Value {
    let dims = || {
        map_of(
            json!({"type": "integer"}),
            "Per budget dimension (tokens, units).",
        )
    };
    let mut members = plan_members(true);
    members.extend([
        ("cursor", string("plan.cursor: the unit to clock in by default.")),
        held(),
        (
            "budget",
            object(
                vec![
                    ("limit", dims()),
                    ("spent", dims()),
                    ("in_flight", ids("Units briefed and not yet clocked out.")),
                    ("remaining", dims()),
                    ("per_unit", integer("The tokens a unit is expected to cost.")),
                    ("affordable", integer("How many more units fit.")),
                ],
                &[],
                "Only when the job declares job.budget: limits, what was spent and what remains.",
            ),
        ),
        (
            "ranking",
            array(
                item(
                    vec![
                        ("id", string("A candidate unit.")),
                        ("score", string("Its reported score, as written.")),
                        ("sha", string("Its submitted commit.")),
                    ],
                    &["id", "score", "sha"],
                ),
                "Only for an experimentation job: the candidates, best first.",
            ),
        ),
        (
            "winner",
            nullable(string("Only with ranking: the best candidate; null when none.")),
        ),
    ]);
    let required = required_of(&members, &["held", "budget", "ranking", "winner"]);
    variants(
        "result",
        result(&["plan", "error"]),
        vec![branch(members, &required), error()],
    )
}

/// `work_plan`'s answers.
pub fn work_plan_output() -> Value {
    let mut members = plan_members(false);
    members.push(held());
    let required = required_of(&members, &["held"]);
    variants(
        "result",
        result(&["plan", "error"]),
        vec![branch(members, &required), error()],
    )
}

/// `shiftwork_clock_in`'s answers.
pub fn clock_in_output() -> Value {
    let unit = object(
        vec![
            ("id", string("Its id.")),
            ("title", string("One line.")),
            (
                "brief_path",
                string("Its brief, relative to the repository: read it first."),
            ),
            ("status", one_of(&STATUSES, "Its status.")),
            ("role", one_of(&ROLES, "Who does it.")),
            ("depends_on", strings("Units done before it.")),
            ("verify", string("The command that checks it.")),
        ],
        &[
            "id",
            "title",
            "brief_path",
            "status",
            "role",
            "depends_on",
            "verify",
        ],
        "The unit, as the checkpoint holds it.",
    );
    let handoff = object(
        vec![
            ("next_action", string("What to do first.")),
            ("open_questions", array(question(), "Questions left open.")),
            ("do_not", strings("Things not to do.")),
            ("notes", string("Free notes.")),
        ],
        &["next_action", "open_questions", "do_not"],
        "The handoff from the agent before.",
    );
    let brief = vec![
        (
            "result",
            constant(
                "brief",
                "The unit is yours: the brief follows; a brief line was appended to the ledger.",
            ),
        ),
        ("unit", unit),
        ("role", one_of(&ROLES, "Your role for this unit.")),
        ("invariants", strings("The job's constraints: hold them.")),
        ("handoff", handoff),
        ("do_not", strings("The handoff's do_not.")),
        (
            "files",
            array(
                item(
                    vec![
                        ("path", string("A repository path.")),
                        ("role", string("What it is to the job.")),
                    ],
                    &["path", "role"],
                ),
                "The job's artifacts.",
            ),
        ),
        (
            "agreements",
            strings("Only when the job keeps agreements: what the agents agreed."),
        ),
        (
            "upstream",
            array(
                item(
                    vec![("unit", string("A dependency's id.")), ("last", produced())],
                    &["unit", "last"],
                ),
                "Only when a dependency recorded attempts: what each produced last.",
            ),
        ),
    ];
    let brief_required = required_of(&brief, &["agreements", "upstream"]);
    let escalate = vec![
        (
            "result",
            constant("escalate", "A person is needed; nothing was written."),
        ),
        ("reason", string("Why, in one sentence.")),
        (
            "open_questions",
            array(question(), "Only for an open question: the handoff's questions."),
        ),
        (
            "probe",
            record(
                vec![
                    ("q", string("The relay question probed.")),
                    (
                        "exit",
                        nullable(integer("Its probe's exit status; null when it did not end.")),
                    ),
                ],
                &["q", "exit"],
                "Only when a relay probe ran (--probes): its question and exit status.",
            ),
        ),
    ];
    let success = vec![
        (
            "result",
            constant("success", "Every unit is done or dropped; nothing was written."),
        ),
        (
            "reason",
            constant("all units done or dropped", "Always this sentence."),
        ),
    ];
    variants(
        "result",
        result(&["brief", "escalate", "success", "error"]),
        vec![
            branch(brief, &brief_required),
            branch(escalate, &["result", "reason"]),
            branch(success, &["result", "reason"]),
            error(),
        ],
    )
}

/// `shiftwork_clock_out`'s answers.
pub fn clock_out_output() -> Value {
    let ok = vec![
        (
            "result",
            constant("ok", "Recorded: checkpoint and ledger written."),
        ),
        ("unit", string("The unit clocked out.")),
        ("status", one_of(&STATUSES, "Its new status.")),
        (
            "cursor",
            string("The new plan.cursor: the next unit to clock in."),
        ),
        ("log", string("The ledger file the accounting line went to.")),
    ];
    let required = required_of(&ok, &[]);
    variants(
        "result",
        result(&["ok", "error"]),
        vec![branch(ok, &required), error()],
    )
}

/// `shiftwork_status`'s answers.
pub fn status_output() -> Value {
    let status = vec![
        ("result", constant("status", "The summary.")),
        ("cursor", string("plan.cursor.")),
        (
            "units",
            map_of(json!({"type": "integer"}), "How many units have each status."),
        ),
        (
            "open_questions",
            integer("How many questions the handoff leaves open."),
        ),
        (
            "last_history",
            nullable(any_object(
                "The newest history entry (unit, outcome, notes, produced); null when none.",
            )),
        ),
        (
            "search",
            object(
                vec![
                    ("query", string("The words searched.")),
                    (
                        "matches",
                        array(
                            item(
                                vec![
                                    (
                                        "file",
                                        string("The archive file, relative to .shiftwork/archive/."),
                                    ),
                                    ("line", integer("The line number, from 1.")),
                                    ("text", string("The line.")),
                                ],
                                &["file", "line", "text"],
                            ),
                            "The matching lines, at most 50.",
                        ),
                    ),
                    ("truncated", boolean("More lines matched than were returned.")),
                ],
                &["query", "matches", "truncated"],
                "Only with the search argument: the archive lines that hold every word.",
            ),
        ),
    ];
    let required = required_of(&status, &["search"]);
    variants(
        "result",
        result(&["status", "error"]),
        vec![branch(status, &required), error()],
    )
}
