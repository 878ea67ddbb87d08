//! The one agent-id grammar of the whole family: who an agent is, wherever an agent is named — a
//! contract's requester and target, a clock-out's `agent_id`, a bearer token's agent, the server's
//! `--agent` default.
//!
//! An agent id is 1 to 64 ASCII characters of `A-Z a-z 0-9 . _ @ : -`, starting with a letter or a
//! digit: `alice`, `bob.smith`, `ci-runner-7`, `svc:deploy@eu`. It never holds whitespace, a path
//! separator or a control character, so it is safe in a file name, a log line and a URL.
//!
//! [`AgentId`] is the one type of an agent's id, shared by every crate of the family (re-exported as
//! `shiftwork_core::AgentId` and `shiftwork_contracts::AgentId`): one constructor, [`AgentId::new`],
//! and one error, [`AgentIdError`].
//!
//! ```
//! use shiftwork_seams::agent::{check_agent_id, AgentId, AgentIdError};
//! assert_eq!(AgentId::new("bob.smith").unwrap().as_str(), "bob.smith");
//! assert_eq!(AgentId::new("-x"), Err(AgentIdError::BadStart { found: '-' }));
//! assert_eq!(check_agent_id("bob.smith"), Ok(()));
//! assert_eq!(check_agent_id(""), Err(AgentIdError::Empty));
//! assert_eq!(check_agent_id("-x"), Err(AgentIdError::BadStart { found: '-' }));
//! assert_eq!(check_agent_id("bad name"), Err(AgentIdError::BadCharacter { found: ' ', at: 3 }));
//! assert_eq!(check_agent_id(&"a".repeat(65)), Err(AgentIdError::TooLong { length: 65 }));
//! assert_eq!(
//!     AgentIdError::BadCharacter { found: ' ', at: 3 }.to_string(),
//!     "an agent id may hold only A-Z a-z 0-9 . _ @ : -, and ' ' at byte 3 is none of them"
//! );
//! ```

/// The most bytes of an agent id.
pub const MAX_AGENT_ID: usize = 64;

/// Why a text is not an agent id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AgentIdError {
    /// The text is empty.
    #[error("an agent id is 1 to 64 characters, and this one is empty")]
    Empty,
    /// The text is longer than [`MAX_AGENT_ID`] bytes.
    #[error("an agent id is at most 64 characters, and this one has {length} bytes")]
    TooLong {
        /// Its length in bytes.
        length: usize,
    },
    /// The first character is not a letter or a digit.
    #[error("an agent id starts with a letter or a digit, not {found:?}")]
    BadStart {
        /// The first character.
        found: char,
    },
    /// A character outside the grammar.
    #[error("an agent id may hold only A-Z a-z 0-9 . _ @ : -, and {found:?} at byte {at} is none of them")]
    BadCharacter {
        /// The character.
        found: char,
        /// Its byte offset.
        at: usize,
    },
}

impl AgentIdError {
    /// A stable machine name of the error: `AGENT_ID_EMPTY`, `AGENT_ID_TOO_LONG`,
    /// `AGENT_ID_BAD_START`, `AGENT_ID_BAD_CHARACTER`.
    pub fn code(&self) -> &'static str {
        match self {
            AgentIdError::Empty => "AGENT_ID_EMPTY",
            AgentIdError::TooLong { .. } => "AGENT_ID_TOO_LONG",
            AgentIdError::BadStart { .. } => "AGENT_ID_BAD_START",
            AgentIdError::BadCharacter { .. } => "AGENT_ID_BAD_CHARACTER",
        }
    }
}

/// Who an agent is: a text of the agent-id grammar (see the module's documentation), valid by
/// construction. Compared exactly (case-sensitive). With the `serde` feature it is written as its
/// string and read through the grammar.
///
/// ```
/// use shiftwork_seams::agent::{AgentId, AgentIdError};
/// let bob = AgentId::new("bob.smith").unwrap();
/// assert_eq!(bob.as_str(), "bob.smith");
/// assert_eq!(bob.to_string(), "bob.smith");
/// assert_eq!(AgentId::new("bad name"), Err(AgentIdError::BadCharacter { found: ' ', at: 3 }));
/// assert!("claude-main".parse::<AgentId>().is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(try_from = "String", into = "String"))]
pub struct AgentId(String);

impl AgentId {
    /// The agent id `text`, or why it is not one.
    pub fn new(text: impl Into<String>) -> Result<AgentId, AgentIdError> {
        let text = text.into();
        check_agent_id(&text)?;
        Ok(AgentId(text))
    }

    /// The agent id `text`, or why it is not one.
    #[deprecated(
        since = "0.2.0",
        note = "renamed to `AgentId::new`, the one constructor of the family's agent id"
    )]
    pub fn parse(text: &str) -> Result<AgentId, AgentIdError> {
        AgentId::new(text)
    }

    /// The id.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The id, owned.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl std::fmt::Display for AgentId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for AgentId {
    type Err = AgentIdError;
    fn from_str(text: &str) -> Result<AgentId, AgentIdError> {
        AgentId::new(text)
    }
}

impl TryFrom<String> for AgentId {
    type Error = AgentIdError;
    fn try_from(text: String) -> Result<AgentId, AgentIdError> {
        AgentId::new(text)
    }
}

impl TryFrom<&str> for AgentId {
    type Error = AgentIdError;
    fn try_from(text: &str) -> Result<AgentId, AgentIdError> {
        AgentId::new(text)
    }
}

impl From<AgentId> for String {
    fn from(id: AgentId) -> String {
        id.0
    }
}

impl AsRef<str> for AgentId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for AgentId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for AgentId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for AgentId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// Checks `text` against the agent-id grammar (see the module's documentation).
pub fn check_agent_id(text: &str) -> Result<(), AgentIdError> {
    let Some(first) = text.chars().next() else {
        return Err(AgentIdError::Empty);
    };
    if !first.is_ascii_alphanumeric() {
        return Err(AgentIdError::BadStart { found: first });
    }
    if let Some((at, found)) = text
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '@' | ':' | '-')))
    {
        return Err(AgentIdError::BadCharacter { found, at });
    }
    if text.len() > MAX_AGENT_ID {
        return Err(AgentIdError::TooLong { length: text.len() });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_accepts_exactly_its_characters() {
        for (text, ok) in [
            ("a", true),
            ("7", true),
            ("bob.smith", true),
            ("svc:deploy@eu", true),
            ("under_score-dash", true),
            (".x", false),
            ("_x", false),
            ("a/b", false),
            ("a\u{1b}", false),
            ("é", false),
            ("a b", false),
        ] {
            assert_eq!(check_agent_id(text).is_ok(), ok, "{text:?}");
        }
        assert!(check_agent_id(&"a".repeat(64)).is_ok());
    }
}
