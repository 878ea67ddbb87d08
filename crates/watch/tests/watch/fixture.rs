//! The job in mid-flight of issue 15's snapshot tests: three waves, a held unit, a budget, two claimed
//! contracts (one about to expire), one waiting, two ended; a clock fixed at Monday 2026-09-21 10:00 UTC.

use std::sync::Arc;

use chrono::{DateTime, TimeZone, Utc};
use shiftwork_contracts::{
    AgentId, Contracts, ContractsConfig, DispatchRequest, FulfillRequest, MemoryStore, SeededIdSource, Store,
};
use shiftwork_seams::{Clock, ManualClock, MemFs};
use shiftwork_watch::gather::ContractsReader;
use shiftwork_watch::{Sources, WatchOptions};

pub const CHECKPOINT: &str = "/repo/.shiftwork/checkpoint.json";
pub const LEDGER: &str = "/repo/.shiftwork/checkpoint.json.log.jsonl";
pub const HOURS: &str = "TZ=Europe/London Mon-Fri 09:00-17:30";

/// 2026-09-21 is a Monday; 10:00 UTC is 11:00 in London.
/// An agent's identity as a caller passes it.
fn id(agent: &str) -> AgentId {
    AgentId::new(agent).unwrap()
}

pub fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 9, 21, 10, 0, 0).unwrap()
}

/// The checkpoint: U1 done, U7 dropped; U2 and U3 in wave 1 (both in flight), U4 held out of wave 1
/// by U2 (both touch `src/parser.rs`), so U4 and U5 make wave 2 and U6 wave 3.
pub fn checkpoint() -> String {
    let unit = |id: &str, title: &str, status: &str, role: &str, deps: &[&str], touches: Option<&str>| {
        let deps: Vec<String> = deps.iter().map(|d| format!("\"{d}\"")).collect();
        let touches = touches
            .map(|t| format!(", \"touches\": [\"{t}\"]"))
            .unwrap_or_default();
        format!(
            "{{\"id\": \"{id}\", \"title\": \"{title}\", \"brief_path\": \"briefs/{id}.md\", \"status\": \"{status}\", \
             \"role\": \"{role}\", \"depends_on\": [{}], \"verify\": \"make {id}\"{touches}}}",
            deps.join(", ")
        )
    };
    let units = [
        unit("U1", "Scaffold the crate", "done", "implementer", &[], None),
        unit(
            "U2",
            "Write the parser",
            "in_progress",
            "implementer",
            &["U1"],
            Some("src/parser.rs"),
        ),
        unit(
            "U3",
            "Wire the CLI",
            "todo",
            "implementer",
            &["U1"],
            Some("src/cli.rs"),
        ),
        unit(
            "U4",
            "Parser error messages",
            "todo",
            "implementer",
            &["U1"],
            Some("src/parser.rs"),
        ),
        unit("U5", "Review the parser", "todo", "reviewer", &["U2"], None),
        unit("U6", "Release notes", "todo", "planner", &["U3", "U5"], None),
        unit("U7", "Port the old CLI", "dropped", "implementer", &[], None),
    ];
    format!(
        r#"{{"version": 1, "job": {{"id": "parser-job", "goal": "Ship the new parser", "done_definition": "make test passes", "constraints": [], "budget": {{"tokens": 300000, "units": 8}}}}, "plan": {{"cursor": "U2", "units": [{}]}}, "state": {{"repo": {{"branch": "main", "head_sha": "abc1234", "dirty": false}}, "artifacts": [], "external": []}}, "history": [{{"unit": "U1", "outcome": "done", "notes": "crate compiles"}}, {{"unit": "U2", "outcome": "blocked", "notes": "waiting on the grammar decision"}}], "retro": [], "handoff": {{"next_action": "Finish the parser.", "open_questions": ["PEG or LALR grammar?", {{"q": "Is CI green on main?", "kind": "relay", "probe": "true"}}], "do_not": []}}}}"#,
        units.join(", ")
    )
}

/// The ledger: U1 clocked out done by agent-ann (42,000 tokens), U2 briefed and clocked out blocked by
/// agent-bob (18,000 tokens), then U2 and U3 briefed again.
pub fn ledger() -> String {
    [
        r#"{"event": "brief", "role": "implementer", "ts": "2026-09-21T08:00:00Z", "unit": "U1"}"#,
        r#"{"agent_id": "agent-ann", "briefed": true, "role": "implementer", "status": "done", "tokens": 42000, "ts": "2026-09-21T08:40:00Z", "unit": "U1"}"#,
        r#"{"event": "brief", "role": "implementer", "ts": "2026-09-21T08:45:00Z", "unit": "U2"}"#,
        r#"{"agent_id": "agent-bob", "briefed": true, "role": "implementer", "status": "blocked", "tokens": 18000, "ts": "2026-09-21T09:10:00Z", "unit": "U2"}"#,
        r#"{"event": "brief", "role": "implementer", "ts": "2026-09-21T09:20:00Z", "unit": "U2"}"#,
        r#"{"event": "brief", "role": "implementer", "ts": "2026-09-21T09:30:00Z", "unit": "U3"}"#,
    ]
    .map(|l| format!("{l}\n"))
    .concat()
}

pub struct MidFlight {
    pub fs: MemFs,
    pub clock: ManualClock,
    pub store: Arc<MemoryStore>,
}

/// The files, the store, and the clock at [`start`].
pub fn mid_flight() -> MidFlight {
    let fs = MemFs::new();
    fs.make_dirs("/repo/.shiftwork");
    fs.make_dirs("/repo/src");
    fs.write_file(CHECKPOINT, checkpoint().as_bytes());
    fs.write_file(LEDGER, ledger().as_bytes());
    fs.write_file("/repo/src/parser.rs", b"pub fn parse() {}\n");
    let clock = ManualClock::new(start() - chrono::Duration::minutes(30));
    let store = Arc::new(MemoryStore::new(Arc::new(clock.clone())));
    let queue = Contracts::builder(store.clone())
        .fs(Arc::new(fs.clone()))
        .ids(Arc::new(SeededIdSource::new(15)))
        .config(
            ContractsConfig::builder()
                .allowed_roots(shiftwork_contracts::roots::AllowedRoots::new(["/repo"]))
                .build()
                .unwrap(),
        )
        .build();
    let dispatch = |from: &str, to: &str, title: &str, exec: u64| {
        queue
            .dispatch(
                &DispatchRequest::new(id(from), id(to), title, "/repo")
                    .pointers(["src/parser.rs"])
                    .exec_ttl(std::time::Duration::from_secs(exec)),
            )
            .unwrap()
    };
    let claim = |agent: &str| {
        let outcome = queue.poll_next_task(&id(agent)).unwrap();
        outcome.held().unwrap().holder()
    };
    // 09:30: two contracts end, one fulfilled, one failed.
    dispatch("alice", "dave", "Benchmark the lexer", 600);
    let done = claim("dave");
    clock.advance(std::time::Duration::from_secs(300));
    queue
        .fulfill_contract(&done, &FulfillRequest::new("lexer is 2x faster"))
        .unwrap();
    dispatch("alice", "erin", "Fuzz the tokenizer", 600);
    let failed = claim("erin");
    clock.advance(std::time::Duration::from_secs(300));
    queue.fail_contract(&failed, "the fuzzer needs nightly").unwrap();
    // 09:45: bob claims a review with a 30-minute lease; 09:58:40 carol claims a check with a 2-minute one.
    clock.advance(std::time::Duration::from_secs(300));
    dispatch("alice", "bob", "Review the parser diff", 1800);
    claim("bob");
    clock.advance(std::time::Duration::from_secs(13 * 60 + 40));
    dispatch("bob", "carol", "Check the CLI flags", 120);
    claim("carol");
    // 09:59: a contract for frank waits.
    clock.advance(std::time::Duration::from_secs(20));
    dispatch("carol", "frank", "Write the release notes", 900);
    clock.set(start());
    MidFlight { fs, clock, store }
}

/// The options of the mid-flight view.
pub fn options() -> WatchOptions {
    WatchOptions {
        checkpoints: vec![CHECKPOINT.into()],
        store: None,
        agent: None,
        hours: Some(HOURS.into()),
        zone: chrono_tz::Europe::London,
    }
}

/// The sources of the mid-flight view over the fixture's files and store.
pub fn sources(fx: &MidFlight, options: &WatchOptions) -> Sources {
    let clock: Arc<dyn Clock> = Arc::new(fx.clock.clone());
    let store: Arc<dyn Store> = fx.store.clone();
    let agent = options
        .agent
        .as_deref()
        .map(|a| shiftwork_watch::gather::agent_id(a).unwrap());
    Sources::new(options, Arc::new(fx.fs.clone()), clock.clone())
        .unwrap()
        .with_contracts(ContractsReader::over(
            store,
            "/home/me/.shiftwork/contracts.db",
            agent,
            clock,
        ))
}
