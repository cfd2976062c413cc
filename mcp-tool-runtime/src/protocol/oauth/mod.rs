//! OAuth's wire, shared by the resource server (`http::OAuth`) and the client's authorization
//! flow: the authorization server's metadata (RFC 8414, and OpenID Connect discovery) and
//! where to find it, the protected resource's metadata (RFC 9728), a `WWW-Authenticate`
//! challenge read into its parameters, and bounded fetches. Each side reads its own part of
//! them: built with one side only, the other's part is unused.
#![cfg_attr(not(all(feature = "client", feature = "oauth")), allow(dead_code))]

pub(crate) mod dpop;
pub(crate) mod fetch;

use serde::Deserialize;

use self::fetch::FetchError;

/// An authorization server's metadata: what the resource server and the client read of it.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct AuthServerMetadata {
    pub(crate) issuer: String,
    #[serde(default)]
    pub(crate) authorization_endpoint: Option<String>,
    #[serde(default)]
    pub(crate) token_endpoint: Option<String>,
    #[serde(default)]
    pub(crate) registration_endpoint: Option<String>,
    #[serde(default)]
    pub(crate) jwks_uri: Option<String>,
    #[serde(default)]
    pub(crate) introspection_endpoint: Option<String>,
    #[serde(default)]
    pub(crate) scopes_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) client_id_metadata_document_supported: Option<bool>,
    #[serde(default)]
    pub(crate) authorization_response_iss_parameter_supported: Option<bool>,
    /// The algorithms the server takes DPoP proofs signed with (RFC 9449 §5.1).
    #[serde(default)]
    pub(crate) dpop_signing_alg_values_supported: Option<Vec<String>>,
}

/// Why an authorization server's metadata is not there.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum MetadataError {
    #[error("the authorization server's metadata could not be fetched: {0}")]
    Fetch(String),
    #[error("the authorization server `{0}` has no metadata at any of {1}")]
    Missing(String, String),
    #[error("the metadata names the issuer `{found}`, not `{expected}`")]
    WrongIssuer { expected: String, found: String },
}

/// `url` split into its origin (`https://host:port`) and its path without the trailing `/`
/// (empty for the root); the query and fragment are left out.
pub(crate) fn origin_and_path(url: &str) -> (&str, &str) {
    let url = url.split(['?', '#']).next().unwrap_or(url);
    let url = url.trim_end_matches('/');
    match url.find("://").map(|i| i + 3) {
        Some(start) => match url[start..].find('/') {
            Some(slash) => url.split_at(start + slash),
            None => (url, ""),
        },
        None => (url, ""),
    }
}

/// The well-known URLs of `issuer`'s metadata, in the order the MCP authorization
/// specification tries them: for an issuer with a path, RFC 8414's (the well-known segment
/// between the host and the path), OpenID Connect's inserted the same way, then OpenID
/// Connect's appended; for one without, RFC 8414's then OpenID Connect's.
pub(crate) fn authorization_server_urls(issuer: &str) -> Vec<String> {
    let (origin, path) = origin_and_path(issuer);
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// The well-known URLs of a protected resource's metadata (RFC 9728 §3.1), in the order
/// tried when its challenge names none: the path of the resource after the well-known
/// segment, then the root's.
pub(crate) fn protected_resource_urls(resource: &str) -> Vec<String> {
    let (origin, path) = origin_and_path(resource);
    let root = format!("{origin}/.well-known/oauth-protected-resource");
    if path.is_empty() {
        vec![root]
    } else {
        vec![format!("{root}{path}"), root]
    }
}

/// Fetches `issuer`'s metadata from the first of its well-known URLs that has it, and checks
/// that it names `issuer` exactly (RFC 8414 §3.3).
pub(crate) async fn discover_authorization_server(
    http: &reqwest::Client,
    issuer: &str,
) -> Result<AuthServerMetadata, MetadataError> {
    let urls = authorization_server_urls(issuer);
    let fetch_error = |e: FetchError| MetadataError::Fetch(e.to_string());
    for url in &urls {
        let found: Option<AuthServerMetadata> = fetch::json(http.get(url), url, true)
            .await
            .map_err(fetch_error)?;
        if let Some(metadata) = found {
            if metadata.issuer != issuer {
                return Err(MetadataError::WrongIssuer {
                    expected: issuer.to_owned(),
                    found: metadata.issuer,
                });
            }
            return Ok(metadata);
        }
    }
    Err(MetadataError::Missing(
        issuer.to_owned(),
        urls.iter()
            .map(|u| format!("`{u}`"))
            .collect::<Vec<_>>()
            .join(", "),
    ))
}

/// A `WWW-Authenticate: Bearer …` challenge's parameters (RFC 6750 §3, RFC 9728 §5.1): each
/// `name=value` or `name="value"` of the Bearer scheme, names lower-cased. Another scheme's
/// challenge, or text that is not a challenge, gives nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Challenge {
    pub(crate) params: Vec<(String, String)>,
}

impl Challenge {
    /// Reads the Bearer (or DPoP, RFC 9449 §7.1) challenge of a header's value (the first,
    /// when there are several).
    pub(crate) fn parse(header: &str) -> Option<Challenge> {
        Self::parse_scheme(header, &["bearer", "dpop"])
    }

    /// Reads the first challenge of one of `schemes` (lower case) in a header's value.
    pub(crate) fn parse_scheme(header: &str, schemes: &[&str]) -> Option<Challenge> {
        let mut rest = header.trim_start();
        loop {
            let scheme_end = rest
                .find(|c: char| c.is_ascii_whitespace() || c == ',')
                .unwrap_or(rest.len());
            let (scheme, after) = rest.split_at(scheme_end);
            if schemes.iter().any(|s| scheme.eq_ignore_ascii_case(s)) {
                return Some(Challenge {
                    params: params(after).0,
                });
            }
            // Another scheme: skip its parameters, to the next challenge.
            let (_, next) = params(after);
            if next.is_empty() || next.len() == rest.len() {
                return None;
            }
            rest = next;
        }
    }

    /// A parameter's value (`resource_metadata`, `scope`, `error`…).
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The scopes of a scope string (RFC 6749 §3.3): tokens of visible ASCII but `"` and `\\`,
/// separated by spaces (`%x20`) only; repeated spaces are taken as one. `None` when a
/// character is neither (a tab, a line break, anything else): such a string is refused whole,
/// never split at a guessed separator.
pub(crate) fn scope_tokens(text: &str) -> Option<Vec<&str>> {
    let valid = |c: char| c == ' ' || (('\x21'..='\x7e').contains(&c) && c != '"' && c != '\\');
    if !text.chars().all(valid) {
        return None;
    }
    Some(text.split(' ').filter(|s| !s.is_empty()).collect())
}

/// The `name=value` parameters at the start of `text`, and what follows them (the next
/// challenge's scheme).
fn params(mut text: &str) -> (Vec<(String, String)>, &str) {
    let mut out = Vec::new();
    loop {
        text = text.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == ',');
        let Some(eq) = text.find('=') else {
            return (out, text);
        };
        let name = text[..eq].trim();
        if name.is_empty() || name.contains(|c: char| c.is_ascii_whitespace() || c == ',') {
            // `scheme token68` or a new challenge's scheme.
            return (out, text);
        }
        let after = text[eq + 1..].trim_start();
        let (value, next) = if let Some(quoted) = after.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, escaped)) = chars.next() {
                            value.push(escaped);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => value.push(c),
                }
            }
            (value, &quoted[end.min(quoted.len())..])
        } else {
            let end = after
                .find(|c: char| c == ',' || c.is_ascii_whitespace())
                .unwrap_or(after.len());
            (after[..end].to_owned(), &after[end..])
        };
        out.push((name.to_ascii_lowercase(), value));
        text = next;
    }
}

#[cfg(test)]
mod tests {
    use super::{Challenge, authorization_server_urls, protected_resource_urls};

    #[test]
    fn the_well_known_urls_insert_and_append() {
        assert_eq!(
            authorization_server_urls("https://as.example.com"),
            [
                "https://as.example.com/.well-known/oauth-authorization-server",
                "https://as.example.com/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            authorization_server_urls("https://as.example.com/tenant/1/"),
            [
                "https://as.example.com/.well-known/oauth-authorization-server/tenant/1",
                "https://as.example.com/.well-known/openid-configuration/tenant/1",
                "https://as.example.com/tenant/1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            protected_resource_urls("http://127.0.0.1:3000/mcp?x=1"),
            [
                "http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp",
                "http://127.0.0.1:3000/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            protected_resource_urls("http://127.0.0.1:3000/"),
            ["http://127.0.0.1:3000/.well-known/oauth-protected-resource"]
        );
    }

    #[test]
    fn a_challenge_is_read_into_its_parameters() {
        let c = Challenge::parse(
            r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="http://x/.well-known/oauth-protected-resource/mcp", error_description="say \"no\"""#,
        )
        .unwrap();
        assert_eq!(c.get("error"), Some("insufficient_scope"));
        assert_eq!(c.get("scope"), Some("a b"));
        assert_eq!(
            c.get("resource_metadata"),
            Some("http://x/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(c.get("error_description"), Some("say \"no\""));
        let bare = Challenge::parse("Bearer").unwrap();
        assert!(bare.params.is_empty());
        let second = Challenge::parse(r#"Basic realm="x", Bearer scope=read"#).unwrap();
        assert_eq!(second.get("scope"), Some("read"));
        assert_eq!(second.get("realm"), None);
        assert!(Challenge::parse(r#"Basic realm="x""#).is_none());
        assert!(Challenge::parse("").is_none());
        // Unterminated quotes and stray text end the reading, never loop.
        let odd = Challenge::parse(r#"Bearer scope="a b"#).unwrap();
        assert_eq!(odd.get("scope"), Some("a b"));
        assert!(Challenge::parse("Bearer ,,,=,=").is_some());
    }

    #[test]
    fn scopes_are_split_at_spaces_only_and_odd_characters_refuse_the_string() {
        use super::scope_tokens;
        assert_eq!(scope_tokens("a b  c:d"), Some(vec!["a", "b", "c:d"]));
        assert_eq!(scope_tokens(""), Some(vec![]));
        assert_eq!(scope_tokens("users:read\tusers:write"), None);
        assert_eq!(scope_tokens("a\nb"), None);
        assert_eq!(scope_tokens("a\"b"), None);
        assert_eq!(scope_tokens("caf\u{e9}"), None);
    }
}
