//! The crate's error.

use shiftwork_seams::echo::escape_controls as inert;

/// Why the view could not start or a picture could not be drawn. The messages name what was wrong,
/// never a command-line flag (the adapter adds those hints). Every message is inert text: what it
/// repeats of an input (an hours expression, an agent name, an operating system's text holding a
/// path) has its control and bidirectional characters escaped
/// ([`shiftwork_seams::echo::escape_controls`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WatchError {
    /// The hours expression does not parse.
    #[error("the hours expression is invalid: {}", inert(&.0.to_string()))]
    Hours(#[from] shiftwork_hours::ParseError),
    /// The agent name is not one (the agent-id grammar of [`shiftwork_seams::agent`]).
    #[error("{0:?} is not an agent name: 1 to 64 of A-Z a-z 0-9 . _ @ : -, starting with a letter or digit")]
    Agent(String),
    /// The live view needs a terminal on standard output.
    #[error("standard output is not a terminal")]
    NotATerminal,
    /// The terminal could not be set up, drawn on or restored.
    #[error("the terminal failed: {}", inert(&.0.to_string()))]
    Terminal(std::io::Error),
    /// File changes cannot be watched.
    #[error("file changes cannot be watched: {}", inert(&.0.to_string()))]
    Notify(#[from] notify::Error),
    /// A checkpoint could not be read or planned: the shift-work tools' own sentence.
    #[error("{}", inert(.0))]
    Plan(String),
    /// Writing the output failed.
    #[error("the output could not be written: {}", inert(&.0.to_string()))]
    Output(std::io::Error),
}

impl WatchError {
    /// A stable machine name of the error's kind, as every `code()` of the family.
    pub fn code(&self) -> &'static str {
        match self {
            WatchError::Hours(inner) => inner.code(),
            WatchError::Agent(..) => "WATCH_AGENT",
            WatchError::NotATerminal => "WATCH_NOT_A_TERMINAL",
            WatchError::Terminal(..) => "WATCH_TERMINAL",
            WatchError::Notify(..) => "WATCH_NOTIFY",
            WatchError::Plan(..) => "WATCH_PLAN",
            WatchError::Output(..) => "WATCH_OUTPUT",
        }
    }
}

impl shiftwork_seams::Coded for WatchError {
    fn code(&self) -> &'static str {
        WatchError::code(self)
    }
}
