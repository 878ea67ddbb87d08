//! Arbitrary input through the checkpoint reader and every shift-work tool (SW-47, SW-150): never a
//! panic, every answer an object whose first key is `result` with a string value, a read document
//! rewrites to a fixed point (SW-14), a refused clock-out writes nothing (SW-77), a successful one
//! leaves a checkpoint that reads back (gate 14), and the ledger pass answers the same whatever the
//! chunks it is fed in (SW-98).
//!
//! Input layout: an even first byte sends the rest as raw bytes (the checkpoint file, and its ledger
//! after the first `\n\0\n`); an odd first byte builds a checkpoint and a ledger from the rest
//! (units, dependencies, statuses, `touches`, runs and reviews, a budget, questions, attempts), so
//! the tools get past the reader.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use shiftwork_core::json::{self, Json, Object};
use shiftwork_core::{ClockOutArguments, Env};
use std::path::Path;

const CP: &str = "/r/.shiftwork/cp.json";
const LEDGER: &str = "/r/.shiftwork/cp.json.log.jsonl";

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        let (checkpoint, ledger) = split(rest);
        raw(checkpoint);
        tools(checkpoint, ledger, &mut Unstructured::new(rest));
    } else {
        let mut u = Unstructured::new(rest);
        if let Ok((checkpoint, ledger)) = generate(&mut u) {
            tools(checkpoint.as_bytes(), ledger.as_bytes(), &mut u);
        }
    }
});

fn split(data: &[u8]) -> (&[u8], &[u8]) {
    match data.windows(3).position(|w| w == b"\n\0\n") {
        Some(at) => (&data[..at], &data[at + 3..]),
        None => (data, &[]),
    }
}

/// The reader and the writer alone.
fn raw(data: &[u8]) {
    if let Ok(doc) = shiftwork_core::checkpoint::parse_bytes(data) {
        let text = doc.to_text();
        let again = json::to_checkpoint_text(&json::parse(&text).expect("written text parses"));
        assert_eq!(again, text);
    }
    let _ = json::pick_members(&String::from_utf8_lossy(data), ["unit", "event", "tokens"]);
}

/// The answer's first key is `result`, with a string value; a refusal's reason is its sentence.
fn check_answer(result: &impl shiftwork_core::Answer) {
    let answer = &result.to_answer();
    let first = answer.as_object().and_then(|o| o.keys().next().cloned());
    assert_eq!(first.as_deref(), Some("result"));
    assert!(matches!(answer.get("result"), Some(Json::String(_))));
}

/// Every tool over the checkpoint and ledger bytes, in a repository on `MemFs`.
fn tools(checkpoint: &[u8], ledger: &[u8], u: &mut Unstructured<'_>) {
    let fs = shiftwork_seams::MemFs::new();
    fs.make_dirs("/r/.git");
    fs.write_file(CP, checkpoint);
    if !ledger.is_empty() {
        fs.write_file(LEDGER, ledger);
    }
    fs.write_file("/r/briefs/F1.md", b"# F1");
    fs.write_file("/r/.shiftwork/archive/a.txt", b"lock timeout U1\nunit U2 done\n");
    let clock = shiftwork_seams::ManualClock::new(chrono::DateTime::UNIX_EPOCH);
    let host = shiftwork_seams::MemHost::new(1, "h");
    host.answer_probe(
        "true",
        shiftwork_seams::ProbeOutcome {
            status: shiftwork_seams::ProbeStatus::Exited(0),
            stdout: Vec::new(),
            stderr: Vec::new(),
        },
    );
    let env = Env::new(Arc::new(fs.clone()), Arc::new(clock), Arc::new(host));

    ledger_pass_is_chunk_independent(ledger, u);

    check_answer(&shiftwork_core::plan_checkpoint(&env, Path::new(CP)));
    check_answer(&shiftwork_core::status(&env, Path::new(CP), Some("lock U1")));
    let unit = pick_unit(u);
    check_answer(&shiftwork_core::clock_in_arguments(&env, Path::new(CP), unit.as_deref()));
    check_answer(&shiftwork_core::clock_in_arguments(&env, Path::new(CP), None));

    let Ok(args) = clock_out_args(u) else {
        return;
    };
    let before: Vec<_> = fs.paths().into_iter().map(|p| (p.clone(), fs.file(&p))).collect();
    let result = shiftwork_core::clock_out_arguments(&env, &args);
    check_answer(&result);
    let answer = shiftwork_core::Answer::to_answer(&result);
    if answer.get("result").and_then(Json::as_str) == Some("ok") {
        let written = fs.file(CP).expect("the checkpoint is still there");
        if let Err(e) = shiftwork_core::checkpoint::parse_bytes(&written) {
            panic!("a committed checkpoint does not read back: {e}");
        }
    } else {
        let after: Vec<_> = fs.paths().into_iter().map(|p| (p.clone(), fs.file(&p))).collect();
        assert_eq!(before, after, "a refused clock-out wrote something: {answer:?}");
    }
    check_answer(&shiftwork_core::plan_checkpoint(&env, Path::new(CP)));
}

fn ledger_pass_is_chunk_independent(ledger: &[u8], u: &mut Unstructured<'_>) {
    let ids = ["U0", "U1", "U2", "U3"];
    let whole = {
        let mut pass = shiftwork_core::ledger::LedgerPass::new(&ids, true);
        pass.feed(ledger);
        pass.finish()
    };
    let size = u.int_in_range(1..=17usize).unwrap_or(1);
    let mut pass = shiftwork_core::ledger::LedgerPass::new(&ids, true);
    for chunk in ledger.chunks(size) {
        pass.feed(chunk);
    }
    let mut chunked = pass.finish();
    let mut whole = whole;
    whole.counted_tokens.sort_unstable();
    chunked.counted_tokens.sort_unstable();
    assert_eq!(whole, chunked);
}

fn pick_unit(u: &mut Unstructured<'_>) -> Option<String> {
    match u.int_in_range(0..=6u8).unwrap_or(0) {
        0 => None,
        6 => Some(String::from("ghost")),
        n => Some(format!("U{}", n - 1)),
    }
}

const STATUSES: [&str; 6] = ["todo", "in_progress", "done", "blocked", "dropped", "bogus"];
const ROLES: [&str; 3] = ["planner", "implementer", "reviewer"];
const PATHS: [&str; 6] = ["src/a.rs", "./src//a.rs", "src", "docs/b.md", "../x", "/abs"];

fn pick<'a>(u: &mut Unstructured<'_>, from: &[&'a str]) -> Result<&'a str> {
    Ok(from[u.choose_index(from.len())?])
}

fn strings(items: &[String]) -> Json {
    Json::strings(items)
}

/// A checkpoint of up to six units `U0…U5` and a ledger of up to twenty lines.
fn generate(u: &mut Unstructured<'_>) -> Result<(String, String)> {
    let n = u.int_in_range(0..=6usize)?;
    let ids: Vec<String> = (0..n).map(|i| format!("U{i}")).collect();
    let mut units = Vec::new();
    for id in &ids {
        let mut unit = Object::default();
        unit.insert("id".into(), Json::str(id.as_str()));
        unit.insert("title".into(), Json::str("t"));
        unit.insert("brief_path".into(), Json::str("b.md"));
        unit.insert("status".into(), Json::str(pick(u, &STATUSES[..5])?));
        unit.insert("role".into(), Json::str(pick(u, &ROLES)?));
        let mut deps = Vec::new();
        for _ in 0..u.int_in_range(0..=2u8)? {
            deps.push(if u.ratio(1, 12)? {
                String::from("ghost")
            } else {
                format!("U{}", u.int_in_range(0..=5u8)?)
            });
        }
        unit.insert("depends_on".into(), strings(&deps));
        unit.insert("verify".into(), Json::str("v"));
        if u.ratio(1, 3)? {
            let touches: Vec<String> = (0..u.int_in_range(0..=2u8)?)
                .map(|_| pick(u, &PATHS).map(str::to_owned))
                .collect::<Result<_>>()?;
            unit.insert("touches".into(), strings(&touches));
        }
        if u.ratio(1, 6)? {
            unit.insert("tests".into(), Json::str("H1"));
        }
        if u.ratio(1, 6)? {
            unit.insert(
                "replay_of".into(),
                Json::String(format!("U{}", u.int_in_range(0..=5u8)?)),
            );
        }
        if u.ratio(1, 5)? {
            let reviews: Vec<String> = (0..u.int_in_range(1..=2u8)?)
                .map(|_| Ok(format!("U{}", u.int_in_range(0..=5u8)?)))
                .collect::<Result<_>>()?;
            unit.insert("reviews".into(), strings(&reviews));
        }
        if u.ratio(1, 5)? {
            unit.insert("concludes".into(), Json::Bool(true));
        }
        if u.ratio(1, 3)? {
            let produced = json::parse(&format!(
                r#"[{{"kind": "commit", "ref": "c{0}"}}, {{"kind": "score", "ref": "{1}"}}, {{"kind": "validated-sha", "ref": "c{2}"}}, {{"kind": "run-output", "ref": "o"}}]"#,
                u.int_in_range(0..=3u8)?,
                pick(u, &["0.5", "0.9", "n/a", "1e400", "-3"])?,
                u.int_in_range(0..=3u8)?
            ))
            .map_err(|_| libfuzzer_sys::arbitrary::Error::IncorrectFormat)?;
            let mut attempt = Object::default();
            attempt.insert("status".into(), Json::str("done"));
            attempt.insert("outcome".into(), Json::str("o"));
            attempt.insert("produced".into(), produced);
            unit.insert("attempts".into(), Json::Array(vec![Json::Object(attempt)]));
        }
        units.push(Json::Object(unit));
    }
    let mut job = Object::default();
    job.insert("id".into(), Json::str("j"));
    job.insert("goal".into(), Json::str("g"));
    job.insert("done_definition".into(), Json::str("d"));
    job.insert("constraints".into(), Json::Array(vec![]));
    if u.ratio(1, 3)? {
        let text = format!(
            r#"{{"tokens": {}, "units": {}}}"#,
            u.int_in_range(1..=200_000u32)?,
            u.int_in_range(1..=8u8)?
        );
        job.insert("budget".into(), json::parse(&text).unwrap_or_default());
    }
    if u.ratio(1, 4)? {
        job.insert("kind".into(), Json::str("experimentation"));
        job.insert(
            "experiment".into(),
            json::parse(&format!(r#"{{"direction": "{}"}}"#, pick(u, &["max", "min"])?)).unwrap_or_default(),
        );
    }
    if u.ratio(1, 4)? {
        job.insert("agreements".into(), Json::strings(["A", "B"]));
    }
    if u.ratio(1, 5)? {
        job.insert(
            "roles".into(),
            json::parse(r#"{"implementer": ["m1"], "reviewer": ["m2"]}"#).unwrap_or_default(),
        );
    }
    let questions = match u.int_in_range(0..=3u8)? {
        0 | 1 => Json::Array(vec![]),
        2 => json::parse(r#"[{"q": "CI?", "kind": "relay", "probe": "true"}]"#).unwrap_or_default(),
        _ => json::parse(r#"[{"q": "CI?", "kind": "relay", "probe": "false"}, "Ship?"]"#).unwrap_or_default(),
    };
    let cursor = match pick_unit(u) {
        Some(id) => id,
        None => String::from("U0"),
    };
    let doc = json::parse(&format!(
        r#"{{"version": 1, "job": {}, "plan": {{"cursor": {}, "units": {}}}, "state": {{"repo": {{"branch": "m", "head_sha": "a", "dirty": false}}, "artifacts": [], "external": []}}, "history": [], "retro": [], "handoff": {{"next_action": "n", "open_questions": {}, "do_not": []}}}}"#,
        json::to_compact_text(&Json::Object(job)),
        json::to_compact_text(&Json::str(cursor)),
        json::to_compact_text(&Json::Array(units)),
        json::to_compact_text(&questions),
    ))
    .map_err(|_| libfuzzer_sys::arbitrary::Error::IncorrectFormat)?;
    let mut ledger = String::new();
    for _ in 0..u.int_in_range(0..=20u8)? {
        let unit = format!("U{}", u.int_in_range(0..=6u8)?);
        let line = match u.int_in_range(0..=5u8)? {
            0 | 1 => format!(r#"{{"event": "brief", "role": "implementer", "ts": "t", "unit": "{unit}"}}"#),
            2 => format!(r#"{{"event": "uncommitted", "role": "implementer", "ts": "t", "unit": "{unit}"}}"#),
            3 => format!(
                r#"{{"tokens": {}, "unit": "{unit}"}}"#,
                u.int_in_range(0..=90_000u32)?
            ),
            4 => format!(r#"{{"tokens": 1.5e3, "unit": "{unit}", "x": "\u2028"}}"#),
            _ => String::from("junk"),
        };
        ledger.push_str(&line);
        ledger.push('\n');
    }
    Ok((json::to_checkpoint_text(&doc), ledger))
}

/// A clock-out request of a unit of the generated plan, with every optional argument at times.
fn clock_out_args(u: &mut Unstructured<'_>) -> Result<ClockOutArguments> {
    let unit = pick_unit(u).unwrap_or_else(|| String::from("U0"));
    let status = pick(u, &STATUSES)?.to_owned();
    let produced = if u.ratio(1, 2)? {
        r#", "produced": [{"kind": "run-output", "ref": "o"}]"#
    } else {
        ""
    };
    let history = json::parse(&format!(r#"{{"unit": "{unit}", "outcome": "o"{produced}}}"#))
        .map_err(|_| libfuzzer_sys::arbitrary::Error::IncorrectFormat)?;
    let parse = |text: &str| json::parse(text).ok();
    Ok(ClockOutArguments {
        checkpoint: CP.into(),
        unit_id: unit,
        status,
        handoff_patch: match u.int_in_range(0..=2u8)? {
            0 => Object::default(),
            1 => json::parse(r#"{"open_questions": []}"#)
                .ok()
                .and_then(|v| v.as_object().cloned())
                .unwrap_or_default(),
            _ => json::parse(r#"{"journal": 1}"#)
                .ok()
                .and_then(|v| v.as_object().cloned())
                .unwrap_or_default(),
        },
        history_entry: history.as_object().cloned().unwrap_or_default(),
        accounting: match u.int_in_range(0..=3u8)? {
            0 => None,
            1 => parse(r#"{"tokens": 0, "duration_ms": 1}"#),
            2 => parse(r#"{"tokens": 10, "duration_ms": 1, "model": "m1", "estimate": true}"#),
            _ => parse(r#"{"tokens": "x", "ts": 1}"#),
        },
        agent_id: if u.ratio(1, 4)? {
            Some(Json::str(pick(u, &["a-1", "a b"])?))
        } else {
            None
        },
        agreements: if u.ratio(1, 4)? {
            parse(pick(
                u,
                &[
                    r#"{"adopt": ["C"], "retire": ["A"]}"#,
                    r#"{"retire": ["Z"]}"#,
                    "{}",
                ],
            )?)
        } else {
            None
        },
        conclusion: if u.ratio(1, 4)? {
            parse(pick(
                u,
                &[
                    r#"{"outcome": "resolved", "evidence": ["e"], "supported": "H1"}"#,
                    r#"{"outcome": "stopped", "evidence": []}"#,
                    r#"{"outcome": "resolved", "evidence": []}"#,
                ],
            )?)
        } else {
            None
        },
        follow_ups: if u.ratio(1, 4)? {
            parse(pick(
                u,
                &[
                    r#"[{"id": "F1", "title": "f", "role": "implementer", "brief_path": "briefs/F1.md", "touches": ["src/a.rs"]}]"#,
                    r#"[{"id": "F1", "title": "f", "role": "reviewer", "brief_path": "briefs/F1.md", "depends_on": ["F2"]}, {"id": "F2", "title": "f", "role": "planner", "brief_path": "briefs/F1.md", "depends_on": ["F1"]}]"#,
                    r#"[{"id": "U0", "title": "f", "role": "implementer", "brief_path": "nope.md"}]"#,
                ],
            )?)
        } else {
            None
        },
    })
}
