//! Issue 28 (a library a runtime author enjoys) and the server hooks of issues 29 and 30: the typed
//! model and its clock-out, the truthful refusal variants and their codes, the family's agent-id
//! grammar, checkpoint authoring, confinement to roots, identity, and the child spans.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use shiftwork_core::authoring::{CheckpointBuilder, Job, RepoState, create};
use shiftwork_core::json::{self, Json, Object};
use shiftwork_core::model::{
    HistoryEntry, ModelError, PlannedUnit, Produced, Question, Role, Text, UnitId, UnitStatus,
};
use shiftwork_core::{
    Accounting, AgentId, Answer, ClockIn, ClockOut, ClockOutArguments, Confined, Env, HandoffPatch,
    ShiftworkRefusal,
};
use shiftwork_seams::{ManualClock, MemFs, MemHost, Op};

use crate::support::*;

fn text(t: &str) -> Text {
    Text::new(t).unwrap()
}

fn id(t: &str) -> UnitId {
    UnitId::new(t).unwrap()
}

fn env_of(fs: &MemFs) -> Env {
    Env::new(
        Arc::new(fs.clone()),
        Arc::new(ManualClock::new(chrono::DateTime::UNIX_EPOCH)),
        Arc::new(MemHost::new(PID, HOST)),
    )
}

/// Issue 28 item 1: ids and texts are never empty; statuses and roles are closed and spelt as the
/// checkpoint spells them; a value outside the set is refused naming the set.
#[test]
fn issue28_item1_the_model_is_closed_where_the_schema_closes_it() {
    assert_eq!(UnitId::new(""), Err(ModelError::Empty { what: "a unit id" }));
    assert_eq!(Text::new(""), Err(ModelError::Empty { what: "a text" }));
    for status in UnitStatus::ALL {
        assert_eq!(status.as_str().parse::<UnitStatus>(), Ok(*status));
    }
    assert_eq!(
        UnitStatus::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        ["todo", "in_progress", "done", "blocked", "dropped"]
    );
    assert_eq!(
        Role::ALL.iter().map(|r| r.as_str()).collect::<Vec<_>>(),
        ["planner", "implementer", "reviewer"]
    );
    assert_eq!(
        "finished".parse::<UnitStatus>().unwrap_err().to_string(),
        "'finished' is not a unit status: one of todo, in_progress, done, blocked, dropped"
    );
    assert_eq!(
        "tester".parse::<Role>().unwrap_err().to_string(),
        "'tester' is not a role: one of planner, implementer, reviewer"
    );
    assert!(UnitStatus::Dropped.is_terminal() && !UnitStatus::Blocked.is_terminal());
    assert!(AgentId::new("svc:deploy@eu").is_ok() && AgentId::new("a b").is_err());
}

/// Issue 28 item 1: a typed clock-out writes exactly what the same clock-out sent as the tool's JSON
/// arguments writes — checkpoint bytes, ledger line, answer.
#[test]
fn issue28_item1_a_typed_clock_out_writes_what_its_json_arguments_write() {
    let typed = Fx::new(&ex());
    let sent = Fx::new(&ex());
    let request = ClockOut::new(
        CP,
        id("U3"),
        UnitStatus::Done,
        HistoryEntry::new(id("U3"), text("core built"))
            .with_notes("green")
            .with_produced(vec![Produced::new(text("commit"), text("abc1234"))]),
    )
    .with_handoff(HandoffPatch {
        next_action: Some(text("Review the core.")),
        open_questions: Some(vec![Question::Text(text("Which layer?"))]),
        ..HandoffPatch::default()
    })
    .with_accounting(Accounting::new(41_250, std::time::Duration::from_millis(95_000)).with_model("m1"))
    .with_agent(AgentId::new("bob.smith").unwrap());
    let a = compact(&shiftwork_core::clock_out(&typed.env, &request));
    let mut args = out_args("U3", "done");
    args.history_entry = obj(
        r#"{"unit": "U3", "outcome": "core built", "notes": "green", "produced": [{"kind": "commit", "ref": "abc1234"}]}"#,
    );
    args.handoff_patch = obj(r#"{"next_action": "Review the core.", "open_questions": ["Which layer?"]}"#);
    args.accounting = Some(parse(r#"{"tokens": 41250, "duration_ms": 95000, "model": "m1"}"#));
    args.agent_id = Some(Json::str("bob.smith"));
    let b = compact(&shiftwork_core::clock_out_arguments(&sent.env, &args));
    assert_eq!(a, b);
    assert!(a.starts_with(r#"{"result": "ok""#), "{a}");
    assert_eq!(typed.cp(), sent.cp());
    assert_eq!(typed.ledger(), sent.ledger());
    assert!(typed.ledger().unwrap().contains(r#""agent_id": "bob.smith""#));
}

/// Issue 28 item 1: the results read typed — the brief's unit and role, the status's counts and last
/// history entry, an escalation's questions — while their answers stay the checkpoint's verbatim parts.
#[test]
fn issue28_item1_results_read_typed() {
    let fx = Fx::new(&ex());
    let status = shiftwork_core::status(&fx.env, Path::new(CP), None).unwrap();
    assert_eq!(status.units(), [(UnitStatus::Done, 1), (UnitStatus::Todo, 2)]);
    assert_eq!(
        (status.count(UnitStatus::Todo), status.cursor().as_str()),
        (2, "U3")
    );
    let last = status.last_history().unwrap();
    assert_eq!((last.unit.as_str(), last.outcome.as_str()), ("U1", "done"));
    let Ok(ClockIn::Brief(brief)) = shiftwork_core::clock_in_arguments(&fx.env, Path::new(CP), None) else {
        panic!("U3 is ready")
    };
    let unit = brief.unit();
    assert_eq!(
        (unit.id.as_str(), unit.status, unit.role),
        ("U3", UnitStatus::Todo, Role::Implementer)
    );
    assert_eq!(unit.depends_on, [id("U1")]);
    assert_eq!(
        brief.invariants(),
        [text("keep the API stable"), text("no new dependencies")]
    );
    assert_eq!(brief.do_not(), [text("do not touch vendor/")]);
    assert_eq!(brief.files()[0].path.as_str(), "docs/spec.md");
    assert_eq!(brief.handoff().next_action.as_str(), "Build the core.");
    let questions = Fx::new(&ex_with(|d| {
        set(
            d,
            "handoff/open_questions",
            parse(r#"["Which layer?", {"kind": "relay", "q": "CI?", "probe": "true"}]"#),
        );
    }));
    let Ok(ClockIn::Escalate(shiftwork_core::Escalation::OpenQuestion { open_questions, .. })) =
        shiftwork_core::clock_in_arguments(&questions.env, Path::new(CP), None)
    else {
        panic!("a decision question escalates")
    };
    assert_eq!(
        open_questions.as_slice(),
        [
            Question::Text(text("Which layer?")),
            Question::Relay {
                q: text("CI?"),
                probe: text("true")
            }
        ]
    );
    // The answer repeats the question object as written (key order kept).
    assert!(
        questions
            .clock_in(None)
            .contains(r#"{"kind": "relay", "q": "CI?", "probe": "true"}"#)
    );
}

/// Issue 28 item 5: a clock-in of a unit that does not exist is `UnknownUnit`, one that exists but is
/// not ready `NotReady` — both with bantamkit's one sentence.
#[test]
fn issue28_item5_clock_in_of_a_missing_unit_is_unknown_unit_not_not_ready() {
    let fx = Fx::new(&ex());
    let missing = shiftwork_core::clock_in_arguments(&fx.env, Path::new(CP), Some("ghost")).unwrap_err();
    assert!(
        matches!(&missing, ShiftworkRefusal::UnknownUnit { unit, ready } if unit == "ghost" && ready == &["U3"])
    );
    assert_eq!(missing.to_string(), "unit ghost is not ready; ready is U3");
    assert_eq!(missing.code(), "UNKNOWN_UNIT");
    let waiting = shiftwork_core::clock_in_arguments(&fx.env, Path::new(CP), Some("U4")).unwrap_err();
    assert!(matches!(&waiting, ShiftworkRefusal::NotReady { unit, .. } if unit == "U4"));
    assert_eq!(waiting.to_string(), "unit U4 is not ready; ready is U3");
    assert_eq!(waiting.code(), "NOT_READY");
}

/// Issue 28 item 5: a clock-out of a unit already done (not the cursor, not briefed) is
/// `AlreadyFinished`, one not yet done `NotCursor` — both with bantamkit's one sentence.
#[test]
fn issue28_item5_clock_out_of_a_finished_unit_is_already_finished_not_not_cursor() {
    let fx = Fx::new(&ex());
    let before = fx.snapshot();
    let done = shiftwork_core::clock_out_arguments(&fx.env, &out_args("U1", "done")).unwrap_err();
    assert!(
        matches!(&done, ShiftworkRefusal::AlreadyFinished { unit, status, cursor } if unit == "U1" && *status == UnitStatus::Done && cursor == "U3")
    );
    assert_eq!(done.to_string(), "unit U1 is not the cursor unit U3");
    assert_eq!(done.code(), "ALREADY_FINISHED");
    let early = shiftwork_core::clock_out_arguments(&fx.env, &out_args("U4", "done")).unwrap_err();
    assert!(matches!(&early, ShiftworkRefusal::NotCursor { unit, .. } if unit == "U4"));
    assert_eq!(early.to_string(), "unit U4 is not the cursor unit U3");
    assert_eq!(fx.snapshot(), before, "a refusal writes nothing");
}

/// Issue 28 item 5: every refusal has a stable machine code, upper snake case, distinct per variant.
#[test]
fn issue28_item5_refusal_codes_are_distinct_and_machine_shaped() {
    let uid = |t: &str| UnitId::new(t).unwrap();
    let refusals = [
        ShiftworkRefusal::NotInPlan { unit: String::new() },
        ShiftworkRefusal::NotCursor {
            unit: uid("U"),
            cursor: uid("U"),
        },
        ShiftworkRefusal::AlreadyFinished {
            unit: uid("U"),
            status: UnitStatus::Done,
            cursor: uid("U"),
        },
        ShiftworkRefusal::NotReady {
            unit: uid("U"),
            ready: vec![],
        },
        ShiftworkRefusal::UnknownUnit {
            unit: uid("U"),
            ready: vec![],
        },
        ShiftworkRefusal::Cycle { walk: vec![] },
        ShiftworkRefusal::DuplicateId { id: String::new() },
        ShiftworkRefusal::UnknownDependency {
            node: String::new(),
            dependency: String::new(),
        },
        ShiftworkRefusal::IdentityMismatch {
            given: String::new(),
            authenticated: shiftwork_core::AgentId::new("a").unwrap(),
        },
        ShiftworkRefusal::OutsideRoots {
            what: Confined::Checkpoint,
            path: String::new(),
        },
        ShiftworkRefusal::CheckpointExists { path: String::new() },
        ShiftworkRefusal::NoUnits,
        ShiftworkRefusal::MemoryTooLarge {
            size: 0,
            needed: 0,
            budget: 0,
        },
    ];
    let codes: Vec<&str> = refusals.iter().map(ShiftworkRefusal::code).collect();
    for code in &codes {
        assert!(
            code.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'),
            "{code}"
        );
    }
    let mut unique = codes.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), codes.len(), "{codes:?}");
}

/// Issue 28 item 4 (last bullet): the clock-out's `agent_id` follows the family's grammar. A
/// deliberate difference from the pattern of bantamkit's 0.38 descriptions (SW-129; 0.36.2 takes no
/// `agent_id`), which refuses `bob.smith`: ours accepts it; an id only the grammar refuses (`-x`) is
/// `AgentIdRefused`; one both refuse keeps the pattern's sentence (`a b`, as H6 and gate 8 say).
#[test]
fn issue28_item4_agent_ids_follow_the_family_grammar() {
    let check = |agent: &str, expected: Result<(), &str>| {
        let fx = Fx::new(&ex());
        let before = fx.snapshot();
        let mut args = out_args("U3", "done");
        args.agent_id = Some(Json::str(agent));
        match (shiftwork_core::clock_out_arguments(&fx.env, &args), expected) {
            (Ok(_), Ok(())) => {
                assert!(
                    fx.ledger()
                        .unwrap()
                        .contains(&format!(r#""agent_id": "{agent}""#))
                );
            }
            (Err(refused), Err(sentence)) => {
                assert_eq!(refused.to_string(), sentence, "{agent}");
                assert_eq!(fx.snapshot(), before, "{agent}: nothing written");
            }
            (got, want) => panic!("{agent}: {got:?} where {want:?}"),
        }
    };
    check("bob.smith", Ok(()));
    check("svc:deploy@eu", Ok(()));
    check("ci-runner-7", Ok(()));
    check(
        "-x",
        Err(
            "unit U3 in role implementer sent an agent_id that is not an agent id: an agent id starts with a letter or a digit, not '-'",
        ),
    );
    check(
        "_x",
        Err(
            "unit U3 in role implementer sent an agent_id that is not an agent id: an agent id starts with a letter or a digit, not '_'",
        ),
    );
    check(
        "a b",
        Err(
            "unit U3 in role implementer sent agent_id the schema refuses: JSON does not match schema at 'agent_id': 'a b' does not match '^[A-Za-z0-9_-]{1,64}$'",
        ),
    );
}

/// Issue 29 item 3: an authenticated caller acts only as itself — an absent `agent_id` becomes its
/// own, another agent's is refused naming both, before the checkpoint is touched.
#[test]
fn issue29_item3_an_authenticated_caller_acts_only_as_itself() {
    let fx = Fx::new(&ex());
    let before = fx.snapshot();
    let mut theirs = out_args("U3", "done");
    theirs.agent_id = Some(Json::str("bob"));
    let refused = theirs
        .acting_as(&shiftwork_core::AgentId::new("alice").unwrap())
        .unwrap_err();
    assert_eq!(
        compact(&Err::<shiftwork_core::ClockedOut, _>(refused)),
        r#"{"result": "error", "reason": "agent_id names bob, but this caller authenticated as alice: an agent acts only as itself."}"#
    );
    let mut number = out_args("U3", "done");
    number.agent_id = Some(Json::int(7));
    assert!(matches!(
        number.acting_as(&shiftwork_core::AgentId::new("alice").unwrap()),
        Err(ShiftworkRefusal::IdentityMismatch { given, .. }) if given == "7"
    ));
    assert_eq!(fx.snapshot(), before);
    let mine = out_args("U3", "done")
        .acting_as(&shiftwork_core::AgentId::new("alice").unwrap())
        .unwrap();
    shiftwork_core::clock_out_arguments(&fx.env, &mine).unwrap();
    assert!(fx.ledger().unwrap().contains(r#""agent_id": "alice""#));
}

/// The filesystem of the roots scenarios: the served tree `/srv` holding a repository with EX, and a
/// secret file outside it.
fn served() -> (MemFs, Env) {
    let fs = MemFs::new();
    fs.make_dirs("/srv/repo/.git");
    fs.write_file(
        "/srv/repo/.shiftwork/cp.json",
        json::to_checkpoint_text(&ex()).as_bytes(),
    );
    fs.write_file("/etc/secret.json", json::to_checkpoint_text(&ex()).as_bytes());
    fs.make_dirs("/etc/archive");
    fs.write_file("/etc/archive/x.log", b"lock timeout\n");
    fs.write_file("/srv/repo/briefs/U9.md", b"# U9\n");
    let env = env_of(&fs).with_roots([PathBuf::from("/srv")]);
    (fs, env)
}

fn snapshot(fs: &MemFs) -> Vec<(PathBuf, Option<Vec<u8>>)> {
    fs.paths().into_iter().map(|p| (p.clone(), fs.file(&p))).collect()
}

/// Issue 29 item 4: with roots, every path a call opens must resolve inside them: the checkpoint, a
/// link to a file outside, `..`, the ledger and the lock file as links, the archive, a follow-up
/// brief. Each is refused naming the rule (never the target) before any file is opened; inside, the
/// calls answer.
#[test]
fn issue29_item4_paths_outside_the_roots_are_refused_before_any_file_is_opened() {
    let check = |prepare: &dyn Fn(&MemFs),
                 call: &dyn Fn(&Env) -> Result<String, ShiftworkRefusal>,
                 what: Confined,
                 given: &str| {
        let (fs, env) = served();
        prepare(&fs);
        let before = snapshot(&fs);
        let refused = call(&env).unwrap_err();
        assert!(
            matches!(&refused, ShiftworkRefusal::OutsideRoots { what: w, .. } if *w == what),
            "{refused:?}"
        );
        let reason = refused.to_string();
        assert!(
            reason.contains("resolves outside the directories this server may open"),
            "{reason}"
        );
        // The path as given is named, never where a link leads.
        assert!(reason.contains(&format!("'{given}'")), "{reason}");
        assert!(
            !reason.replace(given, "").contains("/etc"),
            "the target is never named: {reason}"
        );
        assert_eq!(snapshot(&fs), before, "nothing written: {reason}");
    };
    let plan = |cp: &'static str| {
        move |env: &Env| {
            shiftwork_core::plan_checkpoint(env, Path::new(cp))
                .map(|p| compact(&Ok::<_, ShiftworkRefusal>(p)))
        }
    };
    let nothing = |_: &MemFs| {};
    check(
        &nothing,
        &plan("/etc/secret.json"),
        Confined::Checkpoint,
        "/etc/secret.json",
    );
    check(
        &nothing,
        &plan("/srv/../etc/secret.json"),
        Confined::Checkpoint,
        "/srv/../etc/secret.json",
    );
    check(
        &|fs| fs.symlink("/etc/secret.json", "/srv/repo/.shiftwork/link.json"),
        &plan("/srv/repo/.shiftwork/link.json"),
        Confined::Checkpoint,
        "/srv/repo/.shiftwork/link.json",
    );
    check(
        &|fs| fs.symlink("/etc", "/srv/repo/etc"),
        &plan("/srv/repo/etc/secret.json"),
        Confined::Checkpoint,
        "/srv/repo/etc/secret.json",
    );
    check(
        &|fs| fs.symlink("/etc/ledger", "/srv/repo/.shiftwork/cp.json.log.jsonl"),
        &plan("/srv/repo/.shiftwork/cp.json"),
        Confined::Ledger,
        "/srv/repo/.shiftwork/cp.json",
    );
    check(
        &|fs| fs.symlink("/etc/passwd", "/srv/repo/.shiftwork/cp.json.lock"),
        &plan("/srv/repo/.shiftwork/cp.json"),
        Confined::Lock,
        "/srv/repo/.shiftwork/cp.json",
    );
    check(
        &|fs| fs.symlink("/etc/archive", "/srv/repo/.shiftwork/archive"),
        &|env| {
            shiftwork_core::status(env, Path::new("/srv/repo/.shiftwork/cp.json"), Some("lock"))
                .map(|s| compact(&Ok::<_, ShiftworkRefusal>(s)))
        },
        Confined::Archive,
        "/srv/repo/.shiftwork/cp.json",
    );
    check(
        &|fs| fs.symlink("/etc/secret.json", "/srv/repo/briefs/U8.md"),
        &|env| {
            let mut args = out_args("U3", "done");
            args.checkpoint = PathBuf::from("/srv/repo/.shiftwork/cp.json");
            args.follow_ups = Some(parse(
                r#"[{"id": "U8", "title": "t", "role": "implementer", "brief_path": "briefs/U8.md"}]"#,
            ));
            shiftwork_core::clock_out_arguments(env, &args).map(|o| compact(&Ok::<_, ShiftworkRefusal>(o)))
        },
        Confined::Brief,
        "briefs/U8.md",
    );
    // Inside the roots every call answers, a follow-up brief inside included.
    let (fs, env) = served();
    let cp = Path::new("/srv/repo/.shiftwork/cp.json");
    assert!(shiftwork_core::plan_checkpoint(&env, cp).is_ok());
    assert!(shiftwork_core::status(&env, cp, Some("lock")).is_ok());
    let mut args = out_args("U3", "done");
    args.checkpoint = cp.to_path_buf();
    args.follow_ups = Some(parse(
        r#"[{"id": "U9", "title": "t", "role": "implementer", "brief_path": "briefs/U9.md"}]"#,
    ));
    shiftwork_core::clock_out_arguments(&env, &args).unwrap();
    assert!(fs.file("/srv/repo/.shiftwork/cp.json.log.jsonl").is_some());
    // Without roots the same calls open what they are given.
    assert!(shiftwork_core::plan_checkpoint(&env_of(&fs), Path::new("/etc/secret.json")).is_ok());
}

fn job() -> Job {
    Job::new(
        text("parser-job"),
        text("Ship the new parser"),
        text("cargo test passes"),
    )
    .with_constraints(vec![text("no new dependencies")])
}

fn unit(name: &str, deps: &[&str]) -> PlannedUnit {
    PlannedUnit::new(
        id(name),
        text(&format!("Write the {name}")),
        Role::Implementer,
        text("cargo test"),
    )
    .depends_on(deps.iter().map(|d| id(d)))
}

/// Issue 28 item 2: a new checkpoint is judged by the planner before anything is written: a duplicate
/// id, an unknown dependency, a cycle, a bad `touches`, no unit at all — each with its sentence.
#[test]
fn issue28_item2_the_builder_refuses_with_the_planners_sentences() {
    let check = |units: Vec<PlannedUnit>, sentence: &str| {
        let refused = CheckpointBuilder::new(job()).units(units).build().unwrap_err();
        assert_eq!(refused.to_string(), sentence);
    };
    check(
        vec![unit("lexer", &[]), unit("lexer", &[])],
        "duplicate node id lexer",
    );
    check(
        vec![unit("lexer", &[]), unit("parser", &["ghost"])],
        "node parser depends on ghost, which no node declares",
    );
    check(
        vec![unit("a", &["b"]), unit("b", &["a"])],
        "the graph has a cycle: a -> b -> a",
    );
    check(
        vec![unit("a", &[]).touches([String::from("../x")])],
        "nodes[0].touches must be a list of repo-relative paths",
    );
    check(vec![], "refused: a new checkpoint needs at least one unit");
}

/// Issue 28 item 2: a built checkpoint is what every reader reads: the plan tool answers the
/// builder's plan, the cursor is the first ready unit, the brief defaults to `briefs/<id>.md`.
#[test]
fn issue28_item2_a_created_checkpoint_plans_as_built() {
    let fs = MemFs::new();
    fs.make_dirs("/repo/.git");
    let env = env_of(&fs);
    let new = CheckpointBuilder::new(job())
        .unit(unit("docs", &["parser"]))
        .unit(unit("lexer", &[]))
        .unit(unit("parser", &["lexer"]))
        .repo(RepoState::unknown())
        .build()
        .unwrap();
    assert_eq!(new.plan().batches, [vec!["lexer"], vec!["parser"], vec!["docs"]]);
    assert_eq!(new.plan().cursor, "lexer");
    let path = Path::new("/repo/.shiftwork/checkpoint.json");
    create(&env, path, &new).unwrap();
    assert_eq!(fs.file(path).unwrap(), new.text().as_bytes());
    let plan = shiftwork_core::plan_checkpoint(&env, path).unwrap();
    assert_eq!(&plan, new.plan());
    let doc = json::parse(new.text()).unwrap();
    assert_eq!(
        doc.get("plan").unwrap().get("units").unwrap().as_array().unwrap()[0].get("brief_path"),
        Some(&Json::str("briefs/docs.md"))
    );
    assert_eq!(
        doc.get("handoff").unwrap().get("next_action"),
        Some(&Json::str("Write the lexer"))
    );
    assert!(
        fs.file("/repo/.shiftwork/checkpoint.json.lock").is_none(),
        "the lock is released"
    );
}

/// Issue 28 item 2: `create` never writes over a file or a link, and a write that fails leaves
/// nothing at the path.
#[test]
fn issue28_item2_create_refuses_to_overwrite_and_leaves_nothing_on_failure() {
    let new = CheckpointBuilder::new(job())
        .unit(unit("lexer", &[]))
        .build()
        .unwrap();
    let fs = MemFs::new();
    let env = env_of(&fs);
    fs.write_file("/a/cp.json", b"mine");
    fs.symlink("/nowhere/cp.json", "/a/dangling.json");
    for path in ["/a/cp.json", "/a/dangling.json"] {
        let before = snapshot(&fs);
        let refused = create(&env, Path::new(path), &new).unwrap_err();
        assert!(
            matches!(refused, ShiftworkRefusal::CheckpointExists { .. }),
            "{path}: {refused}"
        );
        assert_eq!(snapshot(&fs), before);
    }
    assert_eq!(fs.file("/a/cp.json").unwrap(), b"mine");
    fs.fail_nth(Op::Rename, 1, 28);
    let refused = create(&env, Path::new("/b/cp.json"), &new).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "checkpoint not created: [Errno 28] No space left on device: '/b/cp.json'"
    );
    assert!(fs.file("/b/cp.json").is_none());
    assert!(
        fs.paths().iter().all(|p| !p.to_string_lossy().ends_with(".tmp")),
        "no temp file left"
    );
    // The missing directory is a link to nothing: refused, and nothing is created where it points
    // (THREATS: links followed out of place).
    fs.symlink("/elsewhere/state", "/d/.shiftwork");
    let refused = create(&env, Path::new("/d/.shiftwork/cp.json"), &new).unwrap_err();
    assert!(
        matches!(refused, ShiftworkRefusal::NotCreated { .. }),
        "{refused}"
    );
    assert!(fs.paths().iter().all(|p| !p.starts_with("/elsewhere")));
    // A confined environment creates nothing outside its roots.
    let confined = env_of(&fs).with_roots([PathBuf::from("/srv")]);
    let outside = create(&confined, Path::new("/c/cp.json"), &new).unwrap_err();
    assert!(matches!(
        outside,
        ShiftworkRefusal::OutsideRoots {
            what: Confined::Checkpoint,
            ..
        }
    ));
    assert!(fs.paths().iter().all(|p| !p.starts_with("/c")));
}

/// Issue 28 item 2: the repository state of a new checkpoint is read from Git's files, a linked
/// worktree and packed refs included.
#[test]
fn issue28_item2_repo_state_reads_git_files() {
    let fs = MemFs::new();
    fs.write_file("/main/.git/HEAD", b"ref: refs/heads/main\n");
    fs.write_file(
        "/main/.git/packed-refs",
        b"# pack-refs\n1111111 refs/heads/main\n2222222 refs/heads/feature\n",
    );
    fs.write_file("/wt/.git", b"gitdir: /main/.git/worktrees/wt\n");
    fs.write_file("/main/.git/worktrees/wt/HEAD", b"ref: refs/heads/feature\n");
    fs.write_file("/main/.git/worktrees/wt/commondir", b"../..\n");
    let state = |root: &str| RepoState::read(&fs, Path::new(root)).unwrap();
    assert_eq!(
        (state("/main").branch.as_str(), state("/main").head_sha.as_str()),
        ("main", "1111111")
    );
    assert_eq!(
        (state("/wt").branch.as_str(), state("/wt").head_sha.as_str()),
        ("feature", "2222222")
    );
    assert!(RepoState::read(&fs, Path::new("/elsewhere")).is_none());
}

/// A subscriber that records the names of the spans opened and counts the events (log lines).
#[derive(Default, Clone)]
struct Recorder {
    spans: Arc<Mutex<Vec<String>>>,
    events: Arc<Mutex<usize>>,
}

impl tracing::Subscriber for Recorder {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let mut spans = self.spans.lock().unwrap();
        spans.push(span.metadata().name().to_owned());
        tracing::span::Id::from_u64(spans.len() as u64)
    }

    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, _: &tracing::Event<'_>) {
        *self.events.lock().unwrap() += 1;
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}

/// Issue 30 item 2: a clock-out opens child spans around the checkpoint read, the lock wait and the
/// durable write (a plan around its read), and the crate writes no log line.
#[test]
fn issue30_item2_calls_open_child_spans_and_log_nothing() {
    let fx = Fx::new(&ex());
    let recorder = Recorder::default();
    tracing::subscriber::with_default(recorder.clone(), || {
        shiftwork_core::plan_checkpoint(&fx.env, Path::new(CP)).unwrap();
        shiftwork_core::clock_out_arguments(&fx.env, &out_args("U3", "done")).unwrap();
    });
    let spans = recorder.spans.lock().unwrap().clone();
    assert_eq!(
        spans,
        [
            "shiftwork.checkpoint_read",
            "shiftwork.lock_wait",
            "shiftwork.checkpoint_read",
            "shiftwork.durable_write"
        ]
    );
    assert_eq!(*recorder.events.lock().unwrap(), 0, "spans, not logs");
}

/// Issue 28 item 1: `ClockOutArguments` has no default that is an invalid request: its constructor
/// takes the five required arguments (the type check is the test; this one reads one back).
#[test]
fn issue28_item1_wire_arguments_are_built_from_their_required_parts() {
    let args = ClockOutArguments::new(
        CP,
        "U3",
        "done",
        Object::default(),
        obj(r#"{"unit": "U3", "outcome": "d"}"#),
    );
    assert_eq!(
        (
            args.unit_id.as_str(),
            args.status.as_str(),
            args.accounting.is_none()
        ),
        ("U3", "done", true)
    );
    let answer = shiftwork_core::clock_out_arguments(&Fx::new(&ex()).env, &args).to_answer();
    assert_eq!(answer.get("result"), Some(&Json::str("ok")));
}
