//! The `shiftwork` group through the adapter: registration (SW-36..SW-38), arguments (SW-39..SW-43),
//! answers (SW-44), the `--no-probes` switch and probes (SW-135..SW-137), and 8 processes clocking
//! out one checkpoint at once (SW-103, SW-143).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

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
    tool.call(&map).outcome
}

fn text(outcome: &Outcome) -> String {
    outcome.text()
}

#[test]
fn registration_titles_hints_descriptions_schemas_sw36_sw37_sw38() {
    // The server as it starts by default: probes off (issue 12 item 3).
    let tools = tools(false);
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
    let (full, for_models) = support::listing_sizes(&tools);
    assert!(
        for_models < support::LISTING_BOUNDS.for_models("shiftwork")
            && full < support::LISTING_BOUNDS.full_group,
        "tools/list for the group is {full} bytes, {for_models} without outputSchema (MC-11)"
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
    // structuredContent holds the same answer, as JSON any client reads (SW-44, issue 16 item 1).
    let value = out.structured().unwrap();
    assert_eq!(value["result"], json!("status"));
    assert_eq!(value["last_history"]["tiny"], json!(1e-5));
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

/// Whether process `pid` has ended (gone, or a zombie waiting to be reaped).
#[cfg(target_os = "linux")]
fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// SW-135 (E6, issue 4): a probe that runs past its timeout is terminated with its whole process group
/// — SIGTERM, then SIGKILL `shiftwork_seams::PROBE_KILL_GRACE` later for a probe that ignores SIGTERM — and its
/// relay escalates with `exit: null`. The call returns within the timeout plus the grace plus a
/// generous margin: the behaviour under test is that the probe ends (its sleeping child included),
/// not how fast.
#[cfg(target_os = "linux")]
#[test]
fn probe_past_its_timeout_is_terminated_and_escalates_sw135() {
    let margin = Duration::from_secs(20);
    for probe in [
        "sleep 60 & echo $! > sleeper.pid; wait",
        "trap '' TERM; sleep 60 & echo $! > sleeper.pid; wait",
    ] {
        let relay = format!(r#""open_questions": [{{"q": "Slow?", "kind": "relay", "probe": "{probe}"}}]"#);
        let (dir, cp) = repo(&EX.replace(r#""open_questions": []"#, &relay));
        let mut env = Env::os().with_probes(true);
        env.probe_timeout = Duration::from_millis(500);
        let start = Instant::now();
        let answer = shiftwork_core::Answer::to_answer(&shiftwork_core::clock_in_arguments(
            &env,
            std::path::Path::new(&cp),
            None,
        ));
        let elapsed = start.elapsed();
        assert_eq!(
            sjson::to_compact_text(&answer),
            format!(
                r#"{{"result": "escalate", "reason": "open question: Slow?", "open_questions": [{{"q": "Slow?", "kind": "relay", "probe": "{}"}}], "probe": {{"q": "Slow?", "exit": null}}}}"#,
                probe.replace('"', "\\\"")
            ),
            "{probe}"
        );
        assert!(
            elapsed < env.probe_timeout + shiftwork_seams::PROBE_KILL_GRACE + margin,
            "{probe}: the call took {elapsed:?}"
        );
        // The probe ran from the repo root, and its child was ended with it.
        let pid: u32 = std::fs::read_to_string(dir.path().join("sleeper.pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !ended(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(ended(pid), "{probe}: the probe's child {pid} still runs");
        // Nothing was written: an escalation appends no ledger line.
        assert!(!Path::new(&format!("{cp}.log.jsonl")).exists());
    }
}

/// Issue 12 item 3: probes are opt-in. Started without `--probes` (or with `--no-probes`, or
/// `SHIFTWORK_NO_PROBES`, which now mean the default) the server runs no relay probe: the relay
/// escalates like a decision question. With `--probes` or `SHIFTWORK_PROBES=1` it runs them, and
/// `shiftwork_clock_in` says so: `openWorldHint` true and a description that says it runs commands.
#[test]
fn relay_probes_run_only_in_a_server_started_with_probes_issue12_item3() {
    let relay =
        r#""open_questions": [{"q": "Is CI green?", "kind": "relay", "probe": "touch probe-ran; exit 3"}]"#;
    let (dir, _) = repo(&EX.replace(r#""open_questions": []"#, relay));
    let root = dir.path();
    let args = json!({"checkpoint": ".shiftwork/cp.json"});
    let escalate_unrun = r#"{"result":"escalate","reason":"open question: Is CI green?","open_questions":[{"q":"Is CI green?","kind":"relay","probe":"touch probe-ran; exit 3"}]}"#;
    let ran = r#"{"result":"escalate","reason":"open question: Is CI green?","open_questions":[{"q":"Is CI green?","kind":"relay","probe":"touch probe-ran; exit 3"}],"probe":{"q":"Is CI green?","exit":3}}"#;
    let call_env = |flags: &[&str], env: &[(&str, &str)]| {
        let out = Command::new(env!("CARGO_BIN_EXE_shiftwork-mcp"))
            .arg("call")
            .arg("shiftwork_clock_in")
            .arg(args.to_string())
            .args(flags)
            .env_remove("SHIFTWORK_PROBES")
            .env_remove("SHIFTWORK_NO_PROBES")
            .envs(env.iter().copied())
            .current_dir(root)
            .output()
            .unwrap();
        assert!(out.status.success(), "{flags:?} {env:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim_end().to_owned()
    };
    for (flags, env) in [
        (&[][..], &[][..]),
        (&["--no-probes"][..], &[][..]),
        (&[][..], &[("SHIFTWORK_NO_PROBES", "1")][..]),
        (&["--probes", "--no-probes"][..], &[][..]),
    ] {
        assert_eq!(call_env(flags, env), escalate_unrun, "{flags:?} {env:?}");
        assert!(
            !root.join("probe-ran").exists(),
            "{flags:?} {env:?}: the probe ran"
        );
    }
    for (flags, env) in [
        (&["--probes"][..], &[][..]),
        (&[][..], &[("SHIFTWORK_PROBES", "1")][..]),
    ] {
        assert_eq!(call_env(flags, env), ran, "{flags:?} {env:?}");
        std::fs::remove_file(root.join("probe-ran")).unwrap();
    }
    // What the tool says of itself follows the switch.
    let off = tools(false);
    let on = tools(true);
    let clock_in = |tools: &[ToolDef]| {
        tools
            .iter()
            .find(|t| t.name == "shiftwork_clock_in")
            .unwrap()
            .clone()
    };
    assert!(!clock_in(&off).hints.open_world);
    assert!(clock_in(&off).description.contains("run only under --probes"));
    assert!(clock_in(&on).hints.open_world);
    assert!(
        clock_in(&on)
            .description
            .contains("Runs commands: relay probes are shell commands")
    );
    for tools in [&off, &on] {
        assert!(
            clock_in(tools)
                .description
                .contains("shell commands from the repo root")
        );
    }
    let settings =
        shiftwork_mcp::settings::Settings::new(vec![(shiftwork::PROBES.flag, String::new())], vec![]);
    assert!(settings.switch(&shiftwork::PROBES));
    const { assert!(!shiftwork::PROBES.takes_value) };
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
    let statuses: Vec<shiftwork_core::model::UnitStatus> = shiftwork_core::Checkpoint::new(&doc)
        .units()
        .map(|u| u.status())
        .collect();
    assert_eq!(statuses, [shiftwork_core::model::UnitStatus::Done; 8]);
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

/// Runs `shiftwork-mcp call <tool> <args> [flags]` in `dir`: the compact answer on stdout.
fn call_binary(dir: &Path, tool: &str, args: Value, flags: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_shiftwork-mcp"))
        .arg("call")
        .arg(tool)
        .arg(args.to_string())
        .args(flags)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{tool} {args}: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim_end().to_owned()
}

fn result_of(answer: &str) -> String {
    let v: Value = serde_json::from_str(answer).unwrap();
    v["result"].as_str().unwrap().to_owned()
}

/// Issue 4, "as a user would": a 12-unit job with `touches`, a budget and a relay question, driven
/// from plan to the last clock-out through `shiftwork-mcp call` — held units, a budget refusal, a
/// probe answering the relay, a follow-up unit appended, a refused `resolved` conclusion without its
/// evidence and then an accepted one (SW-112, SW-120, SW-126, SW-132, SW-135, SW-137).
#[test]
fn a_twelve_unit_job_driven_through_call_issue4() {
    let unit = |id: &str, role: &str, deps: &[&str], extra: &str| {
        format!(
            r#"{{"id": "{id}", "title": "t {id}", "brief_path": "briefs/{id}.md", "status": "todo", "role": "{role}", "depends_on": {}, "verify": "make {id}"{extra}}}"#,
            json!(deps)
        )
    };
    let units = [
        unit("U1", "implementer", &[], r#", "touches": ["Cargo.toml"]"#),
        unit("U2", "implementer", &["U1"], r#", "touches": ["src/lib.rs"]"#),
        unit(
            "U3",
            "implementer",
            &["U1"],
            r#", "touches": ["src/lib.rs", "src/io.rs"]"#,
        ),
        unit("U4", "implementer", &["U1"], r#", "touches": ["src/cli.rs"]"#),
        unit("U5", "reviewer", &["U2"], r#", "reviews": ["U2"]"#),
        unit("R1", "implementer", &["U3"], r#", "tests": "H1""#),
        unit("P1", "reviewer", &["R1"], r#", "replay_of": "R1""#),
        unit("V1", "planner", &["R1"], r#", "reviews": ["R1"]"#),
        unit("C1", "planner", &["R1"], r#", "concludes": true"#),
        unit("U6", "implementer", &["U4"], ""),
        unit("U7", "implementer", &["U6"], ""),
        unit("U8", "implementer", &["U7"], ""),
    ];
    let doc = EX
        .replace(
            &EX[EX.find(r#""units": ["#).unwrap()..EX.find(r#"]}, "state""#).unwrap() + 1],
            &format!(r#""units": [{}]"#, units.join(", ")),
        )
        .replace(r#""cursor": "U3""#, r#""cursor": "U1""#)
        .replace(
            r#""no new dependencies"]"#,
            r#""no new dependencies"], "budget": {"units": 3}"#,
        )
        .replace(
            r#""open_questions": []"#,
            r#""open_questions": [{"q": "Is CI green?", "kind": "relay", "probe": "test -f ci-green"}]"#,
        );
    let (dir, _) = repo(&doc);
    let root = dir.path();
    let cp = ".shiftwork/cp.json";
    for id in [
        "U1", "U2", "U3", "U4", "U5", "R1", "P1", "V1", "C1", "U6", "U7", "U8", "F1",
    ] {
        std::fs::create_dir_all(root.join("briefs")).unwrap();
        std::fs::write(root.join(format!("briefs/{id}.md")), id).unwrap();
    }
    let plan = || call_binary(root, "shiftwork_plan", json!({"checkpoint": cp}), &[]);
    // The job's relay question is answered by its probe: the server runs with probes on.
    let clock_in = |unit: Option<&str>| {
        call_binary(
            root,
            "shiftwork_clock_in",
            json!({"checkpoint": cp, "unit_id": unit}),
            &["--probes"],
        )
    };
    let clock_out = |unit: &str, extra: Value| {
        let mut args = json!({"checkpoint": cp, "unit_id": unit, "status": "done", "handoff_patch": {}, "history_entry": {"unit": unit, "outcome": "done"}, "accounting": {"tokens": 1000, "duration_ms": 60000}});
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        call_binary(root, "shiftwork_clock_out", args, &[])
    };

    // The plan holds U3 apart from U2 (both write src/lib.rs) and reports the budget.
    assert_eq!(
        plan(),
        r#"{"result":"plan","batches":[["U1"],["U2","U4"],["U3","U5","U6"],["R1","U7"],["P1","V1","C1","U8"]],"ready":["U1"],"sequence":["U1","U2","U4","U3","U5","U6","R1","U7","P1","V1","C1","U8"],"width":4,"cursor":"U1","held":[{"id":"U3","batch":1,"by":"U2","path":"src/lib.rs"}],"budget":{"limit":{"units":3},"spent":{"units":0},"in_flight":[],"remaining":{"units":3},"per_unit":60000,"affordable":3}}"#
    );
    // The relay's probe fails until CI is green; with --no-probes it is a question for a human.
    assert_eq!(
        clock_in(None),
        r#"{"result":"escalate","reason":"open question: Is CI green?","open_questions":[{"q":"Is CI green?","kind":"relay","probe":"test -f ci-green"}],"probe":{"q":"Is CI green?","exit":1}}"#
    );
    std::fs::write(root.join("ci-green"), b"").unwrap();
    assert_eq!(
        call_binary(
            root,
            "shiftwork_clock_in",
            json!({"checkpoint": cp}),
            &["--no-probes"]
        ),
        r#"{"result":"escalate","reason":"open question: Is CI green?","open_questions":[{"q":"Is CI green?","kind":"relay","probe":"test -f ci-green"}]}"#
    );
    // The probe answers the relay: U1 is briefed.
    assert!(clock_in(None).starts_with(r#"{"result":"brief","unit":{"id":"U1""#));
    assert_eq!(
        clock_out("U1", json!({})),
        r#"{"result":"ok","unit":"U1","status":"done","cursor":"U2","log":".shiftwork/cp.json.log.jsonl"}"#
    );
    // Two units in flight, one of them done: the next brief would overspend (2 spent + 1 reserved).
    assert!(clock_in(Some("U2")).contains(r#""id":"U2""#));
    assert!(clock_in(Some("U4")).contains(r#""id":"U4""#));
    assert!(clock_out("U4", json!({})).starts_with(r#"{"result":"ok""#));
    assert_eq!(
        clock_in(Some("U6")),
        r#"{"result":"error","reason":"budget units spent: 3 of 3; raise job.budget or stop the job"}"#
    );
    // The user raises the budget.
    let path = root.join(cp);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("\"units\": 3\n", "\"units\": 30\n")).unwrap();
    assert!(clock_in(Some("U6")).contains(r#""id":"U6""#));
    assert_eq!(
        clock_in(Some("U5")),
        r#"{"result":"error","reason":"unit U5 is not ready; ready is U2, U6"}"#
    );
    // U2 finds work nobody planned: a follow-up unit, appended on the same write.
    assert_eq!(
        clock_out(
            "U2",
            json!({"follow_ups": [{"id": "F1", "title": "Fix the flaky test", "role": "implementer", "brief_path": "briefs/F1.md"}]})
        ),
        r#"{"result":"ok","unit":"U2","status":"done","cursor":"U3","log":".shiftwork/cp.json.log.jsonl"}"#
    );
    // The follow-up is part of the plan, after U2.
    assert!(plan().contains(r#""ready":["U3","U5","U6","F1"]"#), "{}", plan());
    for unit in ["U3", "U5", "F1"] {
        assert!(clock_in(Some(unit)).contains(&format!(r#""id":"{unit}""#)));
        assert!(
            clock_out(unit, json!({})).starts_with(r#"{"result":"ok""#),
            "{unit}"
        );
    }
    assert!(clock_out("U6", json!({})).starts_with(r#"{"result":"ok""#));
    let output = json!({"history_entry": {"unit": "R1", "outcome": "ran", "produced": [{"kind": "run-output", "ref": "logs/r1.txt"}]}});
    assert!(clock_in(Some("R1")).contains(r#""id":"R1""#));
    assert!(clock_out("R1", output).starts_with(r#"{"result":"ok""#));
    // C1 concludes before the replay and the review are done: refused, nothing written.
    let resolved =
        json!({"conclusion": {"outcome": "resolved", "evidence": ["logs/r1.txt"], "supported": "H1"}});
    assert!(clock_in(Some("C1")).contains(r#""id":"C1""#));
    let before = std::fs::read(&path).unwrap();
    assert_eq!(
        clock_out("C1", resolved.clone()),
        r#"{"result":"error","reason":"conclusion resolved for H1 needs a done replay of run R1 in another role"}"#
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let replay = json!({"history_entry": {"unit": "P1", "outcome": "replayed", "produced": [{"kind": "run-output", "ref": "logs/p1.txt"}]}});
    for (unit, extra) in [("P1", replay), ("V1", json!({}))] {
        assert!(clock_in(Some(unit)).contains(&format!(r#""id":"{unit}""#)));
        assert!(clock_out(unit, extra).starts_with(r#"{"result":"ok""#), "{unit}");
    }
    // With the replay and the review done, the same conclusion is accepted.
    assert!(clock_out("C1", resolved).starts_with(r#"{"result":"ok""#));
    for unit in ["U7", "U8"] {
        assert!(clock_in(None).contains(&format!(r#""id":"{unit}""#)), "{unit}");
        assert!(
            clock_out(unit, json!({})).starts_with(r#"{"result":"ok""#),
            "{unit}"
        );
    }
    assert_eq!(
        clock_in(None),
        r#"{"result":"success","reason":"all units done or dropped"}"#
    );
    let doc = sjson::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        sjson::to_compact_text(doc.get("job").unwrap().get("conclusion").unwrap()),
        r#"{"outcome": "resolved", "evidence": ["logs/r1.txt"], "supported": "H1"}"#
    );
    assert_eq!(shiftwork_core::Checkpoint::new(&doc).len(), 13);
    assert_eq!(result_of(&plan()), "plan");
}

/// SW-43: argument objects keep the key order they arrive in and their number tokens (integer vs
/// float, `-0.0`, integers up to 64 bits) into the checkpoint and the ledger line. (Integers beyond
/// 64 bits are exact through the library; the MCP SDK decodes arguments with serde_json, which holds
/// them as doubles.)
#[test]
fn arguments_keep_key_order_and_number_tokens_sw43() {
    let tools = tools(true);
    let (_dir, cp) = repo(EX);
    let args: Value = serde_json::from_str(&format!(
        r#"{{"checkpoint": "{cp}", "unit_id": "U3", "status": "done", "handoff_patch": {{"notes": "n", "next_action": "Go."}}, "history_entry": {{"outcome": "d", "unit": "U3", "x": {{"b": 1.50, "a": 2}}}}, "accounting": {{"tokens": 1234.0, "duration_ms": -0.0, "big": 18446744073709551615, "small": -9223372036854775808}}}}"#
    ))
    .unwrap();
    let out = text(&call(&tools, "shiftwork_clock_out", args));
    assert!(out.contains("\"result\": \"ok\""), "{out}");
    let doc = sjson::parse(&std::fs::read_to_string(&cp).unwrap()).unwrap();
    assert_eq!(
        sjson::to_compact_text(&doc.get("history").unwrap().as_array().unwrap()[1]),
        r#"{"outcome": "d", "unit": "U3", "x": {"b": 1.5, "a": 2}}"#
    );
    assert_eq!(
        sjson::to_compact_text(doc.get("handoff").unwrap()),
        r#"{"next_action": "Go.", "open_questions": [], "do_not": ["do not touch vendor/"], "notes": "n"}"#
    );
    let ledger = std::fs::read_to_string(format!("{cp}.log.jsonl")).unwrap();
    for part in [
        r#""tokens": 1234.0"#,
        r#""duration_ms": -0.0"#,
        r#""big": 18446744073709551615"#,
        r#""small": -9223372036854775808"#,
    ] {
        assert!(ledger.contains(part), "{ledger} lacks {part}");
    }
}

/// Issue 12 item 6 (SW-43): arguments keep their number tokens through MCP and `call` — an integer
/// wider than 64 bits in a `history_entry` is written as its digits, `5.0` stays a float, and two
/// `work_plan` priorities of 21 digits do not tie. Without the request's text, a number the decoded
/// map holds only as a float is refused, never written changed.
#[test]
fn numbers_wider_than_64_bits_in_arguments_keep_their_tokens_issue12_item6() {
    let (dir, _) = repo(EX);
    let root = dir.path();
    let args = r#"{"checkpoint": ".shiftwork/cp.json", "unit_id": "U3", "status": "done", "handoff_patch": {}, "history_entry": {"unit": "U3", "outcome": "done", "x": 18446744073709551616, "y": 5.0, "z": -123456789012345678901234567890}}"#;
    let out = Command::new(env!("CARGO_BIN_EXE_shiftwork-mcp"))
        .args(["call", "shiftwork_clock_out", args])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with(r#"{"result":"ok""#),
        "{out:?}"
    );
    let written = std::fs::read_to_string(root.join(".shiftwork/cp.json")).unwrap();
    assert!(
        written.contains(
            "\"x\": 18446744073709551616,\n      \"y\": 5.0,\n      \"z\": -123456789012345678901234567890\n"
        ),
        "{written}"
    );
    let nodes = r#"{"nodes": [{"id": "a", "priority": 100000000000000000001}, {"id": "b", "priority": 100000000000000000002}]}"#;
    let out = Command::new(env!("CARGO_BIN_EXE_shiftwork-mcp"))
        .args(["call", "work_plan", nodes])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim_end(),
        r#"{"result":"plan","batches":[["b","a"]],"sequence":["b","a"],"width":2}"#
    );
    // In process, with the request's text (as `serve` passes it).
    let tools = tools(false);
    let work_plan = tools.iter().find(|t| t.name == "work_plan").unwrap();
    let map = serde_json::from_str::<Map<String, Value>>(nodes).unwrap();
    let answer = work_plan
        .invoke(&shiftwork_mcp::registry::Arguments::with_raw(
            map.clone(),
            nodes.to_owned(),
        ))
        .outcome;
    assert!(
        answer
            .text()
            .contains("\"sequence\": [\n    \"b\",\n    \"a\"\n  ]"),
        "{}",
        answer.text()
    );
    // Without it, the map's float is refused, naming the argument.
    assert_eq!(
        work_plan.call(&map).outcome,
        Outcome::ToolError(String::from(
            "Error executing tool work_plan: argument 'nodes': the number 1e+20 arrived as a 64-bit float, so its exact digits are unknown; it is not written changed"
        ))
    );
}

/// Issue 16 item 4 on the shift-work tools: a 10 MB value in every string argument of every tool is
/// answered — a refusal or a result — in under 64 KB: an echoed input value (a checkpoint path, a unit
/// id, a status, an agent id, the search words, a node id in a refusal) is clipped at 2,000 code
/// points.
#[test]
fn ten_megabyte_string_arguments_get_bounded_answers_issue16() {
    let (_dir, cp) = repo(EX);
    let tools = tools(false);
    let huge = "x".repeat(10 * 1024 * 1024);
    let out = |unit: &str, status: &str| json!({"checkpoint": cp, "unit_id": unit, "status": status, "handoff_patch": {}, "history_entry": {"unit": "U3", "outcome": "done"}});
    let calls: Vec<(&str, Value)> = vec![
        ("shiftwork_plan", json!({"checkpoint": huge})),
        ("shiftwork_status", json!({"checkpoint": huge})),
        ("shiftwork_status", json!({"checkpoint": cp, "search": huge})),
        ("shiftwork_clock_in", json!({"checkpoint": huge})),
        ("shiftwork_clock_in", json!({"checkpoint": cp, "unit_id": huge})),
        ("shiftwork_clock_out", {
            let mut a = out("U3", "done");
            a["checkpoint"] = json!(huge);
            a
        }),
        ("shiftwork_clock_out", out(&huge, "done")),
        ("shiftwork_clock_out", out("U3", &huge)),
        ("shiftwork_clock_out", {
            let mut a = out("U3", "done");
            a["agent_id"] = json!(huge);
            a
        }),
        // A refusal naming a huge id (a plan lists its ids verbatim: it is as long as `nodes`).
        (
            "work_plan",
            json!({"nodes": [{"id": huge, "depends_on": ["nobody"]}]}),
        ),
    ];
    for (tool, args) in calls {
        let answer = text(&call(&tools, tool, args));
        assert!(answer.len() < 64 * 1024, "{tool}: {} bytes", answer.len());
        assert!(
            answer.contains(" more)"),
            "{tool}: the echo is not clipped: {}",
            &answer[..200]
        );
    }
}

/// Issue 27 item 7: the group's memory budget (`--memory-budget`, `SHIFTWORK_MEMORY_BUDGET`). A call
/// the budget cannot take is not an answer about the checkpoint: it is a tool error in SW-40's frame
/// (`isError`, `Error executing tool <tool>: …`), which a client retries. A budget that is not a size is
/// a usage error naming the flag.
#[test]
fn the_memory_budget_refuses_as_a_tool_error_issue27_item7() {
    let (dir, cp) = repo(EX);
    let size = std::fs::metadata(&cp).unwrap().len();
    let tools = shiftwork::tools(Arc::new(
        Env::os().with_memory_budget(shiftwork_core::MemoryBudget::new(1024)),
    ));
    let needed = shiftwork_core::admission::factor::PLAN * size;
    let outcome = call(&tools, "shiftwork_plan", json!({"checkpoint": cp}));
    match &outcome {
        Outcome::ToolError(text) => assert_eq!(
            text,
            &format!(
                "Error executing tool shiftwork_plan: too large: a call on a checkpoint of {size} bytes needs about {needed} bytes of memory, more than the whole memory budget of 1024 bytes; nothing was done"
            )
        ),
        other => panic!("a tool error: {}", other.text()),
    }
    let bin = env!("CARGO_BIN_EXE_shiftwork-mcp");
    let run = |budget: &str| {
        Command::new(bin)
            .args([
                "call",
                "shiftwork_plan",
                &json!({"checkpoint": cp}).to_string(),
                "--memory-budget",
                budget,
            ])
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    let small = run("1K");
    assert_eq!(small.status.code(), Some(1), "{small:?}");
    assert!(
        String::from_utf8_lossy(&small.stderr).contains("Error executing tool shiftwork_plan: too large: ")
    );
    let enough = run("64MiB");
    assert!(enough.status.success(), "{enough:?}");
    assert_eq!(result_of(String::from_utf8_lossy(&enough.stdout).trim()), "plan");
    let bad = run("lots\u{1b}]52;c;x\u{7}");
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("--memory-budget takes a number of bytes"),
        "{stderr}"
    );
    assert!(
        !stderr.contains('\u{1b}') && !stderr.contains('\u{7}'),
        "{stderr}"
    );
}

/// A compact checkpoint of `n` units in waves of ten, written without building it.
fn compact_checkpoint(n: usize) -> String {
    let units: Vec<String> = (0..n)
        .map(|i| {
            let deps = if i >= 10 { format!(r#"["U{}"]"#, i - 10) } else { String::from("[]") };
            format!(
                r#"{{"id": "U{i}", "title": "Unit {i}", "brief_path": "b/U{i}.md", "status": "todo", "role": "implementer", "depends_on": {deps}, "verify": "make {i}"}}"#
            )
        })
        .collect();
    EX.replace(
        &EX[EX.find(r#""units": ["#).unwrap()..EX.find(r#"]}, "state""#).unwrap() + 1],
        &format!(r#""units": [{}]"#, units.join(", ")),
    )
    .replace(r#""cursor": "U3""#, r#""cursor": "U0""#)
}

/// Issue 27 item 7, through the binary: twelve large plans sent at once to a server whose memory
/// budget holds two of them. Every call is answered — a plan, or a busy tool error — and the server
/// is alive afterwards (it answers a ping and another plan).
#[test]
fn twelve_concurrent_large_plans_leave_the_server_alive_issue27_item7() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    std::fs::create_dir_all(dir.path().join(".shiftwork")).unwrap();
    let text = compact_checkpoint(40_000);
    std::fs::write(dir.path().join(".shiftwork/cp.json"), &text).unwrap();
    let budget = 2 * shiftwork_core::admission::factor::PLAN * text.len() as u64 + 1024;
    let mut server = support::Binary::serve_in(
        Some(dir.path()),
        &["--tools", "shiftwork", "--memory-budget", &budget.to_string()],
        &[],
    );
    server.initialize();
    let call = json!({"name": "shiftwork_plan", "arguments": {"checkpoint": ".shiftwork/cp.json"}});
    for id in 100..112 {
        server.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": call}));
    }
    let mut answered = std::collections::BTreeSet::new();
    while answered.len() < 12 {
        let message = server.receive();
        let id = message["id"].as_u64().unwrap();
        let result = &message["result"];
        if result["isError"] == json!(true) {
            let text = result["content"][0]["text"].as_str().unwrap();
            assert!(
                text.starts_with("Error executing tool shiftwork_plan: busy: "),
                "{text}"
            );
        } else {
            assert_eq!(result["structuredContent"]["result"], "plan");
            assert_eq!(
                result["structuredContent"]["sequence"].as_array().unwrap().len(),
                40_000
            );
        }
        answered.insert(id);
    }
    assert_eq!(server.request("ping", json!({}))["result"], json!({}));
    let again = server.request("tools/call", call);
    assert_eq!(again["result"]["structuredContent"]["result"], "plan");
}
