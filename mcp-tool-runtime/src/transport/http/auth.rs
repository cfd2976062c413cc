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
    /// The RFC 6750 error code: `invalid_token`, `insufficient_scope`, … — or none for a
    /// request that sent no credentials at all (RFC 6750 §3.1 says no code then).
    pub code: Option<&'static str>,
    /// Said to the client (`error_description`).
    pub description: String,
}

impl AuthError {
    /// The request sent no credentials: no error code.
    pub fn missing(description: impl Into<String>) -> Self {
        AuthError {
            code: None,
            description: description.into(),
        }
    }

    /// The credentials were refused: `invalid_token`.
    pub fn invalid(description: impl Into<String>) -> Self {
        AuthError {
            code: Some("invalid_token"),
            description: description.into(),
        }
    }
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

    /// Whether no token is accepted.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Reads comma-separated `subject:token` entries (as server binaries take them from
    /// `MCP_TOOL_BEARER_TOKENS`). The subject is letters, digits and `._@-`; the token is
    /// everything after the first colon (colons included), visible ASCII. An entry that does
    /// not fit is an error naming it (a server refuses to start on it, rather than accept a
    /// token cut short).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut tokens = BearerTokens::new();
        for (i, entry) in text
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .enumerate()
        {
            let n = i + 1;
            let Some((subject, token)) = entry.split_once(':') else {
                return Err(format!(
                    "entry {n} has no subject: write `subject:token` (the token may contain `:`)"
                ));
            };
            if subject.is_empty()
                || !subject
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._@-".contains(&b))
            {
                return Err(format!(
                    "entry {n}: the subject `{subject}` must be letters, digits and `._@-`"
                ));
            }
            if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(format!(
                    "entry {n} (`{subject}`): the token must be visible ASCII, without spaces"
                ));
            }
            if tokens.tokens.iter().any(|(t, _)| t == token) {
                return Err(format!("entry {n} (`{subject}`): the token is given twice"));
            }
            tokens = tokens.token(token, subject);
        }
        Ok(tokens)
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
            None => Err(AuthError::missing("a bearer token is required")),
            Some(token) => self
                .tokens
                .iter()
                .find(|(known, _)| same_secret(known.as_bytes(), token.as_bytes()))
                .map(|(_, identity)| identity.clone())
                .ok_or_else(|| AuthError::invalid("the bearer token is not valid")),
        };
        Box::pin(std::future::ready(outcome))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_lists_are_read_exactly_or_refused() {
        let t = BearerTokens::parse("alice:s3cret, bob:a:b:c").unwrap();
        assert_eq!(t.tokens.len(), 2);
        assert_eq!(t.tokens[1].0, "a:b:c", "the token keeps its colons");
        assert_eq!(t.tokens[1].1.subject, "bob");
        for bad in [
            "s3cret",
            ":tok",
            "al ice:tok",
            "alice:",
            "alice:has space",
            "a:x,b:x",
        ] {
            assert!(BearerTokens::parse(bad).is_err(), "{bad}");
        }
        assert!(BearerTokens::parse("").unwrap().tokens.is_empty());
    }
}
