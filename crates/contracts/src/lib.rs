//! `shiftwork-contracts` — a durable queue of work contracts between agents.
//!
//! One agent (the *requester*) dispatches a contract to another (the *target*): a title, a context
//! summary, a workspace root, a *baseline* of file pointers pinned by size and SHA-256, and an
//! optional JSON Schema for the result. The target claims it atomically ([`Contracts::poll_next_task`]),
//! works under a lease it can renew, and delivers a result that is checked against the schema — and if
//! the files it was asked to read changed underneath, nobody reviews stale code.
//!
//! # Shape
//!
//! * [`model`]: the record and its parts; [`limits`]: the constants of the spec.
//! * [`transition`]: the pure state machine — every transition with its guards and refusal codes,
//!   fencing by `claim_epoch`, the expiry step. No I/O, no clock.
//! * [`paths`] (pure) and [`fingerprint`] (over [`shiftwork_seams::Fs`]): normalization, refusals of escaping and
//!   secret-bearing paths, streaming fingerprints, verification.
//! * [`Store`]: one atomic transaction per operation; [`MemoryStore`] and, with the default `sqlite`
//!   feature, [`SqliteStore`] (and `PgStore` with the `postgres` feature). Stores call the pure
//!   transition functions, so they all judge alike.
//! * [`Contracts`]: the facade, one method per operation; [`Contracts::poll_next_task_wait`] waits for
//!   work ([`wait`]), [`Contracts::cancel`] withdraws a contract, and a contract dispatched with
//!   `max_deliveries` is redelivered with backoff when its holder is lost.
//! * [`args`]: decoding of tool arguments (JSON objects) in each tool's argument order, used by the
//!   MCP adapter; the rules themselves live in [`request`].
//! * [`location`]: where a store lives, opening it on first use, and running a read-only tool over an
//!   empty store where none exists yet (looking creates nothing).
//!
//! # What this crate never does
//!
//! It never reads the system clock (time comes from [`shiftwork_seams::Clock`]) and never waits except on
//! that clock ([`shiftwork_seams::Clock::wait_until`]), never reads workspace files except through
//! [`shiftwork_seams::Fs`], never reads the environment, and never names tokio, rmcp or any MCP type. No
//! store transaction is open while a file is read or hashed. A refusal writes nothing except where the
//! spec says so (the expiry step, U2–U5, C3); a cancelled call answers or undoes what it did. The SQLite
//! store never lets SQLite touch a file before judging it and the files beside it (see
//! [`SqliteStore::open`]), and a read-only store never writes a byte.
//!
//! # Invariants
//!
//! Every stored record satisfies CT-27 ([`integrity::violations`]); at most one (contract, epoch)
//! pair is live; terminal states are absorbing; no contract outlives `created_at + 4 × queue_ttl_sec`.

pub mod args;
pub mod canonical;
pub mod error;
mod facade;
#[cfg(feature = "test-failpoints")]
pub mod failpoints;
pub mod fingerprint;
pub mod ids;
pub mod integrity;
pub mod limits;
#[cfg(feature = "sqlite")]
pub mod location;
pub mod model;
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

pub use error::{Refusal, RefusalCode, StoreError};
pub use facade::{Contracts, ContractsConfig, payload_sha256};
pub use ids::{IdSource, OsIdSource, SeededIdSource};
pub use model::{
    AgentId, Contract, Drift, DriftReason, EndReason, EpochMs, Pointer, SalvagedResult, Status, Warning,
};
pub use request::{DefaultAgent, DispatchRequest, FulfillRequest, HolderRef, Identity, InspectRequest};
pub use store::{MemoryStore, Store};
#[cfg(feature = "postgres")]
pub use store::{PgOptions, PgStore};
#[cfg(feature = "sqlite")]
pub use store::{SqliteOptions, SqliteStore, Synchronous};

/// The crate's README, run as a doc test so that its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
