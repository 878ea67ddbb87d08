//! The `shiftwork` group through the adapter: registration (SW-36..SW-38), arguments (SW-39..SW-43),
//! answers (SW-44), the `--no-probes` switch and probes (SW-135..SW-137), and 8 processes clocking
//! out one checkpoint at once (SW-103, SW-143).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use shiftwork_core::Env;
use shiftwork_core::json as sjson;
use shiftwork_mcp::groups::shiftwork;
use shiftwork_mcp::registry::{Outcome, ToolDef};

const EX: &str = r##"{"version": 1, "job": {"id": "demo-job", "goal": "Ship the demo.", "done_definition": "make test passes", "constraints": ["keep the API stable", "no new dependencies"]}, "plan": {"cursor": "U3", "units": [{"id": "U1", "title": "Scaffold", "brief_path": "briefs/U1.md", "status": "done", "role": "implementer", "depends_on": [], "verify": "make u1", "commits": ["abc1234"]}, {"id": "U3", "title": "Build core", "brief_path": "briefs/U3.md", "status": "todo", "role": "implementer", "depends_on": ["U1"], "verify": "make u3"}, {"id": "U4", "title": "Review core", "brief_path": "briefs/U4.md", "status": "todo", "role": "reviewer", "depends_on": ["U3"], "verify": "make u4"}]}, "state": {"repo": {"branch": "main", "head_sha": "abc1234", "dirty": false}, "artifacts": [{"path": "docs/spec.md", "role": "spec"}], "external": [{"kind": "process", "ref": "pid 42", "status": "running", "until_cmd": "test -f done"}, {"kind": "pr", "ref": "#12", "status": "open"}]}, "history": [{"unit": "U1", "outcome": "done"}], "retro": [{"trigger": "slow tests", "patch_applied_to": "Makefile"}], "handoff": {"next_action": "Build the core.", "open_questions": [], "do_not": ["do not touch vendor/"]}}"##;

fn repo(doc: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    std::fs::create_dir_all(dir.path().join(".shiftwork")).unwrap();
    let cp = dir.path().join(".shiftwork/cp.json");
    std::fs::write(&cp, sjson::to_checkpoint_text(&sjson::parse(doc).unwrap())).unwrap();
    (dir, cp.to_string_lossy().into_owned())
}

fn tools(probes: bool) -> Vec<ToolDef> {
    shiftwork::tools(Arc::new(Env::os().with_probes(probes)))
}

fn call(tools: &[ToolDef], name: &str, args: Value) -> Outcome {
    let tool = tools.iter().find(|t| t.name == name).unwrap();
    let map: Map<String, Value> = args.as_object().unwrap().clone();
    tool.call(&map)
}

fn text(outcome: &Outcome) -> String {
    outcome.text()
}

#[test]
fn registration_titles_hints_schemas_sw36_sw38() {
    let tools = tools(true);
    let names: Vec<&str> = tools.iter().map(|t| t.name).collect();
    assert_eq!(
        names,
        [
            "shiftwork_plan",
            "shiftwork_clock_in",
            "shiftwork_clock_out",
            "shiftwork_status",
            "work_plan"
        ]
    );
    let expect = [
        (
            "work_plan",
            "Work plan: batch a dependency graph",
            [true, false, true, false],
        ),
        ("shiftwork_plan", "Shift work: plan", [true, false, true, false]),
        (
            "shiftwork_status",
            "Shift work: status",
            [true, false, true, false],
        ),
        (
            "shiftwork_clock_in",
            "Shift work: clock in",
            [false, false, false, false],
        ),
        (
            "shiftwork_clock_out",
            "Shift work: clock out",
            [false, true, false, false],
        ),
    ];
    for (name, title, hints) in expect {
        let t = tools.iter().find(|t| t.name == name).unwrap();
        assert_eq!(t.title, title);
        assert_eq!(
            [
                t.hints.read_only,
                t.hints.destructive,
                t.hints.idempotent,
                t.hints.open_world
            ],
            hints,
            "{name}"
        );
        assert_eq!(t.input_schema["additionalProperties"], json!(false));
        assert_eq!(t.output_schema["required"], json!(["result"]));
        assert!(
            t.description.contains("not protocol errors") || t.description.contains("not a protocol error"),
            "{name}"
        );
    }
    let out = tools.iter().find(|t| t.name == "shiftwork_clock_out").unwrap();
    assert_eq!(
        out.known_arguments(),
        [
            "checkpoint",
            "unit_id",
            "status",
            "handoff_patch",
            "history_entry",
            "accounting",
            "agent_id",
            "agreements",
            "conclusion",
            "follow_ups"
        ]
    );
    assert!(out.description.contains("writes nothing"));
    let plan = tools.iter().find(|t| t.name == "shiftwork_plan").unwrap();
    assert!(
        plan.description
            .contains("only after shiftwork_clock_in has briefed it")
    );
    let clock_in = tools.iter().find(|t| t.name == "shiftwork_clock_in").unwrap();
    assert!(clock_in.description.contains("shell commands from the repo root"));
    let listed: usize = tools
        .iter()
        .map(|t| {
            serde_json::to_string(&shiftwork_mcp::server::descriptor(t))
                .unwrap()
                .len()
        })
        .sum();
    assert!(
        listed < 10_000,
        "tools/list for the group is {listed} bytes (MC-11)"
    );
}

#[test]
fn unknown_argument_frame_sw40_e10() {
    let tools = tools(true);
    let (_dir, cp) = repo(EX);
    let cases = [
        (
            "shiftwork_status",
            json!({"checkpoint": cp, "zeta": 1, "alpha": 2}),
            "Error executing tool shiftwork_status: unknown argument 'zeta'; known: checkpoint, search",
        ),
        (
            "shiftwork_plan",
            json!({"checkpoint": cp, "search": "x"}),
            "Error executing tool shiftwork_plan: unknown argument 'search'; known: checkpoint",
        ),
    ];
    for (tool, args, expected) in cases {
        assert_eq!(call(&tools, tool, args), Outcome::ToolError(expected.to_owned()));
    }
}

#[test]
fn arguments_sw41_sw42_e10() {
    let tools = tools(true);
    let (dir, cp) = repo(EX);
    // SW-42: "null" as a string means null for unit_id.
    let brief = text(&call(
        &tools,
        "shiftwork_clock_in",
        json!({"checkpoint": cp, "unit_id": "null"}),
    ));
    assert!(
        brief.starts_with("{\n  \"result\": \"brief\",\n  \"unit\": {\n    \"id\": \"U3\""),
        "{brief}"
    );
    // A string holding an object is that object.
    let out = call(
        &tools,
        "shiftwork_clock_out",
        json!({"checkpoint": cp, "unit_id": "U3", "status": "bogus", "handoff_patch": "{}", "history_entry": "{\"unit\": \"U3\", \"outcome\": \"done\"}"}),
    );
    assert_eq!(
        text(&out),
        "{\n  \"result\": \"error\",\n  \"reason\": \"refused to write: JSON does not match schema at 'plan/units/1/status': 'bogus' is not one of ['todo', 'in_progress', 'done', 'blocked', 'dropped']\"\n}"
    );
    // SW-41: missing and ill-typed arguments are tool errors naming the argument.
    match call(
        &tools,
        "shiftwork_clock_out",
        json!({"checkpoint": cp, "unit_id": "U3", "status": "done", "handoff_patch": {}}),
    ) {
        Outcome::ToolError(m) => assert!(
            m.starts_with("Error executing tool shiftwork_clock_out: ") && m.contains("history_entry"),
            "{m}"
        ),
        other => panic!("{other:?}"),
    }
    match call(&tools, "work_plan", json!({"nodes": 5})) {
        Outcome::ToolError(m) => assert!(m.contains("'nodes'"), "{m}"),
        other => panic!("{other:?}"),
    }
    drop(dir);
}

#[test]
fn answer_text_is_pretty_unescaped_in_order_sw44() {
    let tools = tools(true);
    let doc = EX.replace(r#""do_not": ["do not touch vendor/"]}"#, r#""do_not": ["do not touch vendor/"], "notes": "déjà 😀"}"#)
        .replace(r#"[{"unit": "U1", "outcome": "done"}]"#, r#"[{"unit": "U1", "outcome": "done", "tiny": 1e-5, "big": 1e16, "n": 123456789012345678901234}]"#);
    let (_dir, cp) = repo(&doc);
    let out = call(&tools, "shiftwork_status", json!({"checkpoint": cp}));
    assert_eq!(
        text(&out),
        "{\n  \"result\": \"status\",\n  \"cursor\": \"U3\",\n  \"units\": {\n    \"done\": 1,\n    \"todo\": 2\n  },\n  \"open_questions\": 0,\n  \"last_history\": {\n    \"unit\": \"U1\",\n    \"outcome\": \"done\",\n    \"tiny\": 0.00001,\n    \"big\": 1e+16,\n    \"n\": 123456789012345678901234\n  }\n}"
    );
    let Outcome::Rendered(value, _) = out else {
        panic!("not rendered")
    };
    assert_eq!(value["result"], json!("status"));
}

#[test]
fn relay_probes_and_no_probes_sw135_sw137_e6() {
    let relay = r#""open_questions": [{"q": "Is CI green?", "kind": "relay", "probe": "test -f ci-green"}]"#;
    let (dir, cp) = repo(&EX.replace(r#""open_questions": []"#, relay));
    let with = tools(true);
    let escalate = text(&call(&with, "shiftwork_clock_in", json!({"checkpoint": cp})));
    assert!(
        escalate.contains("\"probe\": {\n    \"q\": \"Is CI green?\",\n    \"exit\": 1\n  }"),
        "{escalate}"
    );
    std::fs::write(dir.path().join("ci-green"), b"").unwrap();
    assert!(
        text(&call(&with, "shiftwork_clock_in", json!({"checkpoint": cp}))).contains("\"result\": \"brief\"")
    );
    let without = tools(false);
    let refused = text(&call(&without, "shiftwork_clock_in", json!({"checkpoint": cp})));
    assert!(
        refused.contains("\"result\": \"escalate\"") && !refused.contains("\"probe\": {"),
        "{refused}"
    );
}

#[test]
fn probe_past_its_timeout_escalates_in_time_sw135() {
    let relay = r#""open_questions": [{"q": "Slow?", "kind": "relay", "probe": "sleep 30"}]"#;
    let (_dir, cp) = repo(&EX.replace(r#""open_questions": []"#, relay));
    let mut env = Env::os();
    env.probe_timeout = Duration::from_millis(500);
    let start = Instant::now();
    let answer = shiftwork_core::clock_in(&env, &cp, None);
    let elapsed = start.elapsed();
    assert_eq!(
        sjson::to_compact_text(answer.get("probe").unwrap()),
        r#"{"q": "Slow?", "exit": null}"#
    );
    assert!(elapsed < Duration::from_secs(10), "the call took {elapsed:?}");
}

#[test]
fn no_probes_switch_is_a_setting_sw137() {
    let settings =
        shiftwork_mcp::settings::Settings::new(vec![(shiftwork::NO_PROBES.flag, String::new())], vec![]);
    assert!(settings.switch(&shiftwork::NO_PROBES));
    const { assert!(!shiftwork::NO_PROBES.takes_value) };
}

/// SW-103, SW-143 (G2 across processes): 8 processes clock out 8 briefed units of one wave at once.
#[test]
fn eight_processes_clock_out_one_checkpoint_concurrently_sw143() {
    let units: Vec<String> = (1..=8)
        .map(|i| format!(r#"{{"id": "N{i}", "title": "t N{i}", "brief_path": "b/N{i}.md", "status": "todo", "role": "implementer", "depends_on": [], "verify": "v N{i}"}}"#))
        .collect();
    let doc = EX
        .replace(
            &EX[EX.find(r#""units": ["#).unwrap()..EX.find(r#"]}, "state""#).unwrap() + 1],
            &format!(r#""units": [{}]"#, units.join(", ")),
        )
        .replace(r#""cursor": "U3""#, r#""cursor": "N1""#);
    let (dir, cp) = repo(&doc);
    let bin = env!("CARGO_BIN_EXE_shiftwork-mcp");
    for i in 1..=8 {
        let out = Command::new(bin)
            .args([
                "call",
                "shiftwork_clock_in",
                &json!({"checkpoint": cp, "unit_id": format!("N{i}")}).to_string(),
            ])
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&out.stdout).contains("\"brief\""));
    }
    let handles: Vec<_> = (1..=8)
        .map(|i| {
            let cp = cp.clone();
            std::thread::spawn(move || {
                let args = json!({"checkpoint": cp, "unit_id": format!("N{i}"), "status": "done", "handoff_patch": {}, "history_entry": {"unit": format!("N{i}"), "outcome": "done"}, "accounting": {"tokens": i, "duration_ms": 1}});
                for _ in 0..20 {
                    let out = Command::new(bin).args(["call", "shiftwork_clock_out", &args.to_string()]).output().unwrap();
                    let text = String::from_utf8_lossy(&out.stdout).into_owned();
                    if !text.contains("checkpoint locked by another clock-out") {
                        return text;
                    }
                }
                String::from("gave up")
            })
        })
        .collect();
    let answers: Vec<String> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    for a in &answers {
        assert!(a.contains("\"result\":\"ok\""), "{a}");
    }
    let doc = sjson::parse(&std::fs::read_to_string(&cp).unwrap()).unwrap();
    let statuses: Vec<&str> = shiftwork_core::checkpoint::units(&doc)
        .iter()
        .map(|u| shiftwork_core::checkpoint::str_of(u, "status"))
        .collect();
    assert_eq!(statuses, ["done"; 8]);
    assert_eq!(doc.get("history").unwrap().as_array().unwrap().len(), 5);
    let ledger = std::fs::read_to_string(format!("{cp}.log.jsonl")).unwrap();
    assert_eq!(ledger.lines().filter(|l| !l.contains("\"event\"")).count(), 8);
    assert!(
        ledger
            .lines()
            .filter(|l| !l.contains("\"event\""))
            .all(|l| l.starts_with(r#"{"briefed": true"#))
    );
    let leftovers: Vec<String> = std::fs::read_dir(dir.path().join(".shiftwork"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp") || n.contains(".lock"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert!(Path::new(&cp).exists());
}
