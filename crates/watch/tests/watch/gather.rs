//! The snapshot built from the mid-flight fixture, checked on values (issue 15 item 4).

use shiftwork_watch::snapshot::{Hold, Tone};

use crate::fixture::{self, mid_flight, options, sources};

/// Issue 15 job pane: the waves as columns, the cursor, the held unit with what it waits on, the
/// agents, the units in flight, the budget (SW-130 arithmetic), history newest first, open questions.
#[test]
fn the_job_pane_shows_waves_holds_budget_history_and_questions() {
    let fx = mid_flight();
    let snapshot = sources(&fx, &options()).snapshot();
    let job = snapshot.jobs[0].body.as_ref().unwrap();
    let ids = |wave: usize| job.waves[wave].iter().map(|u| u.id.as_str()).collect::<Vec<_>>();
    assert_eq!(
        (ids(0), ids(1), ids(2)),
        (vec!["U2", "U3"], vec!["U4", "U5"], vec!["U6"])
    );
    assert_eq!(job.cursor, "U2");
    let u2 = job.unit("U2").unwrap();
    assert!(u2.is_cursor && u2.in_flight);
    assert_eq!(
        u2.agent.as_deref(),
        Some("agent-bob"),
        "the agent of U2's latest line naming one"
    );
    assert_eq!(job.unit("U1").unwrap().agent.as_deref(), Some("agent-ann"));
    assert!(job.unit("U3").unwrap().in_flight);
    assert!(!job.unit("U4").unwrap().in_flight && job.unit("U4").unwrap().is_held);
    assert_eq!(
        job.held,
        [Hold {
            unit: "U4".into(),
            by: "U2".into(),
            unit_index: 3,
            by_index: 1,
            path: "src/parser.rs".into(),
            wave: 1
        }]
    );
    let finished: Vec<&str> = job.finished.iter().map(|u| u.id.as_str()).collect();
    assert_eq!(finished, ["U1", "U7"]);
    let counts: Vec<(&str, u64, Tone)> = job
        .counts
        .iter()
        .map(|c| (c.status.as_str(), c.count, c.tone))
        .collect();
    assert_eq!(
        counts,
        [
            ("done", 1, Tone::Good),
            ("in_progress", 1, Tone::Running),
            ("todo", 4, Tone::Waiting),
            ("dropped", 1, Tone::Muted)
        ]
    );
    let budget = job.budget.as_ref().unwrap();
    assert_eq!(budget.in_flight, ["U2", "U3"]);
    // Counted lines: 42,000 and 18,000 tokens; the lower median is 18,000 per unit.
    assert_eq!(budget.per_unit, 18_000);
    let dims: Vec<(&str, i128, i128, i128, i128)> = budget
        .dimensions
        .iter()
        .map(|d| (d.name.as_str(), d.limit, d.spent, d.in_flight, d.left))
        .collect();
    assert_eq!(
        dims,
        [
            ("tokens", 300_000, 60_000, 36_000, 204_000),
            ("units", 8, 2, 2, 4)
        ]
    );
    assert_eq!(budget.affordable, 4);
    let history: Vec<(&str, &str)> = job
        .history
        .iter()
        .map(|h| (h.unit.as_str(), h.outcome.as_str()))
        .collect();
    assert_eq!(history, [("U2", "blocked"), ("U1", "done")]);
    let questions: Vec<(&str, &str)> = job
        .questions
        .iter()
        .map(|q| (q.text.as_str(), q.kind.as_str()))
        .collect();
    assert_eq!(
        questions,
        [
            ("PEG or LALR grammar?", "decision"),
            ("Is CI green on main?", "relay")
        ]
    );
}

/// Issue 15 contracts pane: counts per status, claimed ones with holder, epoch and lease end (the one
/// under a minute is urgent), the waiting one with its age, the ended ones with their end reason.
#[test]
fn the_contracts_pane_shows_counts_leases_waits_and_endings() {
    let fx = mid_flight();
    let snapshot = sources(&fx, &options()).snapshot();
    let pane = snapshot.contracts.as_ref().unwrap();
    let c = pane.body.as_ref().unwrap();
    let counts: Vec<(&str, u64)> = c.counts.iter().map(|n| (n.status.as_str(), n.count)).collect();
    assert_eq!(
        counts,
        [
            ("SUBMITTED", 1),
            ("CLAIMED", 2),
            ("COMPLETED", 1),
            ("FAILED", 1),
            ("TIMED_OUT", 0),
            ("POINTER_STALE", 0),
            ("CANCELLED", 0)
        ]
    );
    let claimed: Vec<(&str, u64, i64, bool)> = c
        .claimed
        .iter()
        .map(|x| {
            (
                x.holder.as_str(),
                x.epoch,
                x.time_left(snapshot.now).unwrap().num_seconds(),
                x.is_urgent(snapshot.now),
            )
        })
        .collect();
    assert_eq!(claimed, [("carol", 1, 40, true), ("bob", 1, 15 * 60, false)]);
    assert_eq!(c.waiting.len(), 1);
    assert_eq!(
        (
            c.waiting[0].target.as_str(),
            c.waiting[0].age(snapshot.now).num_seconds()
        ),
        ("frank", 60)
    );
    let ended: Vec<(&str, Option<&str>, i64)> = c
        .ended
        .iter()
        .map(|x| {
            (
                x.status.as_str(),
                x.reason.as_deref(),
                x.ago(snapshot.now).unwrap().num_minutes(),
            )
        })
        .collect();
    assert_eq!(
        ended,
        [
            ("FAILED", Some("WORKER_FAILED"), 20),
            ("COMPLETED", Some("FULFILLED"), 25)
        ]
    );
    assert_eq!(c.past_deadline, 0);
}

/// Issue 15 (`--agent`): the contracts of one agent, as target or requester, with counts to match.
#[test]
fn an_agent_sees_the_contracts_it_sent_or_holds() {
    let fx = mid_flight();
    let mut opts = options();
    opts.agent = Some("bob".into());
    let snapshot = sources(&fx, &opts).snapshot();
    let c = snapshot.contracts.as_ref().unwrap().body.as_ref().unwrap();
    let claimed: Vec<&str> = c.claimed.iter().map(|x| x.title.as_str()).collect();
    assert_eq!(claimed, ["Check the CLI flags", "Review the parser diff"]);
    assert!(c.waiting.is_empty() && c.ended.is_empty());
    let claimed_count = c.counts.iter().find(|n| n.status == "CLAIMED").unwrap().count;
    assert_eq!(claimed_count, 2);
}

/// Issue 15 hours line: in hours on Monday 11:00 in London, closing at 17:30 London time.
#[test]
fn the_hours_line_counts_down_to_the_next_change() {
    let fx = mid_flight();
    let snapshot = sources(&fx, &options()).snapshot();
    let hours = snapshot.hours.as_ref().unwrap();
    assert!(hours.in_hours);
    assert_eq!(hours.next_local, "closes 17:30");
    assert_eq!(hours.countdown(snapshot.now).unwrap().num_minutes(), 6 * 60 + 30);
}

/// Issue 15 `/` filter: by unit id or agent, on every pane; counts stay whole.
#[test]
fn the_filter_keeps_matching_units_and_contracts() {
    let fx = mid_flight();
    let snapshot = sources(&fx, &options()).snapshot();
    let by_agent = snapshot.filtered("BOB");
    let job = by_agent.jobs[0].body.as_ref().unwrap();
    let open: Vec<&str> = job.open_units().map(|u| u.id.as_str()).collect();
    assert_eq!(open, ["U2"]);
    assert_eq!(job.held.len(), 1, "U4 is held by U2, which matches");
    assert_eq!(job.counts, snapshot.jobs[0].body.as_ref().unwrap().counts);
    let c = by_agent.contracts.as_ref().unwrap().body.as_ref().unwrap();
    assert_eq!(c.claimed.len(), 2, "bob holds one and sent the other");
    let by_unit = snapshot.filtered("u6");
    let open: Vec<&str> = by_unit.jobs[0]
        .body
        .as_ref()
        .unwrap()
        .open_units()
        .map(|u| u.id.as_str())
        .collect();
    assert_eq!(open, ["U6"]);
    assert_eq!(snapshot.filtered("  "), snapshot);
}

/// The shift-work tools' own refusal sentences reach the pane: a missing checkpoint (SW-32), a plan
/// that cannot batch (SW-53).
#[test]
fn unreadable_checkpoints_and_refused_plans_say_why() {
    let fx = mid_flight();
    let mut opts = options();
    opts.checkpoints = vec!["/repo/missing.json".into()];
    let pane = &sources(&fx, &opts).snapshot().jobs[0];
    assert_eq!(
        pane.body.as_ref().unwrap_err(),
        "checkpoint unreadable: [Errno 2] No such file or directory: '/repo/missing.json'"
    );
    let cyclic = fixture::checkpoint().replace(
        r#""depends_on": ["U1"], "verify": "make U3""#,
        r#""depends_on": ["U6"], "verify": "make U3""#,
    );
    fx.fs.write_file(fixture::CHECKPOINT, cyclic.as_bytes());
    let snapshot = sources(&fx, &options()).snapshot();
    let job = snapshot.jobs[0].body.as_ref().unwrap();
    assert_eq!(
        job.plan_refusal.as_deref(),
        Some("the graph has a cycle: U3 -> U6 -> U3")
    );
    assert!(job.waves.is_empty());
    assert_eq!(job.unplanned.len(), 5);
}

/// Hostile input: control characters in titles never reach the snapshot; a FIFO is refused without
/// blocking.
#[test]
fn hostile_files_are_refused_or_cleaned() {
    let fx = mid_flight();
    let evil = fixture::checkpoint().replace("Wire the CLI", r"Wire\u001b[2J the\nCLI");
    fx.fs.write_file(fixture::CHECKPOINT, evil.as_bytes());
    let snapshot = sources(&fx, &options()).snapshot();
    let title = &snapshot.jobs[0].body.as_ref().unwrap().unit("U3").unwrap().title;
    assert_eq!(title, "Wire\u{fffd}[2J the CLI");
    fx.fs.create_special("/repo/fifo.json");
    let mut opts = options();
    opts.checkpoints = vec!["/repo/fifo.json".into()];
    let pane = &sources(&fx, &opts).snapshot().jobs[0];
    assert!(
        pane.body
            .as_ref()
            .unwrap_err()
            .starts_with("checkpoint unreadable: "),
        "{pane:?}"
    );
}
