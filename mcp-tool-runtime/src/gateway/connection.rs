//! The connection store: a JSON file of named connections, each saying where a mounted
//! server is and how it is reached — a token obtained elsewhere, client credentials the
//! gateway obtains its own tokens with, or each user's sign-in (`grant: authorization_code`).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

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
}

/// A connection's `grant`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Grant {
    /// The gateway obtains tokens for itself.
    ClientCredentials,
    /// Each calling user signs in; their tokens are theirs alone.
    AuthorizationCode,
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
            }));
        }
        if self.redirect_uri.is_some() {
            return Err(format!(
                "connection `{id}`: `redirect_uri` is for `grant: authorization_code`"
            ));
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
}
