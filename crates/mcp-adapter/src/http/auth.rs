//! Who a request over HTTP is (issue 29 item 3): every request carries `Authorization: Bearer …`,
//! and the token decides the agent. Two ways, chosen at start-up:
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
use std::sync::RwLock;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};

use crate::tokens::{TokenFile, is_agent_name};

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

impl Auth {
    /// The agent of the request whose `Authorization` header is `header`.
    pub fn authenticate(&self, header: Option<&[u8]>) -> Result<Agent, AuthError> {
        let token = bearer(header)?;
        match self {
            Auth::Tokens(file) => file
                .agent(token)
                .ok_or(AuthError::Invalid("it is unknown or was revoked")),
            Auth::Jwt(verifier) => verifier.verify(token),
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
    /// A JSON Web Key Set in a file.
    File(PathBuf),
    /// A JSON Web Key Set at a URL (fetched at start-up, and again — at most once a minute — when a
    /// token names a key the set does not hold).
    Url(String),
}

/// Verifies JWTs against an issuer's keys.
pub struct JwtVerifier {
    source: JwksSource,
    issuer: String,
    audience: String,
    agent_claim: String,
    keys: RwLock<(JwkSet, Instant)>,
}

/// How long after fetching the keys an unknown key may make the server fetch them again.
const REFRESH_AFTER: Duration = Duration::from_secs(60);
/// The largest key set read.
const MAX_JWKS: u64 = 1024 * 1024;

impl JwtVerifier {
    /// A verifier for tokens of `issuer` meant for `audience` (this server's resource URL), the agent
    /// read from the claim `agent_claim`; the keys are read now.
    pub fn new(
        source: JwksSource,
        issuer: &str,
        audience: &str,
        agent_claim: &str,
    ) -> Result<JwtVerifier, String> {
        let keys = load(&source)?;
        Ok(JwtVerifier {
            source,
            issuer: issuer.to_owned(),
            audience: audience.to_owned(),
            agent_claim: agent_claim.to_owned(),
            keys: RwLock::new((keys, Instant::now())),
        })
    }

    /// The RFC 9728 metadata URL of the audience: `/.well-known/oauth-protected-resource` inserted
    /// between its host and its path.
    pub fn metadata_url(&self) -> String {
        metadata_url(&self.audience)
    }

    fn verify(&self, token: &str) -> Result<Agent, AuthError> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| AuthError::Invalid("it is not a JWT"))?;
        if !matches!(header.alg, Algorithm::RS256 | Algorithm::ES256) {
            return Err(AuthError::Invalid("its algorithm is not RS256 or ES256"));
        }
        let mut key = self.key(header.kid.as_deref(), header.alg);
        if key.is_none() && matches!(self.source, JwksSource::Url(_)) && self.refresh() {
            key = self.key(header.kid.as_deref(), header.alg);
        }
        let key = key.ok_or(AuthError::Invalid("no key of the issuer signed it"))?;
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

    /// The key with id `kid` (or, without one, the only key) for `alg`.
    fn key(&self, kid: Option<&str>, alg: Algorithm) -> Option<DecodingKey> {
        let keys = self
            .keys
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
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
        let mut candidates = keys.0.keys.iter().filter(fits);
        let jwk = candidates.next()?;
        if kid.is_none() && candidates.next().is_some() {
            // Without a key id, only an unambiguous key set verifies.
            return None;
        }
        DecodingKey::from_jwk(jwk).ok()
    }

    /// Fetches the keys again when the last fetch is older than [`REFRESH_AFTER`]; true when it did.
    fn refresh(&self) -> bool {
        {
            let keys = self
                .keys
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if keys.1.elapsed() < REFRESH_AFTER {
                return false;
            }
        }
        match load(&self.source) {
            Ok(set) => {
                *self
                    .keys
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = (set, Instant::now());
                true
            }
            Err(e) => {
                tracing::warn!("the issuer's keys could not be fetched again: {e}");
                self.keys
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .1 = Instant::now();
                false
            }
        }
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

/// Reads a key set.
fn load(source: &JwksSource) -> Result<JwkSet, String> {
    let bytes = match source {
        JwksSource::File(path) => {
            use shiftwork_seams::Fs as _;
            shiftwork_seams::OsFs.read_limited(path, MAX_JWKS).map_err(|e| {
                format!(
                    "the key set {} cannot be read: {}",
                    path.display(),
                    shiftwork_seams::os_reason(&e)
                )
            })?
        }
        JwksSource::Url(url) => {
            let agent = ureq::Agent::config_builder()
                .timeout_global(Some(Duration::from_secs(10)))
                .build()
                .new_agent();
            let mut response = agent
                .get(url)
                .call()
                .map_err(|e| format!("the key set at {url} cannot be fetched: {e}"))?;
            response
                .body_mut()
                .with_config()
                .limit(MAX_JWKS)
                .read_to_vec()
                .map_err(|e| format!("the key set at {url} cannot be read: {e}"))?
        }
    };
    serde_json::from_slice(&bytes).map_err(|e| format!("the key set is not a JSON Web Key Set: {e}"))
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
