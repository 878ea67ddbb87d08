//! Issue 36 item 5: finished contracts are kept for a configurable time (7 days by default) and
//! purged in small batches, by hand (`purge_finished`) or in the background; inspect says how long
//! they are kept. The purge keeps CT-78's rules: only terminal records, by `completed_at`, at most
//! 1,000 a transaction, and the idempotency keys of deleted records are free again. Every store.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use shiftwork_contracts::{
    ConfigError, Contracts, ContractsConfig, DispatchRequest, FulfillRequest, SeededIdSource, Status,
    parse_retention,
};

use crate::scenarios;
use crate::support::{TestStore, every_record, store, store_kinds, who};

const DAY: Duration = Duration::from_secs(86_400);

fn facade(
    s: &TestStore,
    fs: &shiftwork_seams::MemFs,
    config: ContractsConfig,
    background: bool,
) -> Contracts {
    Contracts::builder(s.store.clone())
        .fs(Arc::new(fs.clone()))
        .ids(Arc::new(SeededIdSource::new(3)))
        .config(config)
        .purge_in_background(background)
        .build()
}

fn config(retention: Option<Duration>) -> ContractsConfig {
    crate::support::config(false)
        .to_builder()
        .finished_retention(retention)
        .build()
        .unwrap()
}

/// Issue 36 item 5: the retention's bounds in the configuration and in the text a person writes.
#[test]
fn issue36_item5_retention_is_configured_within_bounds() {
    assert_eq!(ContractsConfig::default().finished_retention(), Some(7 * DAY));
    let check = |given: Option<Duration>, expected: Result<Option<Duration>, ConfigError>| {
        let built = ContractsConfig::builder().finished_retention(given).build();
        assert_eq!(built.map(|c| c.finished_retention()), expected, "{given:?}");
    };
    let s = Duration::from_secs;
    check(None, Ok(None));
    check(Some(s(60)), Ok(Some(s(60))));
    check(Some(DAY), Ok(Some(DAY)));
    check(Some(s(59)), Err(ConfigError::FinishedRetention { given: s(59) }));
    let half = Duration::from_millis(90_500);
    check(Some(half), Err(ConfigError::FinishedRetention { given: half }));

    let read = |text: &str, expected: Option<Option<Duration>>| {
        assert_eq!(parse_retention(text).ok(), expected, "{text:?}");
    };
    read("7d", Some(Some(7 * DAY)));
    read("24h", Some(Some(DAY)));
    read(" 90M ", Some(Some(s(5400))));
    read("3600", Some(Some(s(3600))));
    read("3600s", Some(Some(s(3600))));
    read("forever", Some(None));
    read("FOREVER", Some(None));
    for bad in [
        "",
        "30",
        "59s",
        "1w",
        "7 d",
        "-7d",
        "d",
        "7dd",
        "1.5h",
        "99999999999999999999d",
        "36500000d",
    ] {
        read(bad, None);
    }
    let e = parse_retention("1w\u{1b}[31m").unwrap_err().to_string();
    assert!(
        e.contains("'1w\\u{1b}[31m'") || !e.contains('\u{1b}'),
        "no control character echoed: {e}"
    );
    assert!(e.contains("7d") && e.contains("forever"), "{e}");
}

/// Issue 36 item 5 (CT-78's rules kept): a purge step deletes only finished contracts that ended
/// longer ago than the retention, at most 100 a step, and frees their idempotency keys; waiting and
/// held contracts stay, whatever their age.
#[test]
fn issue36_item5_purge_finished_deletes_only_finished_contracts_past_retention() {
    for kind in store_kinds() {
        let fx = scenarios::fixture();
        let s = store(kind, &fx.clock);
        let c = facade(&s, &fx.fs, config(Some(DAY)), false);
        let send = |title: &str, key: Option<&str>| {
            let mut req = DispatchRequest::new(who("alice"), who("bob"), title, "/w");
            if let Some(k) = key {
                req = req.idempotency_key(k);
            }
            c.dispatch(&req).unwrap().contract_id
        };
        // 120 completed, one failed, one cancelled (the first with a key), one held, one waiting.
        let keyed = send("keyed", Some("k1"));
        let held = c.poll_next_task(&who("bob")).unwrap();
        c.fulfill_contract(&held.held().unwrap().holder(), &FulfillRequest::new("done"))
            .unwrap();
        for i in 0..119 {
            send(&format!("job {i}"), None);
            let h = c.poll_next_task(&who("bob")).unwrap();
            c.fulfill_contract(&h.held().unwrap().holder(), &FulfillRequest::new("done"))
                .unwrap();
        }
        send("to fail", None);
        let h = c.poll_next_task(&who("bob")).unwrap();
        c.fail_contract(&h.held().unwrap().holder(), "no").unwrap();
        let cancelled = send("to cancel", None);
        c.cancel(&cancelled, &who("alice"), "not needed").unwrap();
        fx.clock.advance(Duration::from_secs(3600));
        let still_held = send("held", None);
        let h = c.poll_next_task(&who("bob")).unwrap();
        assert_eq!(h.held().unwrap().contract_id, still_held);
        let waiting = send("waiting", None);
        assert_eq!(every_record(s.store.as_ref()).len(), 124, "{kind}");

        // Not yet a day since they ended: nothing goes.
        fx.clock.advance(Duration::from_secs(22 * 3600));
        assert_eq!(c.purge_finished().unwrap(), 0, "{kind}");
        // A day later: the 122 finished ones go, 100 then 22; the live ones stay.
        fx.clock.advance(Duration::from_secs(2 * 3600));
        assert_eq!(
            c.purge_finished().unwrap(),
            100,
            "{kind}: one step deletes at most 100"
        );
        assert_eq!(c.purge_finished().unwrap(), 22, "{kind}");
        assert_eq!(c.purge_finished().unwrap(), 0, "{kind}");
        let left: Vec<_> = every_record(s.store.as_ref())
            .into_iter()
            .map(|r| (r.contract_id, r.status))
            .collect();
        // Newest first.
        assert_eq!(
            left,
            vec![(waiting, Status::Submitted), (still_held, Status::Claimed)],
            "{kind}"
        );
        // The key of a deleted contract is free again: a new dispatch under it is a new contract.
        let again = send("keyed", Some("k1"));
        assert_ne!(again, keyed, "{kind}");
    }
}

/// Issue 36 item 5: with the retention off nothing is ever purged by it.
#[test]
fn issue36_item5_no_retention_keeps_everything() {
    for kind in store_kinds() {
        let fx = scenarios::fixture();
        let s = store(kind, &fx.clock);
        let c = facade(&s, &fx.fs, config(None), false);
        c.dispatch(&DispatchRequest::new(who("alice"), who("bob"), "t", "/w"))
            .unwrap();
        let h = c.poll_next_task(&who("bob")).unwrap();
        c.fulfill_contract(&h.held().unwrap().holder(), &FulfillRequest::new("done"))
            .unwrap();
        fx.clock.advance(3650 * DAY);
        assert_eq!(c.purge_finished().unwrap(), 0, "{kind}");
        assert_eq!(every_record(s.store.as_ref()).len(), 1, "{kind}");
    }
}

/// Issue 36 item 5: the background purge runs on the facade's clock: nothing while the finished
/// contract is younger than the retention, gone once the clock passes it; dropping the facade stops
/// the thread.
#[test]
fn issue36_item5_the_background_purge_runs_on_the_clock() {
    for kind in store_kinds() {
        let fx = scenarios::fixture();
        let s = store(kind, &fx.clock);
        let c = facade(&s, &fx.fs, config(Some(DAY)), true);
        let sent = c
            .dispatch(&DispatchRequest::new(who("alice"), who("bob"), "t", "/w"))
            .unwrap()
            .contract_id;
        let h = c.poll_next_task(&who("bob")).unwrap();
        c.fulfill_contract(&h.held().unwrap().holder(), &FulfillRequest::new("done"))
            .unwrap();
        // The first purge runs a second after the start: the contract is young and stays.
        while fx.clock.waiters() == 0 {
            std::thread::yield_now();
        }
        fx.clock.advance(Duration::from_secs(2));
        while fx.clock.waiters() == 0 {
            std::thread::yield_now();
        }
        assert!(s.store.get(&sent).unwrap().is_some(), "{kind}");
        // Past the retention, the next period purges it.
        fx.clock.advance(2 * DAY);
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while s.store.get(&sent).unwrap().is_some() {
            assert!(
                std::time::Instant::now() < deadline,
                "{kind}: the background purge never ran"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        drop(c);
        assert_eq!(
            fx.clock.waiters(),
            0,
            "{kind}: the purge thread stopped with its facade"
        );
    }
}

/// Issue 36 item 5: `inspect_mesh_state` says how long finished contracts are kept.
#[test]
fn issue36_item5_inspect_says_how_long_finished_contracts_are_kept() {
    let check = |retention: Option<Duration>, expected: serde_json::Value| {
        let fx = scenarios::fixture();
        let s = store("memory", &fx.clock);
        let c = facade(&s, &fx.fs, config(retention), false);
        let answer = shiftwork_contracts::args::call(
            &c,
            "inspect_mesh_state",
            json!({}).as_object().unwrap(),
            &Default::default(),
        );
        assert_eq!(answer["finished_kept_sec"], expected, "{retention:?}");
    };
    check(Some(7 * DAY), json!(604_800));
    check(Some(Duration::from_secs(3600)), json!(3600));
    check(None, json!(null));
}
