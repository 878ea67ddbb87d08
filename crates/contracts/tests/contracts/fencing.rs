//! Fencing with a manual clock (CT-13, CT-48, CT-57, CT-158), no file I/O under a store lock
//! (CT-41, CT-163), re-judging at the fulfill transaction (CT-68), and sweeps that never act on a stale
//! read (CT-130, CT-168).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use shiftwork_contracts::Status;
use shiftwork_contracts::{
    ContractId, Contracts, DispatchRequest, FulfillRequest, HolderRef, RefusalCode, Store,
};
use shiftwork_seams::ManualClock;

use crate::scenarios::{self, T0};
use crate::support::{agent, dreq, facade, instant, store, store_kinds, who};

fn at(clock: &ManualClock, offset: i64) {
    clock.set(chrono::DateTime::from_timestamp_millis(T0 + offset).unwrap());
}

fn d(c: &Contracts, pointers: &[&str]) -> ContractId {
    c.dispatch(&DispatchRequest {
        target_agent: agent("bob"),
        title: "Review".into(),
        workspace_root: scenarios::W.into(),
        pointers: Some(pointers.iter().map(|p| (*p).to_owned()).collect()),
        requester_agent: who("alice"),
        ..dreq()
    })
    .unwrap()
    .contract_id
}

fn holder(id: &ContractId, epoch: Option<u64>) -> HolderRef {
    HolderRef {
        contract_id: id.clone(),
        agent_id: who("bob"),
        claim_epoch: epoch,
    }
}

/// Every holder operation with `h`: the refusal codes, in the order extend, release, fail, fulfill.
fn all_ops(c: &Contracts, h: &HolderRef) -> Vec<Option<RefusalCode>> {
    vec![
        c.extend_ttl(h).err().map(|r| r.refusal_code()),
        c.release_contract(h, None).err().map(|r| r.refusal_code()),
        c.fail_contract(h, "x").err().map(|r| r.refusal_code()),
        c.fulfill_contract(
            h,
            &FulfillRequest {
                result_summary: "x".into(),
                ..Default::default()
            },
        )
        .err()
        .map(|r| r.refusal_code()),
    ]
}

#[test]
fn ct158_fenced_out_holders_are_refused_and_change_nothing() {
    for kind in store_kinds() {
        let fx = scenarios::fixture();
        let ts = store(kind, &fx.clock);
        let s = ts.store.clone();
        let c = facade(&s, &fx.fs, false);
        let id = d(&c, &["src/lib.rs"]);
        at(&fx.clock, 1000);
        c.poll_next_task(&who("bob")).unwrap();
        at(&fx.clock, 2000);
        c.release_contract(&holder(&id, Some(1)), None).unwrap();
        // Released, epoch still current: NOT_CLAIMED for every operation.
        let before = s.get(&id).unwrap();
        assert_eq!(
            all_ops(&c, &holder(&id, Some(1))),
            vec![Some(RefusalCode::NotClaimed); 4],
            "{kind}"
        );
        assert_eq!(s.get(&id).unwrap(), before);
        at(&fx.clock, 3000);
        c.poll_next_task(&who("bob")).unwrap();
        // Claimed again: the old epoch is STALE_EPOCH, from the same agent.
        let before = s.get(&id).unwrap();
        assert_eq!(
            all_ops(&c, &holder(&id, Some(1))),
            vec![Some(RefusalCode::StaleEpoch); 4],
            "{kind}"
        );
        assert_eq!(
            all_ops(&c, &holder(&id, Some(3))),
            vec![Some(RefusalCode::StaleEpoch); 4],
            "{kind}"
        );
        assert_eq!(
            s.get(&id).unwrap(),
            before,
            "{kind}: CT-158 refusals change nothing"
        );
        // Strict mode: no epoch, no operation.
        let strict = facade(&s, &fx.fs, true);
        assert_eq!(
            all_ops(&strict, &holder(&id, None)),
            vec![Some(RefusalCode::EpochRequired); 4],
            "{kind}"
        );
        assert_eq!(s.get(&id).unwrap(), before);
        // The lease runs out: LEASE_EXPIRED, except the one late fail report (F2).
        at(&fx.clock, 3000 + 1_800_000);
        let codes = all_ops(&c, &holder(&id, Some(2)));
        assert_eq!(
            codes,
            vec![
                Some(RefusalCode::LeaseExpired),
                Some(RefusalCode::LeaseExpired),
                None,
                Some(RefusalCode::LeaseExpired)
            ],
            "{kind}"
        );
        let after = s.get(&id).unwrap().unwrap();
        assert_eq!(
            (after.status, after.fail_reason.as_deref()),
            (Status::TimedOut, Some("x"))
        );
        assert_eq!(
            all_ops(&c, &holder(&id, Some(2)))[2],
            Some(RefusalCode::AlreadyTerminal),
            "{kind}: F2 once"
        );
    }
}

#[test]
fn ct45_deadlines_are_exclusive_to_the_millisecond() {
    for kind in store_kinds() {
        let fx = scenarios::fixture();
        let ts = store(kind, &fx.clock);
        let s = ts.store.clone();
        let c = facade(&s, &fx.fs, false);
        let id = d(&c, &[]);
        at(&fx.clock, 0);
        c.poll_next_task(&who("bob")).unwrap();
        at(&fx.clock, 1_799_999);
        assert!(
            c.extend_ttl(&holder(&id, Some(1))).is_ok(),
            "{kind}: alive one millisecond before"
        );
        at(&fx.clock, 1_799_999 + 1_800_000);
        assert_eq!(
            c.extend_ttl(&holder(&id, Some(1))).unwrap_err().code(),
            RefusalCode::LeaseExpired,
            "{kind}"
        );
    }
}

/// CT-163: a verification paused in the middle of a file blocks no other thread's dispatch, claim or
/// sweep; CT-68: the fulfill transaction judges the record as it is when it commits.
#[test]
fn ct163_no_file_io_under_a_store_lock() {
    for kind in store_kinds() {
        let fx = scenarios::fixture();
        let ts = store(kind, &fx.clock);
        let s = ts.store.clone();
        let c = Arc::new(facade(&s, &fx.fs, false));
        let c1 = d(&c, &["src/lib.rs"]);
        let hold = fx.fs.hold_reads(Path::new("/w/src/lib.rs"));
        let poller = {
            let c = c.clone();
            std::thread::spawn(move || c.poll_next_task(&who("bob")).unwrap())
        };
        assert!(
            hold.wait_entered(Duration::from_secs(10)),
            "the poll reached the file"
        );
        // While the poll's verification is paused inside the file:
        let c2 = c
            .dispatch(&DispatchRequest {
                target_agent: agent("carol"),
                title: "Docs".into(),
                workspace_root: scenarios::W.into(),
                pointers: Some(vec!["README.md".into()]),
                requester_agent: who("alice"),
                ..dreq()
            })
            .unwrap();
        let claimed = c.poll_next_task(&who("carol")).unwrap();
        assert_eq!(
            claimed.held().unwrap().contract_id,
            c2.contract_id,
            "{kind}: a claim completes"
        );
        c.sweep(instant(T0)).unwrap();
        hold.release();
        assert_eq!(poller.join().unwrap().held().unwrap().contract_id, c1, "{kind}");

        // A fulfill paused in its verification, while the same agent releases the contract: the fulfill
        // transaction finds it SUBMITTED and refuses NOT_CLAIMED (CT-68 step 6).
        let hold = fx.fs.hold_reads(Path::new("/w/src/lib.rs"));
        let fulfiller = {
            let c = c.clone();
            let h = holder(&c1, Some(1));
            std::thread::spawn(move || {
                c.fulfill_contract(
                    &h,
                    &FulfillRequest {
                        result_summary: "done".into(),
                        ..Default::default()
                    },
                )
            })
        };
        assert!(hold.wait_entered(Duration::from_secs(10)));
        c.release_contract(&holder(&c1, Some(1)), Some("handing back"))
            .unwrap();
        hold.release();
        assert_eq!(
            fulfiller.join().unwrap().unwrap_err().code(),
            RefusalCode::NotClaimed,
            "{kind}"
        );
        assert_eq!(s.get(&c1).unwrap().unwrap().status, Status::Submitted);
    }
}

/// CT-130, CT-168: a sweep writes only what is expired at its `now`, re-checked in the statement
/// itself; for SQLite, a sweep that holds the write lock makes a concurrent extend wait and then meet
/// the timed-out contract (the serial outcome).
#[test]
fn ct168_sweeps_never_act_on_stale_reads() {
    for kind in store_kinds() {
        let fx = scenarios::fixture();
        let ts = store(kind, &fx.clock);
        let s = ts.store.clone();
        let c = facade(&s, &fx.fs, false);
        let id = d(&c, &[]);
        at(&fx.clock, 0);
        c.poll_next_task(&who("bob")).unwrap(); // lease ends at T0 + 1_800_000
        // B extends at T0 + 50 (new deadline T0 + 50 + exec), then A's sweep at a `now` past the old
        // deadline but before the new one writes nothing.
        at(&fx.clock, 50);
        c.extend_ttl(&holder(&id, Some(1))).unwrap();
        let r = s.sweep(T0 + 1_800_020, 1000).unwrap();
        assert_eq!(r.claimed_timed_out, 0, "{kind}");
        let rec = s.get(&id).unwrap().unwrap();
        assert_eq!(
            (rec.status, rec.expires_at),
            (Status::Claimed, Some(T0 + 50 + 1_800_000)),
            "{kind}"
        );
        // And after a fulfill the contract stays COMPLETED whatever a later sweep sees.
        c.fulfill_contract(
            &holder(&id, Some(1)),
            &FulfillRequest {
                result_summary: "ok".into(),
                ..Default::default()
            },
        )
        .unwrap();
        s.sweep(T0 + 10 * 1_800_000, 1000).unwrap();
        assert_eq!(s.get(&id).unwrap().unwrap().status, Status::Completed, "{kind}");
    }
}

#[test]
fn ct168_sqlite_sweep_holding_the_lock_serialises_a_concurrent_extend() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.db");
    let fx = scenarios::fixture();
    let s: Arc<dyn Store> = Arc::new(
        shiftwork_contracts::SqliteStore::open(
            &path,
            shiftwork_contracts::SqliteOptions::default(),
            Arc::new(fx.clock.clone()),
            &shiftwork_seams::OsFs,
        )
        .unwrap(),
    );
    let c = Arc::new(facade(&s, &fx.fs, false));
    let id = d(&c, &[]);
    at(&fx.clock, 0);
    c.poll_next_task(&who("bob")).unwrap();
    // Connection A: take the write lock, read the lease as expired at T0 + 1_800_200.
    let mut a = rusqlite::Connection::open(&path).unwrap();
    let tx = a
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .unwrap();
    let expires: i64 = tx
        .query_row(
            "SELECT expires_at FROM contracts WHERE contract_id = ?1",
            [id.as_str()],
            |r| r.get(0),
        )
        .unwrap();
    assert!(expires <= T0 + 1_800_200, "A reads the lease as expired");
    // Connection B, at T0 + 50, tries to extend: it waits for A's lock.
    at(&fx.clock, 50);
    let b = {
        let (c, id) = (c.clone(), id.clone());
        std::thread::spawn(move || c.extend_ttl(&holder(&id, Some(1))))
    };
    std::thread::sleep(Duration::from_millis(200));
    assert!(!b.is_finished(), "B waits for A's write lock");
    tx.execute(
        "UPDATE contracts SET status = 'TIMED_OUT', end_reason = 'EXEC_TTL_EXPIRED', completed_at = expires_at
          WHERE status = 'CLAIMED' AND expires_at <= ?1",
        [T0 + 1_800_200],
    )
    .unwrap();
    tx.commit().unwrap();
    // B then meets the timed-out contract: the correct serial outcome.
    assert_eq!(b.join().unwrap().unwrap_err().code(), RefusalCode::LeaseExpired);
    assert!(s.check_integrity().unwrap().is_clean());
}
