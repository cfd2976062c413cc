//! The connection store: a JSON file of named connections, each saying where a mounted
//! server is and how it is reached — a token obtained elsewhere, client credentials the
//! gateway obtains its own tokens with, or each user's sign-in (`grant: authorization_code`).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::client::Connect;

use super::assertion;
use super::config::McpTool;

/// One connection of the connection store: where the server is, and how to reach it — a
/// token obtained elsewhere (`authorization`), or the client credentials to obtain tokens
/// with (`client_id` with `client_secret`, or with `private_key` for `private_key_jwt`).
/// Its `Debug` shows no secret.
#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Connection {
    #[serde(default)]
    pub(crate) server_url: Option<String>,
    #[serde(default)]
    pub(crate) authorization: Option<String>,
    #[serde(default)]
    pub(crate) headers: BTreeMap<String, String>,
    /// Query parameters added to every request (an API key a service takes in its query;
    /// OpenAPI mounts).
    #[serde(default)]
    pub(crate) query: BTreeMap<String, String>,
    #[serde(default)]
    pub(crate) client_id: Option<String>,
    #[serde(default)]
    pub(crate) client_secret: Option<String>,
    /// A private key in PEM, for `private_key_jwt`.
    #[serde(default)]
    pub(crate) private_key: Option<String>,
    /// The private key's JWS algorithm (default `ES256`).
    #[serde(default)]
    pub(crate) signing_algorithm: Option<String>,
    /// The scopes to ask for (default: those the server suggests).
    #[serde(default)]
    pub(crate) scopes: Option<Vec<String>>,
    /// The authorization server the connection's credentials belong to (its issuer, exactly as
    /// its metadata names it): the secret, the key's assertions and the refresh tokens go to
    /// it and to no other. Required with a `client_secret` or a `private_key`.
    #[serde(default)]
    pub(crate) issuer: Option<String>,
    /// How tokens are obtained: `client_credentials` (the gateway acts for itself; the default
    /// with a `client_id`) or `authorization_code` (each calling user signs in and the
    /// gateway acts for them, with tokens of their own).
    #[serde(default)]
    pub(crate) grant: Option<Grant>,
    /// Where the authorization server sends each user back (`authorization_code`): the
    /// gateway's own address with the path it receives them on. Default: the address the
    /// gateway serves HTTP on, path `/oauth/callback`.
    #[serde(default)]
    pub(crate) redirect_uri: Option<String>,
    /// A file the users' sign-ins are kept in (`authorization_code`), sealed under a key
    /// derived from `MCP_TOOL_STATE_KEY`: they stay signed in across a restart. Replicas
    /// sharing a store keep them there instead. Default: in memory.
    #[serde(default)]
    pub(crate) sign_in_store: Option<std::path::PathBuf>,
    /// With `grant: workload_identity` or `enterprise`: where the token the grant presents
    /// comes from (the workload's identity token, or the user's ID token).
    #[serde(default)]
    pub(crate) subject_token: Option<assertion::SubjectToken>,
    /// With `grant: enterprise`: the enterprise's identity provider.
    #[serde(default)]
    pub(crate) idp: Option<assertion::Idp>,
}

/// A connection's `grant`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Grant {
    /// The gateway obtains tokens for itself.
    ClientCredentials,
    /// Each calling user signs in; their tokens are theirs alone.
    AuthorizationCode,
    /// The gateway presents a workload's identity token (RFC 7523, SEP-1933).
    WorkloadIdentity,
    /// The gateway presents an identity assertion grant from the enterprise's identity
    /// provider (RFC 8693 then RFC 7523, SEP-990).
    Enterprise,
}

/// How a mount is authorized, as its connection says.
pub(crate) enum Authorization {
    /// A token given, or none.
    Given,
    /// Client credentials: one token for the gateway.
    Service(crate::client::oauth::OAuthClient),
    /// Each calling user signs in (authorization code).
    PerUser(UserGrant),
}

/// What the users of a per-user mount sign in with: a client registered beforehand (id,
/// and secret for a confidential one), else a registration made at the authorization server.
#[derive(Clone, Default)]
pub(crate) struct UserGrant {
    pub(crate) client_id: Option<String>,
    pub(crate) client_secret: Option<String>,
    pub(crate) scopes: Option<Vec<String>>,
    pub(crate) redirect_uri: Option<String>,
    /// The issuer the sign-ins are pinned to.
    pub(crate) issuer: Option<String>,
    /// The file the sign-ins are kept in, if any.
    pub(crate) sign_in_store: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hidden = |v: &Option<String>| v.as_ref().map(|_| "(hidden)");
        f.debug_struct("Connection")
            .field("server_url", &self.server_url)
            .field("authorization", &hidden(&self.authorization))
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("query", &self.query.keys().collect::<Vec<_>>())
            .field("client_id", &self.client_id)
            .field("client_secret", &hidden(&self.client_secret))
            .field("private_key", &hidden(&self.private_key))
            .field("signing_algorithm", &self.signing_algorithm)
            .field("scopes", &self.scopes)
            .field("issuer", &self.issuer)
            .field("grant", &self.grant)
            .field("redirect_uri", &self.redirect_uri)
            .field("sign_in_store", &self.sign_in_store)
            .field("subject_token", &self.subject_token)
            .field("idp", &self.idp)
            .finish()
    }
}

impl Connection {
    /// How this connection obtains its tokens: given, client credentials, or each user's
    /// sign-in; an error for a connection that says two ways or half of one.
    pub(crate) fn authorization(&self, id: &str) -> Result<Authorization, String> {
        use crate::client::oauth::OAuthClient;
        if self.grant == Some(Grant::AuthorizationCode) {
            if self.authorization.is_some() || self.private_key.is_some() {
                return Err(format!(
                    "connection `{id}`: with `grant: authorization_code` each user signs in; `authorization` (a token) and `private_key` do not apply"
                ));
            }
            if self.client_secret.is_some() && self.client_id.is_none() {
                return Err(format!(
                    "connection `{id}`: a `client_secret` needs its `client_id`"
                ));
            }
            if let Some(uri) = &self.redirect_uri {
                check_redirect_uri(uri).map_err(|why| format!("connection `{id}`: {why}"))?;
            }
            self.check_issuer(id)?;
            return Ok(Authorization::PerUser(UserGrant {
                client_id: self.client_id.clone(),
                client_secret: self.client_secret.clone(),
                scopes: self.scopes.clone(),
                redirect_uri: self.redirect_uri.clone(),
                issuer: self.issuer.clone(),
                sign_in_store: self.sign_in_store.clone(),
            }));
        }
        if self.redirect_uri.is_some() {
            return Err(format!(
                "connection `{id}`: `redirect_uri` is for `grant: authorization_code`"
            ));
        }
        if self.sign_in_store.is_some() {
            return Err(format!(
                "connection `{id}`: `sign_in_store` is for `grant: authorization_code`"
            ));
        }
        let asserted = matches!(
            self.grant,
            Some(Grant::WorkloadIdentity | Grant::Enterprise)
        );
        if !asserted && (self.subject_token.is_some() || self.idp.is_some()) {
            return Err(format!(
                "connection `{id}`: `subject_token` and `idp` are for `grant: workload_identity` or `enterprise`"
            ));
        }
        if asserted {
            return self.asserted(id);
        }
        let Some(client_id) = &self.client_id else {
            if self.client_secret.is_some() || self.private_key.is_some() {
                return Err(format!(
                    "connection `{id}`: a `client_secret` or `private_key` needs its `client_id`"
                ));
            }
            if self.grant == Some(Grant::ClientCredentials) {
                return Err(format!(
                    "connection `{id}`: `grant: client_credentials` needs a `client_id`"
                ));
            }
            self.check_issuer(id)?;
            return Ok(Authorization::Given);
        };
        if self.authorization.is_some() {
            return Err(format!(
                "connection `{id}`: give either `authorization` (a token) or `client_id` (client credentials to obtain tokens with), not both"
            ));
        }
        let oauth = match (&self.client_secret, &self.private_key) {
            (Some(secret), None) => OAuthClient::client_credentials(client_id, secret),
            (None, Some(key)) => OAuthClient::client_credentials_with_key(
                client_id,
                key,
                self.signing_algorithm.as_deref().unwrap_or("ES256"),
            ),
            _ => {
                return Err(format!(
                    "connection `{id}`: `client_id` needs exactly one of `client_secret` and `private_key`"
                ));
            }
        };
        self.check_issuer(id)?;
        let oauth = match &self.issuer {
            Some(issuer) => oauth.issuer(issuer),
            None => oauth,
        };
        Ok(Authorization::Service(match &self.scopes {
            Some(scopes) => oauth.scopes(scopes.iter().cloned()),
            None => oauth,
        }))
    }

    /// An assertion grant's client (`grant: workload_identity` or `enterprise`): its
    /// `client_id` (with a secret or key if the authorization server wants one), pinned to
    /// `issuer`, which the assertion is for.
    fn asserted(&self, id: &str) -> Result<Authorization, String> {
        let fail = |why: String| format!("connection `{id}`: {why}");
        if self.authorization.is_some() {
            return Err(fail(
                "an assertion grant obtains its tokens: `authorization` (a token) does not apply"
                    .into(),
            ));
        }
        let Some(client_id) = &self.client_id else {
            return Err(fail("an assertion grant needs a `client_id`".into()));
        };
        if self.issuer.is_none() {
            return Err(fail(
                "an assertion is sent only to the authorization server named by `issuer` (its audience): give that server's issuer URL".into(),
            ));
        }
        self.check_issuer(id)?;
        let enterprise = self.grant == Some(Grant::Enterprise);
        let mut oauth = assertion::oauth(
            client_id,
            self.subject_token.as_ref(),
            self.idp.as_ref(),
            enterprise,
        )
        .map_err(fail)?;
        oauth = match (&self.client_secret, &self.private_key) {
            (Some(secret), None) => oauth.client_secret(secret),
            (None, Some(key)) => {
                oauth.private_key(key, self.signing_algorithm.as_deref().unwrap_or("ES256"))
            }
            (None, None) => oauth,
            (Some(_), Some(_)) => {
                return Err(fail(
                    "give at most one of `client_secret` and `private_key`".into(),
                ));
            }
        };
        oauth = oauth.issuer(self.issuer.clone().unwrap_or_default());
        Ok(Authorization::Service(match &self.scopes {
            Some(scopes) => oauth.scopes(scopes.iter().cloned()),
            None => oauth,
        }))
    }

    /// The issuer pin: an http(s) URL; required with a secret or a key (sent nowhere but to
    /// their own authorization server), and only where tokens are obtained.
    fn check_issuer(&self, id: &str) -> Result<(), String> {
        let obtains = self.client_id.is_some() || self.grant.is_some();
        match &self.issuer {
            None if self.client_secret.is_some() || self.private_key.is_some() => Err(format!(
                "connection `{id}`: its `client_secret` or `private_key` is sent only to the authorization server named by `issuer`: give that server's issuer URL (exactly as its metadata names it)"
            )),
            Some(_) if !obtains => Err(format!(
                "connection `{id}`: `issuer` pins the credentials a connection obtains tokens with (`client_id`, or `grant`)"
            )),
            Some(issuer)
                if !(issuer.starts_with("https://") || issuer.starts_with("http://"))
                    || issuer.chars().any(|c| c.is_whitespace() || c.is_control()) =>
            {
                Err(format!(
                    "connection `{id}`: `issuer` must be an http(s) URL, not `{}`",
                    crate::tool::definition::validate::short_text(issuer)
                ))
            }
            _ => Ok(()),
        }
    }
}

/// A redirect URI the gateway can receive users on: an absolute `http(s)` URL with a path
/// and no fragment.
fn check_redirect_uri(uri: &str) -> Result<(), String> {
    let (scheme, rest) = uri
        .split_once("://")
        .ok_or_else(|| "`redirect_uri` must be an absolute http(s) URL".to_owned())?;
    let path = rest.find('/').map(|i| &rest[i..]).unwrap_or_default();
    if !matches!(scheme, "http" | "https")
        || rest.is_empty()
        || rest.starts_with('/')
        || uri.contains('#')
        || uri.contains('?')
        || uri.chars().any(|c| c.is_whitespace() || c.is_control())
        || path.len() < 2
    {
        return Err(format!(
            "`redirect_uri` must be an absolute http(s) URL with a path, no query and no fragment: {:?}",
            crate::tool::definition::validate::short_text(uri)
        ));
    }
    Ok(())
}

/// The path of a redirect URI checked by [`check_redirect_uri`].
pub(crate) fn redirect_path(uri: &str) -> &str {
    let rest = uri.split_once("://").map_or(uri, |(_, r)| r);
    rest.find('/').map_or("/", |i| &rest[i..])
}

/// A serde error about the connection store without the values it quotes (which may be
/// secrets): `invalid type: string "…", expected a map` becomes `invalid type, expected a
/// map`.
fn without_values(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match (text.find(':'), text.find(", expected")) {
        (Some(colon), Some(expected))
            if text.starts_with("invalid type") || text.starts_with("invalid value") =>
        {
            format!("{}{}", &text[..colon], &text[expected..])
        }
        _ => text,
    }
}

/// Reads the connection `id` from the connection store at `path` (`Server::connection_store`,
/// which a server binary's command line sets from its environment).
pub(crate) fn connection(id: &str, path: Option<&std::path::Path>) -> Result<Connection, String> {
    let path = path.ok_or_else(|| {
        format!(
            "connection `{id}`: no connection store (give one with `Server::connection_store`, \
             or to a server binary in its environment: see its `help`)"
        )
    })?;
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("connection `{id}`: the connection store cannot be read: {e}"))?;
    let mut store: BTreeMap<String, Value> = serde_json::from_str(&text)
        .map_err(|e| format!("connection `{id}`: the connection store is not JSON: {e}"))?;
    let entry = store
        .remove(id)
        .ok_or_else(|| format!("connection `{id}` is not in the connection store"))?;
    serde_json::from_value(entry).map_err(|e| format!("connection `{id}`: {}", without_values(&e)))
}

/// Where `config` connects and with which credentials (its connection in the store at
/// `connections` read now), and the grant of each user for a mount that signs each in; an
/// error names what is missing.
pub(super) fn target(
    config: &McpTool,
    connections: Option<&std::path::Path>,
) -> Result<(Connect, Option<UserGrant>), String> {
    let label = config.server_label.clone();
    let store = match config
        .project_connection_id
        .as_deref()
        .or(config.connector_id.as_deref())
    {
        Some(id) => Some(connection(id, connections).map_err(|e| format!("mount `{label}`: {e}"))?),
        None => None,
    };
    let mut connect = if let Some(command) = &config.command {
        Connect::stdio(command[0].clone(), command[1..].iter().cloned())
    } else {
        let url = config
            .server_url
            .clone()
            .or_else(|| store.as_ref().and_then(|s| s.server_url.clone()))
            .ok_or_else(|| {
                format!(
                    "mount `{label}`: connection `{}` has no `server_url` in the connection store",
                    config
                        .connector_id
                        .as_deref()
                        .or(config.project_connection_id.as_deref())
                        .unwrap_or("?")
                )
            })?;
        Connect::http(url)
    };
    connect = connect.client_name(format!("mcp-tool gateway ({label})"));
    let mut users = None;
    if let Some(store) = &store {
        for (name, value) in &store.headers {
            connect = connect.header(name, value);
        }
        if let Some(token) = &store.authorization {
            connect = connect.bearer(token);
        }
        let id = config
            .project_connection_id
            .as_deref()
            .or(config.connector_id.as_deref())
            .unwrap_or_default();
        let authorization = store
            .authorization(id)
            .map_err(|e| format!("mount `{label}`: {e}"))?;
        if config.command.is_some() && !matches!(authorization, Authorization::Given) {
            return Err(format!(
                "mount `{label}`: connection `{id}` obtains tokens with OAuth, which only a server reached over HTTP takes"
            ));
        }
        match authorization {
            Authorization::Given => {}
            Authorization::Service(oauth) => connect = connect.oauth(oauth),
            Authorization::PerUser(grant) => {
                if config.authorization.is_some() {
                    return Err(format!(
                        "mount `{label}`: its connection signs each user in; the mount's `authorization` token does not apply"
                    ));
                }
                users = Some(grant);
            }
        }
    }
    for (name, value) in config.headers.iter().flatten() {
        connect = connect.header(name, value);
    }
    if let Some(token) = &config.authorization {
        connect = connect.bearer(token);
    }
    Ok((connect, users))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const AS: &str = "https://auth.example.com";

    fn entry(value: Value) -> Connection {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_connection_holds_a_token_or_client_credentials_never_half_or_both() {
        let oauth = |v: Value| entry(v).authorization("c");
        assert!(matches!(
            oauth(json!({"authorization": "t"})),
            Ok(Authorization::Given)
        ));
        let Ok(Authorization::Service(found)) = oauth(
            json!({"client_id": "id", "client_secret": "hush", "scopes": ["a"], "issuer": AS}),
        ) else {
            panic!("client credentials")
        };
        assert!(!format!("{found:?}").contains("hush"));
        assert!(matches!(
            oauth(json!({"client_id": "id", "private_key": "PEM", "issuer": AS})),
            Ok(Authorization::Service(_))
        ));
        for (bad, says) in [
            (json!({"client_secret": "hush"}), "needs its `client_id`"),
            (json!({"client_id": "id"}), "exactly one of"),
            (
                json!({"client_id": "id", "client_secret": "s", "private_key": "k"}),
                "exactly one of",
            ),
            (
                json!({"client_id": "id", "client_secret": "s", "authorization": "t", "issuer": AS}),
                "not both",
            ),
            // Credentials are pinned to their authorization server: it must be named.
            (
                json!({"client_id": "id", "client_secret": "hush"}),
                "named by `issuer`",
            ),
            (
                json!({"client_id": "id", "private_key": "PEM"}),
                "named by `issuer`",
            ),
            (
                json!({"grant": "authorization_code", "client_id": "id", "client_secret": "hush"}),
                "named by `issuer`",
            ),
            (
                json!({"client_id": "id", "client_secret": "hush", "issuer": "auth.example.com"}),
                "must be an http(s) URL",
            ),
            (
                json!({"authorization": "t", "issuer": AS}),
                "pins the credentials",
            ),
        ] {
            let Err(e) = oauth(bad.clone()) else {
                panic!("{bad} was taken")
            };
            assert!(e.contains(says), "{bad}: {e}");
            assert!(!e.contains("hush") && !e.contains('"'), "{e}");
        }
        // Debug shows no secret.
        let shown = format!(
            "{:?}",
            entry(json!({"authorization": "tok", "client_secret": "hush", "private_key": "PEM"}))
        );
        assert!(
            !shown.contains("tok\"") && !shown.contains("hush") && !shown.contains("PEM"),
            "{shown}"
        );
    }

    #[test]
    fn a_connection_for_each_user_takes_a_client_and_a_redirect_uri_only() {
        let auth = |v: Value| entry(v).authorization("c");
        let Ok(Authorization::PerUser(grant)) = auth(json!({
            "server_url": "https://x/mcp", "grant": "authorization_code",
            "client_id": "gw", "client_secret": "hush", "issuer": AS,
            "redirect_uri": "https://gw.example.com/oauth/callback"
        })) else {
            panic!("a per-user grant")
        };
        assert_eq!(grant.client_id.as_deref(), Some("gw"));
        assert_eq!(grant.issuer.as_deref(), Some(AS));
        assert_eq!(
            redirect_path(grant.redirect_uri.as_deref().unwrap()),
            "/oauth/callback"
        );
        // Registered at the authorization server when no client id is given.
        assert!(matches!(
            auth(json!({"grant": "authorization_code"})),
            Ok(Authorization::PerUser(UserGrant {
                client_id: None,
                ..
            }))
        ));
        for (bad, says) in [
            (
                json!({"grant": "authorization_code", "authorization": "t"}),
                "do not apply",
            ),
            (
                json!({"grant": "authorization_code", "private_key": "PEM"}),
                "do not apply",
            ),
            (
                json!({"grant": "authorization_code", "client_secret": "hush"}),
                "needs its `client_id`",
            ),
            (
                json!({"grant": "authorization_code", "redirect_uri": "/oauth/callback"}),
                "absolute",
            ),
            (
                json!({"grant": "authorization_code", "redirect_uri": "https://gw.example.com"}),
                "with a path",
            ),
            (
                json!({"grant": "authorization_code", "redirect_uri": "https://gw/cb?x=1"}),
                "no query",
            ),
            (
                json!({"client_id": "id", "client_secret": "s", "redirect_uri": "https://gw/cb"}),
                "is for `grant: authorization_code`",
            ),
            (
                json!({"grant": "client_credentials"}),
                "needs a `client_id`",
            ),
        ] {
            let Err(e) = auth(bad.clone()) else {
                panic!("{bad} was taken")
            };
            assert!(e.contains(says), "{bad}: {e}");
            assert!(!e.contains("hush"), "{e}");
        }
        assert!(serde_json::from_value::<Connection>(json!({"grant": "password"})).is_err());
    }

    #[test]
    fn a_connection_of_the_wrong_shape_is_named_without_its_values() {
        let e = serde_json::from_value::<Connection>(json!({"client_secret": 42})).unwrap_err();
        let text = without_values(&e);
        assert!(!text.contains("42"), "{text}");
        assert!(text.starts_with("invalid type, expected"), "{text}");
    }

    #[test]
    fn a_connection_needs_a_store_and_an_entry_in_it() {
        let e = connection("github", None).unwrap_err();
        assert!(e.contains("no connection store"), "{e}");
        let dir = std::env::temp_dir().join(format!("mcp-tool-store-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("connections.json");
        std::fs::write(
            &path,
            r#"{"github": {"server_url": "https://example.test/mcp", "authorization": "t"}}"#,
        )
        .unwrap();
        let found = connection("github", Some(&path)).unwrap();
        assert_eq!(
            found.server_url.as_deref(),
            Some("https://example.test/mcp")
        );
        let e = connection("jira", Some(&path)).unwrap_err();
        assert!(e.contains("not in the connection store"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_assertion_grant_names_its_subject_token_its_issuer_and_for_the_enterprise_its_idp() {
        let auth = |v: Value| entry(v).authorization("c");
        let Ok(Authorization::Service(found)) = auth(json!({
            "grant": "workload_identity", "client_id": "wl", "issuer": AS,
            "subject_token": {"file": "/var/run/secrets/tokens/mcp"},
        })) else {
            panic!("workload identity")
        };
        assert!(
            format!("{found:?}").contains("workload identity"),
            "{found:?}"
        );
        let Ok(Authorization::Service(found)) = auth(json!({
            "grant": "enterprise", "client_id": "agent", "issuer": AS,
            "subject_token": {"command": ["id-token", "--hush"]},
            "idp": {"token_endpoint": "https://idp.example.com/token", "client_id": "agent-at-idp", "client_secret": "hush"},
        })) else {
            panic!("enterprise")
        };
        let shown = format!("{found:?}");
        assert!(
            shown.contains("enterprise-managed") && !shown.contains("hush"),
            "{shown}"
        );
        for (bad, says) in [
            (
                json!({"grant": "workload_identity", "client_id": "wl", "issuer": AS}),
                "needs its `subject_token`",
            ),
            (
                json!({"grant": "workload_identity", "client_id": "wl", "subject_token": {"env": "T"}}),
                "named by `issuer`",
            ),
            (
                json!({"grant": "workload_identity", "issuer": AS, "subject_token": {"env": "T"}}),
                "needs a `client_id`",
            ),
            (
                json!({"grant": "enterprise", "client_id": "a", "issuer": AS, "subject_token": {"env": "T"}}),
                "needs the enterprise's identity provider",
            ),
            (
                json!({"grant": "workload_identity", "client_id": "a", "issuer": AS, "subject_token": {"env": "T"},
                       "idp": {"token_endpoint": "https://idp.example.com/token", "client_id": "x"}}),
                "`idp` is for `grant: enterprise`",
            ),
            (
                json!({"grant": "workload_identity", "client_id": "a", "issuer": AS, "subject_token": {"command": []}}),
                "names no program",
            ),
            (
                json!({"client_id": "a", "client_secret": "hush", "issuer": AS, "subject_token": {"env": "T"}}),
                "are for `grant: workload_identity` or `enterprise`",
            ),
        ] {
            let Err(e) = auth(bad.clone()) else {
                panic!("{bad} was taken")
            };
            assert!(e.contains(says), "{bad}: {e}");
            assert!(!e.contains("hush"), "{e}");
        }
        // A source of another kind is refused by name.
        let e = serde_json::from_value::<Connection>(
            json!({"grant": "workload_identity", "subject_token": {"url": "x"}}),
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(e.contains("unknown variant `url`"), "{e}");
    }
}
