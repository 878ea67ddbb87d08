//! What one view reads: its checkpoints, its contracts store and its hours expression.

use std::path::PathBuf;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use shiftwork_seams::{Clock, Fs};

use crate::error::WatchError;
use crate::gather::{self, ContractsReader, HoursWatch, StoreLocation};
use crate::snapshot::{ContractsPane, HoursLine, JobPane, Snapshot};

/// What to watch.
#[derive(Debug, Clone, PartialEq)]
pub struct WatchOptions {
    /// The checkpoints, one job pane each, in this order.
    pub checkpoints: Vec<PathBuf>,
    /// The contracts store, if any.
    pub store: Option<StoreLocation>,
    /// Show only the contracts of this agent (as target or requester).
    pub agent: Option<String>,
    /// An operating-hours expression for the hours line.
    pub hours: Option<String>,
    /// The zone of an hours expression without `TZ=`, and the zone instants are shown in.
    pub zone: Tz,
}

/// The sources of a view, ready to read.
pub struct Sources {
    fs: Arc<dyn Fs>,
    clock: Arc<dyn Clock>,
    zone: Tz,
    checkpoints: Vec<PathBuf>,
    contracts: Option<ContractsReader>,
    hours: Option<HoursWatch>,
}

impl std::fmt::Debug for Sources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sources")
            .field("checkpoints", &self.checkpoints)
            .field("contracts", &self.contracts)
            .finish_non_exhaustive()
    }
}

impl Sources {
    /// Checks `options` (the hours expression parses, the agent is an agent name) and prepares the
    /// readers. Opens nothing yet.
    pub fn new(
        options: &WatchOptions,
        fs: Arc<dyn Fs>,
        clock: Arc<dyn Clock>,
    ) -> Result<Sources, WatchError> {
        let hours = options
            .hours
            .as_deref()
            .map(|text| HoursWatch::parse(text, options.zone, options.zone))
            .transpose()?;
        let agent = options
            .agent
            .as_deref()
            .map(|a| gather::agent_id(a).ok_or_else(|| WatchError::Agent(crate::display_text::clean_text(a))))
            .transpose()?;
        let contracts = options
            .store
            .clone()
            .map(|location| ContractsReader::new(location, agent, clock.clone()));
        Ok(Sources {
            fs,
            clock,
            zone: options.zone,
            checkpoints: options.checkpoints.clone(),
            contracts,
            hours,
        })
    }

    /// These sources with `reader` as the contracts store (an embedder's store, a test's
    /// `MemoryStore`).
    pub fn with_contracts(mut self, reader: ContractsReader) -> Sources {
        self.contracts = Some(reader);
        self
    }

    /// Reads everything now.
    pub fn snapshot(&mut self) -> Snapshot {
        let now = self.now();
        Snapshot {
            now,
            zone: self.zone,
            jobs: (0..self.checkpoints.len()).map(|i| self.job(i)).collect(),
            contracts: self.contracts(),
            hours: self.hours(now),
        }
    }

    /// The clock reading.
    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// The watched checkpoints.
    pub fn checkpoints(&self) -> &[PathBuf] {
        &self.checkpoints
    }

    /// The store's location, when one is watched.
    pub fn store(&self) -> Option<&StoreLocation> {
        self.contracts.as_ref().and_then(ContractsReader::location)
    }

    /// Reads the pane of checkpoint `i`.
    pub fn job(&self, i: usize) -> JobPane {
        gather::job(self.fs.as_ref(), &self.checkpoints[i])
    }

    /// Reads the contracts pane.
    pub fn contracts(&mut self) -> Option<ContractsPane> {
        let fs = self.fs.clone();
        self.contracts.as_mut().map(|r| r.read(fs.as_ref()))
    }

    /// The hours line at `now` (no I/O).
    pub fn hours(&self, now: DateTime<Utc>) -> Option<HoursLine> {
        self.hours.as_ref().map(|h| h.line(now))
    }

    /// The zone instants are shown in.
    pub fn zone(&self) -> Tz {
        self.zone
    }

    /// Every pane read now except the contracts pane, which says it is being read (the terminal
    /// loop reads the store off its drawing thread).
    pub(crate) fn snapshot_but_contracts(&self) -> Snapshot {
        let now = self.now();
        let contracts = self.contracts.as_ref().map(ContractsReader::placeholder);
        Snapshot {
            now,
            zone: self.zone,
            jobs: (0..self.checkpoints.len()).map(|i| self.job(i)).collect(),
            contracts,
            hours: self.hours(now),
        }
    }

    /// Splits off the hours, which the terminal loop evaluates itself every second.
    pub(crate) fn take_hours(&mut self) -> Option<HoursWatch> {
        self.hours.take()
    }
}
