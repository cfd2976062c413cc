//! An OAuth 2.1 resource server: [`OAuthVerifier`], an [`Authenticator`] that accepts access tokens
//! issued by an authorization server the operator runs (Entra ID, Auth0, Keycloak, Okta, …)
//! for this server.
//!
//! - **JWT access tokens** (RFC 9068, and plain JWTs) are verified here: the issuer's metadata
//!   is discovered (RFC 8414, then OpenID Connect), its keys fetched from its `jwks_uri` only
//!   and kept; RS256/384/512, PS256/384/512, ES256/384 and EdDSA signatures; `none` never, and
//!   HMAC only with a secret configured explicitly ([`OAuthVerifier::shared_secret`]); `iss` exact,
//!   `aud` naming this server (RFC 8707), `exp`/`nbf` with a bounded leeway.
//! - **Opaque tokens** are checked by introspection (RFC 7662), when the server has client
//!   credentials for it ([`OAuthVerifier::introspection`]); answers are kept by a hash of the token.
//! - **Failure is closed**: an authorization server that cannot be reached refuses the request
//!   with 503 and `Retry-After` (logged once per interval), never accepts it; every fetch is
//!   bounded in size and time, and so is the token; one fetch of a kind runs at a time (an
//!   introspection per token), and a request waits for one at most 5 s.
//!
//! Inside, the imports go one way: this root uses `jwt` and `introspect`, which use the keys
//! (`keys`), the metadata (`metadata`) and the leaf `settings`; bounded fetches and the
//! metadata document are `protocol::oauth`'s, shared with the client.

mod dpop;
mod introspect;
mod jwt;
mod keys;
mod metadata;
mod settings;
mod verified;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use axum::http::request::Parts;

use crate::tool::Identity;

use crate::protocol::oauth::dpop::{INVALID_PROOF, USE_NONCE};
use crate::server::replicas::ReplicaStore;
use crate::transport::http::access::auth::{AuthError, AuthFuture, Authenticator, DpopMode};
use introspect::Introspector;
use keys::{Found, KeyCache};
use metadata::Discovery;
use settings::{Accepted, Alarm, MAX_LEEWAY, MAX_TOKEN, RETRY_AFTER, Settings};
use verified::Verified;

/// Verifies OAuth access tokens issued by one authorization server for this server (see the
/// module's documentation).
///
/// ```no_run
/// use mcp_tool::http::{HttpConfig, OAuthVerifier};
///
/// let oauth = OAuthVerifier::new("https://auth.example.com", "https://mcp.example.com/mcp")
///     // Opaque tokens too, checked with the server's own client credentials.
///     .introspection("mcp-server", "its-secret");
/// let config = HttpConfig::default().with_auth(oauth);
/// ```
#[derive(Clone)]
pub struct OAuthVerifier {
    settings: Settings,
    state: Arc<State>,
}

/// What every clone shares: the HTTP client, the metadata, the keys, the introspection
/// answers.
struct State {
    http: reqwest::Client,
    discovery: Discovery,
    keys: KeyCache,
    introspector: Introspector,
    verified: Verified,
    alarm: Alarm,
    /// The `jti`s of DPoP proofs taken (this process's; the settings' `dpop_replays`
    /// shares them between replicas).
    seen: dpop::Seen,
}

impl fmt::Debug for OAuthVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth")
            .field("issuer", &self.settings.issuer)
            .field("audiences", &self.settings.audiences)
            .field("introspection", &self.settings.client.is_some())
            .finish_non_exhaustive()
    }
}

impl OAuthVerifier {
    /// Accepts tokens of `issuer` (exactly as its tokens and metadata name it) issued for
    /// `audience`: this server's resource URL (its endpoint's public URL).
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        OAuthVerifier {
            settings: Settings {
                issuer: issuer.into(),
                audiences: vec![audience.into()],
                leeway: Duration::from_secs(30),
                shared_secret: None,
                introspection_endpoint: None,
                client: None,
                cache_ceiling: Duration::from_secs(300),
                negative_ttl: Duration::from_secs(10),
                refresh_interval: Duration::from_secs(30),
                keys_max_age: Duration::from_secs(3600),
                dpop: DpopMode::Off,
                dpop_window: dpop::DEFAULT_WINDOW,
                dpop_nonce_key: None,
                dpop_replays: None,
            },
            state: Arc::new(State {
                http: crate::protocol::oauth::fetch::client(),
                discovery: Discovery::default(),
                keys: KeyCache::default(),
                introspector: Introspector::default(),
                verified: Verified::default(),
                alarm: Alarm::new(Duration::from_secs(60)),
                seen: dpop::Seen::default(),
            }),
        }
    }

    /// Also accepts tokens issued for `audience`.
    #[must_use]
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.settings.audiences.push(audience.into());
        self
    }

    /// The leeway on `exp` and `nbf` (default 30 s; at most 5 minutes).
    #[must_use]
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.settings.leeway = leeway.min(MAX_LEEWAY);
        self
    }

    /// Checks opaque tokens by introspection (RFC 7662), authenticating as `client_id` with
    /// `client_secret` (HTTP Basic); the endpoint is the metadata's unless
    /// [`introspection_endpoint`](Self::introspection_endpoint) names one.
    #[must_use]
    pub fn introspection(
        mut self,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        self.settings.client = Some((client_id.into(), client_secret.into()));
        self
    }

    /// The introspection endpoint, when the metadata does not name it (or should not be used).
    #[must_use]
    pub fn introspection_endpoint(mut self, url: impl Into<String>) -> Self {
        self.settings.introspection_endpoint = Some(url.into());
        self
    }

    /// Accepts HMAC-signed tokens (HS256/384/512) made with `secret`. Without it, an
    /// HMAC-signed token is refused whatever it says (no algorithm confusion with a public
    /// key).
    #[must_use]
    pub fn shared_secret(mut self, secret: impl Into<Vec<u8>>) -> Self {
        self.settings.shared_secret = Some(secret.into());
        self
    }

    /// How long an introspection answer is trusted at most (default 5 minutes; never past
    /// the token's `exp`).
    #[must_use]
    pub fn cache_ceiling(mut self, ceiling: Duration) -> Self {
        self.settings.cache_ceiling = ceiling;
        self
    }

    /// The shortest time between two fetches of the keys (default 30 s): a token signed by a
    /// key not yet known makes a fetch only this often, and a failed fetch (metadata, keys,
    /// introspection) is said again without a new one, before any success too.
    #[must_use]
    pub fn refresh_interval(mut self, interval: Duration) -> Self {
        self.settings.refresh_interval = interval;
        self
    }

    /// How long fetched keys are used before they are fetched again (default 1 hour).
    #[must_use]
    pub fn keys_max_age(mut self, age: Duration) -> Self {
        self.settings.keys_max_age = age;
        self
    }

    /// Whether DPoP-bound tokens (RFC 9449) are taken, and whether other tokens are
    /// (default [`DpopMode::Off`]). A proof's `htu` is compared with this server's public
    /// URL: the origin of its first audience and the request's path.
    #[must_use]
    pub fn dpop(mut self, mode: DpopMode) -> Self {
        self.settings.dpop = mode;
        self
    }

    /// How far a DPoP proof's `iat` may lie from now, either way (default 60 s, at most 5
    /// minutes); its `jti` is remembered twice as long.
    #[must_use]
    pub fn dpop_window(mut self, window: Duration) -> Self {
        self.settings.dpop_window = window.min(MAX_LEEWAY);
        self
    }

    /// Asks DPoP clients for server nonces (RFC 9449 §9), made from `key` and the time
    /// (a new one every 5 minutes, the last one still taken): replicas given the same key
    /// make the same nonces.
    #[must_use]
    pub fn dpop_nonces(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.settings.dpop_nonce_key = Some(key.into());
        self
    }

    /// Shares the `jti`s of the DPoP proofs taken through `store`, so that a proof replayed
    /// to another replica is refused there too.
    #[must_use]
    pub fn dpop_replays(mut self, store: Arc<dyn ReplicaStore>) -> Self {
        self.settings.dpop_replays = Some(store);
        self
    }

    /// The identity behind `token`, or why it is refused (401), or why it cannot be checked
    /// now (503). A token bound to a DPoP key is checked as a token only here: its proof is
    /// [`Authenticator::authenticate`]'s.
    pub async fn check(&self, token: &str) -> Result<Identity, AuthError> {
        self.accept(token).await.map(|accepted| accepted.identity)
    }

    /// What `token` says, or why it is refused.
    async fn accept(&self, token: &str) -> Result<Accepted, AuthError> {
        if token.is_empty() {
            return Err(AuthError::missing("a bearer token is required"));
        }
        if token.len() > MAX_TOKEN {
            return Err(AuthError::invalid(format!(
                "the token is longer than {MAX_TOKEN} bytes"
            )));
        }
        // A JWT verified already (with the keys still in use) is neither decoded nor verified
        // again: most requests of a client carry the token of its last one.
        let digest = verified::digest(token);
        let generation = self.state.keys.generation();
        if let Some(accepted) = self.state.verified.get(&digest, generation) {
            return Ok(accepted);
        }
        match jwt::shape(token) {
            jwt::Shape::Jwt(header) => self.check_jwt(token, &header, (digest, generation)).await,
            jwt::Shape::Unusable(why) => Err(AuthError::invalid(why)),
            jwt::Shape::Opaque if self.settings.client.is_some() => {
                self.introspect(token, digest).await
            }
            jwt::Shape::Opaque => Err(AuthError::invalid("the token is not a JWT")),
        }
    }

    async fn check_jwt(
        &self,
        token: &str,
        header: &jsonwebtoken::Header,
        (digest, generation): ([u8; 32], u64),
    ) -> Result<Accepted, AuthError> {
        let state = &self.state;
        jwt::check_type(header)?;
        let settings = &self.settings;
        let (accepted, exp) = if jwt::is_hmac(header) {
            match &settings.shared_secret {
                Some(secret) => jwt::verify_shared(token, header, secret, settings)?,
                None => {
                    return Err(AuthError::invalid(
                        "HMAC-signed tokens are not accepted by this server",
                    ));
                }
            }
        } else {
            self.verify_published(token, header).await?
        };
        state.verified.put(digest, &accepted, exp, generation);
        Ok(accepted)
    }

    /// Verifies a token signed with one of the issuer's published keys.
    async fn verify_published(
        &self,
        token: &str,
        header: &jsonwebtoken::Header,
    ) -> Result<(Accepted, u64), AuthError> {
        let (settings, state) = (&self.settings, &self.state);
        let metadata = state
            .discovery
            .get(&state.http, settings)
            .await
            .map_err(|e| self.unavailable(&e.to_string()))?;
        let Some(jwks_uri) = &metadata.jwks_uri else {
            return Err(self.unavailable("the authorization server's metadata has no `jwks_uri`"));
        };
        let found = state
            .keys
            .find(&state.http, jwks_uri, header.kid.as_deref(), settings)
            .await
            .map_err(|e| self.unavailable(&e.to_string()))?;
        match found {
            Found::Key(key) => jwt::verify(token, header, &key, settings),
            Found::Unknown => Err(AuthError::invalid(
                "the token is signed by a key its issuer does not publish",
            )),
        }
    }

    async fn introspect(&self, token: &str, digest: [u8; 32]) -> Result<Accepted, AuthError> {
        let (settings, state) = (&self.settings, &self.state);
        let endpoint = match &settings.introspection_endpoint {
            Some(endpoint) => endpoint.clone(),
            None => {
                let metadata = state
                    .discovery
                    .get(&state.http, settings)
                    .await
                    .map_err(|e| self.unavailable(&e.to_string()))?;
                metadata.introspection_endpoint.ok_or_else(|| {
                    self.unavailable("the authorization server names no introspection endpoint")
                })?
            }
        };
        state
            .introspector
            .check(&state.http, &endpoint, (token, digest), settings)
            .await
            .map_err(|e| self.unavailable(&e.to_string()))?
    }

    /// The refusal of a request whose token cannot be checked now (logged once per interval).
    fn unavailable(&self, problem: &str) -> AuthError {
        self.state.alarm.raise(problem);
        AuthError::unavailable(
            "the authorization server cannot be reached to check the token; try again shortly",
            RETRY_AFTER,
        )
    }
}

impl Authenticator for OAuthVerifier {
    fn authenticate<'a>(&'a self, request: &'a Parts) -> AuthFuture<'a> {
        Box::pin(async move {
            let mode = self.settings.dpop;
            match presented(request) {
                None => Err(AuthError::missing(match mode {
                    DpopMode::Required => "a DPoP-bound access token is required",
                    _ => "a bearer token is required",
                })),
                Some(Presented::Bearer(_)) if mode == DpopMode::Required => Err(AuthError::dpop(
                    "invalid_token",
                    "this server takes DPoP-bound tokens only (the DPoP scheme, with a proof)",
                )),
                Some(Presented::Bearer(token)) => {
                    let accepted = self.accept(token).await?;
                    if accepted.jkt.is_some() {
                        return Err(AuthError::invalid(match mode {
                            DpopMode::Off => {
                                "the token is bound to a DPoP key, which this server does not check"
                            }
                            _ => {
                                "the token is bound to a DPoP key: present it with the DPoP scheme and a proof"
                            }
                        }));
                    }
                    Ok(accepted.identity)
                }
                Some(Presented::Dpop(_)) if mode == DpopMode::Off => Err(AuthError::missing(
                    "this server takes bearer tokens only (no DPoP)",
                )),
                Some(Presented::Dpop(token)) => self.authenticate_dpop(request, token).await,
            }
        })
    }

    fn dpop_mode(&self) -> DpopMode {
        self.settings.dpop
    }
}

/// How a request presents its access token.
enum Presented<'a> {
    Bearer(&'a str),
    Dpop(&'a str),
}

/// The access token of a request's `Authorization` header, and its scheme.
fn presented(request: &Parts) -> Option<Presented<'_>> {
    let value = request
        .headers
        .get(axum::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    if scheme.eq_ignore_ascii_case("bearer") {
        Some(Presented::Bearer(token))
    } else if scheme.eq_ignore_ascii_case("dpop") {
        Some(Presented::Dpop(token))
    } else {
        None
    }
}

impl OAuthVerifier {
    /// A request with a DPoP-bound token: the token, then its proof (RFC 9449 §4.3, §7.1).
    async fn authenticate_dpop(&self, request: &Parts, token: &str) -> Result<Identity, AuthError> {
        let settings = &self.settings;
        let refuse = |why: &str| AuthError::dpop(INVALID_PROOF, why);
        let mut proofs = request
            .headers
            .get_all(crate::protocol::oauth::dpop::HEADER)
            .iter();
        let (Some(proof), None) = (proofs.next(), proofs.next()) else {
            return Err(refuse("one DPoP proof is required (the DPoP header)"));
        };
        let proof = proof
            .to_str()
            .map_err(|_| refuse("the DPoP proof is not text"))?;
        let accepted = self.accept(token).await.map_err(|mut e| {
            if e.unavailable.is_none() {
                e = AuthError::dpop("invalid_token", e.description);
            }
            e
        })?;
        let Some(jkt) = &accepted.jkt else {
            return Err(AuthError::dpop(
                "invalid_token",
                "the token is not bound to a DPoP key (present it as a bearer token)",
            ));
        };
        let url = format!(
            "{}{}",
            public_origin(&settings.audiences),
            request.uri.path()
        );
        let now = dpop::unix_now();
        let nonce = settings
            .dpop_nonce_key
            .as_deref()
            .map(|key| dpop::nonces(key, now));
        let check = dpop::Request {
            method: request.method.as_str(),
            url: &url,
            token: Some(token),
            nonce: nonce.as_ref().map(|n| n.current.as_str()),
            previous_nonce: nonce.as_ref().map(|n| n.previous.as_str()),
            now,
            window: settings.dpop_window,
        };
        let taken = match dpop::check(proof, &check) {
            Ok(taken) => taken,
            Err(dpop::ProofError::Invalid(why)) => return Err(refuse(why)),
            Err(dpop::ProofError::UseNonce) => {
                let current = nonce.map(|n| n.current).unwrap_or_default();
                return Err(AuthError::dpop(
                    USE_NONCE,
                    "the DPoP proof must carry the server's nonce",
                )
                .with_dpop_nonce(current));
            }
            Err(dpop::ProofError::Busy) => {
                return Err(self.unavailable("too many DPoP proofs to remember"));
            }
        };
        if !dpop::constant_eq(taken.thumbprint.as_bytes(), jkt.as_bytes()) {
            return Err(refuse(
                "the DPoP proof is signed by another key than the token is bound to",
            ));
        }
        let keep = settings.dpop_window.saturating_mul(2);
        let fresh = match &settings.dpop_replays {
            Some(store) => {
                let key = format!("dpop-jti:{}:{}", taken.thumbprint, dpop::digest(&taken.jti));
                match tokio::time::timeout(Duration::from_secs(5), store.put_new(&key, "1", keep))
                    .await
                {
                    Ok(Ok(fresh)) => fresh,
                    Ok(Err(e)) => return Err(self.unavailable(&e.to_string())),
                    Err(_) => {
                        return Err(self.unavailable("the shared state did not answer within 5 s"));
                    }
                }
            }
            None => self
                .state
                .seen
                .first(&taken, keep)
                .map_err(|_| self.unavailable("too many DPoP proofs to remember"))?,
        };
        if !fresh {
            return Err(refuse("the DPoP proof was used before (its `jti`)"));
        }
        Ok(accepted.identity)
    }
}

/// The origin of this server's public URL: that of its first audience that is an http(s)
/// URL (an audience may be a name such as `api://mcp`).
fn public_origin(audiences: &[String]) -> String {
    audiences
        .iter()
        .filter_map(|a| reqwest::Url::parse(a).ok())
        .find(|u| matches!(u.scheme(), "http" | "https"))
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
