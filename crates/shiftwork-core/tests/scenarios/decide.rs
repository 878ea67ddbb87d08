//! Issue 13 item 3: the pure `decide` layer. A guard that no decide module names a seam, and every
//! gate of plan, clock-in and clock-out judged on plain values — a document, a ledger summary, what
//! was gathered — without a filesystem.

use std::collections::HashMap;
use std::path::Path;

use shiftwork_core::decide::clock_in::{self, Questions, Relay, Stop};
use shiftwork_core::decide::clock_out::{self, ClockOutArguments, Gathered};
use shiftwork_core::decide::plan;
use shiftwork_core::json::{Json, Object};
use shiftwork_core::ledger::LedgerSummary;
use shiftwork_core::model::{Produced, Question, Role, Text, UnitId};
use shiftwork_core::{Checkpoint, ClockIn, Escalation, FailedProbe, NodeField, ShiftworkRefusal};

use super::support::*;

/// The code of a source file without its comments.
fn code_of(text: &str) -> String {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `word` occurs in `code` as an identifier of its own (not inside `MemFs` or `Envelope`).
fn names(code: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    code.match_indices(word).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

#[test]
fn no_decide_module_names_a_seam_issue13() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/decide");
    let mut checked = 0;
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let code = code_of(&std::fs::read_to_string(&path).unwrap());
        for word in [
            "Fs",
            "Host",
            "Env",
            "Clock",
            "shiftwork_seams",
            "LockTable",
            "std::fs",
            "std::io",
        ] {
            if names(&code, word) {
                found.push(format!("{}: {word}", path.display()));
            }
        }
        checked += 1;
    }
    assert!(
        checked >= 4,
        "the decide modules were not found in {}",
        dir.display()
    );
    assert!(found.is_empty(), "decide modules naming I/O: {found:?}");
    // The guard itself sees a seam when there is one.
    assert!(names("fn f(fs: &dyn Fs)", "Fs") && !names("let fs = MemFs::new();", "Fs"));
}

fn now() -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp(1_767_323_045, 750_000_000).unwrap()
}

fn summary(briefed: &[bool]) -> LedgerSummary {
    LedgerSummary {
        briefed: briefed.to_vec(),
        ..LedgerSummary::default()
    }
}

fn gathered(briefs: &[(&str, bool)]) -> Gathered {
    Gathered {
        log: String::from(".shiftwork/cp.json.log.jsonl"),
        brief_files: briefs
            .iter()
            .map(|(p, f)| ((*p).to_owned(), *f))
            .collect::<HashMap<_, _>>(),
        ..Gathered::default()
    }
}

type Edit = Box<dyn Fn(&mut Object)>;
type ArgsEdit = Box<dyn Fn(&mut ClockOutArguments)>;
/// A row of the gate table: name, checkpoint edit, briefed per unit, argument edit, the expected
/// answer (`ok <cursor>`) or refusal variant, and the refusal's sentence.
type Case = (
    &'static str,
    Edit,
    [bool; 3],
    ArgsEdit,
    Result<&'static str, fn(&ShiftworkRefusal) -> bool>,
    &'static str,
);

fn none() -> Edit {
    Box::new(|_| {})
}

fn at(path: &'static str, value: &'static str) -> Edit {
    Box::new(move |d| set(d, path, parse(value)))
}

fn arg(edit: impl Fn(&mut ClockOutArguments) + 'static) -> ArgsEdit {
    Box::new(edit)
}

fn json_arg(value: &str) -> Option<Json> {
    Some(parse(value))
}

/// One clock-out on EX (units U1 done, U3 the cursor, U4 after it; briefed as given): its refusal's
/// sentence, or `ok <cursor>`.
fn judge(
    edit: &Edit,
    briefed: &[bool],
    briefs: &[(&str, bool)],
    args: &ArgsEdit,
) -> Result<String, ShiftworkRefusal> {
    let doc = ex_with(|d| edit(d));
    let mut request = out_args("U3", "done");
    args(&mut request);
    let commit = clock_out::clock_out(doc, &summary(briefed), &gathered(briefs), &request, now())?;
    Ok(format!("ok {}", commit.answer.cursor))
}

/// Gates 2–14 of SW-77, one row per sentence, each refusal matched by its variant and its sentence.
#[test]
fn every_clock_out_gate_on_plain_values_sw77() {
    let concluding = Box::new(|d: &mut Object| set(d, "plan/units/1/concludes", Json::Bool(true))) as Edit;
    let cases: Vec<Case> = vec![
        (
            "gate 2",
            none(),
            [false; 3],
            arg(|a| a.unit_id = "U9".into()),
            Err(|r| matches!(r, ShiftworkRefusal::NotInPlan { unit } if unit == "U9")),
            "unit U9 is not in the plan",
        ),
        (
            "gate 3",
            none(),
            [false; 3],
            arg(|a| a.unit_id = "U4".into()),
            Err(|r| matches!(r, ShiftworkRefusal::NotCursor { cursor, .. } if cursor == "U3")),
            "unit U4 is not the cursor unit U3",
        ),
        (
            "gate 3, briefed",
            none(),
            [false, false, true],
            arg(|a| a.unit_id = "U4".into()),
            Ok("ok U3"),
            "",
        ),
        (
            "gate 4, not a list",
            at("job/roles", r#"{"implementer": "opus"}"#),
            [false; 3],
            arg(|_| {}),
            Err(|r| matches!(r, ShiftworkRefusal::RolesNotAList { .. })),
            "unit U3 in role implementer cannot clock out: job.roles.implementer is not a list of model identifiers, so it allows no model",
        ),
        (
            "gate 4, no model",
            at("job/roles", r#"{"implementer": ["opus", "haiku"]}"#),
            [false; 3],
            arg(|_| {}),
            Err(|r| matches!(r, ShiftworkRefusal::NoModel { allowed, .. } if allowed == &["opus", "haiku"])),
            "unit U3 in role implementer reported no model, but job.roles.implementer allows only: opus, haiku",
        ),
        (
            "gate 4, other model",
            at("job/roles", r#"{"implementer": ["opus"]}"#),
            [false; 3],
            arg(|a| a.accounting = json_arg(r#"{"tokens": 1, "duration_ms": 1, "model": 5.0}"#)),
            Err(|r| matches!(r, ShiftworkRefusal::ModelNotAllowed { model, .. } if **model == parse("5.0"))),
            "unit U3 in role implementer reported model 5.0, which job.roles.implementer does not allow: opus",
        ),
        (
            "gate 5",
            none(),
            [false; 3],
            arg(|a| a.accounting = json_arg(r#"{"tokens": "1234", "duration_ms": 1}"#)),
            Err(|r| matches!(r, ShiftworkRefusal::AccountingShape { .. })),
            "unit U3 in role implementer reported an accounting line the schema refuses: JSON does not match schema at 'accounting/tokens': '1234' is not of type 'integer'",
        ),
        (
            "gate 6",
            none(),
            [false; 3],
            arg(|a| a.accounting = json_arg(r#"{"tokens": 1, "duration_ms": 1, "ts": "x", "unit": "y"}"#)),
            Err(|r| matches!(r, ShiftworkRefusal::ReservedKeys { keys, .. } if keys == &["unit", "ts"])),
            "unit U3 in role implementer reported an accounting line that sets the runtime's own keys: unit, ts",
        ),
        (
            "gate 7",
            at("job/budget", r#"{"units": 5}"#),
            [false; 3],
            arg(|a| a.accounting = json_arg(r#"{"tokens": 0, "duration_ms": 1}"#)),
            Err(|r| matches!(r, ShiftworkRefusal::ZeroTokens { .. })),
            "unit U3 in role implementer reported 0 tokens, which job.budget refuses unless the line carries estimate: true",
        ),
        (
            "gate 7, estimate",
            at("job/budget", r#"{"units": 5}"#),
            [false; 3],
            arg(|a| a.accounting = json_arg(r#"{"tokens": 0, "duration_ms": 1, "estimate": true}"#)),
            Ok("ok U4"),
            "",
        ),
        (
            "gate 8",
            none(),
            [false; 3],
            arg(|a| a.agent_id = json_arg(r#""a b""#)),
            Err(|r| {
                matches!(
                    r,
                    ShiftworkRefusal::ArgumentShape {
                        argument: "agent_id",
                        ..
                    }
                )
            }),
            "unit U3 in role implementer sent agent_id the schema refuses: JSON does not match schema at 'agent_id': 'a b' does not match '^[A-Za-z0-9_-]{1,64}$'",
        ),
        (
            "gate 9, not a concluder",
            none(),
            [false; 3],
            arg(|a| a.conclusion = json_arg(r#"{"outcome": "stopped", "evidence": []}"#)),
            Err(|r| matches!(r, ShiftworkRefusal::NotConcluder { .. })),
            "unit U3 cannot send a conclusion: only a unit with concludes: true may",
        ),
        (
            "gate 9, no supported",
            concluding,
            [false; 3],
            arg(|a| a.conclusion = json_arg(r#"{"outcome": "resolved", "evidence": ["e"]}"#)),
            Err(|r| matches!(r, ShiftworkRefusal::ResolvedWithoutSupported)),
            "conclusion resolved needs supported: the hypothesis id its evidence supports",
        ),
        (
            "gate 9, no run",
            Box::new(|d| set(d, "plan/units/1/concludes", Json::Bool(true))),
            [false; 3],
            arg(|a| {
                a.conclusion = json_arg(r#"{"outcome": "resolved", "evidence": ["e"], "supported": "H1"}"#)
            }),
            Err(|r| matches!(r, ShiftworkRefusal::NoDoneRun { hypothesis } if hypothesis == "H1")),
            "conclusion resolved for H1 needs a done run: no done unit tests H1",
        ),
        (
            "gate 10",
            Box::new(|d| set(d, "plan/units/1/tests", Json::str("H1"))),
            [false; 3],
            arg(|_| {}),
            Err(|r| matches!(r, ShiftworkRefusal::NoRunOutput { .. })),
            "unit U3 is a run unit clocked out done without a run-output in history_entry.produced",
        ),
        (
            "gate 11, retire",
            none(),
            [false; 3],
            arg(|a| a.agreements = json_arg(r#"{"retire": ["gone"]}"#)),
            Err(|r| matches!(r, ShiftworkRefusal::RetireUnknown { agreement } if agreement == "gone")),
            "agreement to retire is not on job.agreements: gone",
        ),
        (
            "gate 11, too many",
            none(),
            [false; 3],
            arg(|a| {
                a.agreements = Some(Json::Object(shiftwork_core::json::object([(
                    "adopt",
                    Json::strings((0..21).map(|i| format!("a{i}"))),
                )])))
            }),
            Err(|r| matches!(r, ShiftworkRefusal::TooManyAgreements { count: 21 })),
            "job.agreements would hold 21 agreements; at most 20 are kept",
        ),
        (
            "gate 12, duplicate",
            none(),
            [false; 3],
            arg(|a| {
                a.follow_ups =
                    json_arg(r#"[{"id": "U4", "title": "t", "role": "implementer", "brief_path": "b.md"}]"#)
            }),
            Err(|r| matches!(r, ShiftworkRefusal::DuplicateId { id } if id == "U4")),
            "duplicate node id U4",
        ),
        (
            "gate 12, brief not a file",
            none(),
            [false; 3],
            arg(|a| {
                a.follow_ups = json_arg(
                    r#"[{"id": "F1", "title": "t", "role": "implementer", "brief_path": "missing.md"}]"#,
                )
            }),
            Err(|r| matches!(r, ShiftworkRefusal::FollowUpBriefNotAFile { .. })),
            "follow-up F1 brief missing.md is not a file",
        ),
        (
            "gate 12, brief outside",
            none(),
            [false; 3],
            arg(|a| {
                a.follow_ups = json_arg(
                    r#"[{"id": "F1", "title": "t", "role": "implementer", "brief_path": "../b.md"}]"#,
                )
            }),
            Err(|r| matches!(r, ShiftworkRefusal::FollowUpBriefNotAFile { path, .. } if path == "../b.md")),
            "follow-up F1 brief ../b.md is not a file",
        ),
        (
            "gate 12, unknown dependency",
            none(),
            [false; 3],
            arg(|a| {
                a.follow_ups = json_arg(
                    r#"[{"id": "F1", "title": "t", "role": "implementer", "brief_path": "b.md", "depends_on": ["F9"]}]"#,
                )
            }),
            Err(|r| matches!(r, ShiftworkRefusal::UnknownDependency { .. })),
            "node F1 depends on F9, which no node declares",
        ),
        (
            "gate 12, cycle",
            none(),
            [false; 3],
            arg(|a| {
                a.follow_ups = json_arg(
                    r#"[{"id": "F1", "title": "t", "role": "implementer", "brief_path": "b.md", "depends_on": ["F2"]}, {"id": "F2", "title": "t", "role": "implementer", "brief_path": "b.md", "depends_on": ["F1"]}]"#,
                )
            }),
            Err(|r| matches!(r, ShiftworkRefusal::Cycle { walk } if walk == &["F1", "F2", "F1"])),
            "the graph has a cycle: F1 -> F2 -> F1",
        ),
        (
            "gate 12, role",
            at("job/roles", r#"{"implementer": ["opus"]}"#),
            [false; 3],
            arg(|a| {
                a.accounting = json_arg(r#"{"tokens": 1, "duration_ms": 1, "model": "opus"}"#);
                a.follow_ups =
                    json_arg(r#"[{"id": "F1", "title": "t", "role": "reviewer", "brief_path": "b.md"}]"#);
            }),
            Err(|r| matches!(r, ShiftworkRefusal::FollowUpRoleUndeclared { .. })),
            "follow-up F1 has role reviewer, which job.roles does not declare",
        ),
        (
            "gate 12, accepted",
            none(),
            [false; 3],
            arg(|a| {
                a.follow_ups =
                    json_arg(r#"[{"id": "F1", "title": "t", "role": "implementer", "brief_path": "b.md"}]"#)
            }),
            Ok("ok U4"),
            "",
        ),
        (
            "gate 14",
            none(),
            [false; 3],
            arg(|a| a.status = "bogus".into()),
            Err(|r| matches!(r, ShiftworkRefusal::RefusedToWrite(_))),
            "refused to write: JSON does not match schema at 'plan/units/1/status': 'bogus' is not one of ['todo', 'in_progress', 'done', 'blocked', 'dropped']",
        ),
    ];
    for (name, edit, briefed, args, expected, sentence) in &cases {
        let got = judge(edit, briefed, &[("b.md", true), ("missing.md", false)], args);
        match (expected, &got) {
            (Ok(answer), Ok(got)) => assert_eq!(got, answer, "{name}"),
            (Err(is), Err(refusal)) => {
                assert!(is(refusal), "{name}: {refusal:?}");
                assert_eq!(refusal.to_string(), *sentence, "{name}");
            }
            _ => panic!("{name}: {got:?}"),
        }
    }
}

/// Gate 9's evidence rule (SW-126) on plain values: a done run, a done replay in another role, a
/// done review of either — each missing piece named by its sentence.
#[test]
fn a_resolved_conclusion_needs_run_replay_and_review_sw126() {
    let units = |replay_role: &str, review: bool| {
        let review = if review {
            r#", {"id": "V1", "title": "t", "brief_path": "b.md", "status": "done", "role": "planner", "depends_on": ["R1"], "verify": "v", "reviews": ["R1"]}"#
        } else {
            ""
        };
        parse(&format!(
            r#"[{{"id": "R1", "title": "t", "brief_path": "b.md", "status": "done", "role": "implementer", "depends_on": [], "verify": "v", "tests": "H1"}}, {{"id": "U3", "title": "t", "brief_path": "b.md", "status": "todo", "role": "implementer", "depends_on": [], "verify": "v", "concludes": true}}, {{"id": "P1", "title": "t", "brief_path": "b.md", "status": "done", "role": "{replay_role}", "depends_on": ["R1"], "verify": "v", "replay_of": "R1"}}{review}]"#
        ))
    };
    let check = |replay_role: &'static str, review: bool, expected: Result<(), &str>| {
        let doc = ex_with(|d| set(d, "plan/units", units(replay_role, review)));
        let mut args = out_args("U3", "done");
        args.conclusion = json_arg(r#"{"outcome": "resolved", "evidence": ["e"], "supported": "H1"}"#);
        let got = clock_out::clock_out(doc, &summary(&[false; 4]), &gathered(&[]), &args, now());
        match expected {
            Ok(()) => assert!(got.is_ok(), "{got:?}"),
            Err(sentence) => assert_eq!(got.unwrap_err().to_string(), sentence),
        }
    };
    check(
        "implementer",
        true,
        Err("conclusion resolved for H1 needs a done replay of run R1 in another role"),
    );
    check(
        "reviewer",
        false,
        Err("conclusion resolved for H1 needs a done review of run R1 or of its replay P1"),
    );
    check("reviewer", true, Ok(()));
}

/// What a clock-out that passes writes: the document, the accounting line with the measured
/// `briefed`, the marker, the answer (SW-83, SW-85, SW-87).
#[test]
fn a_passing_clock_out_decides_its_bytes_sw83_sw85() {
    let mut args = out_args("U3", "done");
    args.accounting = json_arg(r#"{"tokens": 41250, "duration_ms": 95000, "model": "m"}"#);
    args.agent_id = json_arg(r#""agent-7""#);
    let commit = clock_out::clock_out(
        ex(),
        &summary(&[false, true, false]),
        &gathered(&[]),
        &args,
        now(),
    )
    .unwrap();
    assert_eq!(
        commit.line,
        r#"{"agent_id": "agent-7", "briefed": true, "duration_ms": 95000, "model": "m", "role": "implementer", "status": "done", "tokens": 41250, "ts": "2026-01-02T03:04:05Z", "unit": "U3"}"#
    );
    assert_eq!(
        commit.marker,
        r#"{"event": "uncommitted", "role": "implementer", "ts": "2026-01-02T03:04:05Z", "unit": "U3"}"#
    );
    let written = Checkpoint::new(&parse(&commit.document))
        .unit("U3")
        .unwrap()
        .status()
        .to_owned();
    assert_eq!((written.as_str(), commit.answer.cursor.as_str()), ("done", "U4"));
    assert_eq!(commit.answer.log, ".shiftwork/cp.json.log.jsonl");
    // The brief files to stat are only those that may be looked at.
    let mut follow = out_args("U3", "done");
    follow.follow_ups = json_arg(
        r#"[{"brief_path": "a.md"}, {"brief_path": "/etc/x"}, {"brief_path": "x/../../y"}, {"id": "no path"}]"#,
    );
    assert_eq!(clock_out::brief_paths(&follow), ["a.md"]);
}

/// Clock-in steps 2–9 and 11 (SW-67) on plain values.
#[test]
fn every_clock_in_step_on_plain_values_sw67() {
    // Step 2: questions.
    let relay = r#"{"q": "CI?", "kind": "relay", "probe": "test -f green"}"#;
    let with_questions = |items: &str| ex_with(|d| set(d, "handoff/open_questions", parse(items)));
    let doc = with_questions(&format!("[{relay}]"));
    let cp = Checkpoint::new(&doc);
    assert_eq!(
        clock_in::questions(&cp, true),
        Questions::Probe(vec![Relay {
            question: "CI?",
            probe: "test -f green"
        }])
    );
    let Questions::Escalate(escalated) = clock_in::questions(&cp, false) else {
        panic!("with probes off a relay escalates")
    };
    assert!(matches!(
        &escalated,
        Escalation::OpenQuestion { question, open_questions, probe: None }
            if question == "CI?" && open_questions.as_slice() == [Question::Relay { q: Text::new("CI?").unwrap(), probe: Text::new("test -f green").unwrap() }]
    ));
    assert_eq!(escalated.to_string(), "open question: CI?");
    let failed = clock_in::relay_failed(
        &cp,
        &Relay {
            question: "CI?",
            probe: "x",
        },
        Some(1),
    );
    assert!(matches!(
        failed,
        Escalation::OpenQuestion {
            probe: Some(FailedProbe { exit: Some(1), .. }),
            ..
        }
    ));
    let doc = with_questions(&format!(r#"[{relay}, "Ship?"]"#));
    assert!(
        matches!(clock_in::questions(&Checkpoint::new(&doc), true), Questions::Escalate(Escalation::OpenQuestion { question, .. }) if question == "Ship?")
    );
    assert_eq!(
        clock_in::questions(&Checkpoint::new(&ex()), true),
        Questions::None
    );

    // Steps 3–6: selection.
    let select = |doc: &Json, unit: Option<&str>| {
        clock_in::select(&Checkpoint::new(doc), unit).map(|u| u.id().to_owned())
    };
    assert_eq!(select(&g("A(done); B(dropped)", "A"), None), Err(Stop::AllDone));
    assert_eq!(
        select(&g("A(todo)", "Z"), None),
        Err(Stop::Escalate(Escalation::CursorNamesNoUnit {
            cursor: String::from("Z")
        }))
    );
    assert_eq!(select(&g("A(todo)", "Z"), Some("A")), Ok(String::from("A")));
    assert_eq!(
        select(&g("A(todo); B(todo, <-A)", "A"), Some("B")),
        Err(Stop::Refused(ShiftworkRefusal::NotReady {
            unit: UnitId::new("B").unwrap(),
            ready: vec![UnitId::new("A").unwrap()]
        }))
    );
    assert!(matches!(
        select(&g("A(todo, <-B); B(todo, <-A)", "A"), None),
        Err(Stop::Refused(ShiftworkRefusal::Cycle { .. }))
    ));

    // Steps 8–9: the touches hold and the budget, on the ledger as read under the lock.
    let doc = ex_with(|d| {
        set(d, "plan/units/1/touches", parse(r#"["src/a.rs"]"#));
        set(d, "plan/units/2/depends_on", Json::Array(vec![]));
        set(d, "plan/units/2/touches", parse(r#"["./src//a.rs"]"#));
    });
    let cp = Checkpoint::new(&doc);
    let u4 = cp.unit("U4").unwrap();
    assert_eq!(
        clock_in::admit(&cp, &u4, &summary(&[false, true, false])),
        Err(ShiftworkRefusal::TouchesHeld {
            unit: String::from("U4"),
            path: String::from("src/a.rs"),
            holder: String::from("U3")
        })
    );
    assert_eq!(
        clock_in::admit(&cp, &u4, &summary(&[false, false, false])),
        Ok(())
    );
    let doc = ex_with(|d| set(d, "job/budget", parse(r#"{"units": 1}"#)));
    let cp = Checkpoint::new(&doc);
    let spent = LedgerSummary {
        briefed: vec![false; 3],
        spent_units: 1,
        ..LedgerSummary::default()
    };
    assert_eq!(
        clock_in::admit(&cp, &cp.unit("U3").unwrap(), &spent),
        Err(ShiftworkRefusal::BudgetSpent {
            dimension: shiftwork_core::BudgetDimension::Units,
            used: 1,
            limit: 1
        })
    );

    // Step 11: the brief, with what a dependency produced last.
    let doc = ex_with(|d| {
        set(
            d,
            "plan/units/0/attempts",
            parse(r#"[{"status": "done", "produced": [{"kind": "commit", "ref": "abc"}]}]"#),
        )
    });
    let cp = Checkpoint::new(&doc);
    let brief = clock_in::brief(&cp, &cp.unit("U3").unwrap());
    assert_eq!((brief.role(), brief.upstream().len()), (Role::Implementer, 1));
    assert_eq!(
        brief.upstream()[0].last,
        [Produced::new(
            Text::new("commit").unwrap(),
            Text::new("abc").unwrap()
        )]
    );
    assert!(matches!(ClockIn::Brief(Box::new(brief)), ClockIn::Brief(_)));
}

/// The plan checks (SW-60, SW-61) and the planner's refusals through the batch view, on values.
#[test]
fn every_plan_check_on_plain_values_sw60_sw61() {
    let check = |spec: &str, edit: &dyn Fn(&mut Object), expected: Result<&[&str], ShiftworkRefusal>| {
        let mut doc = g(spec, "A");
        edit(doc.as_object_mut().unwrap());
        let got = plan::plan_checks(&Checkpoint::new(&doc))
            .map(|view| view.ready().into_iter().map(str::to_owned).collect::<Vec<_>>());
        match expected {
            Ok(ready) => assert_eq!(got.unwrap(), ready, "{spec}"),
            Err(refusal) => assert_eq!(got.unwrap_err(), refusal, "{spec}"),
        }
    };
    let keep = |_: &mut Object| {};
    check("A(todo); B(todo, <-A)", &keep, Ok(&["A"]));
    check("A(done); B(todo, <-A)", &keep, Ok(&["B"]));
    check(
        "A(todo); B(todo, <-C)",
        &keep,
        Err(ShiftworkRefusal::UnknownDependency {
            node: "B".into(),
            dependency: "C".into(),
        }),
    );
    check(
        "A(todo, <-B); B(todo, <-A)",
        &keep,
        Err(ShiftworkRefusal::Cycle {
            walk: vec!["A".into(), "B".into(), "A".into()],
        }),
    );
    check(
        "A(done); B(todo)",
        &|d| set(d, "plan/units/0/touches", parse(r#"["../x"]"#)),
        Err(ShiftworkRefusal::NodeShape {
            index: 0,
            field: Some(NodeField::Touches),
        }),
    );
    check(
        "A(todo); B(todo, reviewer, <-A)",
        &|d| set(d, "plan/units/1/reviews", parse(r#"["Z"]"#)),
        Err(ShiftworkRefusal::ReviewsUnknownUnit {
            unit: "B".into(),
            reviewed: "Z".into(),
        }),
    );
    check(
        "A(todo); B(todo, reviewer)",
        &|d| set(d, "plan/units/1/reviews", parse(r#"["A"]"#)),
        Err(ShiftworkRefusal::ReviewsNonDependency {
            unit: "B".into(),
            reviewed: "A".into(),
        }),
    );
    check(
        "A(todo); B(todo, <-A)",
        &|d| set(d, "plan/units/1/reviews", parse(r#"["A"]"#)),
        Err(ShiftworkRefusal::ReviewsOwnRole {
            unit: "B".into(),
            reviewed: "A".into(),
            role: "implementer".into(),
        }),
    );
}
