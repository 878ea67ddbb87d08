//! The bearer tokens of `serve --http`: a file of token hashes, one agent each, and the `token add
//! | list | revoke` commands that keep it.
//!
//! A token is 32 random bytes from the operating system, written `swk_` + unpadded base64url (47
//! characters). It is printed once, by `token add`, and never stored: the file keeps its SHA-256. A
//! request's token is hashed and looked up, so checking one costs a hash and a map lookup (well under
//! 10 µs), and the file says nothing an attacker could replay.
//!
//! # The file
//!
//! ```text
//! # shiftwork-mcp bearer tokens: AGENT sha256:HASH CREATED (one per line; `shiftwork-mcp token` keeps it)
//! alice sha256:3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 2026-12-04T10:00:00Z
//! ```
//!
//! Each line names the agent the token authenticates as (the agent-id grammar: 1 to 64 of `A-Z a-z
//! 0-9 . _ @ : -`, starting with a letter or digit), the hash, and when it was made. The commands
//! write the file durably and atomically (a temporary file, fsync, rename), mode 0600, under a lock
//! file beside it; a file or directory that another user may write is refused, since whoever can
//! write it can let any token in. A running server reads the file again when it changes, so a revoked
//! token stops working at once, without a restart; a file that can no longer be read lets no token in.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use shiftwork_seams::Fs as _;

use crate::watched_file::{Trouble, WatchedFile};

/// What begins the name of every token.
pub const TOKEN_PREFIX: &str = "swk_";
/// The first line of a token file.
const HEADER: &str =
    "# shiftwork-mcp bearer tokens: AGENT sha256:HASH CREATED (one per line; `shiftwork-mcp token` keeps it)";
/// The largest token file read (a line is under 200 bytes: this is tens of thousands of agents).
const MAX_FILE: u64 = 4 * 1024 * 1024;

/// Why a token file could not be read or changed; the sentence names the file and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenFileError {
    /// The file could not be read.
    #[error("the token file {path} cannot be read: {reason}")]
    Unreadable {
        /// The file.
        path: String,
        /// The operating system's reason.
        reason: String,
    },
    /// A line of the file is not `AGENT sha256:HASH CREATED`.
    #[error("the token file {path} is not a token file: line {line} is not 'AGENT sha256:HASH CREATED'")]
    Malformed {
        /// The file.
        path: String,
        /// The line's number (1-based).
        line: usize,
    },
    /// The file or its directory may be written by another user.
    #[error(
        "the token file {path} is refused: {what}; run chmod go-w on it (and its directory), or chown it to this user"
    )]
    Unsafe {
        /// The file.
        path: String,
        /// What is wrong, in words.
        what: String,
    },
    /// `token add` for an agent that already has a token.
    #[error(
        "{agent} already has a token in {path}: revoke it first (shiftwork-mcp token revoke {agent} --file {path})"
    )]
    Exists {
        /// The agent.
        agent: String,
        /// The file.
        path: String,
    },
    /// `token revoke` for an agent without a token.
    #[error("{agent} has no token in {path}")]
    NoSuchAgent {
        /// The agent.
        agent: String,
        /// The file.
        path: String,
    },
    /// The agent's name does not follow the agent-id grammar.
    #[error(
        "'{agent}' is not an agent name: use 1 to 64 of A-Z a-z 0-9 . _ @ : -, starting with a letter or digit"
    )]
    BadAgent {
        /// The name given (escaped and clipped).
        agent: String,
    },
    /// Writing the file failed; it is as it was.
    #[error("the token file {path} could not be written ({reason}); it is as it was")]
    Write {
        /// The file.
        path: String,
        /// The reason.
        reason: String,
    },
}

/// One line of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenEntry {
    /// The agent the token authenticates as.
    pub agent: String,
    /// The SHA-256 of the token.
    pub hash: [u8; 32],
    /// When it was made (RFC 3339, as written).
    pub created: String,
}

/// Whether `name` follows the agent-id grammar every crate of the family uses
/// ([`shiftwork_seams::agent`]).
pub fn is_agent_name(name: &str) -> bool {
    shiftwork_seams::agent::check_agent_id(name).is_ok()
}

/// The SHA-256 of a presented token.
pub fn token_hash(token: &str) -> [u8; 32] {
    shiftwork_seams::hash::sha256(token.as_bytes())
}

/// A new token: `swk_` and 32 random bytes in unpadded base64url.
pub fn new_token() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("the system gave no random bytes: {e}"))?;
    Ok(format!("{TOKEN_PREFIX}{}", base64url(&bytes)))
}

fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len() * 4 / 3 + 3);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().fold(0u32, |n, b| (n << 8) | u32::from(*b)) << (8 * (3 - chunk.len()));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

/// Parses a token file's text.
pub fn parse(path: &str, text: &str) -> Result<Vec<TokenEntry>, TokenFileError> {
    let mut entries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let malformed = || TokenFileError::Malformed {
            path: path.to_owned(),
            line: i + 1,
        };
        let mut fields = line.split_ascii_whitespace();
        let (Some(agent), Some(hash), Some(created), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(malformed());
        };
        let hash = hash
            .strip_prefix("sha256:")
            .and_then(unhex)
            .ok_or_else(malformed)?;
        if !is_agent_name(agent) {
            return Err(malformed());
        }
        entries.push(TokenEntry {
            agent: agent.to_owned(),
            hash,
            created: created.to_owned(),
        });
    }
    Ok(entries)
}

fn unhex(text: &str) -> Option<[u8; 32]> {
    let bytes = text.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in bytes.chunks(2).enumerate() {
        let digit = |b: u8| (b as char).to_digit(16);
        out[i] = u8::try_from(digit(pair[0])? * 16 + digit(pair[1])?).ok()?;
    }
    Some(out)
}

/// The text of a token file holding `entries`.
pub fn render(entries: &[TokenEntry]) -> String {
    let mut text = format!("{HEADER}\n");
    for e in entries {
        let _ = writeln!(
            text,
            "{} sha256:{} {}",
            e.agent,
            shiftwork_seams::hash::hex(&e.hash),
            e.created
        );
    }
    text
}

/// Reads and parses a token file, refusing an unsafe one (the rule of
/// [`crate::watched_file::check_safe`]).
pub fn read(path: &Path) -> Result<Vec<TokenEntry>, TokenFileError> {
    load(path, &|bytes| parse_bytes(&path.display().to_string(), bytes))
}

/// The text of a token file's bytes, parsed.
fn parse_bytes(shown: &str, bytes: &[u8]) -> Result<Vec<TokenEntry>, TokenFileError> {
    let text = std::str::from_utf8(bytes).map_err(|_| TokenFileError::Malformed {
        path: shown.to_owned(),
        line: 1,
    })?;
    parse(shown, text)
}

/// Judges the file, reads it and applies `read`; a trouble becomes the token file's error.
fn load<T>(path: &Path, read: &dyn Fn(&[u8]) -> Result<T, TokenFileError>) -> Result<T, TokenFileError> {
    let shown = path.display().to_string();
    let trouble = |t: Trouble| match t {
        Trouble::Unreadable(reason) | Trouble::Content(reason) => TokenFileError::Unreadable {
            path: shown.clone(),
            reason,
        },
        Trouble::Unsafe(what) => TokenFileError::Unsafe {
            path: shown.clone(),
            what,
        },
    };
    crate::watched_file::check_safe(path).map_err(trouble)?;
    let bytes = crate::settings::read_named_file(path, MAX_FILE)
        .map_err(|reason| trouble(Trouble::Unreadable(reason)))?;
    read(&bytes)
}

/// Changes a token file under its lock: reads it (a missing file is empty), applies `change`, and
/// writes the result durably with mode 0600. Nothing is written when `change` refuses.
fn update<T>(
    path: &Path,
    change: impl FnOnce(&mut Vec<TokenEntry>) -> Result<T, TokenFileError>,
) -> Result<T, TokenFileError> {
    let shown = path.display().to_string();
    let write_error = |reason: String| TokenFileError::Write {
        path: shown.clone(),
        reason,
    };
    let fs = shiftwork_seams::OsFs;
    let lock_path = PathBuf::from(format!("{}.lock", path.display()));
    let _lock = fs
        .lock(&lock_path, std::time::Duration::from_secs(10))
        .map_err(|e| write_error(shiftwork_seams::os_reason(&e)))?;
    let mut entries = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        _ => read(path)?,
    };
    let answer = change(&mut entries)?;
    let text = render(&entries);
    let options = shiftwork_seams::durable::ReplaceOptions {
        mode_if_new: 0o600,
        ..shiftwork_seams::durable::ReplaceOptions::hidden(".shiftwork-tokens-", ".tmp")
    };
    shiftwork_seams::durable::replace_durably(&fs, path, &[text.as_bytes()], &options)
        .map_err(|e| write_error(e.to_string()))?;
    Ok(answer)
}

/// `token add AGENT`: makes a token for `agent`, stores its hash, and returns the token (to print
/// once). Refuses an agent that already has one.
pub fn add(path: &Path, agent: &str, now: chrono::DateTime<chrono::Utc>) -> Result<String, TokenFileError> {
    if !is_agent_name(agent) {
        return Err(TokenFileError::BadAgent {
            agent: shiftwork_seams::echo::escape_controls(&shiftwork_seams::echo::clip(agent, 100))
                .into_owned(),
        });
    }
    let shown = path.display().to_string();
    let token = new_token().map_err(|reason| TokenFileError::Write {
        path: shown.clone(),
        reason,
    })?;
    update(path, |entries| {
        if entries.iter().any(|e| e.agent == agent) {
            return Err(TokenFileError::Exists {
                agent: agent.to_owned(),
                path: shown.clone(),
            });
        }
        entries.push(TokenEntry {
            agent: agent.to_owned(),
            hash: token_hash(&token),
            created: now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        });
        Ok(())
    })?;
    Ok(token)
}

/// `token revoke AGENT`: removes the agent's token.
pub fn revoke(path: &Path, agent: &str) -> Result<(), TokenFileError> {
    let shown = path.display().to_string();
    update(path, |entries| {
        let before = entries.len();
        entries.retain(|e| e.agent != agent);
        if entries.len() == before {
            return Err(TokenFileError::NoSuchAgent {
                agent: shiftwork_seams::echo::escape_controls(&shiftwork_seams::echo::clip(agent, 100))
                    .into_owned(),
                path: shown.clone(),
            });
        }
        Ok(())
    })
}

/// The tokens a running server accepts: a [`WatchedFile`], read again whenever it changed and judged
/// again whenever its owner, its mode or its directory's changed, so a revocation takes effect at the
/// next request, and so does a file that became unsafe (`chmod o+w`, a directory others may write) or
/// unreadable: it lets no token in until it is fixed.
#[derive(Debug)]
pub struct TokenFile {
    file: WatchedFile<HashMap<[u8; 32], String>>,
}

impl TokenFile {
    /// Opens `path`: it must be a safe, readable token file now (the server refuses to start
    /// otherwise).
    pub fn open(path: &Path) -> Result<TokenFile, TokenFileError> {
        // The sentence of every trouble is the one `read` gives; the watched file keeps its words.
        read(path)?;
        let file = WatchedFile::open(path, MAX_FILE, |shown, bytes| {
            parse_bytes(shown, bytes)
                .map(|entries| entries.into_iter().map(|e| (e.hash, e.agent)).collect())
                .map_err(|e| e.to_string())
        })
        .map_err(|t| TokenFileError::Unreadable {
            path: path.display().to_string(),
            reason: t.words().to_owned(),
        })?;
        Ok(TokenFile { file })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// The agent `token` authenticates as, or `None`. The file's stamp is taken at every call; when
    /// it changed, the file's safety is judged again and it is read again, and one that cannot be
    /// read or is no longer safe lets no token in.
    pub fn agent(&self, token: &str) -> Option<String> {
        let hash = token_hash(token);
        self.file.current().ok()?.get(&hash).cloned()
    }
}

/// The usage of `shiftwork-mcp token`.
pub const USAGE: &str =
    "usage: shiftwork-mcp token add AGENT --file FILE     make a token for AGENT (printed once)
       shiftwork-mcp token list --file FILE          the agents that have a token
       shiftwork-mcp token revoke AGENT --file FILE  remove AGENT's token (a running server stops taking it)
";

/// `shiftwork-mcp token …`: the exit status (0, 1 on a failure, 2 on a usage error).
pub fn command(args: &[String]) -> i32 {
    use crate::terminal::{print_err, print_out};
    if args.iter().any(|a| a == "--help" || a == "-h") {
        print_out(USAGE);
        return 0;
    }
    let mut file = None;
    let mut rest = Vec::new();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--file" if i + 1 < args.len() => {
                file = Some(PathBuf::from(&args[i + 1]));
                i += 2;
            }
            other if other.starts_with("--file=") => {
                file = Some(PathBuf::from(&other["--file=".len()..]));
                i += 1;
            }
            other => {
                rest.push(other);
                i += 1;
            }
        }
    }
    let usage = |message: &str| {
        print_err(&format!("shiftwork-mcp: {message}\n{USAGE}"));
        2
    };
    let Some(file) = file else {
        return usage("token needs --file FILE");
    };
    let outcome = match rest.as_slice() {
        ["add", agent] => add(&file, agent, chrono::Utc::now()).map(|token| {
            print_out(&format!("{token}\n"));
            print_err(&format!(
                "shiftwork-mcp: this is {agent}'s token; it is shown only now. Give it to the agent as \
                 Authorization: Bearer <token>.\n"
            ));
        }),
        ["list"] => read(&file).map(|entries| {
            let mut text = String::new();
            for e in entries {
                let _ = writeln!(text, "{}\t{}", e.agent, e.created);
            }
            print_out(&text);
        }),
        ["revoke", agent] => revoke(&file, agent).map(|()| {
            print_err(&format!("shiftwork-mcp: {agent}'s token is revoked\n"));
        }),
        _ => return usage("token takes add AGENT, list or revoke AGENT"),
    };
    match outcome {
        Ok(()) => 0,
        Err(e) => {
            print_err(&format!("shiftwork-mcp: {e}\n"));
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any text parses or is refused naming a line — never a panic; and what `render` writes
        /// parses back to the same entries.
        #[test]
        fn any_text_parses_or_names_a_line_and_a_rendered_file_reads_back(
            text in "(?s).{0,400}",
            agents in proptest::collection::vec("[a-z0-9][a-z0-9._@:-]{0,20}", 0..8),
            hashes in proptest::collection::vec(any::<[u8; 32]>(), 8),
        ) {
            match parse("f", &text) {
                Ok(entries) => prop_assert!(entries.iter().all(|e| is_agent_name(&e.agent))),
                Err(TokenFileError::Malformed { line, .. }) => prop_assert!(line >= 1 && line <= text.lines().count()),
                Err(other) => prop_assert!(false, "{other}"),
            }
            let entries: Vec<TokenEntry> = agents
                .iter()
                .zip(&hashes)
                .map(|(agent, hash)| TokenEntry { agent: agent.clone(), hash: *hash, created: String::from("2026-12-04T10:00:00Z") })
                .collect();
            prop_assert_eq!(parse("f", &render(&entries)), Ok(entries));
        }
    }

    #[test]
    fn tokens_are_47_characters_of_base64url_and_differ() {
        let a = new_token().unwrap_or_default();
        let b = new_token().unwrap_or_default();
        assert_eq!(a.len(), 47, "{a}");
        assert!(a.starts_with(TOKEN_PREFIX));
        assert!(
            a[4..]
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        );
        assert_ne!(a, b);
        assert_eq!(base64url(b"\xfb\xff"), "-_8");
        assert_eq!(base64url(b"Man"), "TWFu");
    }

    #[test]
    fn a_file_round_trips_and_a_bad_line_is_named() {
        let entries = vec![TokenEntry {
            agent: String::from("alice"),
            hash: token_hash("swk_x"),
            created: String::from("2026-12-04T10:00:00Z"),
        }];
        assert_eq!(parse("f", &render(&entries)), Ok(entries));
        for (text, line) in [
            ("alice sha256:00 2026", 1),
            ("# c\n\nbad name sha256:x y", 3),
            ("alice 00 y", 1),
            (
                "alice sha256:0000000000000000000000000000000000000000000000000000000000000000",
                1,
            ),
        ] {
            assert_eq!(
                parse("f", text),
                Err(TokenFileError::Malformed {
                    path: String::from("f"),
                    line
                }),
                "{text}"
            );
        }
    }
}
