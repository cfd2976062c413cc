//! The authorization server's metadata: RFC 8414's `/.well-known/oauth-authorization-server`,
//! then OpenID Connect's `/.well-known/openid-configuration`, its `issuer` checked against the
//! one configured. Fetched at the first request, kept; an unreachable server is tried again at
//! most once per interval.

use std::sync::Mutex;
use std::time::Instant;

use serde::Deserialize;

use crate::sync::lock;

use super::fetch::{self, FetchError};
use super::settings::Settings;

/// What the verifier needs of the metadata.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct Metadata {
    pub(super) issuer: String,
    #[serde(default)]
    pub(super) jwks_uri: Option<String>,
    #[serde(default)]
    pub(super) introspection_endpoint: Option<String>,
}

/// Why the metadata is not there.
#[derive(Debug, Clone, thiserror::Error)]
pub(super) enum MetadataError {
    #[error("the authorization server's metadata could not be fetched: {0}")]
    Fetch(String),
    #[error("the authorization server has no metadata at `{0}` nor at `{1}`")]
    Missing(String, String),
    #[error("the metadata names the issuer `{found}`, not `{expected}`")]
    WrongIssuer { expected: String, found: String },
}

/// The metadata, once fetched; the last failure and when, so that it is not tried again at
/// once.
#[derive(Default)]
pub(super) struct Discovery {
    state: tokio::sync::Mutex<Option<Metadata>>,
    failed: Mutex<Option<(Instant, MetadataError)>>,
}

impl Discovery {
    /// The metadata: fetched now if it is not yet.
    pub(super) async fn get(
        &self,
        http: &reqwest::Client,
        settings: &Settings,
    ) -> Result<Metadata, MetadataError> {
        let mut state = self.state.lock().await;
        if let Some(metadata) = &*state {
            return Ok(metadata.clone());
        }
        if let Some((at, e)) = &*lock(&self.failed)
            && at.elapsed() < settings.refresh_interval
        {
            return Err(e.clone());
        }
        match discover(http, &settings.issuer).await {
            Ok(metadata) => {
                *state = Some(metadata.clone());
                Ok(metadata)
            }
            Err(e) => {
                *lock(&self.failed) = Some((Instant::now(), e.clone()));
                Err(e)
            }
        }
    }
}

/// The well-known URLs of `issuer`'s metadata, in the order tried: RFC 8414 (the well-known
/// segment between the host and the issuer's path), then OpenID Connect (appended).
pub(super) fn well_known(issuer: &str) -> [String; 2] {
    let issuer = issuer.trim_end_matches('/');
    let (origin, path) = match issuer.find("://").map(|i| i + 3) {
        Some(start) => match issuer[start..].find('/') {
            Some(slash) => issuer.split_at(start + slash),
            None => (issuer, ""),
        },
        None => (issuer, ""),
    };
    [
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{issuer}/.well-known/openid-configuration"),
    ]
}

async fn discover(http: &reqwest::Client, issuer: &str) -> Result<Metadata, MetadataError> {
    let urls = well_known(issuer);
    let fetch_error = |e: FetchError| MetadataError::Fetch(e.to_string());
    for url in &urls {
        let found: Option<Metadata> = fetch::json(http.get(url), url, true)
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
    let [a, b] = urls;
    Err(MetadataError::Missing(a, b))
}

#[cfg(test)]
mod tests {
    use super::well_known;

    #[test]
    fn the_well_known_urls_insert_and_append() {
        assert_eq!(
            well_known("https://as.example.com"),
            [
                "https://as.example.com/.well-known/oauth-authorization-server",
                "https://as.example.com/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            well_known("https://as.example.com/tenant/1/"),
            [
                "https://as.example.com/.well-known/oauth-authorization-server/tenant/1",
                "https://as.example.com/tenant/1/.well-known/openid-configuration"
            ]
        );
    }
}
