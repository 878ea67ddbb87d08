//! The acceptance scenarios of spec §11 (CT-176), written once against a [`Surface`] so that the same
//! code runs through the library (`shiftwork_contracts::args::call` over the facade) and through the MCP
//! adapter (`crates/mcp-adapter/tests/contracts.rs` includes this file).
//!
//! Only the fields a scenario shows are asserted ([`expect`] checks a subset); "unchanged" compares
//! the `inspect_mesh_state` detail view before and after.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use shiftwork_seams::{ManualClock, MemFs, Op};

/// `T0` of the fixture: 2026-01-01T00:00:00Z.
pub const T0: i64 = 1_767_225_600_000;
/// The workspace root `W` (in the `MemFs`, already canonical).
pub const W: &str = "/w";
/// `src/lib.rs` as dispatched.
pub const LIB: &[u8] = b"pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";
/// `src/lib.rs` after **change**.
pub const LIB_CHANGED: &[u8] = b"pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n";
/// `src/lib.rs` after **grow**.
pub const LIB_GROWN: &[u8] = b"pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n// x\n";
const LIB_SHA: &str = "821d282d75c051d9a2a445ad8ef1551004aba5b3322d7a354c8a2abcd15af1e6";
const README_SHA: &str = "19afa20da879c7219351c227d8bbc577b299d60c473a1e321902d30cec848dac";

/// How a scenario reaches the tools.
pub struct CallOpts<'a> {
    /// The adapter's default identity (`AGENT_NAME`), `None` when unset.
    pub agent: Option<&'a str>,
    /// `require_claim_epoch`.
    pub strict: bool,
}

/// A way to call the eight tools against one store, clock and workspace.
pub trait Surface {
    /// Calls `tool` with `args` as an adapter configured by `opts` would, returning the answer object.
    fn call_with(&mut self, opts: &CallOpts<'_>, tool: &str, args: Value) -> Value;
    /// The library's `sweep(now)`: `(queued_timed_out, claimed_timed_out)`.
    fn sweep(&mut self, now: i64) -> (u64, u64);
}

/// The clock and workspace of the fixture.
pub struct Fixture {
    /// Set before each call.
    pub clock: ManualClock,
    /// Holds `W`.
    pub fs: MemFs,
}

/// The fixture workspace of §11.
pub fn fixture() -> Fixture {
    let fs = MemFs::new();
    fs.write_file("/w/src/lib.rs", LIB);
    fs.write_file("/w/README.md", b"# Demo\n\nA tiny crate.\n");
    fs.write_file("/w/.env", b"KEY=1\n");
    fs.make_dirs("/w/docs");
    fs.write_file("/outside/secret.txt", b"secret\n");
    fs.symlink("/outside/secret.txt", "/w/link_out");
    fs.symlink("src/lib.rs", "/w/link_in");
    Fixture {
        clock: ManualClock::new(instant(T0)),
        fs,
    }
}

fn instant(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap()
}

/// One scenario.
pub type Scenario = fn(&mut Ctx<'_>);

/// Every scenario by name.
pub fn all() -> Vec<(&'static str, Scenario)> {
    vec![
        ("S1", s1),
        ("S2", s2),
        ("S3", s3),
        ("S4", s4),
        ("S5", s5),
        ("S6", s6),
        ("S7", s7),
        ("S8", s8),
        ("S9", s9),
        ("S10", s10),
        ("S11", s11),
        ("S12", s12),
        ("S13", s13),
        ("S14", s14),
        ("S15", s15),
        ("S16", s16),
        ("S17", s17),
        ("S18", s18),
        ("S19", s19),
        ("S20", s20),
        ("S21", s21),
        ("S22", s22),
        ("S23", s23),
        ("S24", s24),
        ("S25", s25),
        ("S26", s26),
        ("S27", s27),
        ("S28", s28),
        ("S29", s29),
        ("S30", s30),
        ("S31", s31),
        ("S34", s34),
    ]
}

/// A scenario's running state.
pub struct Ctx<'a> {
    /// The surface.
    pub surface: &'a mut dyn Surface,
    /// The fixture.
    pub fx: &'a Fixture,
    /// `C1`, `C2`, … in dispatch order.
    pub ids: Vec<String>,
    /// Every answer seen, for the caller's extra checks (schema validation through MCP).
    pub answers: Vec<(String, Value)>,
}

impl<'a> Ctx<'a> {
    /// A context over `surface` and `fx`.
    pub fn new(surface: &'a mut dyn Surface, fx: &'a Fixture) -> Self {
        Ctx {
            surface,
            fx,
            ids: Vec::new(),
            answers: Vec::new(),
        }
    }

    fn at(&self, offset: i64) {
        self.fx.clock.set(instant(T0 + offset));
    }

    fn call_opts(&mut self, opts: &CallOpts<'_>, tool: &str, args: Value) -> Value {
        let answer = self.surface.call_with(opts, tool, args);
        if tool == "dispatch_contract" && answer["ok"] == true && answer["idempotent_replay"] == false {
            self.ids.push(answer["contract_id"].as_str().unwrap().to_owned());
        }
        self.answers.push((tool.to_owned(), answer.clone()));
        answer
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        self.call_opts(
            &CallOpts {
                agent: None,
                strict: false,
            },
            tool,
            args,
        )
    }

    fn c(&self, n: usize) -> String {
        self.ids[n - 1].clone()
    }

    fn d(&mut self, extra: Value) -> Value {
        let mut args = json!({
            "requester_agent": "alice", "target_agent": "bob", "title": "Review add()",
            "workspace_root": W, "pointers": ["src/lib.rs"],
        });
        merge(&mut args, extra);
        self.call("dispatch_contract", args)
    }

    fn poll_bob(&mut self) -> Value {
        self.call("poll_next_task", json!({"agent_id": "bob"}))
    }

    fn h(&self, k: u64, extra: Value) -> Value {
        let mut args = json!({"contract_id": self.c(1), "claim_epoch": k, "agent_id": "bob"});
        merge(&mut args, extra);
        args
    }

    fn detail(&mut self, n: usize) -> Value {
        let id = self.c(n);
        let answer = self.call("inspect_mesh_state", json!({"contract_id": id}));
        assert_eq!(answer["total_returned"], 1, "{answer}");
        answer["contracts"][0].clone()
    }

    fn unchanged<F: FnOnce(&mut Self)>(&mut self, n: usize, f: F) {
        let before = self.detail(n);
        f(self);
        let mut after = self.detail(n);
        // `is_logically_expired` depends on the reading's instant, not on the record.
        after["is_logically_expired"] = before["is_logically_expired"].clone();
        assert_eq!(before, after, "the record changed");
    }
}

fn merge(base: &mut Value, extra: Value) {
    if let (Some(b), Value::Object(e)) = (base.as_object_mut(), extra) {
        for (k, v) in e {
            b.insert(k, v);
        }
    }
}

/// Asserts that `actual` contains `expected`: every key of an expected object with an equal value
/// (recursively); arrays of the same length, item by item.
pub fn expect(actual: &Value, expected: &Value) {
    fn walk(a: &Value, e: &Value, at: &str, whole: &Value) {
        match (a, e) {
            (Value::Object(a), Value::Object(e)) => {
                for (k, ev) in e {
                    let av = a.get(k).unwrap_or_else(|| panic!("missing {at}/{k} in {whole}"));
                    walk(av, ev, &format!("{at}/{k}"), whole);
                }
            }
            (Value::Array(a), Value::Array(e)) => {
                assert_eq!(a.len(), e.len(), "length of {at} in {whole}");
                for (i, (av, ev)) in a.iter().zip(e).enumerate() {
                    walk(av, ev, &format!("{at}/{i}"), whole);
                }
            }
            _ => assert_eq!(a, e, "at {at} in {whole}"),
        }
    }
    walk(actual, expected, "", actual);
}

/// Asserts a refusal `code` with (a subset of) `details`.
pub fn refused(actual: &Value, code: &str, details: Value) {
    assert_eq!(actual["ok"], false, "{actual}");
    assert_eq!(actual["error"]["code"], code, "{actual}");
    expect(&actual["error"]["details"], &details);
}

fn p_lib() -> Value {
    json!({"path": "src/lib.rs", "size": 48, "sha256": LIB_SHA,
           "first_line": "pub fn add(a: i32, b: i32) -> i32 {", "last_line": "}"})
}

fn p_readme() -> Value {
    json!({"path": "README.md", "size": 22, "sha256": README_SHA, "first_line": "# Demo", "last_line": "A tiny crate."})
}

fn sv() -> Value {
    json!({"type": "object", "required": ["verdict"], "properties": {"verdict": {"enum": ["approve", "reject"]}}})
}

fn change(fx: &Fixture) {
    fx.fs.write_file("/w/src/lib.rs", LIB_CHANGED);
}
fn grow(fx: &Fixture) {
    fx.fs.write_file("/w/src/lib.rs", LIB_GROWN);
}
fn restore(fx: &Fixture) {
    fx.fs.write_file("/w/src/lib.rs", LIB);
}

/// S1: dispatch (CT-61, CT-62, CT-96; the contract, root, pointer and baseline of CT-7, CT-9, CT-10, CT-11, CT-22, CT-23).
pub fn s1(x: &mut Ctx<'_>) {
    x.at(0);
    let a = x.d(json!({}));
    expect(
        &a,
        &json!({"ok": true, "contract_id": x.c(1), "status": "SUBMITTED", "idempotent_replay": false,
                "requester_agent": "alice", "target_agent": "bob", "created_at": T0,
                "queue_expires_at": T0 + 14_400_000, "lifetime_ends_at": T0 + 57_600_000,
                "exec_ttl_sec": 1800, "queue_ttl_sec": 14400, "pointers": [p_lib()], "warnings": []}),
    );
    let d = x.detail(1);
    expect(
        &d,
        &json!({"status": "SUBMITTED", "claim_epoch": 0, "task_type": "review", "context_summary": "",
                "is_logically_expired": false, "omitted_fields": []}),
    );
}

/// S2: empty queue (CT-99).
pub fn s2(x: &mut Ctx<'_>) {
    x.at(0);
    let a = x.call("poll_next_task", json!({"agent_id": "carol"}));
    assert_eq!(
        a,
        json!({"ok": true, "has_task": false, "message": "No pending contracts for agent \"carol\"", "skipped_stale": []})
    );
}

/// S3: claim (C1, CT-12, CT-42 verification after the claim, CT-99, CT-120).
pub fn s3(x: &mut Ctx<'_>) {
    s1(x);
    x.at(60_000);
    let a = x.poll_bob();
    expect(
        &a,
        &json!({"ok": true, "has_task": true, "status": "CLAIMED", "skipped_stale": [], "contract": {
            "contract_id": x.c(1), "requester_agent": "alice", "target_agent": "bob", "task_type": "review",
            "title": "Review add()", "context_summary": "", "workspace_root": W, "pointers": [p_lib()],
            "contract_schema": null, "claimed_at": T0 + 60_000, "exec_ttl_sec": 1800, "claim_epoch": 1,
            "expires_at": T0 + 1_860_000, "lifetime_ends_at": T0 + 57_600_000, "extends_left": 5,
            "releases_left": 3, "schema_attempts_left": 3}}),
    );
    let b = x.poll_bob();
    assert_eq!(b["has_task"], false);
}

/// S4: oldest first (CT-50).
pub fn s4(x: &mut Ctx<'_>) {
    x.at(0);
    x.d(json!({}));
    x.at(1000);
    x.d(json!({"title": "Second"}));
    x.at(2000);
    assert_eq!(x.poll_bob()["contract"]["contract_id"], x.c(1));
    assert_eq!(x.poll_bob()["contract"]["contract_id"], x.c(2));
    assert_eq!(x.poll_bob()["has_task"], false);
}

/// S5: extend quota (X1, CT-28 MAX_EXTENDS_PER_CLAIM).
pub fn s5(x: &mut Ctx<'_>) {
    s3(x);
    x.at(120_000);
    let a = x.call("extend_ttl", x.h(1, json!({})));
    expect(
        &a,
        &json!({"ok": true, "status": "CLAIMED", "claim_epoch": 1, "claimed_at": T0 + 120_000,
                "expires_at": T0 + 1_920_000, "extend_count": 1, "extends_left": 4,
                "lifetime_ends_at": T0 + 57_600_000, "warnings": []}),
    );
    let mut last = Value::Null;
    for k in 1..=4 {
        x.at(120_000 + k * 1000);
        last = x.call("extend_ttl", x.h(1, json!({})));
        assert_eq!(last["ok"], true, "{last}");
    }
    expect(
        &last,
        &json!({"extend_count": 5, "extends_left": 0, "expires_at": T0 + 1_924_000}),
    );
    x.at(125_000);
    let args = x.h(1, json!({}));
    x.unchanged(1, |x| {
        let r = x.call("extend_ttl", args);
        refused(
            &r,
            "EXTEND_LIMIT",
            json!({"contract_id": x.c(1), "extend_count": 5}),
        );
    });
    assert_eq!(x.detail(1)["expires_at"], T0 + 1_924_000);
}

/// S6: lifetime ceiling (CT-47, CT-54).
pub fn s6(x: &mut Ctx<'_>) {
    x.at(0);
    let a = x.d(json!({"queue_ttl_sec": 600}));
    expect(
        &a,
        &json!({"queue_expires_at": T0 + 600_000, "lifetime_ends_at": T0 + 2_400_000}),
    );
    x.at(60_000);
    expect(
        &x.poll_bob(),
        &json!({"contract": {"expires_at": T0 + 1_860_000}}),
    );
    x.at(600_000);
    expect(
        &x.call("extend_ttl", x.h(1, json!({}))),
        &json!({"expires_at": T0 + 2_400_000}),
    );
    x.at(600_001);
    let r = x.call("extend_ttl", x.h(1, json!({})));
    refused(
        &r,
        "LIFETIME_CEILING",
        json!({"contract_id": x.c(1), "lifetime_ends_at": T0 + 2_400_000, "expires_at": T0 + 2_400_000}),
    );
}

/// S7: lease boundary (CT-45 exclusive deadlines, E2, CT-14 expiry is terminal, CT-57).
pub fn s7(x: &mut Ctx<'_>) {
    s3(x);
    x.at(1_859_999);
    let v = x.call(
        "verify_contract",
        json!({"contract_id": x.c(1), "agent_id": "bob"}),
    );
    expect(&v, &json!({"is_logically_expired": false, "fulfillable": true}));
    x.at(1_860_000);
    let r = x.call("extend_ttl", x.h(1, json!({})));
    refused(
        &r,
        "LEASE_EXPIRED",
        json!({"contract_id": x.c(1), "status": "TIMED_OUT", "end_reason": "EXEC_TTL_EXPIRED"}),
    );
    expect(
        &x.detail(1),
        &json!({"status": "TIMED_OUT", "end_reason": "EXEC_TTL_EXPIRED", "completed_at": T0 + 1_860_000, "error_reason": null}),
    );
}

/// S8: release and claim again (R1, CT-52).
pub fn s8(x: &mut Ctx<'_>) {
    s3(x);
    x.at(120_000);
    let a = x.call("release_contract", x.h(1, json!({"reason": "need more context"})));
    expect(
        &a,
        &json!({"ok": true, "status": "SUBMITTED", "release_count": 1, "releases_left": 2,
                "queued_at": T0 + 120_000, "queue_expires_at": T0 + 14_520_000}),
    );
    expect(
        &x.detail(1),
        &json!({"claim_epoch": 1, "extend_count": 0, "claimed_at": null, "expires_at": null,
                "error_reason": "RELEASED_BY_HOLDER: need more context"}),
    );
    x.at(180_000);
    expect(
        &x.poll_bob(),
        &json!({"contract": {"claim_epoch": 2, "claimed_at": T0 + 180_000, "expires_at": T0 + 1_980_000,
                             "extends_left": 5, "releases_left": 2}}),
    );
}

/// S9: a release goes to the tail (CT-50).
pub fn s9(x: &mut Ctx<'_>) {
    x.at(0);
    x.d(json!({}));
    x.at(1000);
    x.d(json!({}));
    x.at(2000);
    expect(
        &x.poll_bob(),
        &json!({"contract": {"contract_id": x.c(1), "claim_epoch": 1}}),
    );
    x.at(3000);
    expect(
        &x.call("release_contract", x.h(1, json!({}))),
        &json!({"queued_at": T0 + 3000}),
    );
    x.at(4000);
    expect(&x.poll_bob(), &json!({"contract": {"contract_id": x.c(2)}}));
    x.at(5000);
    expect(
        &x.poll_bob(),
        &json!({"contract": {"contract_id": x.c(1), "claim_epoch": 2}}),
    );
}

/// S10: release quota (CT-28 MAX_RELEASES).
pub fn s10(x: &mut Ctx<'_>) {
    x.at(0);
    x.d(json!({}));
    for k in 1..=3u64 {
        x.at(k as i64 * 10_000);
        expect(
            &x.poll_bob(),
            &json!({"contract": {"contract_id": x.c(1), "claim_epoch": k}}),
        );
        x.at(k as i64 * 10_000 + 1000);
        expect(
            &x.call("release_contract", x.h(k, json!({}))),
            &json!({"release_count": k}),
        );
    }
    x.at(40_000);
    expect(
        &x.poll_bob(),
        &json!({"contract": {"claim_epoch": 4, "releases_left": 0}}),
    );
    x.at(41_000);
    let r = x.call("release_contract", x.h(4, json!({})));
    refused(
        &r,
        "RELEASE_LIMIT",
        json!({"contract_id": x.c(1), "release_count": 3}),
    );
    expect(&x.detail(1), &json!({"status": "CLAIMED", "claim_epoch": 4}));
}

/// S11: a stale epoch from the same agent (CT-13, CT-44 refusals change nothing, CT-57, CT-158).
pub fn s11(x: &mut Ctx<'_>) {
    x.at(0);
    x.d(json!({}));
    x.at(10_000);
    x.poll_bob();
    x.at(20_000);
    x.call("release_contract", x.h(1, json!({})));
    x.at(25_000);
    let r = x.call("fulfill_contract", x.h(1, json!({"result_summary": "LGTM"})));
    refused(
        &r,
        "NOT_CLAIMED",
        json!({"contract_id": x.c(1), "status": "SUBMITTED", "end_reason": null}),
    );
    x.at(30_000);
    x.poll_bob();
    x.at(40_000);
    let args = x.h(1, json!({"result_summary": "LGTM"}));
    x.unchanged(1, |x| {
        let r = x.call("fulfill_contract", args);
        refused(
            &r,
            "STALE_EPOCH",
            json!({"contract_id": x.c(1), "claim_epoch": 2, "status": "CLAIMED"}),
        );
    });
    x.at(50_000);
    expect(
        &x.call("fulfill_contract", x.h(2, json!({"result_summary": "LGTM"}))),
        &json!({"status": "COMPLETED"}),
    );
}

/// S12: fail (F1, CT-55).
pub fn s12(x: &mut Ctx<'_>) {
    s3(x);
    x.at(300_000);
    let a = x.call("fail_contract", x.h(1, json!({"reason": "cannot build"})));
    expect(
        &a,
        &json!({"ok": true, "status": "FAILED", "completed_at": T0 + 300_000}),
    );
    expect(
        &x.detail(1),
        &json!({"end_reason": "WORKER_FAILED", "fail_reason": "cannot build", "error_reason": "WORKER_FAILED: cannot build"}),
    );
    let r = x.call("fail_contract", x.h(1, json!({"reason": "cannot build"})));
    refused(
        &r,
        "ALREADY_TERMINAL",
        json!({"contract_id": x.c(1), "status": "FAILED", "end_reason": "WORKER_FAILED"}),
    );
}

/// S13: late fail (F2, CT-51, CT-26 one-line reasons).
pub fn s13(x: &mut Ctx<'_>) {
    s3(x);
    x.at(1_900_000);
    let a = x.call("fail_contract", x.h(1, json!({"reason": "crashed\nmid-run"})));
    expect(
        &a,
        &json!({"ok": true, "status": "TIMED_OUT", "completed_at": T0 + 1_860_000}),
    );
    expect(
        &x.detail(1),
        &json!({"end_reason": "EXEC_TTL_EXPIRED", "fail_reason": "crashed\nmid-run", "error_reason": "WORKER_FAILED: crashed mid-run"}),
    );
    x.at(1_900_001);
    let r = x.call("fail_contract", x.h(1, json!({"reason": "crashed\nmid-run"})));
    refused(
        &r,
        "ALREADY_TERMINAL",
        json!({"contract_id": x.c(1), "status": "TIMED_OUT", "end_reason": "EXEC_TTL_EXPIRED"}),
    );
}

/// S14: fulfill (U1, CT-111, CT-159 one accepted result, CT-42 artifacts fingerprinted once).
pub fn s14(x: &mut Ctx<'_>) {
    s3(x);
    x.at(600_000);
    let a = x.call(
        "fulfill_contract",
        x.h(1, json!({"result_summary": "LGTM", "structured_output": {"verdict": "approve"}, "artifacts_pointers": ["README.md"]})),
    );
    expect(
        &a,
        &json!({"ok": true, "status": "COMPLETED", "completed_at": T0 + 600_000, "artifacts_pointers": [p_readme()]}),
    );
    expect(
        &x.detail(1),
        &json!({"result_summary": "LGTM", "structured_output": {"verdict": "approve"}, "end_reason": "FULFILLED", "has_result": true}),
    );
    let r = x.call("fulfill_contract", x.h(1, json!({"result_summary": "LGTM"})));
    refused(&r, "ALREADY_TERMINAL", json!({}));
}

fn strike(x: &mut Ctx<'_>) {
    s3(x);
    x.at(300_000);
    change(x.fx);
    let r = x.call("fulfill_contract", x.h(1, json!({"result_summary": "LGTM"})));
    refused(
        &r,
        "RETRY_NEEDED",
        json!({"contract_id": x.c(1), "status": "CLAIMED", "claim_epoch": 1, "expires_at": T0 + 2_100_000,
               "dirty_files": [{"path": "src/lib.rs", "reason": "CONTENT_CHANGED", "expected_size": 48,
                                "actual_size": 48, "hint": "src/lib.rs differs from the baseline (sha256 821d282d75c0); restore it, e.g. with git stash, then call verify_contract"}]}),
    );
}

/// S15: one recoverable strike (U2, CT-53, CT-113 a refusal that changes the record).
pub fn s15(x: &mut Ctx<'_>) {
    strike(x);
    expect(
        &x.detail(1),
        &json!({"toctou_strikes": 1, "claimed_at": T0 + 300_000, "error_reason": "TOCTOU_STRIKE: src/lib.rs (CONTENT_CHANGED)"}),
    );
    restore(x.fx);
    x.at(400_000);
    expect(
        &x.call("fulfill_contract", x.h(1, json!({"result_summary": "LGTM"}))),
        &json!({"status": "COMPLETED"}),
    );
}

/// S16: second dirty delivery (U3, CT-25, CT-113).
pub fn s16(x: &mut Ctx<'_>) {
    strike(x);
    grow(x.fx);
    x.at(400_000);
    let r = x.call(
        "fulfill_contract",
        x.h(
            1,
            json!({"result_summary": "LGTM", "structured_output": {"verdict": "approve"}}),
        ),
    );
    refused(
        &r,
        "POINTER_STALE",
        json!({"contract_id": x.c(1), "status": "POINTER_STALE", "dirty_files": [{"path": "src/lib.rs",
               "reason": "SIZE_MISMATCH", "expected_size": 48, "actual_size": 53,
               "hint": "src/lib.rs is 53 bytes, the baseline is 48; restore it, then call verify_contract"}]}),
    );
    expect(
        &x.detail(1),
        &json!({"status": "POINTER_STALE", "end_reason": "POINTER_DRIFT_AT_FULFILL", "toctou_strikes": 2,
                "completed_at": T0 + 400_000, "result_summary": null, "has_result": true,
                "salvaged_result": {"result_summary": "LGTM", "structured_output": {"verdict": "approve"}, "artifacts_pointers": []},
                "error_reason": "POINTER_STALE_AT_FULFILL: src/lib.rs (SIZE_MISMATCH) | prev: TOCTOU_STRIKE: src/lib.rs (CONTENT_CHANGED)"}),
    );
}

fn schema_claim(x: &mut Ctx<'_>) {
    x.at(0);
    x.d(json!({"contract_schema": sv()}));
    x.at(60_000);
    expect(
        &x.poll_bob(),
        &json!({"contract": {"schema_attempts_left": 3, "expires_at": T0 + 1_860_000}}),
    );
}

fn first_error_path(r: &Value) -> Value {
    r["error"]["details"]["validation_errors"][0]["instance_path"].clone()
}

/// S17: invalid output twice, then valid (U4, CT-69, CT-70).
pub fn s17(x: &mut Ctx<'_>) {
    schema_claim(x);
    x.at(70_000);
    let r = x.call(
        "fulfill_contract",
        x.h(
            1,
            json!({"result_summary": "done", "structured_output": {"verdict": "maybe"}}),
        ),
    );
    refused(
        &r,
        "OUTPUT_SCHEMA_INVALID",
        json!({"contract_id": x.c(1), "status": "CLAIMED", "retry_count": 1, "schema_attempts_left": 2}),
    );
    assert_eq!(first_error_path(&r), "/verdict");
    x.at(80_000);
    let r = x.call("fulfill_contract", x.h(1, json!({"result_summary": "done"})));
    refused(
        &r,
        "OUTPUT_SCHEMA_INVALID",
        json!({"retry_count": 2, "schema_attempts_left": 1}),
    );
    assert_eq!(first_error_path(&r), "");
    x.at(90_000);
    expect(
        &x.call(
            "fulfill_contract",
            x.h(
                1,
                json!({"result_summary": "done", "structured_output": {"verdict": "approve"}}),
            ),
        ),
        &json!({"status": "COMPLETED"}),
    );
    let d = x.detail(1);
    expect(&d, &json!({"retry_count": 2, "expires_at": T0 + 1_860_000}));
    assert!(
        d["error_reason"]
            .as_str()
            .unwrap()
            .starts_with("SCHEMA_INVALID 2/3: (root): "),
        "{d}"
    );
}

/// S18: the schema circuit breaker (U5, CT-113).
pub fn s18(x: &mut Ctx<'_>) {
    schema_claim(x);
    let bad = json!({"result_summary": "done", "structured_output": {"verdict": "maybe"}});
    x.at(70_000);
    refused(
        &x.call("fulfill_contract", x.h(1, bad.clone())),
        "OUTPUT_SCHEMA_INVALID",
        json!({"retry_count": 1}),
    );
    x.at(80_000);
    refused(
        &x.call("fulfill_contract", x.h(1, bad.clone())),
        "OUTPUT_SCHEMA_INVALID",
        json!({"retry_count": 2}),
    );
    x.at(90_000);
    let r = x.call("fulfill_contract", x.h(1, bad));
    refused(
        &r,
        "SCHEMA_RETRIES_EXHAUSTED",
        json!({"contract_id": x.c(1), "status": "FAILED", "retry_count": 3}),
    );
    assert_eq!(first_error_path(&r), "/verdict");
    expect(
        &x.detail(1),
        &json!({"status": "FAILED", "end_reason": "SCHEMA_RETRIES_EXHAUSTED", "completed_at": T0 + 90_000,
                "salvaged_result": {"structured_output": {"verdict": "maybe"}}}),
    );
}

/// S19: a release does not reset the breaker (CT-52).
pub fn s19(x: &mut Ctx<'_>) {
    schema_claim(x);
    let bad = json!({"result_summary": "done", "structured_output": {"verdict": "maybe"}});
    x.at(70_000);
    refused(
        &x.call("fulfill_contract", x.h(1, bad.clone())),
        "OUTPUT_SCHEMA_INVALID",
        json!({"retry_count": 1}),
    );
    x.at(80_000);
    x.call("release_contract", x.h(1, json!({})));
    x.at(90_000);
    expect(
        &x.poll_bob(),
        &json!({"contract": {"claim_epoch": 2, "schema_attempts_left": 2}}),
    );
    x.at(100_000);
    refused(
        &x.call("fulfill_contract", x.h(2, bad.clone())),
        "OUTPUT_SCHEMA_INVALID",
        json!({"retry_count": 2, "schema_attempts_left": 1}),
    );
    x.at(110_000);
    refused(
        &x.call("fulfill_contract", x.h(2, bad)),
        "SCHEMA_RETRIES_EXHAUSTED",
        json!({}),
    );
    expect(&x.detail(1), &json!({"status": "FAILED"}));
}

/// S20: stale at claim; the poll moves on (C2, CT-65).
pub fn s20(x: &mut Ctx<'_>) {
    x.at(0);
    x.d(json!({}));
    x.at(1000);
    x.d(json!({"title": "Docs", "pointers": ["README.md"]}));
    x.fx.fs.remove_file_for_test("/w/src/lib.rs");
    x.at(2000);
    let a = x.poll_bob();
    expect(
        &a,
        &json!({"ok": true, "has_task": true, "contract": {"contract_id": x.c(2), "claim_epoch": 1},
                "skipped_stale": [{"contract_id": x.c(1), "title": "Review add()", "dirty_files": [{
                    "path": "src/lib.rs", "reason": "FILE_MISSING", "expected_size": 48, "actual_size": null,
                    "hint": "restore src/lib.rs (baseline 48 bytes), then call verify_contract"}]}]}),
    );
    expect(
        &x.detail(1),
        &json!({"status": "POINTER_STALE", "end_reason": "POINTER_DRIFT_AT_CLAIM", "claim_epoch": 1,
                "completed_at": T0 + 2000, "error_reason": "POINTER_STALE_AT_CLAIM: src/lib.rs (FILE_MISSING)"}),
    );
}

/// S21: refused pointers and roots (CT-29, CT-31 … CT-36).
pub fn s21(x: &mut Ctx<'_>) {
    x.at(0);
    let many: Vec<String> = (0..33).map(|i| format!("f{i}.rs")).collect();
    let cases = [
        (
            json!(["../outside.txt"]),
            json!({"path": "../outside.txt", "reason": "PATH_ESCAPE", "pattern": null}),
        ),
        (
            json!(["src/../README.md"]),
            json!({"path": "src/../README.md", "reason": "PATH_ESCAPE", "pattern": null}),
        ),
        (
            json!([".env"]),
            json!({"path": ".env", "reason": "SENSITIVE_FILE", "pattern": ".env"}),
        ),
        (
            json!([".git/config"]),
            json!({"path": ".git/config", "reason": "SENSITIVE_FILE", "pattern": ".git"}),
        ),
        (
            json!(["link_out"]),
            json!({"path": "link_out", "reason": "SYMLINK_ESCAPE", "pattern": null}),
        ),
        (
            json!(["missing.rs"]),
            json!({"path": "missing.rs", "reason": "FILE_MISSING", "pattern": null}),
        ),
        (
            json!(["docs"]),
            json!({"path": "docs", "reason": "NOT_A_FILE", "pattern": null}),
        ),
        (
            json!(["src/lib.rs", "./src/lib.rs"]),
            json!({"path": "./src/lib.rs", "reason": "DUPLICATE", "pattern": null}),
        ),
        (
            json!(many),
            json!({"path": null, "reason": "TOO_MANY", "pattern": null}),
        ),
    ];
    for (pointers, details) in cases {
        let r = x.d(json!({"pointers": pointers}));
        refused(&r, "POINTER_REFUSED", details.clone());
        assert_eq!(r["error"]["details"], details, "exact details");
    }
    let r = x.d(json!({"workspace_root": "relative/dir"}));
    refused(&r, "WORKSPACE_ROOT_INVALID", json!({"reason": "NOT_ABSOLUTE"}));
    let all = x.call("inspect_mesh_state", json!({}));
    expect(
        &all,
        &json!({"total_returned": 0, "counts": {"SUBMITTED": 0, "CLAIMED": 0, "COMPLETED": 0, "FAILED": 0,
                "TIMED_OUT": 0, "POINTER_STALE": 0, "logically_expired": 0}}),
    );
    let a = x.d(json!({"pointers": ["link_in"]}));
    expect(
        &a,
        &json!({"ok": true, "pointers": [{"path": "link_in", "size": 48, "sha256": LIB_SHA}]}),
    );
    x.fx.fs.write_file("/w/big.bin", &vec![b'x'; 9 << 20]);
    let a = x.d(json!({"pointers": ["big.bin"]}));
    assert_eq!(a["ok"], true, "{a}");
    assert_eq!(a["warnings"].as_array().unwrap().len(), 1);
    assert_eq!(a["warnings"][0]["code"], "LARGE_POINTER");
}

/// S22: idempotent dispatch (CT-63).
pub fn s22(x: &mut Ctx<'_>) {
    x.at(0);
    let a = x.d(json!({"idempotency_key": "k-1"}));
    expect(&a, &json!({"contract_id": x.c(1), "idempotent_replay": false}));
    x.at(1000);
    let b = x.d(json!({"idempotency_key": "k-1"}));
    expect(
        &b,
        &json!({"contract_id": x.c(1), "idempotent_replay": true, "status": "SUBMITTED", "created_at": T0, "warnings": []}),
    );
    expect(
        &x.call("inspect_mesh_state", json!({"requester_agent": "alice"})),
        &json!({"total_returned": 1}),
    );
    let r = x.d(json!({"idempotency_key": "k-1", "title": "Other"}));
    refused(&r, "IDEMPOTENCY_CONFLICT", json!({"contract_id": x.c(1)}));
    let c2 = x.d(json!({"idempotency_key": "k-1", "requester_agent": "carol"}));
    expect(&c2, &json!({"contract_id": x.c(2), "idempotent_replay": false}));
    assert_ne!(x.c(1), x.c(2));
    expect(&x.poll_bob(), &json!({"contract": {"contract_id": x.c(1)}}));
    expect(
        &x.call("fulfill_contract", x.h(1, json!({"result_summary": "done"}))),
        &json!({"status": "COMPLETED"}),
    );
    let c = x.d(json!({"idempotency_key": "k-1"}));
    expect(
        &c,
        &json!({"contract_id": x.c(1), "idempotent_replay": true, "status": "COMPLETED"}),
    );
}

/// S23: queue deadline and logical expiry (CT-15, CT-45, E1, CT-72 read-only).
pub fn s23(x: &mut Ctx<'_>) {
    x.at(0);
    x.d(json!({"queue_ttl_sec": 600}));
    x.at(599_999);
    expect(&x.detail(1), &json!({"is_logically_expired": false}));
    x.at(600_000);
    let id = x.c(1);
    let a = x.call("inspect_mesh_state", json!({"contract_id": id}));
    expect(
        &a,
        &json!({"contracts": [{"status": "SUBMITTED", "is_logically_expired": true}], "counts": {"logically_expired": 1}}),
    );
    x.call(
        "dispatch_contract",
        json!({"requester_agent": "carol", "target_agent": "bob", "title": "Other", "workspace_root": W}),
    );
    expect(
        &x.detail(1),
        &json!({"status": "TIMED_OUT", "end_reason": "QUEUE_TTL_EXPIRED", "completed_at": T0 + 600_000, "is_logically_expired": false}),
    );
    expect(&x.poll_bob(), &json!({"contract": {"contract_id": x.c(2)}}));
}

/// S24: the ceiling bounds releases too (CT-47, R1 capping).
pub fn s24(x: &mut Ctx<'_>) {
    x.at(0);
    expect(
        &x.d(json!({"queue_ttl_sec": 600})),
        &json!({"lifetime_ends_at": T0 + 2_400_000}),
    );
    x.at(1000);
    expect(
        &x.poll_bob(),
        &json!({"contract": {"expires_at": T0 + 1_801_000}}),
    );
    x.at(1_800_000);
    expect(
        &x.call("release_contract", x.h(1, json!({}))),
        &json!({"queue_expires_at": T0 + 2_400_000}),
    );
    x.at(2_000_000);
    expect(
        &x.poll_bob(),
        &json!({"contract": {"claim_epoch": 2, "expires_at": T0 + 2_400_000}}),
    );
    x.at(2_399_999);
    expect(
        &x.call(
            "verify_contract",
            json!({"contract_id": x.c(1), "agent_id": "bob"}),
        ),
        &json!({"fulfillable": true}),
    );
    x.at(2_400_000);
    let r = x.call("fulfill_contract", x.h(2, json!({"result_summary": "late"})));
    refused(
        &r,
        "LEASE_EXPIRED",
        json!({"contract_id": x.c(1), "status": "TIMED_OUT", "end_reason": "EXEC_TTL_EXPIRED"}),
    );
    expect(
        &x.detail(1),
        &json!({"status": "TIMED_OUT", "completed_at": T0 + 2_400_000}),
    );
}

/// S25: verify changes nothing (CT-71).
pub fn s25(x: &mut Ctx<'_>) {
    s3(x);
    change(x.fx);
    x.at(100_000);
    let args = x.h(1, json!({}));
    x.unchanged(1, |x| {
        let v = x.call("verify_contract", args.clone());
        expect(
            &v,
            &json!({"ok": true, "status": "CLAIMED", "is_logically_expired": false, "valid": false,
                    "fulfillable": false, "dirty_files": [{"path": "src/lib.rs", "reason": "CONTENT_CHANGED"}],
                    "checked": 1, "toctou_strikes_left": 1, "now": T0 + 100_000, "warnings": []}),
        );
    });
    restore(x.fx);
    expect(
        &x.call("verify_contract", args),
        &json!({"valid": true, "fulfillable": true, "dirty_files": []}),
    );
    expect(
        &x.call(
            "verify_contract",
            json!({"contract_id": x.c(1), "agent_id": "carol"}),
        ),
        &json!({"fulfillable": false}),
    );
    let v = x.call("verify_contract", json!({"contract_id": x.c(1)}));
    expect(
        &v,
        &json!({"fulfillable": false, "warnings": [{"code": "NO_IDENTITY"}]}),
    );
}

/// S26: paging and filters (CT-72 … CT-76).
pub fn s26(x: &mut Ctx<'_>) {
    for k in 0..5 {
        x.at(k * 1000);
        x.d(json!({}));
    }
    x.at(5000);
    let p1 = x.call("inspect_mesh_state", json!({"limit": 2}));
    expect(
        &p1,
        &json!({"contracts": [{"contract_id": x.c(5)}, {"contract_id": x.c(4)}], "total_returned": 2, "counts": {"SUBMITTED": 5}}),
    );
    let k1 = p1["next_cursor"].as_str().expect("a cursor").to_owned();
    let p2 = x.call("inspect_mesh_state", json!({"limit": 2, "cursor": k1}));
    expect(
        &p2,
        &json!({"contracts": [{"contract_id": x.c(3)}, {"contract_id": x.c(2)}]}),
    );
    let k2 = p2["next_cursor"].as_str().expect("a cursor").to_owned();
    let p3 = x.call("inspect_mesh_state", json!({"limit": 2, "cursor": k2}));
    expect(
        &p3,
        &json!({"contracts": [{"contract_id": x.c(1)}], "next_cursor": null}),
    );
    x.poll_bob();
    expect(
        &x.call("inspect_mesh_state", json!({"status": "CLAIMED"})),
        &json!({"contracts": [{"contract_id": x.c(1)}], "counts": {"SUBMITTED": 4, "CLAIMED": 1, "COMPLETED": 0,
                "FAILED": 0, "TIMED_OUT": 0, "POINTER_STALE": 0, "logically_expired": 0}}),
    );
    expect(
        &x.call(
            "inspect_mesh_state",
            json!({"status": ["SUBMITTED"], "target_agent": "bob"}),
        ),
        &json!({"contracts": [{"contract_id": x.c(5)}, {"contract_id": x.c(4)}, {"contract_id": x.c(3)}, {"contract_id": x.c(2)}]}),
    );
    let r = x.call(
        "inspect_mesh_state",
        json!({"target_agent": "carol", "cursor": k1}),
    );
    refused(&r, "INVALID_CURSOR", json!({}));
    assert_eq!(r["error"]["details"], json!({}));
    refused(
        &x.call("inspect_mesh_state", json!({"limit": 0})),
        "INVALID_ARGUMENT",
        json!({"argument": "limit"}),
    );
}

/// S27: wrong agent (CT-48 step 2).
pub fn s27(x: &mut Ctx<'_>) {
    s3(x);
    let id = x.c(1);
    x.unchanged(1, |x| {
        let r = x.call(
            "fulfill_contract",
            json!({"contract_id": id, "claim_epoch": 1, "agent_id": "carol", "result_summary": "x"}),
        );
        refused(
            &r,
            "NOT_TARGET_AGENT",
            json!({"contract_id": x.c(1), "target_agent": "bob"}),
        );
        let r = x.call(
            "extend_ttl",
            json!({"contract_id": id, "claim_epoch": 1, "agent_id": "carol"}),
        );
        refused(
            &r,
            "NOT_TARGET_AGENT",
            json!({"contract_id": x.c(1), "target_agent": "bob"}),
        );
    });
}

/// S28: unknown arguments (CT-86).
pub fn s28(x: &mut Ctx<'_>) {
    // CT-86 lists the tool's arguments: since CT-179 poll_next_task also takes wait_sec.
    let r = x.call("poll_next_task", json!({"agent": "bob"}));
    assert_eq!(
        r,
        json!({"ok": false, "error": {"code": "UNKNOWN_ARGUMENT", "message": "unknown argument 'agent'; known: agent_id, wait_sec",
               "details": {"argument": "agent", "known": ["agent_id", "wait_sec"]}}})
    );
    let r = x.call("extend_ttl", json!({"contract_id": "x", "ttl": 5, "epoch": 1}));
    assert_eq!(
        r["error"]["message"],
        "unknown argument 'ttl'; known: contract_id, claim_epoch, agent_id"
    );
    // The spec's example names `epoch`; with `ttl` first in arrival order MC-9 names `ttl`. The same
    // sentence for `epoch` alone:
    let r = x.call("extend_ttl", json!({"contract_id": "x", "epoch": 1}));
    assert_eq!(
        r["error"]["message"],
        "unknown argument 'epoch'; known: contract_id, claim_epoch, agent_id"
    );
}

/// S29: identity from `AGENT_NAME` (CT-8, CT-88).
pub fn s29(x: &mut Ctx<'_>) {
    x.at(0);
    let alice = CallOpts {
        agent: Some("alice"),
        strict: false,
    };
    let bob = CallOpts {
        agent: Some("bob"),
        strict: false,
    };
    let a = x.call_opts(
        &alice,
        "dispatch_contract",
        json!({"target_agent": "bob", "title": "Review add()", "workspace_root": W, "pointers": ["src/lib.rs"]}),
    );
    expect(&a, &json!({"contract_id": x.c(1), "requester_agent": "alice"}));
    let p = x.call_opts(&bob, "poll_next_task", json!({}));
    expect(&p, &json!({"contract": {"contract_id": x.c(1)}}));
    let e = x.call_opts(
        &bob,
        "extend_ttl",
        json!({"contract_id": x.c(1), "claim_epoch": 1}),
    );
    assert_eq!(e["ok"], true, "{e}");
    let r = x.call("poll_next_task", json!({}));
    refused(&r, "AGENT_ID_REQUIRED", json!({}));
    let bad = CallOpts {
        agent: Some("bad name"),
        strict: false,
    };
    let r = x.call_opts(&bad, "poll_next_task", json!({}));
    refused(&r, "INVALID_ARGUMENT", json!({"argument": "AGENT_NAME"}));
}

/// S30: omitted epoch; strict mode (CT-48, CT-125).
pub fn s30(x: &mut Ctx<'_>) {
    s3(x);
    let a = x.call("extend_ttl", json!({"contract_id": x.c(1), "agent_id": "bob"}));
    expect(
        &a,
        &json!({"ok": true, "warnings": [{"code": "EPOCH_NOT_SUPPLIED"}]}),
    );
    let strict = CallOpts {
        agent: None,
        strict: true,
    };
    let id = x.c(1);
    x.unchanged(1, |x| {
        let r = x.call_opts(
            &strict,
            "extend_ttl",
            json!({"contract_id": id, "agent_id": "bob"}),
        );
        refused(&r, "EPOCH_REQUIRED", json!({"contract_id": x.c(1)}));
    });
}

/// S31: library sweep (CT-77).
pub fn s31(x: &mut Ctx<'_>) {
    x.at(0);
    x.d(json!({}));
    x.at(1);
    x.d(json!({}));
    for k in 2..=4 {
        x.at(k);
        x.d(json!({"queue_ttl_sec": 600}));
    }
    x.at(1000);
    expect(
        &x.poll_bob(),
        &json!({"contract": {"contract_id": x.c(1), "expires_at": T0 + 1_801_000}}),
    );
    expect(
        &x.poll_bob(),
        &json!({"contract": {"contract_id": x.c(2), "expires_at": T0 + 1_801_000}}),
    );
    assert_eq!(x.surface.sweep(T0 + 1_801_000), (3, 2));
    assert_eq!(x.surface.sweep(T0 + 1_801_000), (0, 0));
    for n in 1..=5 {
        expect(&x.detail(n), &json!({"status": "TIMED_OUT"}));
    }
    expect(&x.detail(3), &json!({"completed_at": T0 + 600_002}));
    expect(&x.detail(1), &json!({"completed_at": T0 + 1_801_000}));
}

/// S34: verification could not run (C3, CT-40).
pub fn s34(x: &mut Ctx<'_>) {
    s1(x);
    x.fx.fs
        .fail_path(Op::Read, Path::new("/w/src/lib.rs"), libc_eio());
    x.at(60_000);
    let r = x.poll_bob();
    refused(
        &r,
        "IO_ERROR",
        json!({"contract_id": x.c(1), "path": "src/lib.rs", "skipped_stale": []}),
    );
    expect(
        &x.detail(1),
        &json!({"status": "SUBMITTED", "claim_epoch": 1, "queued_at": T0, "claimed_at": null,
                "error_reason": "CLAIM_REVERTED: pointer check could not run"}),
    );
    x.fx.fs.clear_faults();
    x.at(70_000);
    expect(
        &x.poll_bob(),
        &json!({"contract": {"contract_id": x.c(1), "claim_epoch": 2}}),
    );
}

fn libc_eio() -> i32 {
    5 // EIO on every POSIX system this workspace builds on.
}

/// Extra helpers the fixture needs from `MemFs`.
pub trait MemFsExt {
    /// Deletes a file (set-up, not counted).
    fn remove_file_for_test(&self, path: &str);
}

impl MemFsExt for MemFs {
    fn remove_file_for_test(&self, path: &str) {
        use shiftwork_seams::Fs;
        let n = self.count(Op::Remove);
        self.remove_file(Path::new(path)).unwrap();
        let _ = n;
    }
}

/// Arguments as an object map (for surfaces that need one).
pub fn as_map(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}
