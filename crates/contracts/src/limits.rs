//! The limits and defaults of the queue, as public constants.
//!
//! ```
//! use shiftwork_contracts::limits;
//! assert_eq!(limits::MAX_EXTENDS_PER_CLAIM, 5);
//! assert_eq!(limits::MAX_TOTAL_POINTER_BYTES, 1 << 30);
//! ```

/// Renewals per claim (`extend_ttl` is refused `EXTEND_LIMIT` once `extend_count` reaches it).
pub const MAX_EXTENDS_PER_CLAIM: u32 = 5;
/// Releases over a contract's life (`release_contract` is refused `RELEASE_LIMIT` once `release_count`
/// reaches it).
pub const MAX_RELEASES: u32 = 3;
/// `lifetime_ends_at = created_at + LIFETIME_FACTOR × queue_ttl_sec × 1000`.
pub const LIFETIME_FACTOR: i64 = 4;
/// Deliveries per claim that may find the pinned files changed and try again (`RETRY_NEEDED`); the
/// next one ends the contract `POINTER_STALE`.
pub const TOCTOU_STRIKES: u32 = 1;
/// The schema-invalid delivery that ends the contract `FAILED` (`SCHEMA_RETRIES_EXHAUSTED`).
pub const SCHEMA_INVALID_LIMIT: u32 = 3;
/// Default execution window (`ContractsConfig::default_exec_ttl_sec`).
pub const DEFAULT_EXEC_TTL_SEC: u32 = 1800;
/// Default queue window (`ContractsConfig::default_queue_ttl_sec`).
pub const DEFAULT_QUEUE_TTL_SEC: u32 = 14_400;
/// Smallest accepted `exec_ttl_sec`.
pub const MIN_EXEC_TTL_SEC: u32 = 60;
/// Largest accepted `exec_ttl_sec`.
pub const MAX_EXEC_TTL_SEC: u32 = 86_400;
/// Smallest accepted `queue_ttl_sec`.
pub const MIN_QUEUE_TTL_SEC: u32 = 60;
/// Largest accepted `queue_ttl_sec`.
pub const MAX_QUEUE_TTL_SEC: u32 = 604_800;
/// Pointers (and artifacts) per contract.
pub const MAX_POINTERS: usize = 32;
/// Length of a normalized pointer path in bytes.
pub const MAX_PATH_BYTES: usize = 512;
/// The first bytes of a pointer or artifact looked at for a private key, whatever its name.
pub const SECRET_HEAD_BYTES: usize = 8192;
/// Sum of pointer sizes per contract (also for artifacts): 1 GiB.
pub const MAX_TOTAL_POINTER_BYTES: u64 = 1 << 30;
/// A larger pointer file adds a `LARGE_POINTER` warning at dispatch: 8 MiB.
pub const LARGE_POINTER_WARN_BYTES: u64 = 8 << 20;
/// Length cap of `first_line` and `last_line`, in characters.
pub const LINE_CHARS: usize = 120;
/// Length cap of `title`, in characters.
pub const MAX_TITLE_CHARS: usize = 200;
/// Size cap of `context_summary`, in bytes.
pub const MAX_CONTEXT_SUMMARY_BYTES: usize = 8192;
/// Size cap of `result_summary`, in bytes.
pub const MAX_RESULT_SUMMARY_BYTES: usize = 8192;
/// Length cap of the `reason` of release and fail, in characters.
pub const MAX_REASON_CHARS: usize = 1000;
/// Size cap of `contract_schema` (compact JSON): 16 KiB.
pub const MAX_CONTRACT_SCHEMA_BYTES: usize = 16 * 1024;
/// Subschemas a `contract_schema` may reach when every `$ref` is followed.
pub const MAX_CONTRACT_SCHEMA_EXPANSION: usize = 10_000;
/// Size cap of `structured_output` (compact JSON): 32 KiB.
pub const MAX_STRUCTURED_OUTPUT_BYTES: usize = 32 * 1024;
/// Length cap of `idempotency_key`, in characters (printable ASCII).
pub const MAX_IDEMPOTENCY_KEY_CHARS: usize = 128;
/// The largest accepted `claim_epoch` argument (2^53 − 1, the largest integer every JSON reader keeps).
pub const MAX_CLAIM_EPOCH: u64 = (1 << 53) - 1;
/// Length cap of `error_reason`, in characters.
pub const MAX_ERROR_REASON_CHARS: usize = 2000;
/// Contracts one poll may close as `POINTER_STALE` before it stops.
pub const MAX_STALE_PER_POLL: usize = 8;
/// Records of each kind (queue windows, leases) a sweep inside an operation writes at most.
pub const SWEEP_BATCH_PER_CALL: usize = 1000;
/// Default page size of `inspect_mesh_state`.
pub const INSPECT_DEFAULT_LIMIT: usize = 20;
/// Largest page size of `inspect_mesh_state`.
pub const INSPECT_MAX_LIMIT: usize = 50;
/// Bound on a serialised list page: 32 KiB.
pub const INSPECT_PAGE_MAX_BYTES: usize = 32 * 1024;
/// Bound on a serialised detail response: 64 KiB.
pub const INSPECT_DETAIL_MAX_BYTES: usize = 64 * 1024;
/// SQLite `busy_timeout`.
pub const SQLITE_BUSY_TIMEOUT_MS: u32 = 5000;
/// Longest `wait_sec` of `poll_next_task`.
pub const MAX_WAIT_SEC: u32 = 60;
/// Largest `max_deliveries` of a dispatch.
pub const MAX_DELIVERIES: u32 = 10;
/// The redelivery backoff of the first redelivery, doubled for each further one: 30 s.
pub const REDELIVERY_BACKOFF_MS: i64 = 30_000;
/// The longest redelivery backoff: 1 h.
pub const MAX_REDELIVERY_BACKOFF_MS: i64 = 3_600_000;
/// Length cap of the `reason` of `cancel_contract`, in characters.
pub const MAX_CANCEL_REASON_CHARS: usize = 2000;
/// Shown `error_reason` length in summaries, in characters.
pub const SUMMARY_ERROR_REASON_CHARS: usize = 200;
/// Validation errors reported per delivery or schema.
pub const MAX_VALIDATION_ERRORS: usize = 10;
/// Violations an integrity report lists at most.
pub const MAX_INTEGRITY_VIOLATIONS: usize = 100;
/// How long finished contracts are kept by default before the retention purge deletes them: 7 days.
pub const DEFAULT_FINISHED_RETENTION_SEC: u64 = 7 * 86_400;
/// The shortest retention a configuration accepts: 1 minute.
pub const MIN_FINISHED_RETENTION_SEC: u64 = 60;
/// The longest retention a configuration accepts: 100 years (longer is "forever": no retention).
pub const MAX_FINISHED_RETENTION_SEC: u64 = 100 * 365 * 86_400;
/// Finished contracts one retention purge step deletes at most, in one store transaction.
pub const RETENTION_PURGE_BATCH: usize = 100;
/// How often the background retention purge looks for finished contracts past their retention.
pub const RETENTION_PURGE_PERIOD_SEC: u64 = 60;
