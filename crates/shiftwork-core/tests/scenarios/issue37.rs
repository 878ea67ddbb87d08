//! Issue 37: the API typed in and out (item 2), and tests that can trust the clock (item 3).

use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use shiftwork_core::authoring::{CheckpointBuilder, Job, create};
use shiftwork_core::model::{HistoryEntry, PlannedUnit, Role, Text, UnitId, UnitStatus};
use shiftwork_core::{
    Accounting, AgentId, BudgetDimension, ClockIn, ClockOut, ClockedOut, Env, ShiftworkRefusal,
};
use shiftwork_seams::{Clock, Coded, ManualClock, MemFs, MemHost};

const JOB: &str = "/repo/.shiftwork/checkpoint.json";

fn text(t: &str) -> Text {
    Text::new(t).unwrap()
}

fn id(t: &str) -> UnitId {
    UnitId::new(t).unwrap()
}

/// A repository in memory with a job of `units`, on a `ManualClock`.
fn job(units: Vec<PlannedUnit>) -> (Env, ManualClock, MemFs) {
    let fs = MemFs::new();
    fs.make_dirs("/repo/.git");
    let clock = ManualClock::new(chrono::DateTime::UNIX_EPOCH + chrono::Duration::days(20_000));
    let env = Env::new(
        Arc::new(fs.clone()),
        Arc::new(clock.clone()),
        Arc::new(MemHost::new(7, "build-1")),
    );
    let new = CheckpointBuilder::new(Job::new(text("j"), text("Ship."), text("make test")))
        .units(units)
        .build()
        .unwrap();
    create(&env, Path::new(JOB), &new).unwrap();
    (env, clock, fs)
}

fn unit(name: &str, role: Role) -> PlannedUnit {
    PlannedUnit::new(id(name), text(name), role, text("make"))
}

fn done(name: &str) -> ClockOut {
    ClockOut::new(
        JOB,
        id(name),
        UnitStatus::Done,
        HistoryEntry::new(id(name), text("done")),
    )
}

/// Item 2: ids come out as they go in — `Plan::batches`, the cursor, `ClockedOut::cursor` and the
/// refusals `NotReady`, `UnknownUnit`, `NotCursor`, `AlreadyFinished { status }` carry `UnitId` and
/// `UnitStatus`; `clock_in` takes a `UnitId`.
#[test]
fn issue37_item2_ids_come_out_as_they_go_in() {
    let (env, _clock, _fs) = job(vec![
        unit("lexer", Role::Implementer),
        unit("parser", Role::Implementer).depends_on([id("lexer")]),
    ]);
    let cp = Path::new(JOB);
    let plan = shiftwork_core::plan_checkpoint(&env, cp).unwrap();
    let batches: &Vec<Vec<UnitId>> = &plan.batches;
    assert_eq!(batches, &vec![vec![id("lexer")], vec![id("parser")]]);
    assert_eq!((plan.ready(), &plan.cursor), (&[id("lexer")][..], &id("lexer")));
    let status = shiftwork_core::status(&env, cp, None).unwrap();
    assert_eq!(status.cursor(), &id("lexer"));

    let ghost = id("ghost");
    match shiftwork_core::clock_in(&env, cp, Some(&ghost)) {
        Err(ShiftworkRefusal::UnknownUnit { unit, ready }) => {
            assert_eq!((unit, ready), (ghost, vec![id("lexer")]))
        }
        other => panic!("{other:?}"),
    }
    match shiftwork_core::clock_in(&env, cp, Some(&id("parser"))) {
        Err(ShiftworkRefusal::NotReady { unit, ready }) => {
            assert_eq!((unit, ready), (id("parser"), vec![id("lexer")]))
        }
        other => panic!("{other:?}"),
    }
    match shiftwork_core::clock_out(&env, &done("parser")) {
        Err(ShiftworkRefusal::NotCursor { unit, cursor }) => {
            assert_eq!((unit, cursor), (id("parser"), id("lexer")))
        }
        other => panic!("{other:?}"),
    }
    let out: ClockedOut = shiftwork_core::clock_out(&env, &done("lexer")).unwrap();
    assert_eq!((out.unit, out.cursor), (id("lexer"), id("parser")));
    match shiftwork_core::clock_out(&env, &done("lexer")) {
        Err(ShiftworkRefusal::AlreadyFinished { unit, status, cursor }) => {
            assert_eq!(
                (unit, status, cursor),
                (id("lexer"), UnitStatus::Done, id("parser"))
            )
        }
        other => panic!("{other:?}"),
    }
}

/// Item 2: a duration is a `Duration` (written as whole milliseconds), an agent id is the family's
/// one `AgentId`, and the builders cover the model: a job's budget, roles and agreements, a unit's
/// reviews, status and concludes.
#[test]
fn issue37_item2_durations_agents_and_builders_are_typed() {
    let job = Job::new(text("j"), text("Ship."), text("make test"))
        .with_budget(BudgetDimension::Tokens, 1_000_000)
        .with_budget(BudgetDimension::Tokens, 2_000_000)
        .with_role(Role::Reviewer, [text("model-a")])
        .with_agreements([text("small commits")]);
    assert_eq!(
        job.budget,
        [(BudgetDimension::Tokens, 2_000_000)],
        "a dimension given twice keeps the last"
    );
    let review = unit("review", Role::Reviewer)
        .depends_on([id("build")])
        .reviews([id("build")])
        .status(UnitStatus::Blocked)
        .concludes(true);
    let new = CheckpointBuilder::new(job)
        .unit(unit("build", Role::Implementer))
        .unit(review)
        .build()
        .unwrap();
    // The checkpoint's text, its whitespace left out.
    let text_of: String = new.text().split_whitespace().collect();
    for written in [
        r#""budget":{"tokens":2000000}"#,
        r#""roles":{"reviewer":["model-a"]}"#,
        r#""agreements":["smallcommits"]"#,
        r#""reviews":["build"]"#,
        r#""status":"blocked""#,
        r#""concludes":true"#,
    ] {
        assert!(text_of.contains(written), "{written} in {text_of}");
    }

    let (env, _clock, fs) = job_with_one_unit();
    let agent: AgentId = shiftwork_contracts_free_agent();
    let out = done("only")
        .with_accounting(Accounting::new(41_250, Duration::from_millis(95_500)))
        .with_agent(agent);
    shiftwork_core::clock_out(&env, &out).unwrap();
    let ledger = String::from_utf8(fs.file("/repo/.shiftwork/checkpoint.json.log.jsonl").unwrap()).unwrap();
    assert!(
        ledger.contains(r#""duration_ms": 95500"#) && ledger.contains(r#""tokens": 41250"#),
        "{ledger}"
    );
    assert!(ledger.contains(r#""agent_id": "bob.smith""#), "{ledger}");
}

fn job_with_one_unit() -> (Env, ManualClock, MemFs) {
    job(vec![unit("only", Role::Implementer)])
}

/// The agent id type core re-exports is the family's one (`shiftwork_seams::agent::AgentId`).
fn shiftwork_contracts_free_agent() -> shiftwork_seams::agent::AgentId {
    AgentId::new("bob.smith").unwrap()
}

/// Item 2: one family error a runtime `?`s into, and `code()` the same kind of value for every error:
/// a refusal, a model error, an agent id's error.
#[test]
fn issue37_item2_every_error_goes_into_the_family_error_with_its_code() {
    fn run(env: &Env, name: &str) -> Result<ClockedOut, shiftwork_seams::Error> {
        let unit = UnitId::new(name)?;
        let _agent = AgentId::new("ok")?;
        Ok(shiftwork_core::clock_out(env, &done(unit.as_str()))?)
    }
    let (env, _clock, _fs) = job_with_one_unit();
    let refused = run(&env, "nope").unwrap_err();
    assert_eq!(refused.code(), "NOT_IN_PLAN");
    assert!(matches!(
        refused.downcast_ref::<ShiftworkRefusal>(),
        Some(ShiftworkRefusal::NotInPlan { .. })
    ));
    let empty = run(&env, "").unwrap_err();
    assert_eq!(
        (empty.code(), empty.to_string().as_str()),
        (
            "EMPTY_TEXT",
            "a unit id is empty; it needs at least one character"
        )
    );
    let bad_agent = AgentId::new("-x").unwrap_err();
    let codes: [&'static str; 2] = [Coded::code(&bad_agent), ShiftworkRefusal::NoUnits.code()];
    assert_eq!(codes, ["AGENT_ID_BAD_START", "NO_UNITS"]);
    assert!(run(&env, "only").is_ok());
}

/// Item 3: the checkpoint lock waits through `Clock::wait_until`, so two clock-outs racing on one
/// `ManualClock` behave as on a real clock — the second waits for the first to release the lock and
/// both succeed, and neither moves the shared clock (the second used to sleep the 5 s wait away in
/// steps, moving the clock, and could be refused `Locked`). 100 runs in a row.
#[test]
fn issue37_item3_two_clock_outs_racing_on_a_manual_clock_behave_as_on_a_real_clock() {
    for run in 0..100 {
        let (env, clock, fs) = job(vec![unit("a", Role::Implementer), unit("b", Role::Implementer)]);
        let cp = Path::new(JOB);
        // `b` is briefed, so it may clock out beside the cursor `a`.
        assert!(matches!(
            shiftwork_core::clock_in(&env, cp, Some(&id("b"))),
            Ok(ClockIn::Brief(_))
        ));
        let (start_now, start_mono) = (clock.now(), clock.monotonic());
        let env = Arc::new(env);
        let barrier = Arc::new(Barrier::new(2));
        let racers: Vec<_> = ["a", "b"]
            .into_iter()
            .map(|name| {
                let (env, barrier) = (Arc::clone(&env), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    shiftwork_core::clock_out(&env, &done(name))
                })
            })
            .collect();
        for racer in racers {
            let out = racer.join().unwrap();
            assert!(out.is_ok(), "run {run}: {out:?}");
        }
        assert_eq!(
            (clock.now(), clock.monotonic()),
            (start_now, start_mono),
            "run {run}: the clock moved"
        );
        let ledger =
            String::from_utf8(fs.file("/repo/.shiftwork/checkpoint.json.log.jsonl").unwrap()).unwrap();
        assert_eq!(
            ledger
                .lines()
                .filter(|l| l.contains(r#""status": "done""#))
                .count(),
            2,
            "run {run}: {ledger}"
        );
        assert!(
            fs.file("/repo/.shiftwork/checkpoint.json.lock").is_none(),
            "run {run}: the lock is released"
        );
    }
}

/// Item 3: an `Env` gives its in-memory filesystem its clock, so a file's time — a lock's `since` —
/// and the staleness judged against `now` read one clock.
#[test]
fn issue37_item3_the_memfs_of_an_env_reads_the_env_clock() {
    let (_env, clock, fs) = job_with_one_unit();
    clock.advance(Duration::from_secs(3600));
    fs.write_file("/repo/note", b"x");
    let modified = shiftwork_seams::Fs::metadata(&fs, Path::new("/repo/note"))
        .unwrap()
        .modified;
    assert_eq!(modified, std::time::SystemTime::from(clock.now()));
}
