//! Where a contract store lives and how it is opened: the location rule (a `postgres://` URL or a
//! file path; the default `~/.shiftwork/contracts.db`; `~` is the home directory; a relative path is
//! resolved against the working directory), the opening itself (directories 0700 and the file 0600,
//! through [`crate::SqliteStore::open`]), and the reopen policy of a long-running embedder
//! ([`LazyContracts`]): the store is opened on first use, a busy store is tried again at the next use,
//! and any other failure is kept until the process restarts. Looking creates nothing
//! ([`LazyContracts::for_tool`]): a read-only tool at a location where no store exists yet answers as
//! over an empty store, and `inspect_mesh_state` says so in its `note`.
//!
//! The rule takes its inputs as values (the home directory, the working directory); it never reads the
//! environment.
//!
//! ```
//! use shiftwork_contracts::location::{Location, LocationError};
//! use std::path::{Path, PathBuf};
//! let cwd = Path::new("/work");
//! assert_eq!(Location::resolve(None, Some("/home/me"), cwd),
//!            Ok(Location::File(PathBuf::from("/home/me/.shiftwork/contracts.db"))));
//! assert_eq!(Location::resolve(Some("~/q.db"), Some("/home/me"), cwd),
//!            Ok(Location::File(PathBuf::from("/home/me/q.db"))));
//! assert_eq!(Location::resolve(Some("q.db"), None, cwd), Ok(Location::File(PathBuf::from("/work/q.db"))));
//! assert!(matches!(Location::resolve(Some("postgresql://db/x"), None, cwd), Ok(Location::Postgres(_))));
//! assert_eq!(Location::resolve(None, None, cwd), Err(LocationError::NoHome));
//! ```

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};
use shiftwork_seams::{Clock, Fs, OsFs, SystemClock};

use crate::config::ContractsConfig;
use crate::error::StoreError;
use crate::facade::Contracts;
use crate::observe::ContractsObserver;
use crate::store::Store;

/// The default store path, relative to the home directory.
pub const DEFAULT_PATH: &str = ".shiftwork/contracts.db";

/// Where the store lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A SQLite file (absolute).
    File(PathBuf),
    /// A `postgres://` or `postgresql://` URL.
    Postgres(String),
}

/// Why no location could be worked out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LocationError {
    /// No location was given and there is no home directory for the default.
    #[error("there is no home directory for the default location ~/{DEFAULT_PATH}")]
    NoHome,
    /// The location starts with `~` but there is no home directory.
    #[error("the store location starts with ~ but there is no home directory")]
    TildeWithoutHome,
    /// The location is the home directory itself.
    #[error("the store location must name a file, not the home directory")]
    HomeItself,
}

impl LocationError {
    /// A stable machine name of the error's kind, as every `code()` of the family.
    pub fn code(&self) -> &'static str {
        match self {
            LocationError::NoHome => "LOCATION_NO_HOME",
            LocationError::TildeWithoutHome => "LOCATION_TILDE_WITHOUT_HOME",
            LocationError::HomeItself => "LOCATION_HOME_ITSELF",
        }
    }
}

impl shiftwork_seams::Coded for LocationError {
    fn code(&self) -> &'static str {
        LocationError::code(self)
    }
}

impl Location {
    /// The location of `value` (`None` or blank: the default under `home`); `~` at the start is `home`,
    /// and a relative path is taken relative to `cwd`.
    pub fn resolve(value: Option<&str>, home: Option<&str>, cwd: &Path) -> Result<Location, LocationError> {
        let home = home.filter(|h| !h.trim().is_empty());
        let Some(value) = value.filter(|v| !v.trim().is_empty()) else {
            return home
                .map(|h| Location::File(Path::new(h).join(DEFAULT_PATH)))
                .ok_or(LocationError::NoHome);
        };
        if value.starts_with("postgres://") || value.starts_with("postgresql://") {
            return Ok(Location::Postgres(value.to_owned()));
        }
        let path = if value == "~" || value == "~/" {
            return Err(LocationError::HomeItself);
        } else if let Some(rest) = value.strip_prefix("~/") {
            Path::new(home.ok_or(LocationError::TildeWithoutHome)?).join(rest)
        } else {
            PathBuf::from(value)
        };
        Ok(Location::File(if path.is_absolute() {
            path
        } else {
            cwd.join(path)
        }))
    }
}

/// Opens the store at `location` with the operating system's file system and clock: a SQLite file
/// (created with its missing directories, modes 0700/0600; a location that is neither a regular file
/// nor absent is refused; a file that is not writable is opened read-only) or a PostgreSQL database
/// on the server's clock (with the `postgres` feature).
pub fn open(location: &Location, synchronous: crate::Synchronous) -> Result<Arc<dyn Store>, StoreError> {
    match location {
        Location::File(path) => {
            let options = crate::SqliteOptions {
                synchronous,
                ..crate::SqliteOptions::default()
            };
            let clock: Arc<dyn Clock> = Arc::new(SystemClock::new());
            Ok(Arc::new(crate::SqliteStore::open(path, options, clock, &OsFs)?))
        }
        Location::Postgres(url) => open_postgres(url),
    }
}

#[cfg(feature = "postgres")]
fn open_postgres(url: &str) -> Result<Arc<dyn Store>, StoreError> {
    Ok(Arc::new(crate::PgStore::connect(
        url,
        crate::PgOptions::default(),
    )?))
}

#[cfg(not(feature = "postgres"))]
fn open_postgres(_url: &str) -> Result<Arc<dyn Store>, StoreError> {
    Err(StoreError::unavailable(String::from(
        "built without PostgreSQL support",
    )))
}

/// A facade opened on first use: [`LazyContracts::get`] opens the store the first time; a busy store
/// is tried again at the next call; any other failure is kept and answered until the process
/// restarts, so a misconfigured location never half-works.
pub struct LazyContracts {
    location: Result<Location, LocationError>,
    synchronous: crate::Synchronous,
    config: ContractsConfig,
    observer: Option<Arc<dyn ContractsObserver>>,
    opened: Mutex<Option<Result<Arc<Contracts>, StoreError>>>,
}

impl LazyContracts {
    /// A facade that opens `location` on first use, configured by `config`.
    pub fn new(
        location: Result<Location, LocationError>,
        synchronous: crate::Synchronous,
        config: ContractsConfig,
    ) -> Self {
        LazyContracts {
            location,
            synchronous,
            config,
            observer: None,
            opened: Mutex::new(None),
        }
    }

    /// The same, telling `observer` of the events of the facade it opens
    /// ([`crate::ContractsBuilder::observer`]).
    pub fn with_observer(mut self, observer: Arc<dyn ContractsObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// An already opened facade (tests, embedders that built their own).
    pub fn ready(contracts: Arc<Contracts>) -> Self {
        LazyContracts {
            location: Err(LocationError::NoHome),
            synchronous: crate::Synchronous::Normal,
            config: contracts.config().clone(),
            observer: None,
            opened: Mutex::new(Some(Ok(contracts))),
        }
    }

    /// The facade's configuration.
    pub fn config(&self) -> &ContractsConfig {
        &self.config
    }

    /// The facade `tool` runs on: the store's, opened on first use — except that a tool that only
    /// reads ([`crate::args::Tool::reads_only`]) at a file location where nothing exists yet, with the
    /// store not opened before, runs over an empty store and creates nothing, neither the file nor its
    /// directories (nothing is created by looking).
    pub fn for_tool(&self, tool: &str) -> Result<ForTool, StoreError> {
        let reads_only = crate::args::tool(tool).is_some_and(crate::args::Tool::reads_only);
        let opened = self
            .opened
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some();
        if reads_only
            && !opened
            && let Ok(Location::File(path)) = &self.location
            && OsFs
                .symlink_metadata(path)
                .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
        {
            let empty = Contracts::builder(Arc::new(crate::MemoryStore::new(Arc::new(SystemClock::new()))))
                .config(self.config.clone())
                .real_fs()
                .real_ids()
                .build();
            let name = crate::store::sqlite_file::shown(path);
            return Ok(ForTool::Absent {
                contracts: Arc::new(empty),
                note: format!(
                    "No contracts store exists at the store location ({name}) yet; nothing was created. The first call that writes creates it."
                ),
            });
        }
        self.get().map(ForTool::Store)
    }

    /// The facade if its store is open already, without opening it (a reading that must not create a
    /// store, such as a metrics scrape).
    pub fn opened(&self) -> Option<Arc<Contracts>> {
        match self
            .opened
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            Some(Ok(c)) => Some(Arc::clone(c)),
            _ => None,
        }
    }

    /// The facade, opening the store on first use.
    pub fn get(&self) -> Result<Arc<Contracts>, StoreError> {
        // The slot only ever holds a finished result; a panic cannot leave it half-written.
        let mut slot = self.opened.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            let opened = match &self.location {
                Err(e) => Err(StoreError::unavailable(e.to_string())),
                Ok(location) => open(location, self.synchronous),
            };
            match opened {
                // A busy lock at opening is transient: answer STORE_BUSY and try again next call.
                Err(e @ StoreError::Busy { .. }) => return Err(e),
                Err(e @ StoreError::Unavailable { .. }) => *slot = Some(Err(e)),
                Err(other) => {
                    let reason = other.to_string();
                    *slot = Some(Err(StoreError::Unavailable {
                        reason,
                        source: Some(Arc::new(other)),
                    }));
                }
                Ok(store) => {
                    // A store the server opened serves real workspaces: the disk and the OS's ids,
                    // named; it keeps finished contracts for the configured retention, purged in the
                    // background.
                    let mut builder = Contracts::builder(store)
                        .real_fs()
                        .real_ids()
                        .config(self.config.clone())
                        .purge_in_background(true);
                    if let Some(observer) = &self.observer {
                        builder = builder.observer(Arc::clone(observer));
                    }
                    *slot = Some(Ok(Arc::new(builder.build())));
                }
            }
        }
        match slot.as_ref() {
            Some(Ok(c)) => Ok(c.clone()),
            Some(Err(e)) => Err(e.clone()),
            None => Err(StoreError::unavailable(String::from("the store was not opened"))),
        }
    }
}

/// The facade a call runs on ([`LazyContracts::for_tool`]).
pub enum ForTool {
    /// The store's.
    Store(Arc<Contracts>),
    /// No store exists at the location yet, and the call only reads: an empty store, and the note
    /// that says so.
    Absent {
        /// A facade over an empty in-memory store.
        contracts: Arc<Contracts>,
        /// `No contracts store exists at the store location (<file name>) yet; nothing was created. …`
        note: String,
    },
}

impl ForTool {
    /// The facade.
    pub fn contracts(&self) -> &Arc<Contracts> {
        match self {
            ForTool::Store(c) | ForTool::Absent { contracts: c, .. } => c,
        }
    }

    /// Runs `tool` as [`crate::args::call_cancellable`] does. Over an absent store,
    /// `inspect_mesh_state`'s answer gains `note` (a string after its other fields; the field is
    /// absent otherwise) and `verify_contract` answers `CONTRACT_NOT_FOUND`.
    ///
    /// ```
    /// use shiftwork_contracts::location::{LazyContracts, Location};
    /// use shiftwork_contracts::{ContractsConfig, DefaultAgent, Synchronous};
    /// use shiftwork_contracts::wait::Cancel;
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = dir.path().join("sub").join("contracts.db");
    /// let lazy = LazyContracts::new(Ok(Location::File(db.clone())), Synchronous::Normal, ContractsConfig::default());
    /// let answer = lazy.for_tool("inspect_mesh_state").unwrap()
    ///     .call("inspect_mesh_state", &Default::default(), &DefaultAgent::Unset, &Cancel::new());
    /// assert_eq!(answer["counts"]["SUBMITTED"], 0);
    /// assert!(answer["note"].as_str().unwrap().starts_with("No contracts store exists"));
    /// assert!(!db.parent().unwrap().exists(), "nothing created by looking");
    /// ```
    pub fn call(
        &self,
        tool: &str,
        args: &Map<String, Value>,
        default_agent: &crate::DefaultAgent,
        cancel: &crate::wait::Cancel,
    ) -> Value {
        self.try_call(tool, args, default_agent, cancel)
            .unwrap_or_else(|refusal| refusal.to_json())
    }

    /// [`ForTool::call`], the refusal kept typed ([`crate::args::try_call`]).
    pub fn try_call(
        &self,
        tool: &str,
        args: &Map<String, Value>,
        default_agent: &crate::DefaultAgent,
        cancel: &crate::wait::Cancel,
    ) -> Result<Value, crate::ContractRefusal> {
        match self.start(tool, args, default_agent, cancel) {
            crate::args::Step::Answered(answer) => answer,
            crate::args::Step::Waiting(waiting) => waiting.finish(),
        }
    }

    /// [`ForTool::try_call`] as a step ([`crate::args::start`]): a waiting poll with nothing to claim
    /// yet comes back as state for its host to park and resume.
    pub fn start(
        &self,
        tool: &str,
        args: &Map<String, Value>,
        default_agent: &crate::DefaultAgent,
        cancel: &crate::wait::Cancel,
    ) -> crate::args::Step {
        if let ForTool::Store(contracts) = self {
            return crate::args::start(contracts, tool, args, default_agent, cancel);
        }
        let mut answer = crate::args::try_call(self.contracts(), tool, args, default_agent, cancel);
        if let ForTool::Absent { note, .. } = self
            && tool == "inspect_mesh_state"
            && let Ok(Value::Object(fields)) = &mut answer
        {
            fields.insert(String::from("note"), Value::String(note.clone()));
        }
        crate::args::Step::Answered(answer)
    }
}
