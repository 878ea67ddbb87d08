//! Who looks at the web view: a sign-in that takes a token once, and the short-lived session it opens.
//!
//! A browser cannot put a bearer header on a page load, so the sign-in form sends the token once, in
//! the body of a `POST` (never in a URL). The server checks it as it checks every MCP request
//! ([`Auth::authenticate`]), keeps it in memory for the session, and answers with a session cookie:
//!
//! - **Signed.** `v1.<id>.<expiry>.<mac>`: a random 128-bit id, the expiry in Unix seconds, and an
//!   HMAC-SHA-256 of both under a key drawn at start-up; a cookie whose MAC does not verify, or whose
//!   expiry has passed, is refused before the session table is looked at.
//! - **Short-lived.** [`IDLE`] after its last renewal (the page renews it while it is open), never
//!   past [`LIFETIME`] after the sign-in; a restarted server knows no session.
//! - **Held by the browser only for this server.** `HttpOnly`, `SameSite=Strict`, `Secure` and the
//!   `__Host-` prefix when the server speaks TLS.
//! - **Revoked with its token.** Every request and every second of an event stream checks the kept
//!   token again: a token revoked in the token file, or a JWT that expired or whose key left the
//!   issuer's set, ends the session at once, and the session's agent must still be the token's.
//!
//! Sign-in and sign-out are the only requests that change anything; both are `POST`s that must come
//! from the page itself (their `Origin` is the server's own, or `Sec-Fetch-Site` says
//! `same-origin`), and sign-out carries a token derived from the session ([`Sessions::csrf`]).
//! Bounds: [`MAX_SESSIONS`] sessions, [`MAX_PER_AGENT`] per agent (a new one ends the agent's
//! oldest), and a request rate per session ([`RATE`], [`BURST`]).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hmac::{KeyInit as _, Mac as _};

use super::super::auth::{Agent, Auth, AuthError};

/// How long a session lives after its last renewal.
pub const IDLE: Duration = Duration::from_secs(30 * 60);
/// How long a session lives at most after its sign-in.
pub const LIFETIME: Duration = Duration::from_secs(12 * 60 * 60);
/// The most sessions the server keeps.
pub const MAX_SESSIONS: usize = 1024;
/// The most sessions one agent keeps; a new sign-in ends its oldest.
pub const MAX_PER_AGENT: usize = 16;
/// The requests a second a session may make, on average.
pub const RATE: f64 = 10.0;
/// The requests a session may make at once before [`RATE`] applies.
pub const BURST: f64 = 40.0;
/// The event streams one session may hold open.
pub const MAX_STREAMS_PER_SESSION: usize = 4;
/// How long a credential check is trusted before the token is checked again.
pub const RECHECK: Duration = Duration::from_secs(1);

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// A session's id.
pub type SessionId = [u8; 16];

/// The sessions of the web view.
pub struct Sessions {
    key: [u8; 32],
    secure: bool,
    table: Mutex<HashMap<SessionId, Session>>,
}

struct Session {
    agent: Agent,
    /// The token the session signed in with, checked again on every request; never written
    /// anywhere.
    token: String,
    signed_in: Instant,
    expires: Instant,
    checked: Instant,
    bucket: Bucket,
    streams: usize,
}

/// Why a request has no session.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// No session cookie, or one this server did not sign or that has expired.
    #[error("not signed in")]
    None,
    /// The session's token is no longer accepted.
    #[error("the session ended: {0}")]
    Revoked(AuthError),
    /// The session made too many requests.
    #[error("too many requests from this session; slow down")]
    TooMany,
}

/// A session a request was made in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    /// Its id.
    pub id: SessionId,
    /// The agent its token names.
    pub agent: Agent,
}

/// A token bucket: `rate` a second, at most `burst` at once.
#[derive(Debug, Clone)]
pub struct Bucket {
    level: f64,
    at: Instant,
    rate: f64,
    burst: f64,
}

impl Bucket {
    /// A full bucket.
    pub fn new(rate: f64, burst: f64) -> Bucket {
        Bucket {
            level: burst,
            at: Instant::now(),
            rate,
            burst,
        }
    }

    /// Takes one request; false when the bucket is empty.
    pub fn take(&mut self) -> bool {
        let now = Instant::now();
        self.level = (self.level + now.duration_since(self.at).as_secs_f64() * self.rate).min(self.burst);
        self.at = now;
        if self.level >= 1.0 {
            self.level -= 1.0;
            true
        } else {
            false
        }
    }
}

impl Sessions {
    /// No session yet; `secure` when the server speaks TLS (the cookie is then `Secure`).
    pub fn new(secure: bool) -> Result<Sessions, String> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| format!("the web view cannot draw its session key: {e}"))?;
        Ok(Sessions {
            key,
            secure,
            table: Mutex::new(HashMap::new()),
        })
    }

    /// The cookie's name: `__Host-shiftwork-ui` over TLS, `shiftwork-ui` otherwise.
    pub fn cookie_name(&self) -> &'static str {
        if self.secure {
            "__Host-shiftwork-ui"
        } else {
            "shiftwork-ui"
        }
    }

    /// Signs `token` in: its agent and the `Set-Cookie` value of the new session.
    pub fn sign_in(&self, auth: &Auth, token: &str) -> Result<(Agent, String), AuthError> {
        let agent = check(auth, token)?;
        let mut id = [0u8; 16];
        getrandom::fill(&mut id).map_err(|_| AuthError::Invalid("the server cannot draw a session id"))?;
        let now = Instant::now();
        let mut table = self.lock();
        table.retain(|_, s| s.expires > now && s.signed_in + LIFETIME > now);
        let mut mine: Vec<(Instant, SessionId)> = table
            .iter()
            .filter(|(_, s)| s.agent == agent)
            .map(|(k, s)| (s.signed_in, *k))
            .collect();
        mine.sort();
        for (_, old) in mine.iter().take((mine.len() + 1).saturating_sub(MAX_PER_AGENT)) {
            table.remove(old);
        }
        if table.len() >= MAX_SESSIONS
            && let Some(oldest) = table.iter().min_by_key(|(_, s)| s.signed_in).map(|(k, _)| *k)
        {
            table.remove(&oldest);
        }
        let expires = now + IDLE;
        table.insert(
            id,
            Session {
                agent: agent.clone(),
                token: token.to_owned(),
                signed_in: now,
                expires,
                checked: now,
                bucket: Bucket::new(RATE, BURST),
                streams: 0,
            },
        );
        Ok((agent, self.cookie(&id, IDLE)))
    }

    /// The session of a request whose `Cookie` headers are `cookies`, its token checked again (at
    /// most [`RECHECK`] after the last check) and one request taken from its rate when `counted`.
    pub fn session<'c>(
        &self,
        auth: &Auth,
        cookies: impl Iterator<Item = &'c str>,
        counted: bool,
    ) -> Result<Signed, SessionError> {
        let id = cookies
            .flat_map(|header| header.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .filter(|(name, _)| *name == self.cookie_name())
            .find_map(|(_, value)| self.verify(value))
            .ok_or(SessionError::None)?;
        self.check_session(auth, &id, counted)
    }

    /// Checks the session `id` again (an event stream's tick): its token at most [`RECHECK`] after
    /// the last check.
    pub fn check_session(&self, auth: &Auth, id: &SessionId, counted: bool) -> Result<Signed, SessionError> {
        let now = Instant::now();
        let (agent, token) = {
            let mut table = self.lock();
            let session = table.get_mut(id).ok_or(SessionError::None)?;
            if session.expires <= now || session.signed_in + LIFETIME <= now {
                table.remove(id);
                return Err(SessionError::None);
            }
            if counted && !session.bucket.take() {
                return Err(SessionError::TooMany);
            }
            if now.duration_since(session.checked) < RECHECK {
                return Ok(Signed {
                    id: *id,
                    agent: session.agent.clone(),
                });
            }
            (session.agent.clone(), session.token.clone())
        };
        // The check reads the token file or verifies a JWT: outside the table's lock.
        let verdict = check(auth, &token).and_then(|now_agent| {
            if now_agent == agent {
                Ok(())
            } else {
                Err(AuthError::Invalid("it names another agent now"))
            }
        });
        let mut table = self.lock();
        match verdict {
            Ok(()) => {
                if let Some(session) = table.get_mut(id) {
                    session.checked = now;
                }
                Ok(Signed { id: *id, agent })
            }
            Err(e) => {
                table.remove(id);
                Err(SessionError::Revoked(e))
            }
        }
    }

    /// A fresh cookie for the session `id` ([`IDLE`] from now, never past its [`LIFETIME`]).
    pub fn renew(&self, id: &SessionId) -> Option<String> {
        let now = Instant::now();
        let mut table = self.lock();
        let session = table.get_mut(id)?;
        let end = session.signed_in + LIFETIME;
        session.expires = (now + IDLE).min(end);
        let left = session.expires.saturating_duration_since(now);
        drop(table);
        Some(self.cookie(id, left))
    }

    /// Ends the session `id`; the `Set-Cookie` value that clears it.
    pub fn sign_out(&self, id: &SessionId) -> String {
        self.lock().remove(id);
        self.clearing_cookie()
    }

    /// The `Set-Cookie` value that clears the session cookie.
    pub fn clearing_cookie(&self) -> String {
        format!("{}=; Max-Age=0; {}", self.cookie_name(), self.attributes())
    }

    /// The session's sign-out token: derived from its id under the server's key, so a page of another
    /// site cannot know it.
    pub fn csrf(&self, id: &SessionId) -> String {
        let mut mac = self.mac();
        mac.update(b"sign-out.");
        mac.update(id);
        hex(&mac.finalize().into_bytes()[..16])
    }

    /// Whether `given` is the sign-out token of session `id` (compared in constant time).
    pub fn csrf_matches(&self, id: &SessionId, given: &str) -> bool {
        let Some(bytes) = unhex(given) else {
            return false;
        };
        let mut mac = self.mac();
        mac.update(b"sign-out.");
        mac.update(id);
        mac.verify_truncated_left(&bytes).is_ok() && bytes.len() == 16
    }

    /// Opens an event stream of session `id`; false when it holds [`MAX_STREAMS_PER_SESSION`].
    pub fn open_stream(&self, id: &SessionId) -> bool {
        let mut table = self.lock();
        match table.get_mut(id) {
            Some(session) if session.streams < MAX_STREAMS_PER_SESSION => {
                session.streams += 1;
                true
            }
            _ => false,
        }
    }

    /// Closes an event stream of session `id`.
    pub fn close_stream(&self, id: &SessionId) {
        if let Some(session) = self.lock().get_mut(id) {
            session.streams = session.streams.saturating_sub(1);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Session>> {
        // The table holds plain values; a panic elsewhere cannot leave one half-written.
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn mac(&self) -> HmacSha256 {
        // HMAC takes a key of any length: this never fails.
        match HmacSha256::new_from_slice(&self.key) {
            Ok(mac) => mac,
            Err(_) => unreachable!("HMAC accepts a 32-byte key"),
        }
    }

    /// The cookie value of session `id` for `max_age`, with its attributes.
    fn cookie(&self, id: &SessionId, max_age: Duration) -> String {
        let expiry = unix_now() + max_age.as_secs();
        let payload = format!("v1.{}.{expiry}", hex(id));
        let mut mac = self.mac();
        mac.update(payload.as_bytes());
        let signature = hex(&mac.finalize().into_bytes());
        format!(
            "{}={payload}.{signature}; Max-Age={}; {}",
            self.cookie_name(),
            max_age.as_secs(),
            self.attributes()
        )
    }

    fn attributes(&self) -> &'static str {
        if self.secure {
            "Path=/; HttpOnly; SameSite=Strict; Secure"
        } else {
            "Path=/ui; HttpOnly; SameSite=Strict"
        }
    }

    /// The session id of a cookie value this server signed and that has not expired.
    fn verify(&self, value: &str) -> Option<SessionId> {
        let (payload, signature) = value.rsplit_once('.')?;
        let mut parts = payload.split('.');
        let (Some("v1"), Some(id), Some(expiry), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let mut mac = self.mac();
        mac.update(payload.as_bytes());
        mac.verify_slice(&unhex(signature)?).ok()?;
        if expiry.parse::<u64>().ok()? <= unix_now() {
            return None;
        }
        unhex(id)?.try_into().ok()
    }
}

/// The agent of `token`, checked as an MCP request's bearer token is.
fn check(auth: &Auth, token: &str) -> Result<Agent, AuthError> {
    let token = token.trim();
    if token.is_empty() || token.len() > 16 * 1024 || token.chars().any(|c| c.is_control() || c == ' ') {
        return Err(AuthError::Invalid(
            "it is empty, too long, or holds a space or a control character",
        ));
    }
    auth.authenticate(Some(format!("Bearer {token}").as_bytes()))
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || text.len() > 128 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 38 item 2: a cookie verifies only as signed, whole and unexpired.
    #[test]
    fn issue38_item2_a_cookie_verifies_only_as_signed() {
        let sessions = Sessions::new(false).unwrap();
        let id = [7u8; 16];
        let cookie = sessions.cookie(&id, IDLE);
        let value = cookie
            .strip_prefix("shiftwork-ui=")
            .and_then(|rest| rest.split(';').next())
            .unwrap();
        assert_eq!(sessions.verify(value), Some(id));
        let other = Sessions::new(false).unwrap();
        let check = |value: &str, expected: Option<SessionId>| {
            assert_eq!(sessions.verify(value), expected, "{value}");
        };
        check(&value.replace("v1.", "v2."), None);
        check(&value[..value.len() - 2], None);
        let (payload, _) = value.rsplit_once('.').unwrap();
        check(&format!("{payload}.{}", "0".repeat(64)), None);
        let expired = format!("v1.{}.{}", hex(&id), unix_now() - 1);
        let mut mac = sessions.mac();
        mac.update(expired.as_bytes());
        check(&format!("{expired}.{}", hex(&mac.finalize().into_bytes())), None);
        assert_eq!(other.verify(value), None, "another server's key");
        check("", None);
        check("v1..1.", None);
        assert!(
            cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && !cookie.contains("Secure")
        );
        let secure = Sessions::new(true).unwrap().cookie(&id, IDLE);
        assert!(
            secure.starts_with("__Host-shiftwork-ui=")
                && secure.contains("; Secure")
                && secure.contains("Path=/;")
        );
    }

    /// Issue 38 item 2: the sign-out token is the session's own.
    #[test]
    fn issue38_item2_the_sign_out_token_is_the_sessions_own() {
        let sessions = Sessions::new(false).unwrap();
        let token = sessions.csrf(&[1; 16]);
        assert!(sessions.csrf_matches(&[1; 16], &token));
        assert!(!sessions.csrf_matches(&[2; 16], &token));
        assert!(!sessions.csrf_matches(&[1; 16], &token[..30]));
        assert!(!sessions.csrf_matches(&[1; 16], ""));
    }

    #[test]
    fn a_bucket_gives_its_burst_then_its_rate() {
        let mut bucket = Bucket::new(1.0, 3.0);
        assert!(bucket.take() && bucket.take() && bucket.take());
        assert!(!bucket.take());
    }
}
