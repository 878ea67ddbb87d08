//! The contracts store, read into a [`ContractsPane`] through `shiftwork-contracts`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use shiftwork_contracts::model::EpochMs;
use shiftwork_contracts::store::{Counts, ListQuery};
use shiftwork_contracts::{AgentId, Contract, ContractId, Status, Store, StoreError};
use shiftwork_seams::{Clock, Fs};

use crate::display_text::{clean, clean_text};
use crate::snapshot::{
    Claimed, ContractRecord, Contracts, ContractsPane, Ended, RECORD_POINTERS_SHOWN, StatusCount, Tone,
    Waiting,
};

/// The claimed contracts kept in a snapshot: the soonest to expire.
pub const CLAIMED_SHOWN: usize = 500;
/// The waiting contracts kept in a snapshot: the oldest by queueing time.
pub const WAITING_SHOWN: usize = 20;
/// How many records one read of the store returns while the claimed and waiting contracts are looked
/// through. The store lists newest first (by `seq`), and neither the soonest lease end nor the oldest
/// queueing time follows that order (a contract put back in the queue keeps its `seq`), so every
/// claimed and every waiting contract is looked at, a page at a time, keeping only the ones shown.
pub const READ_PAGE: usize = 1_000;
/// The ended contracts kept in a snapshot.
pub const ENDED_SHOWN: usize = 20;

/// Where a contracts store is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreLocation {
    /// A SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL URL.
    Postgres(String),
}

impl StoreLocation {
    /// The location as the view shows it: the path, or the URL without its password.
    ///
    /// ```
    /// use shiftwork_watch::gather::StoreLocation;
    /// let pg = StoreLocation::Postgres("postgres://me:secret@db.example/agents".into());
    /// assert_eq!(pg.shown(), "postgres://me@db.example/agents");
    /// ```
    pub fn shown(&self) -> String {
        match self {
            StoreLocation::Sqlite(path) => clean_text(&path.to_string_lossy()),
            StoreLocation::Postgres(url) => clean_text(&without_password(url)),
        }
    }

    /// The files whose changes may change what the store holds (a SQLite file and its write-ahead
    /// log); none for a server.
    pub fn files(&self) -> Vec<PathBuf> {
        match self {
            StoreLocation::Sqlite(path) => {
                let mut wal = path.as_os_str().to_owned();
                wal.push("-wal");
                vec![path.clone(), PathBuf::from(wal)]
            }
            StoreLocation::Postgres(_) => Vec::new(),
        }
    }
}

/// A URL with the password of its user information removed.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((user_info, host)) => {
            let user = user_info.split_once(':').map_or(user_info, |(u, _)| u);
            format!("{scheme}://{user}@{host}{tail}")
        }
        None => url.to_owned(),
    }
}

/// Reads a contracts store, opening it on first use; never writes a contract.
///
/// A SQLite file is opened only once it exists and holds a contracts database (so the view never
/// creates or initialises a store); until then the pane says what it waits for.
pub struct ContractsReader {
    location: Option<StoreLocation>,
    shown: String,
    store: Option<Arc<dyn Store>>,
    clock: Arc<dyn Clock>,
    agent: Option<AgentId>,
}

impl std::fmt::Debug for ContractsReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContractsReader")
            .field("store", &self.shown)
            .field("agent", &self.agent)
            .finish_non_exhaustive()
    }
}

impl ContractsReader {
    /// A reader of the store at `location`, showing the contracts of `agent` (as target or requester),
    /// or all when `None`.
    pub fn new(location: StoreLocation, agent: Option<AgentId>, clock: Arc<dyn Clock>) -> Self {
        ContractsReader {
            shown: location.shown(),
            location: Some(location),
            store: None,
            clock,
            agent,
        }
    }

    /// A reader of an open store (an embedder's, or a test's `MemoryStore`), shown as `shown`.
    pub fn over(store: Arc<dyn Store>, shown: &str, agent: Option<AgentId>, clock: Arc<dyn Clock>) -> Self {
        ContractsReader {
            shown: clean_text(shown),
            location: None,
            store: Some(store),
            clock,
            agent,
        }
    }

    /// The store's location, when the reader opens it itself.
    pub fn location(&self) -> Option<&StoreLocation> {
        self.location.as_ref()
    }

    /// The pane before the first read.
    pub fn placeholder(&self) -> ContractsPane {
        ContractsPane {
            store: self.shown.clone(),
            agent: self.agent.as_ref().map(|a| a.as_str().to_owned()),
            body: Err(String::from("reading the store…")),
        }
    }

    /// Reads the pane now. A SQLite store that does not exist yet reads as an empty queue, with a
    /// note saying so (the reading tools answer the same); the file is waited for.
    pub fn read(&mut self, fs: &dyn Fs) -> ContractsPane {
        let now = shiftwork_contracts::store::epoch_ms(self.clock.as_ref());
        let opened = self.opened(fs);
        let agent = self.agent.as_ref();
        let body = match opened {
            Ok(Some(store)) => read_store(store.as_ref(), agent, now).map_err(|e| clean_text(&e.to_string())),
            Ok(None) => {
                let empty = shiftwork_contracts::MemoryStore::new(self.clock.clone());
                read_store(&empty, agent, now)
                    .map(|c| Contracts {
                        note: Some(format!(
                            "no contracts store at {} yet; the first call that writes creates it",
                            self.shown
                        )),
                        ..c
                    })
                    .map_err(|e| clean_text(&e.to_string()))
            }
            Err(sentence) => Err(sentence),
        };
        ContractsPane {
            store: self.shown.clone(),
            agent: agent.map(|a| a.as_str().to_owned()),
            body,
        }
    }

    /// The store, opened read-only on first use as [`ContractsReader::read`] opens it (never created,
    /// initialised or written), for a reader that asks it more than the pane shows (one contract as
    /// the contracts tools answer it); `None` while a SQLite file does not exist yet, and the pane's
    /// sentence when it cannot be opened.
    pub fn store(&mut self, fs: &dyn Fs) -> Result<Option<Arc<dyn Store>>, String> {
        self.opened(fs)
    }

    /// The contract `id` in full ([`ContractRecord`]), `Ok(None)` when the store holds no such
    /// contract (or `id` is not a contract id); the sentence saying why when the store cannot be read.
    /// Like every read of the reader it writes nothing. A reader limited to one agent answers only the
    /// contracts that agent dispatched or holds.
    pub fn record(&mut self, fs: &dyn Fs, id: &str) -> Result<Option<ContractRecord>, String> {
        let Ok(id) = ContractId::parse(id) else {
            return Ok(None);
        };
        let Some(store) = self.opened(fs)? else {
            return Ok(None);
        };
        let now = shiftwork_contracts::store::epoch_ms(self.clock.as_ref());
        let found = store.get(&id).map_err(|e| clean_text(&e.to_string()))?;
        Ok(found
            .filter(|c| {
                self.agent
                    .as_ref()
                    .is_none_or(|a| c.target_agent == *a || c.requester_agent == *a)
            })
            .map(|c| record_of(&c, now)))
    }

    /// The store, opened on first use; `None` while a SQLite file does not exist yet.
    fn opened(&mut self, fs: &dyn Fs) -> Result<Option<Arc<dyn Store>>, String> {
        if let Some(store) = &self.store {
            return Ok(Some(store.clone()));
        }
        let store = match &self.location {
            Some(StoreLocation::Sqlite(path)) => match open_sqlite(fs, path, self.clock.clone())? {
                Some(store) => store,
                None => return Ok(None),
            },
            Some(StoreLocation::Postgres(url)) => open_postgres(url)?,
            None => return Err(String::from("no contracts store")),
        };
        self.store = Some(store.clone());
        Ok(Some(store))
    }
}

/// Opens an existing SQLite contracts database for reading only: never created, initialised, upgraded
/// or written ([`shiftwork_contracts::SqliteStore::open_read_only`]); `None` for a missing file, which
/// is waited for.
fn open_sqlite(fs: &dyn Fs, path: &Path, clock: Arc<dyn Clock>) -> Result<Option<Arc<dyn Store>>, String> {
    let shown = clean_text(&path.to_string_lossy());
    match fs.metadata(path) {
        Ok(meta) if meta.kind == shiftwork_seams::FileKind::File => {}
        Ok(_) => return Err(format!("{shown} is not a regular file")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(format!(
                "{shown} cannot be read: {}",
                shiftwork_seams::os_reason(&e)
            ));
        }
    }
    let options = shiftwork_contracts::SqliteOptions {
        pool_size: 1,
        ..shiftwork_contracts::SqliteOptions::default()
    };
    shiftwork_contracts::SqliteStore::open_read_only(path, options, clock, fs)
        .map(|s| Some(Arc::new(s) as Arc<dyn Store>))
        .map_err(|e| clean_text(&format!("the contracts store at {shown} cannot be read: {e}")))
}

#[cfg(feature = "postgres")]
fn open_postgres(url: &str) -> Result<Arc<dyn Store>, String> {
    let options = shiftwork_contracts::PgOptions {
        pool_size: 1,
        ..shiftwork_contracts::PgOptions::default()
    };
    shiftwork_contracts::PgStore::connect(url, options)
        .map(|s| Arc::new(s) as Arc<dyn Store>)
        .map_err(|e| clean_text(&e.to_string()))
}

#[cfg(not(feature = "postgres"))]
fn open_postgres(_url: &str) -> Result<Arc<dyn Store>, String> {
    Err(String::from("this build reads no PostgreSQL store"))
}

/// The colour of a contract status; a status this build does not know is muted.
fn contract_tone(status: &str) -> Tone {
    match status {
        "SUBMITTED" => Tone::Waiting,
        "CLAIMED" => Tone::Running,
        "COMPLETED" => Tone::Good,
        "FAILED" | "TIMED_OUT" | "POINTER_STALE" => Tone::Bad,
        _ => Tone::Muted,
    }
}

/// The pane's contents: the store's counts; every claimed contract looked at for the
/// [`CLAIMED_SHOWN`] soonest to expire and every waiting one for the [`WAITING_SHOWN`] oldest by
/// queueing time, a page of [`READ_PAGE`] at a time; and the [`ENDED_SHOWN`] last dispatched of the
/// ended ones, the latest to end first.
pub fn read_store(store: &dyn Store, agent: Option<&AgentId>, now: EpochMs) -> Result<Contracts, StoreError> {
    let (_, counts) = scoped(store, vec![Status::Claimed], 0, agent, now)?;
    let claimed = smallest(store, Status::Claimed, agent, now, CLAIMED_SHOWN, |c| {
        (c.expires_at.unwrap_or(EpochMs::MAX), c.seq)
    })?;
    let waiting = smallest(store, Status::Submitted, agent, now, WAITING_SHOWN, |c| {
        (c.queued_at, c.seq)
    })?;
    let terminal: Vec<Status> = Status::ALL.into_iter().filter(|s| s.is_terminal()).collect();
    let (mut ended, _) = scoped(store, terminal, ENDED_SHOWN, agent, now)?;
    ended.sort_by_key(|c| std::cmp::Reverse((c.completed_at, c.seq)));
    let past_deadline = counts.get(PAST_DEADLINE).copied().unwrap_or(0);
    Ok(Contracts {
        note: None,
        counts: counts
            .into_iter()
            .filter(|(name, _)| name != PAST_DEADLINE)
            .map(|(name, count)| StatusCount {
                tone: contract_tone(&name),
                status: name,
                count,
            })
            .collect(),
        past_deadline,
        claimed: claimed
            .iter()
            .map(|c| Claimed {
                id: clean_text(c.contract_id.as_str()),
                title: clean_text(&c.title),
                holder: c.target_agent.as_str().to_owned(),
                requester: c.requester_agent.as_str().to_owned(),
                epoch: c.claim_epoch,
                lease_ends: c.expires_at.and_then(instant),
                deliveries: c.delivery_count,
            })
            .collect(),
        waiting: waiting
            .iter()
            .map(|c| Waiting {
                id: clean_text(c.contract_id.as_str()),
                title: clean_text(&c.title),
                target: c.target_agent.as_str().to_owned(),
                requester: c.requester_agent.as_str().to_owned(),
                queued_at: instant(c.queued_at).unwrap_or(DateTime::UNIX_EPOCH),
                deliveries: c.delivery_count,
                max_deliveries: c.max_deliveries,
                available_at: c.available_at.and_then(instant),
            })
            .collect(),
        ended: ended
            .iter()
            .map(|c| Ended {
                id: clean_text(c.contract_id.as_str()),
                title: clean_text(&c.title),
                target: c.target_agent.as_str().to_owned(),
                requester: c.requester_agent.as_str().to_owned(),
                status: c.status.as_str().to_owned(),
                tone: contract_tone(c.status.as_str()),
                reason: c.end_reason.map(|r| r.as_str().to_owned()),
                why: c
                    .fail_reason
                    .as_deref()
                    .or(c.cancel_reason.as_deref())
                    .map(clean_text),
                ended_at: c.completed_at.and_then(instant),
            })
            .collect(),
    })
}

/// The counts' key for live records past their deadline.
const PAST_DEADLINE: &str = "logically_expired";

/// Ordered counts: status wire name → records, and [`PAST_DEADLINE`].
type CountList = Vec<(String, u64)>;

trait CountsByName {
    fn get(&self, name: &str) -> Option<&u64>;
}

impl CountsByName for CountList {
    fn get(&self, name: &str) -> Option<&u64> {
        self.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }
}

/// The counts as a list, read through their serialised form so that a status the store adds appears
/// without a change here.
fn count_list(counts: &Counts) -> CountList {
    match serde_json::to_value(counts) {
        Ok(serde_json::Value::Object(map)) => map
            .into_iter()
            .map(|(name, n)| (name, n.as_u64().unwrap_or(0)))
            .collect(),
        _ => Vec::new(),
    }
}

/// One page of `statuses` for everyone, or for `agent` as target or requester (two pages merged, the
/// counts by inclusion and exclusion).
fn scoped(
    store: &dyn Store,
    statuses: Vec<Status>,
    limit: usize,
    agent: Option<&AgentId>,
    now: EpochMs,
) -> Result<(Vec<Contract>, CountList), StoreError> {
    let query = ListQuery {
        statuses: Some(statuses),
        limit,
        ..ListQuery::default()
    };
    let Some(agent) = agent else {
        let page = store.list(&query, now)?;
        return Ok((page.records, count_list(&page.counts)));
    };
    let as_target = store.list(
        &ListQuery {
            target_agent: Some(agent.clone()),
            ..query.clone()
        },
        now,
    )?;
    let as_requester = store.list(
        &ListQuery {
            requester_agent: Some(agent.clone()),
            ..query.clone()
        },
        now,
    )?;
    let both = store.list(
        &ListQuery {
            target_agent: Some(agent.clone()),
            requester_agent: Some(agent.clone()),
            limit: 1,
            ..query
        },
        now,
    )?;
    let mut records: HashMap<ContractId, Contract> = HashMap::new();
    for c in as_target.records.into_iter().chain(as_requester.records) {
        records.entry(c.contract_id.clone()).or_insert(c);
    }
    let mut records: Vec<Contract> = records.into_values().collect();
    records.sort_by_key(|c| std::cmp::Reverse(c.seq));
    records.truncate(limit);
    let both = count_list(&both.counts);
    let requester = count_list(&as_requester.counts);
    let counts = count_list(&as_target.counts)
        .into_iter()
        .map(|(name, n)| {
            let add = requester.get(&name).copied().unwrap_or(0);
            let overlap = both.get(&name).copied().unwrap_or(0);
            (name, (n + add).saturating_sub(overlap))
        })
        .collect();
    Ok((records, counts))
}

/// The `keep` records of `status` (for everyone, or for `agent` as target or requester) that are
/// smallest by `key`, smallest first: every such record is read, newest first, a page of
/// [`READ_PAGE`] at a time (the `before_seq` cursor of `Store::list`), and only the `keep` smallest
/// are held, so memory stays at one page whatever the store holds.
fn smallest<K: Ord>(
    store: &dyn Store,
    status: Status,
    agent: Option<&AgentId>,
    now: EpochMs,
    keep: usize,
    key: impl Fn(&Contract) -> K,
) -> Result<Vec<Contract>, StoreError> {
    let all = ListQuery {
        statuses: Some(vec![status]),
        limit: READ_PAGE,
        ..ListQuery::default()
    };
    let queries = match agent {
        None => vec![all],
        Some(agent) => vec![
            ListQuery {
                target_agent: Some(agent.clone()),
                ..all.clone()
            },
            ListQuery {
                requester_agent: Some(agent.clone()),
                ..all
            },
        ],
    };
    let mut kept: Vec<(K, Contract)> = Vec::with_capacity(keep.min(READ_PAGE) + 1);
    for query in queries {
        let mut before: Option<i64> = None;
        loop {
            let page = store.list(
                &ListQuery {
                    before_seq: before,
                    ..query.clone()
                },
                now,
            )?;
            let full = page.records.len() >= READ_PAGE;
            let lowest = page.records.iter().map(|c| c.seq).min();
            for c in page.records {
                // A contract both sent and held by the agent was seen with those it holds.
                if query.requester_agent.is_some() && agent.is_some_and(|a| c.target_agent == *a) {
                    continue;
                }
                let k = key(&c);
                let at = kept.partition_point(|(other, _)| *other <= k);
                if at < keep {
                    kept.insert(at, (k, c));
                    kept.truncate(keep);
                }
            }
            // The next page starts below this one; a page that did not move the cursor ends the read.
            match lowest {
                Some(seq) if full && before.is_none_or(|b| seq < b) => before = Some(seq),
                _ => break,
            }
        }
    }
    Ok(kept.into_iter().map(|(_, c)| c).collect())
}

/// The record of `c` as the view shows it.
fn record_of(c: &Contract, now: EpochMs) -> ContractRecord {
    let clip = |text: &str| clean(text, RECORD_TEXT_LIMIT);
    let times = [
        ("dispatched", Some(c.created_at)),
        ("queued", Some(c.queued_at)),
        ("claimable again", c.available_at),
        ("claimed", c.claimed_at),
        ("lease ends", c.expires_at),
        (
            "queue deadline",
            (c.status == Status::Submitted).then_some(c.queue_expires_at),
        ),
        ("ended", c.completed_at),
        (
            "lifetime ends",
            c.completed_at.is_none().then_some(c.lifetime_ends_at),
        ),
    ]
    .into_iter()
    .filter_map(|(name, at)| Some((String::from(name), at.and_then(instant)?)))
    .collect();
    ContractRecord {
        id: clean_text(c.contract_id.as_str()),
        title: clean_text(&c.title),
        task_type: clean_text(&c.task_type),
        status: c.status.as_str().to_owned(),
        tone: contract_tone(c.status.as_str()),
        past_deadline: c.is_logically_expired(now),
        requester: c.requester_agent.as_str().to_owned(),
        target: c.target_agent.as_str().to_owned(),
        workspace_root: clean_text(&c.workspace_root),
        context_summary: clip(&c.context_summary),
        pointers: c
            .pointers
            .iter()
            .take(RECORD_POINTERS_SHOWN)
            .map(|p| clean_text(&p.path))
            .collect(),
        pointer_count: c.pointers.len(),
        epoch: c.claim_epoch,
        deliveries: c.delivery_count,
        max_deliveries: c.max_deliveries,
        extends: c.extend_count,
        releases: c.release_count,
        retries: c.retry_count,
        times,
        end_reason: c.end_reason.map(|r| r.as_str().to_owned()),
        history: c
            .error_reason
            .as_deref()
            .map(|h| h.split(" | prev: ").map(clean_text).collect())
            .unwrap_or_default(),
        fail_reason: c.fail_reason.as_deref().map(clip),
        cancel_reason: c.cancel_reason.as_deref().map(clip),
        result_summary: c.result_summary.as_deref().map(clip),
    }
}

/// The most code points a long text of a [`ContractRecord`] keeps (a summary, a reason).
const RECORD_TEXT_LIMIT: usize = 2_000;

fn instant(ms: EpochMs) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_millis(ms)
}
