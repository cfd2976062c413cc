//! A mount whose credentials are refused for good — the authorization server answers
//! `invalid_client`, `invalid_grant`, `unauthorized_client` (RFC 6749 §5.2), or the remote
//! refuses a token just obtained: one tool, `label__status`, stands for its tools (listed, so
//! the model sees why) and answers every call with the mount and the reason; a call of any
//! other `label__…` name is told the same; the log says it once per reason. The connection is
//! not tried again until the connection store changes, or the token file its assertion grant
//! reads (both polled each [`STORE_POLL`]), or after [`REFUSED_PAUSE`]. A failure that may
//! pass (the network, a 5xx, a 429) is retried with backoff instead, as before.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::client::{ClientError, Connect};
use crate::sync::lock;
use crate::tool::{DynamicArgs, DynamicTool, ToolError};

use super::assertion::SubjectToken;
use super::config::LABEL_SEPARATOR;
use super::{Mount, ServerHandle, connection};

/// The name of the tool standing for a refused mount's tools, after its label.
pub(super) const STATUS: &str = "status";

/// How long a refused mount waits, at most, before it tries its credentials again when the
/// connection store does not change.
pub(super) const REFUSED_PAUSE: Duration = Duration::from_secs(600);

/// How often a refused mount looks at its connection store.
const STORE_POLL: Duration = Duration::from_secs(1);

/// A mount's refusal, if its credentials are refused now, and the connection store they were
/// read from.
pub(super) struct Refusal {
    store: Option<PathBuf>,
    /// The mount's connection in the store.
    connection: Option<String>,
    /// A digest of what the mount's credentials were read from (see [`digest`]).
    read: std::sync::Mutex<u64>,
    why: std::sync::Mutex<Option<String>>,
}

impl Refusal {
    pub(super) fn new(store: Option<&Path>, connection: Option<String>) -> Self {
        Refusal {
            read: std::sync::Mutex::new(digest(store, connection.as_deref())),
            store: store.map(Path::to_path_buf),
            connection,
            why: std::sync::Mutex::new(None),
        }
    }

    /// Why the mount's credentials are refused, while they are.
    pub(super) fn why(&self) -> Option<String> {
        lock(&self.why).clone()
    }
}

/// A digest of the connection store's text (0 when there is none, or it cannot be read) and,
/// when the mount's `connection` there reads its assertion grant's token from a file, of
/// that file's text: a workload's token rotated on disk (or an ID token renewed) is a change
/// of credentials as much as an edited store is.
fn digest(store: Option<&Path>, connection: Option<&str>) -> u64 {
    let Some(text) = store.and_then(|p| std::fs::read(p).ok()) else {
        return 0;
    };
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    let token_file = connection
        .and_then(|id| connection::connection(id, store).ok())
        .and_then(|c| match c.subject_token {
            Some(SubjectToken::File(path)) => Some(path),
            _ => None,
        });
    if let Some(path) = token_file {
        std::fs::read(path).ok().hash(&mut hasher);
    }
    hasher.finish()
}

/// The reason of a refusal that trying again with the same credentials cannot change;
/// `None` for a failure that may pass. Decided by what answered, as the client types it: the
/// token endpoint's OAuth error (`invalid_client`, `invalid_grant`, `unauthorized_client`,
/// `invalid_scope`…), the remote refusing the credentials it was sent (a token just obtained,
/// or the configured ones), or anything else that no retry changes are permanent; an
/// authorization server unreachable, failing (5xx) or busy (429) is not. The client's
/// messages never hold a secret.
pub(super) fn permanent(e: &ClientError) -> Option<String> {
    match e {
        ClientError::Unauthorized(why) if !why.answer().is_transient() => {
            Some(why.message().to_owned())
        }
        _ => None,
    }
}

/// The error every call of a refused mount is answered with.
pub(super) fn refused_error(label: &str, why: &str) -> ToolError {
    ToolError::new(
        "REMOTE_REFUSED",
        format!(
            "the `{label}` server refused the gateway's credentials ({why}); the gateway tries again when its connection store (or the token file it reads) changes, or in {} minutes",
            REFUSED_PAUSE.as_secs() / 60
        ),
    )
}

impl Mount {
    /// The mount's credentials are refused for `why`: its tools give way to `label__status`,
    /// which says so (as does the log, once per reason).
    pub(super) fn refused(self: &Arc<Self>, server: &ServerHandle, why: String) {
        let status = format!("{}{LABEL_SEPARATOR}{STATUS}", self.label());
        let before = lock(&self.refusal.why).replace(why.clone());
        if before.as_deref() != Some(why.as_str()) {
            // The reason may quote the authorization server: logged quoted and escaped.
            tracing::warn!(mount = %self.label(), reason = ?why, pause_s = REFUSED_PAUSE.as_secs(), "the mounted server refused the gateway's credentials: not tried again until the connection store changes, or after the pause");
        }
        let gone: Vec<String> = std::mem::take(&mut *lock(&self.names))
            .into_iter()
            .filter(|n| *n != status)
            .collect();
        // The remote's list, when it comes back, is registered whole again.
        self.digest.store(0, std::sync::atomic::Ordering::SeqCst);
        let error = refused_error(self.label(), &why);
        let answer = error.clone();
        let tool = DynamicTool::new(
            status,
            format!(
                "Unavailable: {} Calling this tool tells the same.",
                error.message()
            ),
            move |_: DynamicArgs| {
                let answer = answer.clone();
                async move { Err::<String, _>(answer) }
            },
        );
        for problem in server.update_dynamic_tools(vec![tool], &gone) {
            tracing::warn!(mount = %self.label(), problem = ?problem, "the status tool could not be added");
        }
    }

    /// The mount's credentials are taken again: `label__status` goes.
    pub(super) fn accepted(self: &Arc<Self>, server: &ServerHandle) {
        if lock(&self.refusal.why).take().is_some() {
            tracing::info!(mount = %self.label(), "the mounted server takes the gateway's credentials again");
            let status = format!("{}{LABEL_SEPARATOR}{STATUS}", self.label());
            server.update_dynamic_tools(Vec::new(), &[status]);
        }
    }

    /// Waits until the connection store (or the token file of the mount's assertion grant)
    /// changes, then reads the mount's connection from it again (`Some`: connect with it),
    /// or until [`REFUSED_PAUSE`] has passed (`None`: try the same again). A store changed
    /// into one the mount cannot use is a refusal too.
    pub(super) async fn until_store_changes(
        self: &Arc<Self>,
        server: &ServerHandle,
    ) -> Option<Connect> {
        let deadline = tokio::time::Instant::now() + REFUSED_PAUSE;
        loop {
            let store = self.refusal.store.as_deref();
            let now = digest(store, self.refusal.connection.as_deref());
            if now != *lock(&self.refusal.read) {
                *lock(&self.refusal.read) = now;
                match connection::target(&self.config, store) {
                    Ok((connect, None)) => {
                        tracing::info!(mount = %self.label(), "the connection store or its token file changed: connecting with it");
                        return Some(connect);
                    }
                    Ok((_, Some(_))) => self.refused(
                        server,
                        "its connection now signs each user in, which takes a restart of the gateway".to_owned(),
                    ),
                    Err(e) => self.refused(server, e),
                }
            }
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(STORE_POLL).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::client::oauth::{AuthAnswer, AuthFailure};

    #[test]
    fn refused_credentials_are_permanent_and_an_unreachable_or_failing_server_is_not() {
        let refused = |answer: AuthAnswer| {
            // The message is not read: one that reads as passing changes nothing.
            let said = "could not be reached (HTTP 503)";
            permanent(&ClientError::Unauthorized(AuthFailure::new(said, answer)))
        };
        for error in [
            "invalid_client",
            "invalid_grant",
            "unauthorized_client",
            "invalid_scope",
        ] {
            let answer = AuthAnswer::Refused {
                error: Some(error.into()),
                status: 400,
            };
            assert!(refused(answer).is_some(), "{error}");
        }
        for permanent_answer in [
            AuthAnswer::Refused {
                error: None,
                status: 401,
            },
            AuthAnswer::ServerRefused { status: 401 },
            AuthAnswer::ServerRefused { status: 403 },
            AuthAnswer::Other,
        ] {
            assert!(
                refused(permanent_answer.clone()).is_some(),
                "{permanent_answer:?}"
            );
        }
        for passing in [
            AuthAnswer::Unreachable,
            AuthAnswer::Unavailable { status: 503 },
            AuthAnswer::Unavailable { status: 429 },
        ] {
            assert_eq!(refused(passing.clone()), None, "{passing:?}");
        }
        // The reason given is the client's message.
        let failure = AuthFailure::new(
            "the token endpoint refused (HTTP 401): invalid_client",
            AuthAnswer::Refused {
                error: Some("invalid_client".into()),
                status: 401,
            },
        );
        assert_eq!(
            permanent(&ClientError::Unauthorized(failure)).as_deref(),
            Some("the token endpoint refused (HTTP 401): invalid_client")
        );
        assert!(permanent(&ClientError::Unavailable("connection refused".into())).is_none());
        assert!(permanent(&ClientError::Protocol("HTTP 500: oops".into())).is_none());
    }
}
