//! PostgreSQL-only tests (issue 8; CT-146 … CT-154). The shared suites (acceptance scenarios,
//! the model-based test, fencing) run against `PgStore` through `support::store_kinds`; this module
//! adds the tests only PostgreSQL has: CT-154's locked row that a claim skips at once, the lock
//! timeout answered `STORE_BUSY` (CT-152), migration and schema versions (CT-147), the server clock
//! (CT-148), many threads and processes on one database (CT-165, CT-166), and the database restarting
//! in the middle of a run. Each test works in a schema of its own and drops it. Without
//! `SHIFTWORK_TEST_POSTGRES_URL` they report that they were skipped.

use crate::support::postgres_url;

#[test]
fn pg_tests_run_or_say_they_were_skipped() {
    match postgres_url() {
        Some(_) => eprintln!("PostgreSQL tests run against SHIFTWORK_TEST_POSTGRES_URL"),
        None => eprintln!("PostgreSQL tests skipped: SHIFTWORK_TEST_POSTGRES_URL is not set"),
    }
}

#[cfg(feature = "postgres")]
mod with_server {
    use std::collections::HashSet;
    use std::sync::Arc;
    use std::time::Duration;

    use postgres::{Client, NoTls};
    use shiftwork_contracts::{PgOptions, PgStore, RefusalCode, Status, Store, StoreError};
    use shiftwork_seams::{Clock, ManualClock};

    use crate::concurrency::{AGENTS, check_history, clock_at, dispatch, facade};
    use crate::scenarios::T0;
    use crate::support::{fresh_schema, pg_store, postgres_url, who};

    /// A store in a fresh schema, dropped when the guard goes.
    struct Pg {
        store: Arc<PgStore>,
        schema: String,
        _gate: Gate,
    }

    enum Gate {
        Shared(#[allow(dead_code)] std::sync::RwLockReadGuard<'static, ()>),
        Alone(#[allow(dead_code)] std::sync::RwLockWriteGuard<'static, ()>),
    }

    impl Drop for Pg {
        fn drop(&mut self) {
            let _ = self.store.drop_schema();
        }
    }

    fn pg(clock: &ManualClock) -> Option<Pg> {
        postgres_url()?;
        let gate = Gate::Shared(crate::support::pg_shared());
        let schema = fresh_schema();
        Some(Pg {
            store: Arc::new(pg_store(Arc::new(clock.clone()), &schema)),
            schema,
            _gate: gate,
        })
    }

    /// Like [`pg`], with the server to itself (no other test runs against it meanwhile).
    fn pg_alone(clock: &ManualClock) -> Option<Pg> {
        postgres_url()?;
        let gate = Gate::Alone(
            crate::support::PG_GATE
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        let schema = fresh_schema();
        Some(Pg {
            store: Arc::new(pg_store(Arc::new(clock.clone()), &schema)),
            schema,
            _gate: gate,
        })
    }

    fn raw(schema: &str) -> Client {
        let mut c = Client::connect(&postgres_url().unwrap(), NoTls).unwrap();
        c.batch_execute(&format!("SET search_path = \"{schema}\""))
            .unwrap();
        c
    }

    /// CT-154: the oldest eligible row is locked by an open transaction on another connection; a
    /// claim returns the next row at once, neither waiting for the lock nor returning the locked row.
    #[test]
    fn ct154_a_claim_skips_a_locked_row_at_once() {
        let clock = clock_at(T0);
        let Some(p) = pg(&clock) else { return };
        let c = facade(p.store.clone(), 1);
        let first = dispatch(&c, "bob", 1);
        let second = dispatch(&c, "bob", 2);
        let mut other = raw(&p.schema);
        let mut tx = other.transaction().unwrap();
        let locked: String = tx
            .query_one(
                "SELECT contract_id FROM contracts WHERE status = 'SUBMITTED' AND target_agent = 'bob'
                  ORDER BY queued_at, seq LIMIT 1 FOR UPDATE",
                &[],
            )
            .unwrap()
            .get(0);
        assert_eq!(locked, first);
        // While the lock is held (a blocked claim would end in the 5 s lock timeout, STORE_BUSY):
        let claimed = p
            .store
            .claim_next(&shiftwork_contracts::AgentId::new("bob").unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(
            claimed.contract_id, second,
            "CT-150: the oldest row not locked by another claim"
        );
        tx.rollback().unwrap();
        // Sequentially, the order is exactly CT-50's.
        let next = p
            .store
            .claim_next(&shiftwork_contracts::AgentId::new("bob").unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(next.contract_id, first);
    }

    /// CT-152: a holder operation that cannot get its row lock in time answers STORE_BUSY and
    /// changes nothing.
    #[test]
    fn ct152_lock_timeout_is_store_busy() {
        let clock = clock_at(T0);
        let Some(p) = pg(&clock) else { return };
        let c = facade(p.store.clone(), 1);
        let id = crate::support::cid(&dispatch(&c, "bob", 1));
        c.poll_next_task(&who("bob")).unwrap();
        let before = p.store.get(&id).unwrap();
        let mut other = raw(&p.schema);
        let mut tx = other.transaction().unwrap();
        tx.execute(
            "SELECT 1 FROM contracts WHERE contract_id = $1 FOR UPDATE",
            &[&id.as_str()],
        )
        .unwrap();
        let r = c
            .extend_ttl(&shiftwork_contracts::HolderRef {
                contract_id: id.clone(),
                agent_id: who("bob"),
                claim_epoch: Some(1),
            })
            .unwrap_err();
        assert_eq!(r.code(), RefusalCode::StoreBusy);
        assert_eq!(r.details().to_json(), serde_json::json!({}));
        tx.rollback().unwrap();
        assert_eq!(p.store.get(&id).unwrap(), before);
        assert!(
            c.extend_ttl(&shiftwork_contracts::HolderRef {
                contract_id: id,
                agent_id: who("bob"),
                claim_epoch: Some(1)
            })
            .is_ok()
        );
    }

    /// CT-147: migration under an advisory lock, idempotent; a newer schema version is refused.
    #[test]
    fn ct147_migration_and_schema_versions() {
        let clock = clock_at(T0);
        let Some(p) = pg(&clock) else { return };
        // Concurrent first opens of a new schema: the advisory lock makes exactly one create it.
        let schema = fresh_schema();
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let (schema, clock) = (schema.clone(), clock.clone());
                std::thread::spawn(move || pg_store(Arc::new(clock), &schema))
            })
            .collect();
        let stores: Vec<PgStore> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert!(stores[0].check_integrity().unwrap().is_clean());
        stores[0].drop_schema().unwrap();
        // A newer version is refused, the schema left untouched (this build's is 2, CT-191).
        raw(&p.schema)
            .execute(
                "UPDATE contracts_meta SET value = '3' WHERE key = 'schema_version'",
                &[],
            )
            .unwrap();
        let options = PgOptions {
            schema: Some(p.schema.clone()),
            ..PgOptions::default()
        };
        match PgStore::connect(&postgres_url().unwrap(), options) {
            Err(StoreError::Unavailable { reason: why, .. }) => assert!(why.contains("newer"), "{why}"),
            other => panic!("expected Unavailable, got {:?}", other.map(|_| ())),
        }
        raw(&p.schema)
            .execute(
                "UPDATE contracts_meta SET value = '2' WHERE key = 'schema_version'",
                &[],
            )
            .unwrap();
        // An unreachable server is STORE_UNAVAILABLE, with no path or password in the message.
        let bad = PgOptions {
            connect_timeout: Duration::from_secs(2),
            ..PgOptions::default()
        };
        match PgStore::connect(
            "postgresql://nobody:secret@localhost/x?host=/nonexistent-socket-dir",
            bad,
        ) {
            Err(StoreError::Unavailable { reason: why, .. }) => {
                assert!(!why.contains("secret") && !why.contains("nonexistent"), "{why}")
            }
            other => panic!("expected Unavailable, got {:?}", other.map(|_| ())),
        }
    }

    /// Issue 27 item 10 on PostgreSQL: a store whose tables carry a trigger (a dispatch to bob
    /// stored for mallory), a rule, a row security policy or row security is refused by name, and its
    /// records stay as they were; without them it opens.
    #[test]
    fn issue27_a_pg_store_carrying_objects_it_did_not_create_is_refused() {
        let clock = clock_at(T0);
        let Some(p) = pg(&clock) else { return };
        let c = facade(p.store.clone(), 1);
        dispatch(&c, "bob", 1);
        let rows = |schema: &str| -> i64 {
            raw(schema)
                .query_one("SELECT count(*) FROM contracts", &[])
                .unwrap()
                .get(0)
        };
        for (name, plant, remove) in [
            (
                "to_mallory",
                "CREATE FUNCTION to_mallory() RETURNS trigger LANGUAGE plpgsql AS
                   $$ BEGIN NEW.target_agent := 'mallory'; RETURN NEW; END $$;
                 CREATE TRIGGER to_mallory BEFORE INSERT ON contracts FOR EACH ROW EXECUTE FUNCTION to_mallory()",
                "DROP TRIGGER to_mallory ON contracts; DROP FUNCTION to_mallory()",
            ),
            (
                "hide",
                "CREATE RULE hide AS ON UPDATE TO contracts WHERE NEW.status = 'CLAIMED' DO INSTEAD NOTHING",
                "DROP RULE hide ON contracts",
            ),
            (
                "only_some",
                "CREATE POLICY only_some ON contracts USING (target_agent <> 'bob')",
                "DROP POLICY only_some ON contracts",
            ),
            (
                "row level security",
                "ALTER TABLE contracts ENABLE ROW LEVEL SECURITY",
                "ALTER TABLE contracts DISABLE ROW LEVEL SECURITY",
            ),
        ] {
            raw(&p.schema).batch_execute(plant).unwrap();
            let options = PgOptions {
                schema: Some(p.schema.clone()),
                clock: Some(Arc::new(clock.clone())),
                ..PgOptions::default()
            };
            match PgStore::connect(&postgres_url().unwrap(), options) {
                Err(StoreError::Unavailable { reason: why, .. }) => {
                    assert!(why.contains(&format!("'{name}'")), "{name}: {why}");
                    assert!(why.contains("does not define"), "{name}: {why}");
                }
                other => panic!("{name}: expected Unavailable, got {:?}", other.map(|_| ())),
            }
            assert_eq!(rows(&p.schema), 1, "{name}: the records stay");
            raw(&p.schema).batch_execute(remove).unwrap();
        }
        let options = PgOptions {
            schema: Some(p.schema.clone()),
            clock: Some(Arc::new(clock.clone())),
            ..PgOptions::default()
        };
        assert!(PgStore::connect(&postgres_url().unwrap(), options).is_ok());
    }

    /// CT-148: by default the store judges by the server's clock.
    #[test]
    fn ct148_server_clock_by_default() {
        let clock = clock_at(T0);
        let Some(p) = pg(&clock) else { return };
        let options = PgOptions {
            schema: Some(p.schema.clone()),
            ..PgOptions::default()
        };
        let store = Arc::new(PgStore::connect(&postgres_url().unwrap(), options).unwrap());
        let server = store.server_clock();
        let local = shiftwork_seams::SystemClock::new().now();
        let seen = server.now();
        // Same host in the tests: the server's reading is the wall clock, not the manual T0.
        assert!((seen - local).num_seconds().abs() < 3600, "{seen} vs {local}");
        let fs_root = shiftwork_seams::MemFs::new();
        fs_root.make_dirs("/w");
        let c = shiftwork_contracts::Contracts::builder(store.clone())
            .fs(Arc::new(fs_root))
            .ids(Arc::new(shiftwork_contracts::OsIdSource))
            .config(crate::support::config(false))
            .build();
        let id = crate::support::cid(&dispatch(&c, "bob", 1));
        let rec = store.get(&id).unwrap().unwrap();
        assert!((rec.created_at - local.timestamp_millis()).abs() < 3_600_000);
    }

    /// CT-165 on PostgreSQL: 8 threads with their own connections and a dispatching thread.
    #[test]
    fn ct165_threads_on_postgres() {
        let clock = clock_at(T0);
        let Some(p) = pg(&clock) else { return };
        let seed = facade(p.store.clone(), 1);
        let mut dispatched: HashSet<String> = (0..1500).map(|n| dispatch(&seed, AGENTS[n % 3], n)).collect();
        let barrier = Arc::new(std::sync::Barrier::new(9));
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let dispatcher = {
            let (clock, barrier, schema) = (clock.clone(), barrier.clone(), p.schema.clone());
            std::thread::spawn(move || {
                let c = facade(Arc::new(pg_store(Arc::new(clock.clone()), &schema)), 2);
                barrier.wait();
                (0..300)
                    .map(|n| dispatch(&c, AGENTS[n % 3], 5000 + n))
                    .collect::<Vec<_>>()
            })
        };
        let pollers: Vec<_> = (0..8)
            .map(|i| {
                let (clock, barrier, done, schema) =
                    (clock.clone(), barrier.clone(), done.clone(), p.schema.clone());
                std::thread::spawn(move || {
                    let options = PgOptions {
                        schema: Some(schema),
                        clock: Some(Arc::new(clock.clone())),
                        pool_size: 1,
                        ..PgOptions::default()
                    };
                    let c = facade(
                        Arc::new(PgStore::connect(&postgres_url().unwrap(), options).unwrap()),
                        10 + i,
                    );
                    let mut claims = Vec::new();
                    barrier.wait();
                    loop {
                        match c.poll_next_task(&who(AGENTS[i as usize % 3])) {
                            Ok(r) => match r.held() {
                                Some(h) => claims.push((h.contract_id.to_string(), h.claim_epoch)),
                                None if done.load(std::sync::atomic::Ordering::SeqCst) => break,
                                None => std::thread::yield_now(),
                            },
                            Err(r) if r.code() == RefusalCode::StoreBusy => {}
                            Err(r) => panic!("{r}"),
                        }
                    }
                    claims
                })
            })
            .collect();
        dispatched.extend(dispatcher.join().unwrap());
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        let claims: Vec<(String, u64)> = pollers.into_iter().flat_map(|h| h.join().unwrap()).collect();
        check_history(p.store.as_ref(), &dispatched, &claims);
    }

    /// CT-166 on PostgreSQL: 16 processes claiming from one database.
    #[test]
    fn ct166_sixteen_processes_on_postgres() {
        let clock = clock_at(T0);
        let Some(p) = pg(&clock) else { return };
        let (claims, busy, elapsed) = crate::concurrency::run_processes_on(
            p.store.clone(),
            &postgres_url().unwrap(),
            Some(&p.schema),
            16,
            2000,
            5000,
        );
        eprintln!(
            "CT-166 PostgreSQL: 16 processes claimed {claims} contracts in {elapsed:?} ({busy} STORE_BUSY)"
        );
    }

    /// The database restarts in the middle of a run: calls in flight or on a dead connection answer
    /// STORE_UNAVAILABLE (nothing half-done), the pool reconnects on the next call, and afterwards no
    /// contract is lost or claimed twice.
    #[test]
    fn pg_database_restart_in_the_middle_of_a_run() {
        let clock = clock_at(T0);
        let Some(p) = pg_alone(&clock) else { return };
        let Ok(restart) = std::env::var("SHIFTWORK_TEST_POSTGRES_RESTART") else {
            assert!(
                std::env::var("SHIFTWORK_REQUIRE_POSTGRES").map_or(true, |v| v != "1"),
                "SHIFTWORK_TEST_POSTGRES_RESTART must be set in CI"
            );
            eprintln!("restart test skipped: SHIFTWORK_TEST_POSTGRES_RESTART is not set");
            return;
        };
        let c = Arc::new(facade(p.store.clone(), 1));
        let dispatched: HashSet<String> = (0..600).map(|n| dispatch(&c, "bob", n)).collect();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let poller = {
            let (c, stop) = (c.clone(), stop.clone());
            std::thread::spawn(move || {
                let (mut claims, mut unavailable, mut busy) = (Vec::new(), 0u32, 0u32);
                let mut recovered_after_error = false;
                loop {
                    match c.poll_next_task(&who("bob")) {
                        Ok(r) => match r.held() {
                            Some(h) => {
                                recovered_after_error |= unavailable > 0;
                                claims.push((h.contract_id.to_string(), h.claim_epoch));
                                std::thread::sleep(Duration::from_millis(2));
                            }
                            None if stop.load(std::sync::atomic::Ordering::SeqCst) => break,
                            None => std::thread::sleep(Duration::from_millis(5)),
                        },
                        Err(r) if r.code() == RefusalCode::StoreUnavailable => {
                            unavailable += 1;
                            std::thread::sleep(Duration::from_millis(50));
                        }
                        Err(r) if r.code() == RefusalCode::StoreBusy => busy += 1,
                        Err(r) => panic!("unexpected refusal during the restart: {r}"),
                    }
                }
                (claims, unavailable, busy, recovered_after_error)
            })
        };
        std::thread::sleep(Duration::from_millis(300));
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(&restart)
            .status()
            .unwrap();
        assert!(status.success(), "the restart command failed");
        std::thread::sleep(Duration::from_millis(500));
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let (claims, unavailable, busy, recovered) = poller.join().unwrap();
        eprintln!(
            "restart mid-run: {} claims, {unavailable} STORE_UNAVAILABLE answers while the server restarted, {busy} STORE_BUSY, recovered: {recovered}",
            claims.len()
        );
        assert!(
            unavailable >= 1,
            "the lost connection is answered STORE_UNAVAILABLE"
        );
        assert!(
            recovered,
            "the pool reconnected and claims went on after the restart"
        );
        // No contract lost or claimed twice; a claim whose reply was lost stays CLAIMED until its
        // lease ends (CT-66), so only contracts not reported may be CLAIMED without a poll.
        let records = crate::support::every_record(p.store.as_ref());
        assert_eq!(records.len(), dispatched.len());
        let mut seen = HashSet::new();
        for (id, epoch) in &claims {
            assert!(seen.insert(id.clone()), "{id} claimed twice");
            assert_eq!(*epoch, 1);
        }
        for r in &records {
            assert!(dispatched.contains(r.contract_id.as_str()));
            assert_eq!(r.status, Status::Claimed, "every contract was claimed once");
        }
        let orphaned = records.len() - claims.len();
        eprintln!(
            "restart mid-run: {orphaned} claim(s) committed whose reply was lost (CLAIMED until the lease ends)"
        );
        assert!(p.store.check_integrity().unwrap().is_clean());
    }
}
