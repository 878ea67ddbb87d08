//! A small agent runtime built on the shiftwork crates, from their READMEs and rustdoc alone: it plans
//! a six-unit job, gates the work on operating hours across a daylight-saving change, clocks each unit
//! in and out, logs each finished unit in the work log, and hands one unit to another agent as a
//! contract that four threads race to claim — exactly one wins. No JSON is built by hand, every refusal
//! is matched by its variant or code, never by its text, and the values are typed in and out: ids are
//! `UnitId` and `AgentId`, durations `Duration`, paths `Path`. Every crate's error goes into the
//! family's one error, `shiftwork_seams::Error`, with `?`.
//!
//! The seams make it deterministic: on `MemFs` and a `ManualClock` two runs write the same transcript,
//! byte for byte (the test below checks it); `cargo run -p examples --example agent_runtime` runs it once
//! and prints the transcript.

#![allow(clippy::expect_used)] // Only on literals the example controls (a unit id, a text), which are valid.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use serde::{Deserialize, Serialize};
use shiftwork_contracts::roots::AllowedRoots;
use shiftwork_contracts::{
    AgentId, Contracts, ContractsConfig, DispatchRequest, FulfillRequest, MemoryStore, RefusalCode,
    SeededIdSource,
};
use shiftwork_core::authoring::{CheckpointBuilder, Job, create};
use shiftwork_core::model::{HistoryEntry, PlannedUnit, Role, Text, UnitId, UnitStatus};
use shiftwork_core::{Accounting, ClockIn, ClockOut, Env, ShiftworkRefusal};
use shiftwork_hours::{Hours, Tz};
use shiftwork_seams::{Clock, Coded, Error, ManualClock, MemFs, MemHost};
use shiftwork_worklog::{Config, Worklog};

/// What the reviewer hands back, typed.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Review {
    verdict: String,
    findings: u32,
}

/// The runtime's own failures, which join the family's error beside the crates' own.
#[derive(Debug, thiserror::Error)]
#[error("the runtime stopped: {0}")]
struct Stopped(String);

impl Coded for Stopped {
    fn code(&self) -> &'static str {
        "RUNTIME_STOPPED"
    }
}

fn stopped(why: impl Into<String>) -> Error {
    Stopped(why.into()).into()
}

fn main() -> Result<(), Error> {
    for line in run()? {
        println!("{line}");
    }
    Ok(())
}

/// One run of the runtime on fresh in-memory seams: the transcript of what happened.
fn run() -> Result<Vec<String>, Error> {
    let mut log = Vec::new();
    // Friday 27 March 2026, 16:00 in London; the clocks go forward on Sunday.
    let clock = ManualClock::new(
        Utc.with_ymd_and_hms(2026, 3, 27, 16, 0, 0)
            .single()
            .ok_or_else(|| stopped("no such instant"))?,
    );
    let notes = Path::new("/notes");
    let today = notes.join("2026-03-27.md");
    let fs = MemFs::new();
    fs.write_file(&today, b"# Friday\n");
    let env = Env::new(
        Arc::new(fs.clone()),
        Arc::new(clock.clone()),
        Arc::new(MemHost::new(7, "runtime-1")),
    );

    // 1. Plan a job of six units.
    let text = |t: &str| Text::new(t).expect("a non-empty text");
    let id = |t: &str| UnitId::new(t).expect("a unit id");
    let unit = |name: &str, role: Role| PlannedUnit::new(id(name), text(name), role, text("cargo test"));
    let checkpoint = Path::new("/repo/.shiftwork/checkpoint.json");
    let job = CheckpointBuilder::new(Job::new(
        text("parser-job"),
        text("Ship the new parser"),
        text("cargo test passes"),
    ))
    .unit(unit("lexer", Role::Implementer))
    .unit(unit("grammar", Role::Implementer))
    .unit(unit("parser", Role::Implementer).depends_on([id("lexer"), id("grammar")]))
    .unit(unit("errors", Role::Implementer).depends_on([id("parser")]))
    .unit(unit("review", Role::Reviewer).depends_on([id("parser")]))
    .unit(unit("release", Role::Planner).depends_on([id("errors"), id("review")]))
    .build()?;
    create(&env, checkpoint, &job)?;
    let plan = shiftwork_core::plan_checkpoint(&env, checkpoint)?;
    log.push(format!(
        "planned {} waves: {:?}",
        plan.batches.len(),
        plan.batches
            .iter()
            .map(|wave| wave.iter().map(UnitId::as_str).collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
            .join(" | ")
    ));

    // 2. Work only in hours: London office hours, across the change to summer time.
    // The hours crate depends on nothing of the family: its error enters with its own code.
    let hours =
        Hours::parse("TZ=Europe/London Mon-Fri 09:00-17:30", Tz::UTC).map_err(|e| Error::new(e.code(), e))?;
    let worklog = Worklog::new(Config::builder().dir(notes).build(), fs.clone());
    let queue = contract_queue(&clock)?;
    loop {
        let now = clock.now();
        if !hours.is_in(now) {
            let opens = hours
                .next_open(now)
                .ok_or_else(|| stopped("the hours never open again"))?;
            log.push(format!("{} closed; opens again {opens}", stamp(now)));
            clock.set(opens);
            continue;
        }
        let brief = match shiftwork_core::clock_in(&env, checkpoint, None)? {
            ClockIn::Brief(brief) => brief,
            ClockIn::AllDone => break,
            other => return Err(stopped(format!("unexpected clock-in: {other:?}"))),
        };
        let unit: UnitId = brief.unit().id.clone();
        // The review goes to another agent as a contract; the others are done here.
        if unit == id("review") {
            let review = hand_over(&queue, &mut log)?;
            log.push(format!(
                "review came back: {} with {} findings",
                review.verdict, review.findings
            ));
        }
        let worked = Duration::from_secs(90 * 60);
        clock.advance(worked);
        let done = ClockOut::new(
            checkpoint,
            unit.clone(),
            UnitStatus::Done,
            HistoryEntry::new(unit.clone(), text("done")),
        )
        .with_accounting(Accounting::new(12_000, worked));
        let out = shiftwork_core::clock_out(&env, &done)?;
        // The new cursor comes back as the id it is.
        let cursor: &UnitId = &out.cursor;
        let written = worklog.append(&format!("Finished {unit}"), false)?;
        log.push(format!(
            "{} {unit} done (cursor now {}), logged: {}",
            stamp(clock.now()),
            cursor,
            written.written()
        ));
    }

    // 3. A refusal is matched by its variant: the job is finished, so no unit can be clocked out again.
    let again = ClockOut::new(
        checkpoint,
        id("lexer"),
        UnitStatus::Done,
        HistoryEntry::new(id("lexer"), text("again")),
    );
    match shiftwork_core::clock_out(&env, &again) {
        Err(ShiftworkRefusal::AlreadyFinished { unit, status, .. }) => {
            log.push(format!("{unit} is already finished ({status})"))
        }
        other => return Err(stopped(format!("expected AlreadyFinished, got {other:?}"))),
    }
    let text = fs.file(&today).ok_or_else(|| stopped("the work log is gone"))?;
    log.push(format!(
        "work log: {}",
        String::from_utf8_lossy(&text).replace('\n', " | ")
    ));
    Ok(log)
}

/// The contract queue the runtime shares with its reviewers (in memory here; `SqliteStore` or
/// `PgStore` in production).
fn contract_queue(clock: &ManualClock) -> Result<Arc<Contracts>, Error> {
    let fs = MemFs::new();
    fs.write_file(Path::new("/repo/src/parser.rs"), b"pub fn parse() {}\n");
    let config = ContractsConfig::builder()
        .allowed_roots(AllowedRoots::new([Path::new("/repo")]))
        .build()?;
    Ok(Arc::new(
        Contracts::builder(Arc::new(MemoryStore::new(Arc::new(clock.clone()))))
            .fs(Arc::new(fs))
            .ids(Arc::new(SeededIdSource::new(28)))
            .config(config)
            .build(),
    ))
}

/// Hands the review to reviewer `rev`: four of its threads race to claim it, one wins and delivers
/// a typed result, which the runtime reads back typed.
fn hand_over(queue: &Arc<Contracts>, log: &mut Vec<String>) -> Result<Review, Error> {
    let (runtime, reviewer) = (AgentId::new("runtime")?, AgentId::new("rev")?);
    let workspace: PathBuf = PathBuf::from("/repo");
    let sent = queue.dispatch(
        &DispatchRequest::new(runtime, reviewer.clone(), "Review the parser", workspace)
            .pointers(["src/parser.rs"]),
    )?;
    let start = Arc::new(Barrier::new(4));
    let racers: Vec<_> = (0..4)
        .map(|_| {
            let (queue, reviewer, start) = (Arc::clone(queue), reviewer.clone(), Arc::clone(&start));
            std::thread::spawn(move || {
                start.wait();
                let polled = queue.poll_next_task(&reviewer)?;
                let Some(held) = polled.held() else {
                    return Ok::<bool, shiftwork_contracts::ContractRefusal>(false);
                };
                let review = Review {
                    verdict: String::from("approve"),
                    findings: 2,
                };
                let output = FulfillRequest::new("Reviewed.")
                    .output(&review)
                    .expect("a review serializes");
                queue.fulfill_contract(&held.holder(), &output)?;
                Ok(true)
            })
        })
        .collect();
    let mut winners = 0;
    for racer in racers {
        winners += usize::from(racer.join().map_err(|_| stopped("a racer panicked"))??);
    }
    log.push(format!("{winners} of 4 threads claimed the review"));
    // The claim is over: extending it now is refused by code.
    let late = queue.extend_ttl(&shiftwork_contracts::HolderRef::new(
        sent.contract_id.clone(),
        reviewer,
        1,
    ));
    if let Err(refused) = late {
        log.push(format!(
            "a late extend is refused {:?}",
            refused.refusal_code() == RefusalCode::AlreadyTerminal
        ));
    }
    let review: Option<Review> = queue
        .detail(&sent.contract_id)?
        .output()
        .map_err(|e| Error::new("OUTPUT_UNREADABLE", e))?;
    review.ok_or_else(|| stopped("the review carries no output"))
}

/// A local wall-clock stamp for the transcript.
fn stamp(t: DateTime<Utc>) -> String {
    t.with_timezone(&chrono_tz::Europe::London)
        .format("%a %H:%M %Z")
        .to_string()
}

#[cfg(test)]
mod tests {
    /// The run is deterministic on `MemFs` and a `ManualClock`: two runs, one transcript; and it did
    /// what it says: six units done, one winner of four, the hours honoured across the DST change.
    #[test]
    fn the_runtime_is_deterministic_and_does_the_whole_job() {
        let first = super::run().expect("the runtime runs");
        let second = super::run().expect("the runtime runs again");
        assert_eq!(first, second, "byte-identical transcripts");
        let all = first.join("\n");
        assert_eq!(
            first.iter().filter(|l| l.contains(" done (cursor")).count(),
            6,
            "{all}"
        );
        assert!(all.contains("1 of 4 threads claimed the review"), "{all}");
        assert!(all.contains("review came back: approve with 2 findings"), "{all}");
        assert!(
            all.contains("closed; opens again 2026-03-30 08:00:00 UTC"),
            "the first opening after the DST change is 09:00 BST: {all}"
        );
        assert!(all.contains("lexer is already finished (done)"), "{all}");
    }
}
