//! Who may use the HTTP endpoint: the [`Authenticator`] trait, and [`BearerTokens`] known in
//! advance. The identity an authenticator establishes reaches tools as
//! [`Identity`](crate::tool::Identity).

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use axum::http::header;
use axum::http::request::Parts;

use crate::tool::Identity;

/// Why a request was refused: answered with 401 and `WWW-Authenticate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthError {
    /// Said to the client (`error_description`).
    pub description: String,
}

/// The future an [`Authenticator`] returns.
pub type AuthFuture<'a> = Pin<Box<dyn Future<Output = Result<Identity, AuthError>> + Send + 'a>>;

/// Decides who may use the HTTP endpoint, from the request's head.
pub trait Authenticator: Send + Sync + 'static {
    /// Establishes the identity behind a request, or refuses it.
    fn authenticate<'a>(&'a self, request: &'a Parts) -> AuthFuture<'a>;
}

/// Bearer tokens known in advance (from configuration or the environment), each standing for
/// a subject.
#[derive(Clone, Default)]
pub struct BearerTokens {
    tokens: Vec<(String, Identity)>,
}

impl fmt::Debug for BearerTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BearerTokens({} tokens)", self.tokens.len())
    }
}

impl BearerTokens {
    /// No tokens yet.
    pub fn new() -> Self {
        BearerTokens::default()
    }

    /// Accepts `token` as `subject`.
    #[must_use]
    pub fn token(mut self, token: impl Into<String>, subject: impl Into<String>) -> Self {
        self.tokens.push((
            token.into(),
            Identity {
                subject: subject.into(),
                scopes: Vec::new(),
            },
        ));
        self
    }

    /// Tokens from an environment variable: comma-separated `token` or `subject:token`
    /// entries. `None` when the variable is unset or empty.
    pub fn from_env(var: &str) -> Option<Self> {
        let value = std::env::var(var).ok()?;
        let mut tokens = BearerTokens::new();
        for (i, entry) in value
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .enumerate()
        {
            tokens = match entry.split_once(':') {
                Some((subject, token)) => tokens.token(token, subject),
                None => tokens.token(entry, format!("token-{}", i + 1)),
            };
        }
        (!tokens.tokens.is_empty()).then_some(tokens)
    }
}

/// Compares two byte strings in time that depends only on their lengths.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Authenticator for BearerTokens {
    fn authenticate<'a>(&'a self, request: &'a Parts) -> AuthFuture<'a> {
        let presented = request
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                let (scheme, token) = v.split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            });
        let outcome = match presented {
            None => Err(AuthError {
                description: "a bearer token is required".into(),
            }),
            Some(token) => self
                .tokens
                .iter()
                .find(|(known, _)| same_secret(known.as_bytes(), token.as_bytes()))
                .map(|(_, identity)| identity.clone())
                .ok_or_else(|| AuthError {
                    description: "the bearer token is not valid".into(),
                }),
        };
        Box::pin(std::future::ready(outcome))
    }
}
