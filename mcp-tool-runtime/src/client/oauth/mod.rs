//! OAuth 2.1 for the client, as the MCP authorization specification gives it (2025-11-25 and
//! 2026-07-28): a server that answers 401 is authorized and the request sent again, without
//! the caller doing anything but saying how ([`OAuthClient`], given to
//! [`Connect::oauth`](super::Connect::oauth)).
//!
//! - **Discovery**: the protected resource's metadata (RFC 9728) from the challenge's
//!   `resource_metadata`, else its well-known URLs (the path's, then the root's), its
//!   `resource` checked against the server's URL; the authorization server's metadata (RFC
//!   8414, then OpenID Connect), its `issuer` checked.
//! - **Who the client is**: a pre-registered client id ([`OAuthClient::client_id`]), else a client
//!   ID metadata document ([`OAuthClient::client_metadata_url`]) when the authorization server
//!   takes one, else dynamic registration (RFC 7591), kept per issuer: a server that moves to
//!   another authorization server gets a registration of its own there.
//! - **Grants**: authorization code with PKCE (S256), `state`, the RFC 8707 `resource` and
//!   RFC 9207's `iss` checked; refresh tokens; client credentials. Token endpoint
//!   authentication `client_secret_basic`, `client_secret_post`, `none`, `private_key_jwt`.
//! - **DPoP** (RFC 9449) when the authorization server takes it: tokens bound to the
//!   connection's own key, a fresh proof on every token and resource request, the servers'
//!   nonces honoured with one more try ([`OAuthClient::dpop`]).
//! - **Scopes**: [`OAuthClient::scopes`] when given, else the challenge's `scope`, else the resource's
//!   `scopes_supported`, else none asked; a 403 `insufficient_scope` asks for more (a few
//!   times per request at most).
//! - **Credentials pinned to their issuer**: a client secret, a private key's assertions and
//!   refresh tokens go to the authorization server they belong to ([`OAuthClient::issuer`], else
//!   the first one discovered) and to no other.
//! - **Discovery stays where it belongs**: a challenge's `resource_metadata` is fetched only
//!   on the server's own origin, the issuer's, or a [trusted](OAuthClient::trusted_origin) one; an
//!   authorization server at a loopback or private address only when the server is on one
//!   too (or it is configured); what a fetched body failed to parse as is never quoted.
//! - **Tokens** live in a [`TokenStore`] ([`MemoryTokenStore`], [`FileTokenStore`]) keyed by
//!   resource, issuer and the principal they act for; a token is sent only to the server it
//!   was obtained for.
//!
//! A person authorizes through a [`UserAgent`]: [`LoopbackBrowser`] prints (and can open) the
//! authorization page and receives the redirect on a loopback port (RFC 8252).
//!
//! Secrets (tokens, client secrets, keys, codes) never reach a log or an error message.

mod agent;
mod assertion;
mod discover;
mod dpop;
mod failure;
mod flow;
mod store;
pub(crate) use store::write_private;
mod token;

use std::fmt;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;

use crate::client::ClientError;
use crate::protocol::oauth::fetch::FetchError;

pub use agent::LoopbackBrowser;
pub use assertion::{EnterpriseIdp, TokenSource};
pub use failure::{AuthAnswer, AuthFailure};
pub(crate) use flow::Authorizer;
pub use store::{
    FileTokenStore, MAX_REGISTRATIONS, MAX_TOKENS, MemoryTokenStore, Registration, TokenKey,
    TokenStore, Tokens,
};

use super::ClientFuture;

/// Opens the authorization page for whoever grants access, and brings back where the
/// authorization server sent them (the redirect URI with its `code`, `state` and `iss`).
pub trait UserAgent: Send + Sync + 'static {
    /// The redirect URI registered and sent with each authorization request.
    fn redirect_uri(&self) -> String;

    /// Shows `url` (the authorization request) to the user, and returns the full URL the
    /// authorization server redirected to, or why there is none.
    fn authorize<'a>(&'a self, url: &'a str) -> ClientFuture<'a, Result<String, String>>;
}

/// How the client proves who it is at the token endpoint, beside its id.
#[derive(Clone)]
enum Credential {
    /// A public client (`none`).
    None,
    /// A client secret (`client_secret_basic` or `client_secret_post`, as the authorization
    /// server supports).
    Secret(String),
    /// A private key in PEM (`private_key_jwt`, RFC 7523), with its JWS algorithm.
    PrivateKey { pem: String, algorithm: String },
}

/// Which grant obtains the tokens.
#[derive(Clone)]
enum Grant {
    /// Authorization code with PKCE, through a user agent.
    Code(Arc<dyn UserAgent>),
    /// Client credentials (the client acts for itself).
    ClientCredentials,
    /// A workload's own identity token as an RFC 7523 assertion (SEP-1933).
    WorkloadIdentity(TokenSource),
    /// The user's ID token exchanged at the enterprise's identity provider for an ID-JAG,
    /// then the ID-JAG as an RFC 7523 assertion (SEP-990).
    Enterprise(Box<EnterpriseIdp>),
}

impl Grant {
    /// Whether a grant may be made again without anyone (no user, no refresh token): tokens
    /// are then renewed before they expire.
    fn renews_alone(&self) -> bool {
        !matches!(self, Grant::Code(_))
    }
}

/// How the client obtains access tokens from the authorization server a protected MCP server
/// names. Cheap to clone; see the [module](self) for what it does.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use mcp_tool::client::{Connect, McpClient};
/// use mcp_tool::client::oauth::{FileTokenStore, LoopbackBrowser, OAuthClient};
///
/// let browser = LoopbackBrowser::bind(8976)?.open_browser(true);
/// let oauth = OAuthClient::authorization_code(Arc::new(browser))
///     .client_name("my-tool")
///     .store(Arc::new(FileTokenStore::new("tokens.json")));
/// let client = McpClient::connect(Connect::http("https://mcp.example.com/mcp").oauth(oauth)).await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct OAuthClient {
    grant: Grant,
    client_id: Option<String>,
    credential: Credential,
    client_metadata_url: Option<String>,
    client_name: String,
    scopes: Option<Vec<String>>,
    store: Arc<dyn TokenStore>,
    principal: String,
    step_ups: usize,
    dpop: bool,
    issuer: Option<String>,
    trusted_origins: Vec<String>,
}

impl fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth")
            .field(
                "grant",
                &match self.grant {
                    Grant::Code(_) => "authorization_code",
                    Grant::ClientCredentials => "client_credentials",
                    Grant::WorkloadIdentity(_) => "jwt_bearer (workload identity)",
                    Grant::Enterprise(_) => "jwt_bearer (enterprise-managed, ID-JAG)",
                },
            )
            .field("client_id", &self.client_id)
            .field(
                "credential",
                &match self.credential {
                    Credential::None => "none",
                    Credential::Secret(_) => "secret (hidden)",
                    Credential::PrivateKey { .. } => "private key (hidden)",
                },
            )
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .field("principal", &self.principal)
            .field("dpop", &self.dpop)
            .field("issuer", &self.issuer)
            .field("trusted_origins", &self.trusted_origins)
            .finish_non_exhaustive()
    }
}

impl OAuthClient {
    fn new(grant: Grant) -> Self {
        OAuthClient {
            grant,
            client_id: None,
            credential: Credential::None,
            client_metadata_url: None,
            client_name: "mcp-tool".into(),
            scopes: None,
            store: Arc::new(MemoryTokenStore::default()),
            principal: String::new(),
            step_ups: 2,
            dpop: true,
            issuer: None,
            trusted_origins: Vec::new(),
        }
    }

    /// A person grants access through `agent` (authorization code with PKCE); the client is
    /// pre-registered ([`client_id`](Self::client_id)), named by a metadata document
    /// ([`client_metadata_url`](Self::client_metadata_url)), or registered dynamically.
    pub fn authorization_code(agent: Arc<dyn UserAgent>) -> Self {
        Self::new(Grant::Code(agent))
    }

    /// The client acts for itself (client credentials), as `client_id` with `secret`.
    pub fn client_credentials(client_id: impl Into<String>, secret: impl Into<String>) -> Self {
        Self::new(Grant::ClientCredentials)
            .client_id(client_id)
            .client_secret(secret)
    }

    /// The client acts for itself (client credentials), as `client_id` proving it with a JWT
    /// signed by `private_key_pem` (`private_key_jwt`; `algorithm` is the JWS algorithm:
    /// `ES256`, `RS256`…).
    pub fn client_credentials_with_key(
        client_id: impl Into<String>,
        private_key_pem: impl Into<String>,
        algorithm: impl Into<String>,
    ) -> Self {
        Self::new(Grant::ClientCredentials)
            .client_id(client_id)
            .private_key(private_key_pem, algorithm)
    }

    /// The client acts for a workload, proving it with the workload's own identity token
    /// (a Kubernetes projected service-account token, say) read from `token` each time one
    /// is needed: the RFC 7523 JWT bearer grant of workload identity federation (SEP-1933).
    /// As `client_id` (with [`client_secret`](Self::client_secret) if the authorization
    /// server wants one).
    pub fn workload_identity(client_id: impl Into<String>, token: TokenSource) -> Self {
        Self::new(Grant::WorkloadIdentity(token)).client_id(client_id)
    }

    /// Enterprise-managed authorization (SEP-990): the user's ID token is exchanged at the
    /// enterprise's identity provider (`idp`) for an identity assertion grant naming this
    /// server, which the authorization server takes as an RFC 7523 assertion from this
    /// client, `client_id` (with [`client_secret`](Self::client_secret)).
    pub fn enterprise(idp: EnterpriseIdp, client_id: impl Into<String>) -> Self {
        Self::new(Grant::Enterprise(Box::new(idp))).client_id(client_id)
    }

    /// A client id registered beforehand with the authorization server (no registration).
    #[must_use]
    pub fn client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// The pre-registered client's secret.
    #[must_use]
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.credential = Credential::Secret(secret.into());
        self
    }

    /// The pre-registered client's private key (PEM) and its JWS algorithm, for
    /// `private_key_jwt`.
    #[must_use]
    pub fn private_key(mut self, pem: impl Into<String>, algorithm: impl Into<String>) -> Self {
        self.credential = Credential::PrivateKey {
            pem: pem.into(),
            algorithm: algorithm.into(),
        };
        self
    }

    /// The HTTPS URL of this client's metadata document, used as its client id by
    /// authorization servers that take one (`client_id_metadata_document_supported`).
    #[must_use]
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// The `client_name` of a dynamic registration (default `mcp-tool`).
    #[must_use]
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// The scopes to ask for, whatever the server suggests.
    #[must_use]
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// Where tokens and registrations are kept (default: in memory, for this value and its
    /// clones).
    #[must_use]
    pub fn store(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.store = store;
        self
    }

    /// Whom the tokens act for (a gateway's calling user): tokens are kept apart per
    /// principal (default: the empty principal).
    #[must_use]
    pub fn principal(mut self, principal: impl Into<String>) -> Self {
        self.principal = principal.into();
        self
    }

    /// How many times one request may ask for more scopes after a 403 `insufficient_scope`
    /// (default 2).
    #[must_use]
    pub fn step_up_limit(mut self, limit: usize) -> Self {
        self.step_ups = limit;
        self
    }

    /// The authorization server this client's credentials belong to (its issuer, exactly as
    /// its metadata names it): the client secret, the private key's assertions and the
    /// refresh tokens are sent to it and to no other. A server whose 401 names another
    /// authorization server gets nothing from this client but an error naming both (RFC 9207's
    /// concern, for the client's own credentials). Without it, a client with a secret or a key
    /// pins the first authorization server it discovers, for as long as it lives.
    #[must_use]
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// An origin (`https://host:port`) discovery may fetch from beside the server's own and
    /// the issuer's: a `resource_metadata` a challenge names there, or an authorization server
    /// at a loopback or private address (refused otherwise, unless the server is on one).
    #[must_use]
    pub fn trusted_origin(mut self, origin: impl Into<String>) -> Self {
        self.trusted_origins.push(origin.into());
        self
    }

    /// Whether tokens are bound to a DPoP key (RFC 9449) when the authorization server takes
    /// proofs (`dpop_signing_alg_values_supported` with ES256) — default yes. The key is the
    /// connection's own (P-256), made when first needed, kept across refreshes, never stored.
    #[must_use]
    pub fn dpop(mut self, allowed: bool) -> Self {
        self.dpop = allowed;
        self
    }

    pub(crate) fn step_ups(&self) -> usize {
        self.step_ups
    }
}

/// The error of a failed authorization that no authorization server answered (its text
/// never holds a secret).
fn unauthorized(why: impl Into<String>) -> ClientError {
    ClientError::Unauthorized(AuthFailure::new(why, AuthAnswer::Other))
}

/// The error of a fetch from an authorization server that failed: unreachable, failing or
/// busy (which may pass), or any other answer.
fn fetch_error(e: FetchError) -> ClientError {
    let answer = match &e {
        FetchError::Unreachable { .. } => AuthAnswer::Unreachable,
        FetchError::Status { status, .. } => AuthAnswer::of_status(*status, None),
        FetchError::TooLarge { .. } | FetchError::NotJson { .. } => AuthAnswer::Other,
    };
    ClientError::Unauthorized(AuthFailure::new(e.to_string(), answer))
}

/// Seconds since the Unix epoch.
fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `bytes` random bytes, base64url without padding.
fn random(bytes: usize) -> Result<String, ClientError> {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).map_err(|e| unauthorized(format!("no randomness: {e}")))?;
    Ok(URL_SAFE_NO_PAD.encode(buffer))
}

/// An OAuth error answer's `error` and `error_description`, for a message (cut short).
fn oauth_error(body: &[u8]) -> String {
    #[derive(Deserialize)]
    struct Refusal {
        error: Option<String>,
        error_description: Option<String>,
    }
    match serde_json::from_slice::<Refusal>(body) {
        Ok(Refusal {
            error: Some(error),
            error_description,
        }) => match error_description {
            Some(d) => format!(": {}: {}", excerpt(&error), excerpt(&d)),
            None => format!(": {}", excerpt(&error)),
        },
        _ => String::new(),
    }
}

/// At most 200 characters of text from a server, for a message.
fn excerpt(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).take(200).collect()
}
