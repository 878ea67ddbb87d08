//! The family's one error: [`Error`], which any error of a shiftwork crate converts into with `?`,
//! keeping the error whole and its stable code.
//!
//! Every error type of the crates built on these seams (`shiftwork-core`'s refusals, the contracts'
//! refusals and store failures, the work log's errors, the watch's, an agent id's, an I/O error)
//! implements [`Coded`]: a `code()` that names its kind as a `&'static str` (`NOT_CURSOR`,
//! `STALE_EPOCH`, `NO_DIR`, …), the same kind of value in every crate. A runtime that calls several of
//! them returns `Result<T, shiftwork_seams::Error>` and writes `?` after each call; it asks the code
//! for logs and metrics, and downcasts to the crate's own type to match a variant.
//! `shiftwork-hours`, which depends on nothing of the family, has the same `code()` on its errors;
//! they enter through [`Error::new`].
//!
//! ```
//! use shiftwork_seams::agent::{AgentId, AgentIdError};
//! use shiftwork_seams::Error;
//!
//! fn register(name: &str) -> Result<AgentId, Error> {
//!     let agent = AgentId::new(name)?;
//!     Ok(agent)
//! }
//! let refused = register("-x").unwrap_err();
//! assert_eq!(refused.code(), "AGENT_ID_BAD_START");
//! assert_eq!(refused.to_string(), "an agent id starts with a letter or a digit, not '-'");
//! assert_eq!(refused.downcast_ref::<AgentIdError>(), Some(&AgentIdError::BadStart { found: '-' }));
//! ```

use std::fmt;

/// An error that names its kind with a stable machine name, for logs and metrics that must not quote
/// its sentence. One code per kind; a code never changes meaning.
pub trait Coded: std::error::Error + Send + Sync + 'static {
    /// The stable machine name of this error's kind (`SCREAMING_SNAKE_CASE`).
    fn code(&self) -> &'static str;
}

/// Any error of the family, kept whole: its code ([`Error::code`]), its sentence (`Display`), and the
/// error itself ([`Error::downcast_ref`], [`Error::into_inner`]).
pub struct Error {
    code: &'static str,
    inner: Box<dyn std::error::Error + Send + Sync + 'static>,
}

impl Error {
    /// `error` under the code `code`: for an error that does not implement [`Coded`] (the hours
    /// crate's, whose `code()` gives the code: `Error::new(e.code(), e)`).
    pub fn new(code: &'static str, error: impl std::error::Error + Send + Sync + 'static) -> Error {
        Error {
            code,
            inner: Box::new(error),
        }
    }

    /// The stable machine name of the error's kind.
    pub fn code(&self) -> &'static str {
        self.code
    }

    /// The error as its own type, when it is an `E`.
    pub fn downcast_ref<E: std::error::Error + 'static>(&self) -> Option<&E> {
        self.inner.downcast_ref::<E>()
    }

    /// Whether the error is an `E`.
    pub fn is<E: std::error::Error + 'static>(&self) -> bool {
        self.inner.is::<E>()
    }

    /// The error itself.
    pub fn into_inner(self) -> Box<dyn std::error::Error + Send + Sync + 'static> {
        self.inner
    }
}

impl<E: Coded> From<E> for Error {
    fn from(error: E) -> Error {
        Error {
            code: error.code(),
            inner: Box::new(error),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.inner, f)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("code", &self.code)
            .field("error", &self.inner)
            .finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner.source()
    }
}

/// An I/O error's code is `IO` (its OS error number stays in the error).
impl Coded for std::io::Error {
    fn code(&self) -> &'static str {
        "IO"
    }
}

impl Coded for crate::agent::AgentIdError {
    fn code(&self) -> &'static str {
        crate::agent::AgentIdError::code(self)
    }
}

impl Coded for crate::durable::ReplaceError {
    fn code(&self) -> &'static str {
        "REPLACE_FAILED"
    }
}
