//! Why an authorization failed, typed ([`AuthFailure`]): what the authorization server
//! answered (an OAuth error code and its status, a failure, no answer at all), or the server
//! refusing the credentials it was sent, so that a caller can tell a refusal that trying again
//! cannot change from a failure that may pass, without reading the message.

use std::fmt;

use serde_json::{Value, json};

/// What answered an authorization that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthAnswer {
    /// The token endpoint refused the grant (RFC 6749 §5.2) with `status`, naming the OAuth
    /// `error` code when it gave one: `invalid_client`, `invalid_grant`,
    /// `unauthorized_client`, `invalid_scope`, … (the same credentials will be refused again).
    Refused {
        /// The OAuth error code, at most 200 characters of it.
        error: Option<String>,
        /// The HTTP status (200 for an error in a successful answer).
        status: u16,
    },
    /// An authorization server could not be reached (the network, a time limit).
    Unreachable,
    /// An authorization server failed (HTTP 5xx) or is busy (429).
    Unavailable {
        /// The HTTP status.
        status: u16,
    },
    /// The server refused the credentials it was sent (HTTP 401 or 403): a token just
    /// obtained (fresh authorizations refused in a row, step-ups that never satisfy it), or
    /// the configured ones.
    ServerRefused {
        /// The HTTP status.
        status: u16,
    },
    /// Nothing an authorization server said: the client's configuration, an answer that is
    /// malformed or not safe to use, a sign-in not completed.
    Other,
}

impl AuthAnswer {
    /// Whether the same credentials may do better later: an authorization server that could
    /// not be reached, failed or was busy.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            AuthAnswer::Unreachable | AuthAnswer::Unavailable { .. }
        )
    }

    /// The OAuth error code the token endpoint answered, if it did.
    pub fn oauth_error(&self) -> Option<&str> {
        match self {
            AuthAnswer::Refused { error, .. } => error.as_deref(),
            _ => None,
        }
    }

    /// What an authorization server's answer with HTTP `status` says: a failure (5xx) or
    /// busy (429), else a refusal.
    pub(crate) fn of_status(status: u16, error: Option<String>) -> AuthAnswer {
        if status >= 500 || status == 429 {
            AuthAnswer::Unavailable { status }
        } else {
            AuthAnswer::Refused { error, status }
        }
    }

    /// The answer as the `data` of the error the transport hands the waiting request (the
    /// client's own message, never sent anywhere).
    pub(crate) fn to_data(&self) -> Value {
        match self {
            AuthAnswer::Refused { error, status } => {
                json!({"answer": "refused", "error": error, "status": status})
            }
            AuthAnswer::Unreachable => json!({"answer": "unreachable"}),
            AuthAnswer::Unavailable { status } => {
                json!({"answer": "unavailable", "status": status})
            }
            AuthAnswer::ServerRefused { status } => {
                json!({"answer": "server_refused", "status": status})
            }
            AuthAnswer::Other => json!({"answer": "other"}),
        }
    }

    /// The answer [`to_data`](Self::to_data) wrote (`Other` for anything else).
    pub(crate) fn from_data(data: Option<&Value>) -> AuthAnswer {
        let Some(data) = data else {
            return AuthAnswer::Other;
        };
        let status = data["status"]
            .as_u64()
            .and_then(|s| u16::try_from(s).ok())
            .unwrap_or(0);
        match data["answer"].as_str() {
            Some("refused") => AuthAnswer::Refused {
                error: data["error"].as_str().map(str::to_owned),
                status,
            },
            Some("unreachable") => AuthAnswer::Unreachable,
            Some("unavailable") => AuthAnswer::Unavailable { status },
            Some("server_refused") => AuthAnswer::ServerRefused { status },
            _ => AuthAnswer::Other,
        }
    }
}

/// An authorization that failed: what happened, said for a person (never a secret), and what
/// answered ([`AuthAnswer`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthFailure {
    message: String,
    answer: AuthAnswer,
}

impl AuthFailure {
    /// A failure said by `message` (which must hold no secret), `answer` having answered.
    pub fn new(message: impl Into<String>, answer: AuthAnswer) -> Self {
        AuthFailure {
            message: message.into(),
            answer,
        }
    }

    /// What happened, for a person.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// What answered.
    pub fn answer(&self) -> &AuthAnswer {
        &self.answer
    }
}

impl fmt::Display for AuthFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A failure that no authorization server answered ([`AuthAnswer::Other`]).
impl From<String> for AuthFailure {
    fn from(message: String) -> Self {
        AuthFailure::new(message, AuthAnswer::Other)
    }
}

/// A failure that no authorization server answered ([`AuthAnswer::Other`]).
impl From<&str> for AuthFailure {
    fn from(message: &str) -> Self {
        AuthFailure::new(message, AuthAnswer::Other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_travels_as_data_and_comes_back_the_same() {
        for answer in [
            AuthAnswer::Refused {
                error: Some("invalid_client".into()),
                status: 401,
            },
            AuthAnswer::Refused {
                error: None,
                status: 400,
            },
            AuthAnswer::Unreachable,
            AuthAnswer::Unavailable { status: 503 },
            AuthAnswer::ServerRefused { status: 403 },
            AuthAnswer::Other,
        ] {
            assert_eq!(AuthAnswer::from_data(Some(&answer.to_data())), answer);
        }
        assert_eq!(AuthAnswer::from_data(None), AuthAnswer::Other);
        assert_eq!(
            AuthAnswer::from_data(Some(&json!({"answer": "?"}))),
            AuthAnswer::Other
        );
    }

    #[test]
    fn a_status_is_a_failure_or_a_refusal() {
        assert!(AuthAnswer::of_status(503, None).is_transient());
        assert!(AuthAnswer::of_status(429, None).is_transient());
        let refused = AuthAnswer::of_status(400, Some("invalid_grant".into()));
        assert!(!refused.is_transient());
        assert_eq!(refused.oauth_error(), Some("invalid_grant"));
    }
}
