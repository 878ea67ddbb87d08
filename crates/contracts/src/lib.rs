//! `shiftwork-contracts` — a durable queue of work contracts between agents.
//!
//! One agent (the *requester*) dispatches a contract to another (the *target*): a title, a context
//! summary, a workspace root, files pinned by size and SHA-256, and an optional JSON Schema for the
//! result. The target claims it atomically ([`Contracts::poll_next_task`]), works under a lease it can
//! renew, fenced by a *claim epoch* (a newer claim makes an older holder's calls fail `STALE_EPOCH`),
//! and delivers a result that is checked against the schema — and if the files it was asked to read
//! changed underneath, the claim or the delivery says so, file by file, so nobody reviews stale code.
//!
//! ```
//! use shiftwork_contracts::{AgentId, Contracts, ContractsConfig, DispatchRequest, FulfillRequest, MemoryStore};
//! use shiftwork_contracts::roots::AllowedRoots;
//! use shiftwork_seams::{ManualClock, MemFs};
//! use std::sync::Arc;
//!
//! #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
//! struct Review { verdict: String }
//!
//! let clock = Arc::new(ManualClock::new(chrono::DateTime::UNIX_EPOCH));
//! let fs = MemFs::new();
//! fs.write_file("/work/src/lib.rs", b"pub fn add() {}\n");
//! let queue = Contracts::builder(Arc::new(MemoryStore::new(clock)))
//!     .fs(Arc::new(fs))
//!     .config(ContractsConfig::builder().allowed_roots(AllowedRoots::new(["/work"])).build()?)
//!     .real_ids().build();
//! let (alice, bob) = (AgentId::new("alice")?, AgentId::new("bob")?);
//! let sent = queue.dispatch(&DispatchRequest::new(alice, bob.clone(), "Review add()", "/work").pointers(["src/lib.rs"]))?;
//! let work = queue.poll_next_task(&bob)?;
//! let held = work.held().expect("bob's contract");
//! let delivery = FulfillRequest::new("Looks right.").output(&Review { verdict: "approve".into() })?;
//! queue.fulfill_contract(&held.holder(), &delivery)?;
//! let result: Option<Review> = queue.detail(&sent.contract_id)?.output()?;
//! assert_eq!(result, Some(Review { verdict: "approve".into() }));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Shape
//!
//! * [`Contracts`], built with [`Contracts::builder`] over a [`Store`]: the facade, one method per
//!   operation, each taking a typed request ([`DispatchRequest`], [`HolderRef`], [`FulfillRequest`],
//!   [`InspectRequest`]) and answering a typed outcome ([`views`]) or a [`ContractRefusal`].
//!   [`Contracts::poll_next_task_wait`] waits for work ([`wait`]), [`Contracts::cancel`] withdraws a
//!   contract, and a contract dispatched with `max_deliveries` is redelivered with backoff when its
//!   holder is lost.
//! * [`model`]: ids ([`AgentId`], [`ContractId`]), states and the stored record; [`limits`]: the
//!   bounds.
//! * [`transition`]: the pure state machine — every transition with its guards and refusal codes,
//!   fencing by `claim_epoch`, the expiry step. No I/O, no clock.
//! * [`paths`] (pure) and [`fingerprint`] (over [`shiftwork_seams::Fs`]): normalization, refusals of
//!   escaping and secret-bearing paths, streaming fingerprints, verification.
//! * [`Store`]: one atomic transaction per operation; [`MemoryStore`] and, with the default `sqlite`
//!   feature, [`SqliteStore`] (and `PgStore` with the `postgres` feature). Stores call the pure
//!   transition functions, so they all judge alike.
//! * [`observe`]: the events of the queue told to an observer the host installs, for metrics.
//! * [`args`]: the tools as JSON (argument tables, decoding, answers), used by the MCP adapter; the
//!   rules themselves live in [`request`].
//! * [`location`]: where a store lives, opening it on first use, and running a read-only tool over an
//!   empty store where none exists yet (looking creates nothing).
//!
//! # Types, time and JSON
//!
//! Agents are [`AgentId`]s, the one agent-id grammar of the shiftwork crates (1 to 64 of
//! `A-Z a-z 0-9 . _ @ : -`, starting with a letter or digit; [`shiftwork_seams::agent`]); contracts
//! are [`ContractId`]s. Instants are `chrono::DateTime<Utc>` and windows `std::time::Duration` (whole
//! seconds); the stored record and the tool answers write instants as milliseconds since 1970 UTC
//! ([`model::EpochMs`]). The crate's one JSON type is [`serde_json::Value`] (a result schema and a
//! structured result are JSON objects, `serde_json::Map`); a delivery can be any `T: Serialize`
//! ([`FulfillRequest::output`]) and a result is read back as any `T: DeserializeOwned`
//! ([`views::ContractDetail::output`]). A refusal is matched by its [`RefusalCode`] or its typed
//! [`RefusalDetails`], never by its sentence.
//!
//! # Threads and async hosts
//!
//! The facade is synchronous (its stores use the synchronous SQLite and PostgreSQL clients) and
//! `Send + Sync`: share one `Arc<Contracts>` between threads. A call blocks while it waits for a
//! store lock, hashes files, or — [`Contracts::poll_next_task_wait`] — waits for work, so a tokio host
//! runs each call with `tokio::task::spawn_blocking(move || contracts.poll_next_task(&agent))`, never
//! on an async worker thread; to end a waiting poll early, trigger its [`wait::Cancel`]. A host that
//! must not hold a thread while a poll waits steps a [`PollTask`] ([`Contracts::poll_task`], or
//! [`args::start`] for the tool surface) and parks it between two steps.
//!
//! # What this crate never does
//!
//! It never reads the system clock (time comes from [`shiftwork_seams::Clock`], the store's, which
//! the facade shares) and never waits except on that clock ([`shiftwork_seams::Clock::wait_until`]),
//! never reads workspace files except through [`shiftwork_seams::Fs`], never reads the environment,
//! never logs (it opens `tracing` spans named `contracts.store` around store transactions, seen only
//! by a subscriber the host installs), and never names tokio, rmcp or any MCP type. No store
//! transaction is open while a file is read or hashed. A refusal writes nothing except a deadline
//! that had passed, and the delivery a refused fulfil counts against the holder; a cancelled call
//! answers or undoes what it did. The SQLite store never lets SQLite touch a file before judging it
//! and the files beside it (see [`SqliteStore::open`]), and a read-only store never writes a byte.
//!
//! # Invariants
//!
//! Every stored record passes [`integrity::violations`]; at most one (contract, epoch) pair is live;
//! terminal states are final; no contract outlives four queue windows after its dispatch.

pub mod args;
pub mod canonical;
mod config;
pub mod error;
mod facade;
#[doc(hidden)]
pub mod failpoints;
pub mod fingerprint;
pub mod ids;
pub mod integrity;
pub mod limits;
#[cfg(feature = "sqlite")]
pub mod location;
pub mod model;
pub mod observe;
pub mod paths;
pub mod request;
pub mod roots;
pub mod schema;
pub mod store;
#[doc(hidden)]
pub mod testing;
pub mod transition;
pub mod views;
pub mod wait;
mod wire;

pub use config::{ConfigError, ContractsConfig, ContractsConfigBuilder, RetentionError, parse_retention};
#[allow(deprecated)]
pub use error::Refusal;
pub use error::{ContractRefusal, RefusalCode, RefusalDetails, StoreError};
pub use facade::{Contracts, ContractsBuilder, PollStep, PollTask, Unset, payload_sha256};
pub use ids::{IdSource, OsIdSource, SeededIdSource};
pub use model::{
    AgentId, AgentIdError, Contract, ContractId, ContractIdError, Drift, DriftReason, EndReason, Pointer,
    SalvagedResult, Status, Warning, WarningCode,
};
pub use observe::{ContractEvent, ContractsObserver};
pub use request::{DefaultAgent, DispatchRequest, FulfillRequest, HolderRef, Identity, InspectRequest};
pub use roots::RootsError;
pub use store::{MemoryStore, QueueDepth, Store};
#[cfg(feature = "postgres")]
pub use store::{PgOptions, PgStore};
#[cfg(feature = "sqlite")]
pub use store::{SqliteOptions, SqliteStore, Synchronous};

/// The crate's README, run as a doc test so that its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
