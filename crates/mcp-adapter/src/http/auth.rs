//! Who a request over HTTP is: every request carries `Authorization: Bearer …`, and the token
//! decides the agent. Two ways, chosen at start-up:
//!
//! - **A token file** ([`crate::tokens::TokenFile`]): the token's hash names the agent.
//! - **An OAuth 2.1 resource server**: the token is a JWT signed by a key of the issuer's JWKS
//!   (RS256 or ES256), whose `iss` is the issuer, whose `aud` holds this server's resource URL
//!   (RFC 8707), which is within `exp`/`nbf` (60 s of leeway), and whose agent claim (`sub` by
//!   default) is an agent name. The server publishes its Protected Resource Metadata (RFC 9728) and
//!   a 401 points to it.
//!
//! A refusal never says more than which rule failed; a token never appears in a log or an answer.

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, PoisonError, RwLock, Weak};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};

use crate::tokens::{TokenFile, is_agent_name};
use crate::watched_file::WatchedFile;

/// The agent a request authenticated as.
pub type Agent = String;

/// How requests are authenticated.
pub enum Auth {
    /// Bearer tokens of a token file.
    Tokens(TokenFile),
    /// JWTs of an OAuth 2.1 authorization server.
    Jwt(Box<JwtVerifier>),
}

/// Why a request was refused: the `error_description` of its 401.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// No `Authorization: Bearer …` header.
    #[error("this server needs an Authorization: Bearer token")]
    Missing,
    /// A token was given and is not accepted.
    #[error("the bearer token is not accepted: {0}")]
    Invalid(&'static str),
}

/// The refusal of a JWT whose key the issuer's set does not hold (now).
const NO_KEY: AuthError = AuthError::Invalid("no key of the issuer signed it");

/// How long a request whose JWT names a key the set lacks waits for the one fetch of the set in
/// flight before it is refused. It waits without a thread: other requests go on meanwhile.
pub const KEY_WAIT: Duration = Duration::from_secs(5);

impl Auth {
    /// The agent of the request whose `Authorization` header is `header`, judged by what the server
    /// holds now: it never reads a network, so it may run anywhere (a waiting call checks its
    /// credentials again with it).
    pub fn authenticate(&self, header: Option<&[u8]>) -> Result<Agent, AuthError> {
        let token = bearer(header)?;
        match self {
            Auth::Tokens(file) => file
                .agent(token)
                .ok_or(AuthError::Invalid("it is unknown or was revoked")),
            Auth::Jwt(verifier) => verifier.verify(token),
        }
    }

    /// [`Auth::authenticate`] for a request: a JWT naming a key the issuer's set lacks asks for the
    /// set to be fetched again (in the background, one fetch at a time, at most once a minute) and
    /// waits for that fetch at most [`KEY_WAIT`] — or, when a fetch was made less than a minute ago,
    /// is refused at once.
    pub async fn authenticate_request(&self, header: Option<&[u8]>) -> Result<Agent, AuthError> {
        match self.authenticate(header) {
            Err(e) if e == NO_KEY => {
                let Auth::Jwt(verifier) = self else {
                    return Err(e);
                };
                let Some(mut fetched) = verifier.refetch() else {
                    return Err(e);
                };
                let _ = tokio::time::timeout(KEY_WAIT, fetched.changed()).await;
                self.authenticate(header)
            }
            other => other,
        }
    }

    /// The resource metadata URL a 401 points to (JWT only).
    pub fn resource_metadata_url(&self) -> Option<String> {
        match self {
            Auth::Tokens(_) => None,
            Auth::Jwt(verifier) => Some(verifier.metadata_url()),
        }
    }

    /// The Protected Resource Metadata document (RFC 9728; JWT only).
    pub fn protected_resource_metadata(&self) -> Option<serde_json::Value> {
        match self {
            Auth::Tokens(_) => None,
            Auth::Jwt(verifier) => Some(serde_json::json!({
                "resource": verifier.audience,
                "authorization_servers": [verifier.issuer],
                "bearer_methods_supported": ["header"],
                "resource_signing_alg_values_supported": ["RS256", "ES256"],
                "resource_name": "shiftwork-mcp",
            })),
        }
    }
}

/// The token of an `Authorization: Bearer …` header (the scheme in any case, RFC 7235).
fn bearer(header: Option<&[u8]>) -> Result<&str, AuthError> {
    let value = header.ok_or(AuthError::Missing)?;
    let value = std::str::from_utf8(value).map_err(|_| AuthError::Invalid("it is not text"))?;
    let (scheme, token) = value.trim().split_once(' ').ok_or(AuthError::Missing)?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(AuthError::Missing);
    }
    let token = token.trim();
    if token.is_empty() || token.len() > 16 * 1024 {
        return Err(AuthError::Invalid("it is empty or too long"));
    }
    Ok(token)
}

/// Where the issuer's keys come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JwksSource {
    /// A JSON Web Key Set in a file: judged and read again whenever it changes, as the token file is.
    File(PathBuf),
    /// A JSON Web Key Set at a URL: fetched at start-up, then in the background — every ten minutes,
    /// and (at most once a minute) when a token names a key the set does not hold.
    Url(String),
}

/// Verifies JWTs against an issuer's keys.
pub struct JwtVerifier {
    issuer: String,
    audience: String,
    agent_claim: String,
    keys: Keys,
}

/// The issuer's keys as the server holds them.
enum Keys {
    File(WatchedFile<JwkSet>),
    Url(Arc<FetchedKeys>),
}

/// How often a key set at a URL is fetched again even when every token names a key it holds, so a
/// key the issuer withdrew stops verifying.
const REFRESH_EVERY: Duration = Duration::from_secs(600);
/// The shortest time between two fetches asked for by tokens naming a key the set lacks.
const REFETCH_AFTER: Duration = Duration::from_secs(60);
/// How long one fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest key set read.
const MAX_JWKS: u64 = 1024 * 1024;

impl JwtVerifier {
    /// A verifier for tokens of `issuer` meant for `audience` (this server's resource URL), the agent
    /// read from the claim `agent_claim`; the keys are read now (a URL is fetched on this thread, at
    /// most 10 s), and then kept fresh in the background.
    pub fn new(
        source: JwksSource,
        issuer: &str,
        audience: &str,
        agent_claim: &str,
    ) -> Result<JwtVerifier, String> {
        let keys = match source {
            JwksSource::File(path) => Keys::File(
                WatchedFile::open(&path, MAX_JWKS, |_, bytes| parse_jwks(bytes))
                    .map_err(|t| format!("the key set {} cannot be used: {}", path.display(), t.words()))?,
            ),
            JwksSource::Url(url) => {
                let set = fetch(&url)?;
                Keys::Url(FetchedKeys::start(url, set))
            }
        };
        Ok(JwtVerifier {
            issuer: issuer.to_owned(),
            audience: audience.to_owned(),
            agent_claim: agent_claim.to_owned(),
            keys,
        })
    }

    /// The RFC 9728 metadata URL of the audience: `/.well-known/oauth-protected-resource` inserted
    /// between its host and its path.
    pub fn metadata_url(&self) -> String {
        metadata_url(&self.audience)
    }

    /// Asks for the key set at a URL to be fetched again, for a token naming a key it lacks: the
    /// receiver of the fetch's end, or `None` when no fetch will come soon (a file, or a fetch made
    /// less than a minute ago).
    fn refetch(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        match &self.keys {
            Keys::File(_) => None,
            Keys::Url(fetched) => fetched.ask(),
        }
    }

    /// The key set held now (`None` when a key set file can no longer be trusted or read).
    fn key_set(&self) -> Option<Arc<JwkSet>> {
        match &self.keys {
            Keys::File(file) => file.current().ok(),
            Keys::Url(fetched) => Some(fetched.current()),
        }
    }

    fn verify(&self, token: &str) -> Result<Agent, AuthError> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| AuthError::Invalid("it is not a JWT"))?;
        if !matches!(header.alg, Algorithm::RS256 | Algorithm::ES256) {
            return Err(AuthError::Invalid("its algorithm is not RS256 or ES256"));
        }
        let set = self.key_set().ok_or(AuthError::Invalid(
            "the server's key set cannot be trusted or read",
        ))?;
        let key = key(&set, header.kid.as_deref(), header.alg).ok_or(NO_KEY)?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = 60;
        let data =
            jsonwebtoken::decode::<serde_json::Map<String, serde_json::Value>>(token, &key, &validation)
                .map_err(|e| {
                    use jsonwebtoken::errors::ErrorKind;
                    AuthError::Invalid(match e.kind() {
                        ErrorKind::ExpiredSignature => "it has expired",
                        ErrorKind::ImmatureSignature => "it is not valid yet (nbf)",
                        ErrorKind::InvalidIssuer => "its issuer (iss) is not this server's",
                        ErrorKind::InvalidAudience => "its audience (aud) is not this server",
                        ErrorKind::InvalidSignature => "its signature does not verify",
                        ErrorKind::MissingRequiredClaim(_) => "it lacks exp, iss or aud",
                        _ => "it does not verify",
                    })
                })?;
        match data
            .claims
            .get(&self.agent_claim)
            .and_then(serde_json::Value::as_str)
        {
            Some(agent) if is_agent_name(agent) => Ok(agent.to_owned()),
            Some(_) => Err(AuthError::Invalid("its agent claim is not an agent name")),
            None => Err(AuthError::Invalid("it has no agent claim")),
        }
    }
}

/// The key of `set` with id `kid` (or, without one, the only key) for `alg`.
fn key(set: &JwkSet, kid: Option<&str>, alg: Algorithm) -> Option<DecodingKey> {
    let fits = |jwk: &&jsonwebtoken::jwk::Jwk| {
        let family = match alg {
            Algorithm::ES256 => matches!(
                jwk.algorithm,
                jsonwebtoken::jwk::AlgorithmParameters::EllipticCurve(_)
            ),
            _ => matches!(jwk.algorithm, jsonwebtoken::jwk::AlgorithmParameters::RSA(_)),
        };
        family && kid.is_none_or(|kid| jwk.common.key_id.as_deref() == Some(kid))
    };
    let mut candidates = set.keys.iter().filter(fits);
    let jwk = candidates.next()?;
    if kid.is_none() && candidates.next().is_some() {
        // Without a key id, only an unambiguous key set verifies.
        return None;
    }
    DecodingKey::from_jwk(jwk).ok()
}

/// A key set at a URL, fetched again by one thread of its own — never by a request's worker, never
/// two fetches at once.
struct FetchedKeys {
    url: String,
    set: RwLock<Arc<JwkSet>>,
    control: Mutex<Control>,
    asked: Condvar,
    /// Counts the fetches that ended (well or not): a request waiting for the one in flight watches it.
    fetched: tokio::sync::watch::Sender<u64>,
}

#[derive(Default)]
struct Control {
    /// A token asked for a fetch that has not started yet.
    wanted: bool,
    /// A fetch is in flight.
    running: bool,
    /// When a token last made a fetch start (the start-up fetch does not count).
    last_asked: Option<Instant>,
}

impl FetchedKeys {
    /// Keeps `set`, fetched from `url`, and starts the thread that fetches it again.
    fn start(url: String, set: JwkSet) -> Arc<FetchedKeys> {
        let keys = Arc::new(FetchedKeys {
            url,
            set: RwLock::new(Arc::new(set)),
            control: Mutex::new(Control::default()),
            asked: Condvar::new(),
            fetched: tokio::sync::watch::Sender::new(0),
        });
        let weak = Arc::downgrade(&keys);
        let started = std::thread::Builder::new()
            .name(String::from("shiftwork-mcp-jwks"))
            .spawn(move || fetch_loop(&weak));
        if let Err(e) = started {
            tracing::warn!("the issuer's keys will not be fetched again: {e}");
        }
        keys
    }

    fn current(&self) -> Arc<JwkSet> {
        Arc::clone(&self.set.read().unwrap_or_else(PoisonError::into_inner))
    }

    fn control(&self) -> std::sync::MutexGuard<'_, Control> {
        // Plain flags: a panic cannot leave them half-written.
        self.control.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A token names a key the set lacks: the receiver of the end of the fetch in flight, or of one
    /// started now when none started in the last [`REFETCH_AFTER`]; `None` otherwise.
    fn ask(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        let mut control = self.control();
        let receiver = self.fetched.subscribe();
        if control.running || control.wanted {
            return Some(receiver);
        }
        if control.last_asked.is_some_and(|at| at.elapsed() < REFETCH_AFTER) {
            return None;
        }
        control.wanted = true;
        control.last_asked = Some(Instant::now());
        self.asked.notify_one();
        Some(receiver)
    }
}

/// The fetching thread: waits until a token asks or [`REFRESH_EVERY`] passed, fetches, keeps the
/// set when it reads, tells the waiting requests; ends when the verifier is gone.
fn fetch_loop(keys: &Weak<FetchedKeys>) {
    let mut last = Instant::now();
    loop {
        let Some(this) = keys.upgrade() else { return };
        {
            let mut control = this.control();
            while !control.wanted && last.elapsed() < REFRESH_EVERY {
                // Wakes now and then to see whether the verifier is still there.
                let (guard, _) = this
                    .asked
                    .wait_timeout(control, Duration::from_secs(30))
                    .unwrap_or_else(PoisonError::into_inner);
                control = guard;
                if Arc::strong_count(&this) == 1 {
                    return;
                }
            }
            control.wanted = false;
            control.running = true;
        }
        let url = this.url.clone();
        drop(this);
        let fetched = fetch(&url);
        last = Instant::now();
        let Some(this) = keys.upgrade() else { return };
        match fetched {
            Ok(set) => *this.set.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(set),
            Err(e) => tracing::warn!("the issuer's keys could not be fetched again: {e}"),
        }
        this.control().running = false;
        this.fetched.send_modify(|n| *n += 1);
    }
}

/// The RFC 9728 metadata URL of a resource URL.
pub fn metadata_url(resource: &str) -> String {
    let (scheme, rest) = resource.split_once("://").unwrap_or(("https", resource));
    let (host, path) = match rest.find('/') {
        Some(at) => (&rest[..at], rest[at..].trim_end_matches('/')),
        None => (rest, ""),
    };
    format!("{scheme}://{host}/.well-known/oauth-protected-resource{path}")
}

/// Fetches the key set at `url` (at most [`FETCH_TIMEOUT`], at most 1 MiB).
fn fetch(url: &str) -> Result<JwkSet, String> {
    let agent = ureq::Agent::config_builder()
        .timeout_global(Some(FETCH_TIMEOUT))
        .build()
        .new_agent();
    let mut response = agent
        .get(url)
        .call()
        .map_err(|e| format!("the key set at {url} cannot be fetched: {e}"))?;
    let bytes = response
        .body_mut()
        .with_config()
        .limit(MAX_JWKS)
        .read_to_vec()
        .map_err(|e| format!("the key set at {url} cannot be read: {e}"))?;
    parse_jwks(&bytes)
}

/// A key set's bytes, read.
fn parse_jwks(bytes: &[u8]) -> Result<JwkSet, String> {
    serde_json::from_slice(bytes).map_err(|e| format!("the key set is not a JSON Web Key Set: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_url_inserts_the_well_known_path_before_the_resource_path() {
        for (resource, url) in [
            (
                "https://mcp.example.com/mcp",
                "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
            ),
            (
                "https://mcp.example.com",
                "https://mcp.example.com/.well-known/oauth-protected-resource",
            ),
            (
                "http://127.0.0.1:8765/mcp/",
                "http://127.0.0.1:8765/.well-known/oauth-protected-resource/mcp",
            ),
        ] {
            assert_eq!(metadata_url(resource), url);
        }
    }

    #[test]
    fn only_a_bearer_header_carries_a_token() {
        for (header, expected) in [
            (None, Err(AuthError::Missing)),
            (Some(&b"Basic abc"[..]), Err(AuthError::Missing)),
            (Some(&b"Bearer"[..]), Err(AuthError::Missing)),
            (Some(&b"bearer  swk_x "[..]), Ok("swk_x")),
            (
                Some(&b"Bearer \xff"[..]),
                Err(AuthError::Invalid("it is not text")),
            ),
        ] {
            assert_eq!(bearer(header), expected, "{header:?}");
        }
    }
}
