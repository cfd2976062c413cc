//! A connection's assertion grants (RFC 7523 JWT bearer), where the gateway acts for a
//! workload or for an enterprise's user without a browser: `grant: workload_identity`
//! (SEP-1933: the workload's own identity token is the assertion) and `grant: enterprise`
//! (SEP-990: the user's ID token is exchanged at the enterprise's identity provider, `idp`,
//! for an identity assertion grant naming the connection's `issuer` — its audience — and the
//! server). The token comes from `subject_token`, read again each time a grant needs one.

use std::path::PathBuf;

use serde::Deserialize;

use crate::client::oauth::{EnterpriseIdp, OAuthClient, TokenSource};

/// Where the token a grant presents comes from (`subject_token`), read each time one is
/// needed: a file (a rotated token is taken), an environment variable, or what a command (a
/// program and its arguments, no shell) prints.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub(crate) enum SubjectToken {
    File(PathBuf),
    Env(String),
    Command(Vec<String>),
}

/// The enterprise's identity provider (`idp`): its token endpoint, and the gateway's client
/// there. Its `Debug` shows no secret.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Idp {
    token_endpoint: String,
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
}

impl std::fmt::Debug for SubjectToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.source(), f)
    }
}

impl std::fmt::Debug for Idp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Idp")
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "(hidden)"),
            )
            .finish()
    }
}

impl SubjectToken {
    fn source(&self) -> TokenSource {
        match self {
            SubjectToken::File(path) => TokenSource::File(path.clone()),
            SubjectToken::Env(name) => TokenSource::Env(name.clone()),
            SubjectToken::Command(argv) => TokenSource::Command(argv.clone()),
        }
    }

    fn check(&self) -> Result<(), String> {
        match self {
            SubjectToken::Command(argv) if argv.first().is_none_or(String::is_empty) => {
                Err("`subject_token.command` names no program".to_owned())
            }
            SubjectToken::Env(name) if name.is_empty() => {
                Err("`subject_token.env` names no variable".to_owned())
            }
            _ => Ok(()),
        }
    }
}

/// The client of an assertion grant: `client_id` presenting `subject`'s token (for a
/// workload), or, with `idp`, the ID-JAG the identity provider exchanges it for.
pub(crate) fn oauth(
    client_id: &str,
    subject: Option<&SubjectToken>,
    idp: Option<&Idp>,
    enterprise: bool,
) -> Result<OAuthClient, String> {
    let subject = subject.ok_or_else(|| {
        "an assertion grant needs its `subject_token`: `{\"file\": …}`, `{\"env\": …}` or `{\"command\": […]}`".to_owned()
    })?;
    subject.check()?;
    match (enterprise, idp) {
        (false, None) => Ok(OAuthClient::workload_identity(client_id, subject.source())),
        (true, Some(idp)) => {
            if !(idp.token_endpoint.starts_with("https://")
                || idp.token_endpoint.starts_with("http://"))
            {
                return Err("`idp.token_endpoint` must be an http(s) URL".to_owned());
            }
            let mut found = EnterpriseIdp::new(
                idp.token_endpoint.clone(),
                idp.client_id.clone(),
                subject.source(),
            );
            if let Some(secret) = &idp.client_secret {
                found = found.client_secret(secret);
            }
            Ok(OAuthClient::enterprise(found, client_id))
        }
        (true, None) => Err(
            "`grant: enterprise` needs the enterprise's identity provider, `idp` (`token_endpoint`, `client_id`)".to_owned(),
        ),
        (false, Some(_)) => Err("`idp` is for `grant: enterprise`".to_owned()),
    }
}
