//! The facade's configuration: the default windows, whether holder calls must carry their claim
//! epoch, where workspace roots may lie, and how long finished contracts are kept. Built once and
//! checked: [`ContractsConfig::builder`].

use std::time::Duration;

use crate::limits::{
    DEFAULT_EXEC_TTL_SEC, DEFAULT_FINISHED_RETENTION_SEC, DEFAULT_QUEUE_TTL_SEC, MAX_EXEC_TTL_SEC,
    MAX_FINISHED_RETENTION_SEC, MAX_QUEUE_TTL_SEC, MIN_EXEC_TTL_SEC, MIN_FINISHED_RETENTION_SEC,
    MIN_QUEUE_TTL_SEC,
};
use crate::roots::AllowedRoots;

/// How a [`crate::Contracts`] facade judges: checked when it is built, so a facade never runs with a
/// lease of one second or a queue window of a year.
///
/// ```
/// use shiftwork_contracts::{ConfigError, ContractsConfig};
/// use shiftwork_contracts::roots::AllowedRoots;
/// use std::time::Duration;
/// let config = ContractsConfig::builder()
///     .default_exec_ttl(Duration::from_secs(600))
///     .require_claim_epoch(true)
///     .allowed_roots(AllowedRoots::new(["/work"]))
///     .build()
///     .unwrap();
/// assert_eq!(config.default_exec_ttl(), Duration::from_secs(600));
/// assert_eq!(config.default_queue_ttl(), Duration::from_secs(4 * 3600));
/// assert_eq!(config.finished_retention(), Some(Duration::from_secs(7 * 86_400)));
/// let refused = ContractsConfig::builder().default_exec_ttl(Duration::from_secs(1)).build();
/// assert!(matches!(refused, Err(ConfigError::DefaultExecTtl { .. })));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractsConfig {
    default_exec_ttl_sec: u32,
    default_queue_ttl_sec: u32,
    require_claim_epoch: bool,
    allowed_roots: AllowedRoots,
    /// Seconds a finished contract is kept; `None`: until purged by hand.
    finished_retention_sec: Option<u64>,
}

impl Default for ContractsConfig {
    /// A 30-minute lease, a 4-hour queue window, the epoch optional, workspace roots in the user's
    /// home directory or the system's temporary directory, and finished contracts kept 7 days.
    fn default() -> Self {
        ContractsConfig {
            default_exec_ttl_sec: DEFAULT_EXEC_TTL_SEC,
            default_queue_ttl_sec: DEFAULT_QUEUE_TTL_SEC,
            require_claim_epoch: false,
            allowed_roots: AllowedRoots::default(),
            finished_retention_sec: Some(DEFAULT_FINISHED_RETENTION_SEC),
        }
    }
}

impl ContractsConfig {
    /// A builder starting from the defaults.
    pub fn builder() -> ContractsConfigBuilder {
        ContractsConfigBuilder {
            config: ContractsConfig::default(),
            exec_ttl: None,
            queue_ttl: None,
            retention: None,
        }
    }

    /// A builder starting from this configuration.
    pub fn to_builder(&self) -> ContractsConfigBuilder {
        ContractsConfigBuilder {
            config: self.clone(),
            exec_ttl: None,
            queue_ttl: None,
            retention: None,
        }
    }

    /// The lease a claim gets when its dispatch gave none.
    pub fn default_exec_ttl(&self) -> Duration {
        Duration::from_secs(u64::from(self.default_exec_ttl_sec))
    }

    /// The queue window of a dispatch that gave none.
    pub fn default_queue_ttl(&self) -> Duration {
        Duration::from_secs(u64::from(self.default_queue_ttl_sec))
    }

    /// Whether holder calls without a claim epoch are refused `EPOCH_REQUIRED`.
    pub fn require_claim_epoch(&self) -> bool {
        self.require_claim_epoch
    }

    /// The directories a workspace root must lie in.
    pub fn allowed_roots(&self) -> &AllowedRoots {
        &self.allowed_roots
    }

    /// How long a finished contract (`COMPLETED`, `FAILED`, `CANCELLED`, `TIMED_OUT`,
    /// `POINTER_STALE`) is kept after it ended before the retention purge deletes it
    /// ([`crate::Contracts::purge_finished`]); `None`: kept until deleted by hand
    /// ([`crate::Contracts::purge_terminal`]).
    pub fn finished_retention(&self) -> Option<Duration> {
        self.finished_retention_sec.map(Duration::from_secs)
    }

    pub(crate) fn default_exec_ttl_sec(&self) -> u32 {
        self.default_exec_ttl_sec
    }

    pub(crate) fn default_queue_ttl_sec(&self) -> u32 {
        self.default_queue_ttl_sec
    }
}

/// Builds a [`ContractsConfig`]; [`ContractsConfigBuilder::build`] checks it.
#[derive(Debug, Clone)]
pub struct ContractsConfigBuilder {
    config: ContractsConfig,
    exec_ttl: Option<Duration>,
    queue_ttl: Option<Duration>,
    retention: Option<Option<Duration>>,
}

impl ContractsConfigBuilder {
    /// The lease of a dispatch that gives none: whole seconds from 1 minute to 24 hours (default 30
    /// minutes).
    pub fn default_exec_ttl(mut self, ttl: Duration) -> Self {
        self.exec_ttl = Some(ttl);
        self
    }

    /// The queue window of a dispatch that gives none: whole seconds from 1 minute to 7 days (default
    /// 4 hours).
    pub fn default_queue_ttl(mut self, ttl: Duration) -> Self {
        self.queue_ttl = Some(ttl);
        self
    }

    /// Refuse holder calls without a claim epoch (`EPOCH_REQUIRED`); default off (such a call is
    /// checked by identity and warned).
    pub fn require_claim_epoch(mut self, required: bool) -> Self {
        self.config.require_claim_epoch = required;
        self
    }

    /// The directories workspace roots must lie in (default: the user's home directory and the
    /// system's temporary directory).
    pub fn allowed_roots(mut self, roots: AllowedRoots) -> Self {
        self.config.allowed_roots = roots;
        self
    }

    /// How long finished contracts are kept before the retention purge deletes them: whole seconds
    /// from 1 minute to 100 years (default 7 days); `None` keeps them until they are deleted by hand.
    pub fn finished_retention(mut self, retention: Option<Duration>) -> Self {
        self.retention = Some(retention);
        self
    }

    /// The configuration, or which setting is out of its bounds.
    pub fn build(self) -> Result<ContractsConfig, ConfigError> {
        let mut config = self.config;
        if let Some(retention) = self.retention {
            config.finished_retention_sec = match retention {
                None => None,
                Some(d) => Some(
                    whole_seconds_u64(d, MIN_FINISHED_RETENTION_SEC, MAX_FINISHED_RETENTION_SEC)
                        .ok_or(ConfigError::FinishedRetention { given: d })?,
                ),
            };
        }
        if let Some(ttl) = self.exec_ttl {
            config.default_exec_ttl_sec = whole_seconds(ttl, MIN_EXEC_TTL_SEC, MAX_EXEC_TTL_SEC)
                .ok_or(ConfigError::DefaultExecTtl { given: ttl })?;
        }
        if let Some(ttl) = self.queue_ttl {
            config.default_queue_ttl_sec = whole_seconds(ttl, MIN_QUEUE_TTL_SEC, MAX_QUEUE_TTL_SEC)
                .ok_or(ConfigError::DefaultQueueTtl { given: ttl })?;
        }
        Ok(config)
    }
}

fn whole_seconds_u64(d: Duration, min: u64, max: u64) -> Option<u64> {
    (d.subsec_nanos() == 0 && (min..=max).contains(&d.as_secs())).then_some(d.as_secs())
}

fn whole_seconds(d: Duration, min: u32, max: u32) -> Option<u32> {
    if d.subsec_nanos() != 0 {
        return None;
    }
    u32::try_from(d.as_secs())
        .ok()
        .filter(|s| (min..=max).contains(s))
}

/// Why a configuration was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The default lease is not whole seconds from 1 minute to 24 hours.
    #[error("the default lease (exec TTL) must be a whole number of seconds from 60 to 86400, not {given:?}")]
    DefaultExecTtl {
        /// The duration given.
        given: Duration,
    },
    /// The default queue window is not whole seconds from 1 minute to 7 days.
    #[error(
        "the default queue window (queue TTL) must be a whole number of seconds from 60 to 604800, not {given:?}"
    )]
    DefaultQueueTtl {
        /// The duration given.
        given: Duration,
    },
    /// The retention of finished contracts is not whole seconds from 1 minute to 100 years.
    #[error(
        "the retention of finished contracts must be a whole number of seconds from 60 to 3153600000, not {given:?}"
    )]
    FinishedRetention {
        /// The duration given.
        given: Duration,
    },
}

/// Reads a retention of finished contracts as a person writes it: a whole number of seconds,
/// minutes, hours or days (`3600`, `3600s`, `90m`, `24h`, `7d`), or `forever` (`None`: kept until
/// deleted by hand). The bounds are [`ContractsConfigBuilder::finished_retention`]'s.
///
/// ```
/// use shiftwork_contracts::parse_retention;
/// use std::time::Duration;
/// assert_eq!(parse_retention("7d").unwrap(), Some(Duration::from_secs(7 * 86_400)));
/// assert_eq!(parse_retention(" 24H ").unwrap(), Some(Duration::from_secs(86_400)));
/// assert_eq!(parse_retention("forever").unwrap(), None);
/// assert!(parse_retention("30").is_err(), "below a minute");
/// assert!(parse_retention("1w").is_err());
/// ```
pub fn parse_retention(text: &str) -> Result<Option<Duration>, RetentionError> {
    let refused = || RetentionError {
        given: shiftwork_seams::echo::escape_controls(&shiftwork_seams::echo::clip_echo(text)).into_owned(),
    };
    let t = text.trim().to_ascii_lowercase();
    if t == "forever" {
        return Ok(None);
    }
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => t.split_at(i),
        None => (t.as_str(), "s"),
    };
    let scale: u64 = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(refused()),
    };
    let n: u64 = digits.parse().map_err(|_| refused())?;
    let secs = n.checked_mul(scale).ok_or_else(refused)?;
    if !(MIN_FINISHED_RETENTION_SEC..=MAX_FINISHED_RETENTION_SEC).contains(&secs) {
        return Err(refused());
    }
    Ok(Some(Duration::from_secs(secs)))
}

/// A retention that [`parse_retention`] cannot read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the retention of finished contracts must be a whole number of seconds, minutes, hours or days from 1 minute to 100 years (3600, 90m, 24h, 7d) or 'forever', not '{given}'"
)]
pub struct RetentionError {
    /// The text given, clipped for the message.
    pub given: String,
}

impl ConfigError {
    /// A stable machine name of the error's kind, as every `code()` of the family.
    pub fn code(&self) -> &'static str {
        match self {
            ConfigError::DefaultExecTtl { .. } => "INVALID_DEFAULT_EXEC_TTL",
            ConfigError::DefaultQueueTtl { .. } => "INVALID_DEFAULT_QUEUE_TTL",
            ConfigError::FinishedRetention { .. } => "INVALID_FINISHED_RETENTION",
        }
    }
}

impl RetentionError {
    /// A stable machine name of the error's kind, as every `code()` of the family.
    pub fn code(&self) -> &'static str {
        "INVALID_FINISHED_RETENTION"
    }
}

impl shiftwork_seams::Coded for RetentionError {
    fn code(&self) -> &'static str {
        RetentionError::code(self)
    }
}

impl shiftwork_seams::Coded for ConfigError {
    fn code(&self) -> &'static str {
        ConfigError::code(self)
    }
}
