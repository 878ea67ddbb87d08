//! Issue 35 item 1: every tool's definition is complete, and true.
//!
//! - Every argument and every member of every answer, at any depth, says what it takes (a type) and
//!   what it means (a description), and every schema keeps to what every major client loads (no
//!   `type` array, `items` on every array, no `$ref`).
//! - Every answer the tools really give validates against the tool's `outputSchema` with a strict
//!   validator (formats asserted), and the answers run here reach every shape (`oneOf` branch) of
//!   every tool and every member of every shape at least once, successes and refusals alike: a
//!   member the schema declares but no answer carries, or types wrongly, fails.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use shiftwork_core::Env;
use shiftwork_core::json as sjson;
use shiftwork_mcp::groups;
use shiftwork_mcp::registry::{Registry, ToolDef};
use shiftwork_mcp::schema_lint::{lint, lint_answer};
use shiftwork_mcp::settings::Settings;

/// Settings for every group as the demo gives them, inside `root`.
fn demo_settings(root: &Path) -> Settings {
    let mut settings = Settings::new(Vec::new(), Vec::new());
    for group in groups::all() {
        for (setting, value) in (group.demo_settings)(root) {
            settings.set_flag(setting, value);
        }
    }
    settings
}

fn registry(root: &Path) -> Registry {
    let all = groups::all();
    let names: Vec<&str> = all.iter().map(|g| g.name).collect();
    Registry::build(&all, &names, &demo_settings(root)).unwrap()
}

/// Counts the properties of `schema` at any depth (inside `properties`, `items`, `anyOf`/`oneOf`).
fn count_properties(schema: &Value) -> usize {
    let Some(object) = schema.as_object() else {
        return 0;
    };
    let mut n = 0;
    if let Some(Value::Object(properties)) = object.get("properties") {
        n += properties.len();
        n += properties.values().map(count_properties).sum::<usize>();
    }
    if let Some(items) = object.get("items") {
        n += count_properties(items);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(branches)) = object.get(key) {
            n += branches.iter().map(count_properties).sum::<usize>();
        }
    }
    n
}

#[test]
fn issue35_item1_every_argument_and_answer_member_has_a_type_and_a_description() {
    let tmp = tempfile::tempdir().unwrap();
    let registry = registry(tmp.path());
    let mut broken = Vec::new();
    let (mut arguments, mut nested, mut members) = (0, 0, 0);
    for tool in registry.tools() {
        let descriptor = serde_json::to_value(shiftwork_mcp::server::descriptor(tool)).unwrap();
        for violation in lint(&descriptor["inputSchema"]) {
            broken.push(format!("{} inputSchema {violation}", tool.name));
        }
        for violation in lint_answer(&descriptor["outputSchema"]) {
            broken.push(format!("{} outputSchema {violation}", tool.name));
        }
        let top = tool.known_arguments().len();
        arguments += top;
        nested += count_properties(&tool.input_schema) - top;
        members += count_properties(&tool.output_schema);
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
    // The coverage the issue asks to state: every one of them is typed and described.
    eprintln!(
        "{} tools: {arguments}/{arguments} arguments and {nested}/{nested} members of object arguments described and typed; {members}/{members} answer members described and typed",
        registry.tools().len()
    );
    assert_eq!(arguments, 65, "the tools' arguments (issue 35 counts 65)");
}

/// The schemas' agent-id pattern is the family's one grammar (`shiftwork_seams::agent`).
#[test]
fn issue35_item1_the_agent_id_pattern_is_the_agent_id_grammar() {
    let pattern = regex_lite(shiftwork_mcp::schema::AGENT_ID_PATTERN);
    let long = "a".repeat(64);
    let too_long = "a".repeat(65);
    for candidate in [
        "alice",
        "bob.smith",
        "ci-runner-7",
        "svc:deploy@eu",
        "0x",
        "-x",
        "_x",
        ".x",
        "",
        "bad name",
        "é",
        "a/b",
        long.as_str(),
        too_long.as_str(),
        "a\n",
    ] {
        assert_eq!(
            pattern.is_valid(&json!(candidate)),
            shiftwork_seams::agent::check_agent_id(candidate).is_ok(),
            "{candidate:?}"
        );
    }
}

/// A validator of `pattern` (the `jsonschema` crate's regular expressions, as a client's).
fn regex_lite(pattern: &str) -> jsonschema::Validator {
    jsonschema::validator_for(&json!({"type": "string", "pattern": pattern})).unwrap()
}

/// The answers seen, per tool and shape, and the members each carried.
struct Answers {
    schemas: BTreeMap<&'static str, Value>,
    seen: BTreeMap<(&'static str, usize), BTreeSet<String>>,
}

impl Answers {
    fn new(tools: &[ToolDef]) -> Answers {
        Answers {
            schemas: tools.iter().map(|t| (t.name, t.output_schema.clone())).collect(),
            seen: BTreeMap::new(),
        }
    }

    /// Validates `answer` of `tool` strictly and records which shape it is and its members.
    fn check(&mut self, tool: &'static str, answer: &Value) {
        let schema = &self.schemas[tool];
        let strict = |schema: &Value| {
            jsonschema::options()
                .should_validate_formats(true)
                .build(schema)
                .unwrap_or_else(|e| panic!("{tool}: the schema does not compile: {e}"))
        };
        let errors: Vec<String> = strict(schema)
            .iter_errors(answer)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{tool}: {answer}\n{}", errors.join("\n"));
        let branches = schema
            .get("oneOf")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_else(|| vec![schema.clone()]);
        let matching: Vec<usize> = branches
            .iter()
            .enumerate()
            .filter(|(_, b)| strict(b).is_valid(answer))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(matching.len(), 1, "{tool}: exactly one shape: {answer}");
        let members = self.seen.entry((tool, matching[0])).or_default();
        members.extend(answer.as_object().unwrap().keys().cloned());
    }

    /// Every shape of every tool was seen, with every member it declares.
    fn assert_complete(&self) {
        let mut missing = Vec::new();
        for (tool, schema) in &self.schemas {
            let branches = schema
                .get("oneOf")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_else(|| vec![schema.clone()]);
            for (i, branch) in branches.iter().enumerate() {
                let Some(seen) = self.seen.get(&(*tool, i)) else {
                    missing.push(format!("{tool}: shape {i} never answered"));
                    continue;
                };
                for member in branch["properties"].as_object().unwrap().keys() {
                    if !seen.contains(member) {
                        missing.push(format!("{tool}: shape {i}: member {member} never answered"));
                    }
                }
            }
        }
        assert!(missing.is_empty(), "{}", missing.join("\n"));
    }
}

/// Runs `tool` with `args` and checks its answer; returns it.
fn run(answers: &mut Answers, tools: &[ToolDef], tool: &'static str, args: Value) -> Value {
    let def = tools
        .iter()
        .find(|t| t.name == tool)
        .unwrap_or_else(|| panic!("{tool}"));
    let outcome = def.call(args.as_object().unwrap()).outcome;
    let answer = outcome
        .structured()
        .unwrap_or_else(|| panic!("{tool}: a tool error: {}", outcome.text()));
    answers.check(tool, &answer);
    answer
}

/// A shift-work repository holding the checkpoint `doc` (a JSON text) at `.shiftwork/<name>.json`.
fn checkpoint(root: &Path, name: &str, doc: &str) -> String {
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join(".shiftwork")).unwrap();
    let cp = root.join(".shiftwork").join(format!("{name}.json"));
    std::fs::write(&cp, sjson::to_checkpoint_text(&sjson::parse(doc).unwrap())).unwrap();
    cp.to_string_lossy().into_owned()
}

/// A checkpoint of three units (U1 done, U3 the cursor, U4 its reviewer), with `job` members and
/// `handoff` members added and U1's and U3's extra members.
fn job(
    job_extra: &str,
    u1_extra: &str,
    u3_extra: &str,
    handoff_questions: &str,
    units_extra: &str,
) -> String {
    format!(
        r#"{{"version": 1, "job": {{"id": "j", "goal": "Ship.", "done_definition": "make test", "constraints": ["keep the API"]{job_extra}}},
        "plan": {{"cursor": "U3", "units": [
          {{"id": "U1", "title": "Scaffold", "brief_path": "b/U1.md", "status": "done", "role": "implementer", "depends_on": [], "verify": "make u1"{u1_extra}}},
          {{"id": "U3", "title": "Core", "brief_path": "b/U3.md", "status": "todo", "role": "implementer", "depends_on": ["U1"], "verify": "make u3"{u3_extra}}},
          {{"id": "U4", "title": "Review", "brief_path": "b/U4.md", "status": "todo", "role": "reviewer", "depends_on": ["U3"], "verify": "make u4"}}{units_extra}]}},
        "state": {{"repo": {{"branch": "main", "head_sha": "abc", "dirty": false}}, "artifacts": [{{"path": "docs/spec.md", "role": "spec"}}], "external": []}},
        "history": [{{"unit": "U1", "outcome": "done"}}], "retro": [],
        "handoff": {{"next_action": "Build the core.", "open_questions": [{handoff_questions}], "do_not": ["no vendor/"]}}}}"#
    )
}

const EXPERIMENT: &str = r#"{"version": 1, "job": {"id": "x", "goal": "Best score.", "done_definition": "ranked", "constraints": [], "kind": "experimentation", "experiment": {"direction": "max"}},
  "plan": {"cursor": "W", "units": [
    {"id": "E1", "title": "Try one", "brief_path": "b/E1.md", "status": "done", "role": "implementer", "depends_on": [], "verify": "v", "attempts": [{"status": "done", "outcome": "o", "produced": [{"kind": "commit", "ref": "s-E1"}, {"kind": "score", "ref": "0.9"}]}]},
    {"id": "E2", "title": "Try two", "brief_path": "b/E2.md", "status": "done", "role": "implementer", "depends_on": [], "verify": "v", "attempts": [{"status": "done", "outcome": "o", "produced": [{"kind": "commit", "ref": "s-E2"}, {"kind": "score", "ref": "0.5"}]}]},
    {"id": "V", "title": "Validate", "brief_path": "b/V.md", "status": "done", "role": "reviewer", "depends_on": ["E1", "E2"], "verify": "v", "reviews": ["E1", "E2"], "attempts": [{"status": "done", "outcome": "o", "produced": [{"kind": "validated-sha", "ref": "s-E1"}, {"kind": "validated-sha", "ref": "s-E2"}]}]},
    {"id": "W", "title": "Write up", "brief_path": "b/W.md", "status": "todo", "role": "reviewer", "depends_on": ["V"], "verify": "v"}]},
  "state": {"repo": {"branch": "main", "head_sha": "abc", "dirty": false}, "artifacts": [], "external": []},
  "history": [], "retro": [], "handoff": {"next_action": "Write up.", "open_questions": [], "do_not": []}}"#;

fn shiftwork(answers: &mut Answers, root: &Path) {
    let probes = shiftwork_mcp::groups::shiftwork::tools(Arc::new(Env::os().with_probes(true)));
    let tools = &probes;
    let attempts = r#", "attempts": [{"status": "done", "outcome": "ok", "produced": [{"kind": "commit", "ref": "abc"}]}]"#;
    let plain = checkpoint(root, "plain", &job("", "", "", "", ""));
    run(answers, tools, "shiftwork_plan", json!({"checkpoint": plain}));
    run(
        answers,
        tools,
        "shiftwork_plan",
        json!({"checkpoint": root.join("none.json")}),
    );
    let touches = checkpoint(
        root,
        "touches",
        &job(
            r#", "budget": {"tokens": 100000, "units": 10}"#,
            "",
            r#", "touches": ["src/a.rs"]"#,
            "",
            r#", {"id": "U5", "title": "Also", "brief_path": "b/U5.md", "status": "todo", "role": "implementer", "depends_on": ["U1"], "verify": "v", "touches": ["src/a.rs"]}"#,
        ),
    );
    let plan = run(answers, tools, "shiftwork_plan", json!({"checkpoint": touches}));
    assert!(
        plan.get("held").is_some() && plan.get("budget").is_some(),
        "{plan}"
    );
    let experiment = checkpoint(root, "experiment", EXPERIMENT);
    let ranked = run(
        answers,
        tools,
        "shiftwork_plan",
        json!({"checkpoint": experiment}),
    );
    assert!(ranked.get("ranking").is_some(), "{ranked}");

    let briefed = checkpoint(
        root,
        "briefed",
        &job(r#", "agreements": ["tabs"]"#, attempts, "", "", ""),
    );
    let brief = run(
        answers,
        tools,
        "shiftwork_clock_in",
        json!({"checkpoint": briefed}),
    );
    assert_eq!(brief["result"], "brief", "{brief}");
    run(
        answers,
        tools,
        "shiftwork_clock_in",
        json!({"checkpoint": plain, "unit_id": "U4"}),
    );
    let decision = checkpoint(root, "decision", &job("", "", "", r#""Which database?""#, ""));
    run(
        answers,
        tools,
        "shiftwork_clock_in",
        json!({"checkpoint": decision}),
    );
    let relay = checkpoint(
        root,
        "relay",
        &job(
            "",
            "",
            "",
            r#"{"q": "Is CI green?", "kind": "relay", "probe": "exit 3"}"#,
            "",
        ),
    );
    let escalated = run(answers, tools, "shiftwork_clock_in", json!({"checkpoint": relay}));
    assert!(escalated.get("probe").is_some(), "{escalated}");
    let done = checkpoint(
        root,
        "done",
        &job("", "", "", "", "").replace(r#""status": "todo""#, r#""status": "done""#),
    );
    run(answers, tools, "shiftwork_clock_in", json!({"checkpoint": done}));

    run(
        answers,
        tools,
        "shiftwork_clock_out",
        json!({"checkpoint": plain, "unit_id": "U3", "status": "done", "handoff_patch": {}, "history_entry": {"unit": "U3", "outcome": "built"},
               "accounting": {"tokens": 10, "duration_ms": 5}}),
    );
    run(
        answers,
        tools,
        "shiftwork_clock_out",
        json!({"checkpoint": plain, "unit_id": "U9", "status": "done", "handoff_patch": {}, "history_entry": {"unit": "U9", "outcome": "x"}}),
    );

    std::fs::create_dir_all(root.join(".shiftwork/archive")).unwrap();
    std::fs::write(root.join(".shiftwork/archive/notes.md"), "the core was built\n").unwrap();
    let status = run(
        answers,
        tools,
        "shiftwork_status",
        json!({"checkpoint": plain, "search": "core"}),
    );
    assert!(status.get("search").is_some(), "{status}");
    run(
        answers,
        tools,
        "shiftwork_status",
        json!({"checkpoint": root.join("none.json")}),
    );

    run(
        answers,
        tools,
        "work_plan",
        json!({"nodes": [{"id": "a", "touches": ["x"]}, {"id": "b", "touches": ["x"], "priority": 2}, {"id": "c", "depends_on": ["a"]}]}),
    );
    run(
        answers,
        tools,
        "work_plan",
        json!({"nodes": [{"id": "a", "depends_on": ["a"]}]}),
    );
}

fn worklog(answers: &mut Answers, tools: &[ToolDef], root: &Path) {
    let dir = root.join("worklog");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("2026-09-06.md"), "# Today\n\n- [x] a\n").unwrap();
    run(
        answers,
        tools,
        "worklog_append",
        json!({"description": "Fixed the bug"}),
    );
    run(answers, tools, "worklog_append", json!({"description": ""}));
    run(answers, tools, "worklog_check", json!({}));
    std::fs::write(dir.join("2026-09-07.md"), "# Later\n").unwrap();
    run(answers, tools, "worklog_check", json!({}));
    let nowhere = Settings::new(Vec::new(), Vec::new());
    let group = groups::all().into_iter().find(|g| g.name == "worklog").unwrap();
    let unset = (group.build)(&nowhere).unwrap();
    run(answers, &unset, "worklog_append", json!({"description": "x"}));
    run(answers, &unset, "worklog_check", json!({}));
}

fn hours(answers: &mut Answers, tools: &[ToolDef]) {
    run(
        answers,
        tools,
        "hours_check",
        json!({"expression": "Mon-Fri 09:00-17:00", "at": "2026-09-28T12:00:00Z", "zone": "UTC"}),
    );
    run(
        answers,
        tools,
        "hours_check",
        json!({"expression": "00:00-24:00"}),
    );
    run(
        answers,
        tools,
        "hours_check",
        json!({"expression": "Mon 25:00-26:00"}),
    );
}

fn contracts(answers: &mut Answers, tools: &[ToolDef], root: &Path) {
    let workspace = root.join("workspace");
    std::fs::create_dir_all(workspace.join("src")).unwrap();
    std::fs::write(workspace.join("src/lib.rs"), "pub fn f() {}\n").unwrap();
    std::fs::write(workspace.join("NOTES.md"), "notes\n").unwrap();
    let ws = workspace.display().to_string();
    let mut call = |tool: &'static str, args: Value| run(answers, tools, tool, args);
    let dispatch = |title: &str, deliveries: u32| {
        json!({"target_agent": "bob", "title": title, "workspace_root": ws, "pointers": ["src/lib.rs"],
               "contract_schema": {"type": "object", "required": ["verdict"]}, "max_deliveries": deliveries,
               "idempotency_key": title.replace(' ', "-")})
    };
    let a = call("dispatch_contract", dispatch("Review A", 5));
    let a_id = a["contract_id"].clone();
    call(
        "dispatch_contract",
        json!({"target_agent": "bob", "title": "", "workspace_root": ws}),
    );
    let held = call("poll_next_task", json!({"agent_id": "bob", "wait_sec": 1}));
    assert_eq!(held["has_task"], true, "{held}");
    let epoch = held["contract"]["claim_epoch"].clone();
    call("poll_next_task", json!({"agent_id": "carol"}));
    call("poll_next_task", json!({"agent_id": "not an agent"}));
    call("poll_next_task", json!({"agent_id": "carol", "wait_sec": 1}));
    call(
        "extend_ttl",
        json!({"contract_id": a_id, "claim_epoch": epoch, "agent_id": "bob"}),
    );
    call(
        "extend_ttl",
        json!({"contract_id": a_id, "claim_epoch": 99, "agent_id": "bob"}),
    );
    call("verify_contract", json!({"contract_id": a_id, "agent_id": "bob"}));
    call("verify_contract", json!({"contract_id": "nope"}));
    call(
        "release_contract",
        json!({"contract_id": a_id, "claim_epoch": epoch, "agent_id": "bob", "reason": "later"}),
    );
    call(
        "release_contract",
        json!({"contract_id": a_id, "agent_id": "carol"}),
    );
    let again = call("poll_next_task", json!({"agent_id": "bob"}));
    let epoch = again["contract"]["claim_epoch"].clone();
    call(
        "fail_contract",
        json!({"contract_id": a_id, "claim_epoch": epoch, "agent_id": "bob", "reason": "flaky", "retryable": true}),
    );
    call(
        "fail_contract",
        json!({"contract_id": "nope", "agent_id": "bob", "reason": "x"}),
    );

    let b = call("dispatch_contract", dispatch("Review B", 1));
    let b_held = call("poll_next_task", json!({"agent_id": "bob"}));
    assert_eq!(b_held["contract"]["contract_id"], b["contract_id"], "{b_held}");
    call(
        "fail_contract",
        json!({"contract_id": b["contract_id"], "agent_id": "bob", "reason": "cannot"}),
    );

    let c = call("dispatch_contract", dispatch("Review C", 1));
    let c_held = call("poll_next_task", json!({"agent_id": "bob"}));
    let c_epoch = c_held["contract"]["claim_epoch"].clone();
    call(
        "fulfill_contract",
        json!({"contract_id": c["contract_id"], "claim_epoch": c_epoch, "agent_id": "bob", "result_summary": "fine",
               "structured_output": {"verdict": "approve"}, "artifacts_pointers": ["NOTES.md"]}),
    );
    call(
        "fulfill_contract",
        json!({"contract_id": c["contract_id"], "agent_id": "bob", "result_summary": "again"}),
    );

    let d = call("dispatch_contract", dispatch("Review D", 1));
    call(
        "cancel_contract",
        json!({"contract_id": d["contract_id"], "reason": "not needed"}),
    );
    call("cancel_contract", json!({"contract_id": "nope", "reason": "x"}));

    let page = call("inspect_mesh_state", json!({"limit": 2}));
    assert!(page["next_cursor"].is_string(), "{page}");
    call(
        "inspect_mesh_state",
        json!({"cursor": page["next_cursor"], "limit": 2}),
    );
    call("inspect_mesh_state", json!({"contract_id": c["contract_id"]}));
    call("inspect_mesh_state", json!({"status": ["FAILED", "SUBMITTED"]}));
    call("inspect_mesh_state", json!({"cursor": "not a cursor"}));
}

/// No store where the settings say: the read-only tools answer as over an empty one, with a note.
fn contracts_without_a_store(answers: &mut Answers, root: &Path) {
    let mut settings = Settings::new(Vec::new(), Vec::new());
    settings.set_flag(
        &groups::contracts::CONTRACTS_DB,
        root.join("nowhere/contracts.db").display().to_string(),
    );
    settings.set_flag(&groups::contracts::AGENT, "alice");
    let tools = (groups::contracts::GROUP.build)(&settings).unwrap();
    let empty = run(answers, &tools, "inspect_mesh_state", json!({}));
    assert!(empty["note"].is_string(), "{empty}");
}

#[test]
fn issue35_item1_every_answer_of_every_shape_validates_against_its_output_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let registry = registry(root);
    let mut answers = Answers::new(registry.tools());
    shiftwork(&mut answers, &root.join("repo"));
    worklog(&mut answers, registry.tools(), root);
    hours(&mut answers, registry.tools());
    contracts(&mut answers, registry.tools(), root);
    contracts_without_a_store(&mut answers, root);
    answers.assert_complete();
}
