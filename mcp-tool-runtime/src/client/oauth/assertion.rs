//! Grants by assertion (RFC 7523 JWT bearer), for clients that act for a workload or for an
//! enterprise's user without a browser:
//!
//! - **Workload identity federation** (SEP-1933): the workload's own identity token (a
//!   Kubernetes projected service-account token, a cloud's instance identity JWT) is the
//!   assertion.
//! - **Enterprise-managed authorization** (SEP-990): the user's ID token from the enterprise's
//!   identity provider is first exchanged there (RFC 8693) for an identity assertion grant
//!   (ID-JAG) naming this authorization server and the MCP server, which is then the
//!   assertion. The identity provider decides which agent reaches which server.
//!
//! Each token comes from a [`TokenSource`], read again whenever a grant needs it (a file
//! rotated on disk is picked up).

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use crate::client::ClientError;
use crate::protocol::oauth::fetch::{self, form_encode};

use super::discover::Discovered;
use super::{
    AuthAnswer, AuthFailure, Grant, excerpt, fetch_error, oauth_error, token, unauthorized,
};

/// `grant_type` of RFC 7523's JWT bearer grant.
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// The token request's form of an assertion `grant` at `found`'s authorization server, for
/// `scope`: the workload's token, or an ID-JAG the identity provider issues now.
pub(super) async fn assertion_form(
    grant: &Grant,
    http: &reqwest::Client,
    found: &Discovered,
    scope: &Option<String>,
) -> Result<Vec<(&'static str, String)>, ClientError> {
    let assertion = match grant {
        Grant::Enterprise(idp) => {
            idp.id_jag(
                http,
                &found.metadata.issuer,
                &found.resource,
                scope.as_deref(),
            )
            .await?
        }
        Grant::WorkloadIdentity(source) => source.read().await?,
        _ => return Err(unauthorized("not an assertion grant")),
    };
    let mut form = vec![
        ("grant_type", JWT_BEARER.to_owned()),
        ("assertion", assertion),
        ("resource", found.resource.clone()),
    ];
    if let Some(scope) = scope {
        form.push(("scope", scope.clone()));
    }
    Ok(form)
}

/// The longest token read from a source.
const MAX_TOKEN: usize = 16 * 1024;

/// How long a command that prints a token may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// Where a token (a workload's identity token, a user's ID token) comes from, each time one
/// is needed.
#[derive(Clone)]
#[non_exhaustive]
pub enum TokenSource {
    /// This token.
    Value(String),
    /// The contents of this file, read each time (so a rotated token is picked up).
    File(PathBuf),
    /// This environment variable, read each time.
    Env(String),
    /// What this command (a program and its arguments, no shell) prints on its standard
    /// output, run each time, within 10 seconds.
    Command(Vec<String>),
}

impl fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenSource::Value(_) => f.write_str("Value(hidden)"),
            TokenSource::File(path) => f.debug_tuple("File").field(path).finish(),
            TokenSource::Env(name) => f.debug_tuple("Env").field(name).finish(),
            // Only the program: an argument may hold a secret.
            TokenSource::Command(argv) => f
                .debug_tuple("Command")
                .field(&argv.first().map_or("", String::as_str))
                .finish_non_exhaustive(),
        }
    }
}

impl TokenSource {
    /// The token now, trimmed; an error names the source, never the token.
    pub(crate) async fn read(&self) -> Result<String, ClientError> {
        let text = match self {
            TokenSource::Value(token) => token.clone(),
            TokenSource::File(path) => {
                let bytes = std::fs::read(path).map_err(|e| {
                    unauthorized(format!(
                        "the token file `{}` cannot be read: {e}",
                        path.display()
                    ))
                })?;
                String::from_utf8(bytes).map_err(|_| {
                    unauthorized(format!("the token file `{}` is not text", path.display()))
                })?
            }
            TokenSource::Env(name) => std::env::var(name).map_err(|_| {
                unauthorized(format!("the environment variable `{name}` holds no token"))
            })?,
            TokenSource::Command(argv) => run(argv).await?,
        };
        let token = text.trim();
        if token.is_empty() || token.len() > MAX_TOKEN || token.contains(char::is_whitespace) {
            return Err(unauthorized(format!(
                "{} gives no usable token (empty, over {MAX_TOKEN} bytes, or with blanks)",
                self.name()
            )));
        }
        Ok(token.to_owned())
    }

    /// How errors name the source.
    fn name(&self) -> String {
        match self {
            TokenSource::Value(_) => "the token given".into(),
            TokenSource::File(path) => format!("the token file `{}`", path.display()),
            TokenSource::Env(name) => format!("the environment variable `{name}`"),
            TokenSource::Command(argv) => {
                format!("the command `{}`", argv.first().map_or("", String::as_str))
            }
        }
    }
}

/// The standard output of `argv`, run without a shell.
async fn run(argv: &[String]) -> Result<String, ClientError> {
    let Some((program, args)) = argv.split_first() else {
        return Err(unauthorized("the token command is empty"));
    };
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(COMMAND_TIMEOUT, command.output())
        .await
        .map_err(|_| unauthorized(format!("the token command `{program}` took over 10 s")))?
        .map_err(|e| unauthorized(format!("the token command `{program}` did not run: {e}")))?;
    if !output.status.success() {
        return Err(unauthorized(format!(
            "the token command `{program}` failed ({})",
            output.status
        )));
    }
    String::from_utf8(output.stdout).map_err(|_| {
        unauthorized(format!(
            "the token command `{program}` printed what is not text"
        ))
    })
}

/// The enterprise's identity provider, where an ID token is exchanged for an ID-JAG.
#[derive(Clone)]
pub struct EnterpriseIdp {
    pub(super) token_endpoint: String,
    pub(super) client_id: String,
    pub(super) client_secret: Option<String>,
    pub(super) id_token: TokenSource,
}

impl fmt::Debug for EnterpriseIdp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnterpriseIdp")
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "(hidden)"),
            )
            .field("id_token", &self.id_token)
            .finish()
    }
}

impl EnterpriseIdp {
    /// The identity provider whose token endpoint is `token_endpoint`, where this client is
    /// `client_id`, exchanging the user's ID token from `id_token`.
    pub fn new(
        token_endpoint: impl Into<String>,
        client_id: impl Into<String>,
        id_token: TokenSource,
    ) -> Self {
        EnterpriseIdp {
            token_endpoint: token_endpoint.into(),
            client_id: client_id.into(),
            client_secret: None,
            id_token,
        }
    }

    /// The client's secret at the identity provider (HTTP Basic), when it has one.
    #[must_use]
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }

    /// Exchanges the ID token for an ID-JAG (RFC 8693) naming `issuer` (the MCP server's
    /// authorization server) and `resource` (the MCP server), for `scope`.
    pub(super) async fn id_jag(
        &self,
        http: &reqwest::Client,
        issuer: &str,
        resource: &str,
        scope: Option<&str>,
    ) -> Result<String, ClientError> {
        let endpoint = &self.token_endpoint;
        let mut form = vec![
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:token-exchange".to_owned(),
            ),
            (
                "requested_token_type",
                "urn:ietf:params:oauth:token-type:id-jag".to_owned(),
            ),
            ("audience", issuer.to_owned()),
            ("resource", resource.to_owned()),
            ("subject_token", self.id_token.read().await?),
            (
                "subject_token_type",
                "urn:ietf:params:oauth:token-type:id_token".to_owned(),
            ),
        ];
        if let Some(scope) = scope {
            form.push(("scope", scope.to_owned()));
        }
        let mut request = http
            .post(endpoint)
            .header("accept", "application/json")
            .header("content-type", "application/x-www-form-urlencoded");
        match &self.client_secret {
            Some(secret) => {
                use base64::Engine as _;
                let pair = format!("{}:{}", form_encode(&self.client_id), form_encode(secret));
                let mut value = reqwest::header::HeaderValue::try_from(format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(pair)
                ))
                .map_err(|_| unauthorized("the identity provider credentials cannot be sent"))?;
                value.set_sensitive(true);
                request = request.header("authorization", value);
            }
            None => form.push(("client_id", self.client_id.clone())),
        }
        let body = form
            .iter()
            .map(|(name, value)| format!("{name}={}", form_encode(value)))
            .collect::<Vec<_>>()
            .join("&");
        let (status, bytes) = fetch::read(request.body(body), endpoint)
            .await
            .map_err(fetch_error)?;
        if !(200..300).contains(&status) {
            let answer =
                AuthAnswer::of_status(status, token::error_code(&bytes).map(|e| excerpt(&e)));
            return Err(ClientError::Unauthorized(AuthFailure::new(
                format!(
                    "the identity provider's token endpoint `{endpoint}` refused the exchange (HTTP {status}){}",
                    oauth_error(&bytes)
                ),
                answer,
            )));
        }
        #[derive(Deserialize)]
        struct Exchanged {
            access_token: Option<String>,
            issued_token_type: Option<String>,
        }
        let answer: Exchanged = serde_json::from_slice(&bytes).map_err(|_| {
            unauthorized(format!(
                "the identity provider's token endpoint `{endpoint}` answered what is not a token exchange response"
            ))
        })?;
        match answer.issued_token_type.as_deref() {
            Some("urn:ietf:params:oauth:token-type:id-jag") => {}
            other => {
                return Err(unauthorized(format!(
                    "the identity provider issued `{}`, not an identity assertion grant (ID-JAG)",
                    excerpt(other.unwrap_or("nothing"))
                )));
            }
        }
        answer
            .access_token
            .filter(|t| !t.is_empty() && t.len() <= MAX_TOKEN)
            .ok_or_else(|| unauthorized("the identity provider issued no usable ID-JAG"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn sources_read_each_time_and_never_show_the_token() {
        let dir = std::env::temp_dir().join(format!("mcp-tool-token-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("token");
        std::fs::write(&file, "first.jwt.x\n").unwrap();
        let source = TokenSource::File(file.clone());
        assert_eq!(source.read().await.unwrap(), "first.jwt.x");
        std::fs::write(&file, "second.jwt.y").unwrap();
        assert_eq!(
            source.read().await.unwrap(),
            "second.jwt.y",
            "a rotated file is read"
        );
        std::fs::write(&file, "  \n").unwrap();
        let e = source.read().await.unwrap_err().to_string();
        assert!(e.contains("no usable token"), "{e}");
        let command = TokenSource::Command(vec!["printf".into(), "cmd.jwt.z".into()]);
        assert_eq!(command.read().await.unwrap(), "cmd.jwt.z");
        let failing = TokenSource::Command(vec!["false".into()]);
        assert!(
            failing
                .read()
                .await
                .unwrap_err()
                .to_string()
                .contains("failed")
        );
        let missing = TokenSource::Env("MCP_TOOL_NO_SUCH_TOKEN_VARIABLE".into());
        assert!(missing.read().await.is_err());
        let value = TokenSource::Value("secret.jwt".into());
        assert!(!format!("{value:?}").contains("secret"));
        let with_secret = TokenSource::Command(vec!["printf".into(), "--password=hunter2".into()]);
        assert!(!format!("{with_secret:?}").contains("hunter2"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
