//! Who may use the HTTP endpoint: the [`Authenticator`] trait, and [`BearerTokens`] known in
//! advance. The identity an authenticator establishes reaches tools as
//! [`Identity`](crate::tool::Identity).

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use axum::http::header;
use axum::http::request::Parts;

use crate::tool::Identity;

/// Why a request was refused: answered with 401 and `WWW-Authenticate` — or, when the fault
/// is the server's (`unavailable`: the authorization server it checks tokens with cannot be
/// reached), with 503 and `Retry-After`. Never accepted for want of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthError {
    /// The RFC 6750 error code: `invalid_token`, `insufficient_scope`, … — or none for a
    /// request that sent no credentials at all (RFC 6750 §3.1 says no code then).
    pub code: Option<&'static str>,
    /// Said to the client (`error_description`). Never the credentials themselves.
    pub description: String,
    /// The credentials could not be checked now: 503, to retry after this long.
    pub unavailable: Option<std::time::Duration>,
    /// The request presented its token with the DPoP scheme (RFC 9449): the challenge
    /// answers in that scheme, with the nonce the next proof must carry when the server
    /// asks for one.
    dpop: Option<DpopRefusal>,
}

/// What a refusal of a DPoP request adds to its challenge.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DpopRefusal {
    nonce: Option<String>,
}

impl AuthError {
    /// The request sent no credentials: no error code.
    pub fn missing(description: impl Into<String>) -> Self {
        AuthError {
            code: None,
            description: description.into(),
            unavailable: None,
            dpop: None,
        }
    }

    /// The credentials were refused: `invalid_token`.
    pub fn invalid(description: impl Into<String>) -> Self {
        AuthError {
            code: Some("invalid_token"),
            description: description.into(),
            unavailable: None,
            dpop: None,
        }
    }

    /// The credentials could not be checked now (the authorization server, its keys or its
    /// introspection endpoint cannot be reached): 503, to retry after `retry_after`.
    pub fn unavailable(description: impl Into<String>, retry_after: std::time::Duration) -> Self {
        AuthError {
            code: None,
            description: description.into(),
            unavailable: Some(retry_after),
            dpop: None,
        }
    }

    /// A refusal of a request that used the DPoP scheme: its challenge is a `DPoP` one, with
    /// `code` (`invalid_dpop_proof`, `use_dpop_nonce`, `invalid_token`…).
    pub fn dpop(code: &'static str, description: impl Into<String>) -> Self {
        AuthError {
            code: Some(code),
            description: description.into(),
            unavailable: None,
            dpop: Some(DpopRefusal { nonce: None }),
        }
    }

    /// The same refusal, telling the client the nonce its next DPoP proof must carry
    /// (`DPoP-Nonce`).
    #[must_use]
    pub fn with_dpop_nonce(mut self, nonce: impl Into<String>) -> Self {
        self.dpop = Some(DpopRefusal {
            nonce: Some(nonce.into()),
        });
        self
    }

    /// Whether the refusal answers a request that used the DPoP scheme.
    pub fn is_dpop(&self) -> bool {
        self.dpop.is_some()
    }

    /// The nonce the client's next DPoP proof must carry, when the server asks for one.
    pub fn dpop_nonce(&self) -> Option<&str> {
        self.dpop.as_ref().and_then(|d| d.nonce.as_deref())
    }
}

/// Whether an authenticator takes DPoP-bound tokens (RFC 9449), and whether it takes any
/// other (`MCP_TOOL_OAUTH_DPOP=off|allowed|required`): what the endpoint's challenges offer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum DpopMode {
    /// Bearer tokens only (a token bound to a key is refused: its proof cannot be checked).
    #[default]
    Off,
    /// Bearer tokens, and DPoP-bound tokens with their proofs (the `DPoP` scheme); a bound
    /// token sent as a bearer token is refused.
    Allowed,
    /// DPoP-bound tokens with their proofs only.
    Required,
}

impl DpopMode {
    /// Reads `off`, `allowed` or `required`.
    pub fn parse(text: &str) -> Option<DpopMode> {
        match text.trim() {
            "off" => Some(DpopMode::Off),
            "allowed" => Some(DpopMode::Allowed),
            "required" => Some(DpopMode::Required),
            _ => None,
        }
    }
}

/// The algorithms DPoP proofs may be signed with, as challenges name them (`DPoP algs="…"`).
pub(crate) const DPOP_ALGORITHMS: &str = "ES256 ES384 RS256 RS384 RS512 PS256 PS384 PS512";

/// The token of a request's `Authorization: Bearer …` header, if it has one.
pub(crate) fn bearer_token(request: &Parts) -> Option<&str> {
    request
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        })
}

/// The future an [`Authenticator`] returns.
pub type AuthFuture<'a> = Pin<Box<dyn Future<Output = Result<Identity, AuthError>> + Send + 'a>>;

/// Decides who may use the HTTP endpoint, from the request's head.
pub trait Authenticator: Send + Sync + 'static {
    /// Establishes the identity behind a request, or refuses it.
    fn authenticate<'a>(&'a self, request: &'a Parts) -> AuthFuture<'a>;

    /// Whether it takes DPoP-bound tokens, and bearer tokens beside them: what the
    /// endpoint's challenges offer (default: bearer tokens only).
    fn dpop_mode(&self) -> DpopMode {
        DpopMode::Off
    }
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
        self.tokens
            .push((token.into(), Identity::new(subject, Vec::<String>::new())));
        self
    }

    /// Accepts `token` as `subject`, granted `scopes` (which tools declaring scopes need).
    #[must_use]
    pub fn token_with_scopes<S: Into<String>>(
        mut self,
        token: impl Into<String>,
        subject: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.tokens
            .push((token.into(), Identity::new(subject, scopes)));
        self
    }

    /// Whether no token is accepted.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Reads comma-separated `subject:token` entries (as server binaries take them from
    /// `MCP_TOOL_BEARER_TOKENS`). The subject is letters, digits and `._@-`; the token is
    /// everything after the first colon (colons included), visible ASCII. Such a token is
    /// granted no scopes: `subject[users:read users:write]:token` grants the scopes between
    /// the brackets (space-separated, as in OAuth), which tools declaring scopes need. An entry that does
    /// not fit is an error naming it (a server refuses to start on it, rather than accept a
    /// token cut short); the error never holds a token.
    pub fn parse(text: &str) -> Result<Self, BearerTokensError> {
        let mut tokens = BearerTokens::new();
        for (i, entry) in text
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .enumerate()
        {
            let entry_number = i + 1;
            // `subject[scope scope]:token` grants scopes; `subject:token` grants none. A `[`
            // after the first `:` belongs to the token.
            let (subject, scopes, token) = match entry.split_once('[') {
                Some((subject, rest)) if !subject.contains(':') => {
                    let Some((scopes, token)) = rest.split_once("]:") else {
                        return Err(BearerTokensError::BadScopes {
                            entry: entry_number,
                        });
                    };
                    (subject, Some(scopes), token)
                }
                _ => match entry.split_once(':') {
                    Some((subject, token)) => (subject, None, token),
                    None => {
                        return Err(BearerTokensError::NoSubject {
                            entry: entry_number,
                        });
                    }
                },
            };
            // RFC 6749's scope-token: visible ASCII but `"` and `\` (and `[`, `]` here).
            if scopes.is_some_and(|scopes| {
                !scopes
                    .bytes()
                    .all(|b| b == b' ' || (b.is_ascii_graphic() && !b"\"\\[]".contains(&b)))
            }) {
                return Err(BearerTokensError::BadScopes {
                    entry: entry_number,
                });
            }
            if subject.is_empty()
                || !subject
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._@-".contains(&b))
            {
                // Not shown: a subject that is not one may be a token written first.
                return Err(BearerTokensError::BadSubject {
                    entry: entry_number,
                });
            }
            if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(BearerTokensError::BadToken {
                    entry: entry_number,
                    subject: subject.to_owned(),
                });
            }
            if tokens.tokens.iter().any(|(t, _)| t == token) {
                return Err(BearerTokensError::Repeated {
                    entry: entry_number,
                    subject: subject.to_owned(),
                });
            }
            let scopes = scopes.unwrap_or_default().split_whitespace();
            tokens = tokens.token_with_scopes(token, subject, scopes);
        }
        Ok(tokens)
    }
}

/// Why a list of bearer tokens was refused ([`BearerTokens::parse`]): which entry, and what
/// is wrong with it. It holds no token, so that it can be shown and logged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BearerTokensError {
    /// The entry has no `:` between a subject and a token.
    #[error("entry {entry} has no subject: write `subject:token` (the token may contain `:`)")]
    NoSubject {
        /// The entry's position in the list, from 1.
        entry: usize,
    },
    /// The scopes in `subject[scope scope]:token` are not closed by `]:` or have a character
    /// other than visible ASCII (without `"`, `\\`, `[`, `]`) and spaces.
    #[error(
        "entry {entry}: write scopes as `subject[scope scope]:token`, each scope visible ASCII \
         without `\"`, `\\`, `[` or `]`"
    )]
    BadScopes {
        /// The entry's position in the list, from 1.
        entry: usize,
    },
    /// The subject is empty or has a character other than letters, digits and `._@-`.
    #[error("entry {entry}: the subject must be letters, digits and `._@-`")]
    BadSubject {
        /// The entry's position in the list, from 1.
        entry: usize,
    },
    /// The token is empty or has a character that is not visible ASCII.
    #[error("entry {entry} (`{subject}`): the token must be visible ASCII, without spaces")]
    BadToken {
        /// The entry's position in the list, from 1.
        entry: usize,
        /// The entry's subject.
        subject: String,
    },
    /// The token is an earlier entry's too.
    #[error("entry {entry} (`{subject}`): the token is given twice")]
    Repeated {
        /// The entry's position in the list, from 1.
        entry: usize,
        /// The entry's subject.
        subject: String,
    },
}

impl BearerTokensError {
    /// The position of the entry refused, from 1.
    pub fn entry(&self) -> usize {
        match self {
            BearerTokensError::NoSubject { entry }
            | BearerTokensError::BadScopes { entry }
            | BearerTokensError::BadSubject { entry }
            | BearerTokensError::BadToken { entry, .. }
            | BearerTokensError::Repeated { entry, .. } => *entry,
        }
    }
}

/// Compares two byte strings in time that depends only on their lengths.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Authenticator for BearerTokens {
    fn authenticate<'a>(&'a self, request: &'a Parts) -> AuthFuture<'a> {
        let outcome = match bearer_token(request) {
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
        for (bad, entry) in [
            ("s3cret", 1),
            (":t0k", 1),
            ("al ice:t0k", 1),
            ("alice:", 1),
            ("alice:has space", 1),
            ("a:q9,b:q9", 2),
            ("a:ok, s3cr3t!:alice", 2),
            ("alice[users:read:t0k", 1),
            ("alice[users:read\"]:t0k", 1),
            ("a:ok,s3cret[x]y:t0k", 2),
            ("[users:read]:t0k", 1),
        ] {
            let e = BearerTokens::parse(bad).unwrap_err();
            assert_eq!(e.entry(), entry, "{bad}");
            let said = e.to_string();
            assert!(said.starts_with(&format!("entry {entry}")), "{said}");
            for secret in ["s3cret", "t0k", "has space", "q9", "s3cr3t!"] {
                assert!(!said.contains(secret), "{bad}: {said}");
            }
        }
        assert_eq!(
            BearerTokens::parse("a:q9,b:q9").unwrap_err(),
            BearerTokensError::Repeated {
                entry: 2,
                subject: "b".into()
            }
        );
        assert!(BearerTokens::parse("").unwrap().tokens.is_empty());
    }

    #[test]
    fn scopes_are_granted_between_brackets_and_only_there() {
        let t = BearerTokens::parse(
            "alice[users:read  users:write]:a[1]:b, bob:tok[x]:y, carol[]:c, dave:d",
        )
        .unwrap();
        let granted: Vec<(&str, &str, Vec<&str>)> = t
            .tokens
            .iter()
            .map(|(token, id)| {
                let scopes = id.scopes.iter().map(String::as_str).collect();
                (id.subject.as_str(), token.as_str(), scopes)
            })
            .collect();
        assert_eq!(
            granted,
            [
                ("alice", "a[1]:b", vec!["users:read", "users:write"]),
                ("bob", "tok[x]:y", vec![]),
                ("carol", "c", vec![]),
                ("dave", "d", vec![]),
            ]
        );
    }
}
