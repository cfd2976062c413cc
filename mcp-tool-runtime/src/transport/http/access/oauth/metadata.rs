//! The authorization server's metadata: RFC 8414's `/.well-known/oauth-authorization-server`,
//! then OpenID Connect's `/.well-known/openid-configuration` (inserted, then appended, for an
//! issuer with a path), its `issuer` checked against the one configured. Fetched at the first
//! request, kept; an unreachable server is tried again at most once per interval, one
//! discovery at a time, waited for no longer than a request's own deadline.

use std::sync::Mutex;
use std::time::Instant;

use crate::protocol::oauth::{discover_authorization_server, fetch};
use crate::sync::lock;

use super::settings::Settings;

pub(super) use crate::protocol::oauth::{AuthServerMetadata as Metadata, MetadataError};

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
        // One discovery at a time; the others wait for it within their own deadline.
        let deadline = tokio::time::Instant::now() + fetch::WAIT;
        let Ok(mut state) = tokio::time::timeout_at(deadline, self.state.lock()).await else {
            return Err(waited());
        };
        if let Some(metadata) = &*state {
            return Ok(metadata.clone());
        }
        if let Some((at, e)) = &*lock(&self.failed)
            && at.elapsed() < settings.refresh_interval
        {
            return Err(e.clone());
        }
        // Marked before the fetch: a request that gives up waiting leaves a try behind.
        *lock(&self.failed) = Some((Instant::now(), waited()));
        let discovery = discover_authorization_server(http, &settings.issuer);
        let outcome = tokio::time::timeout_at(deadline, discovery)
            .await
            .unwrap_or_else(|_| Err(waited()));
        match outcome {
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

/// The error of a request that waited its whole deadline for the metadata.
fn waited() -> MetadataError {
    MetadataError::Fetch(format!("no answer within {} s", fetch::WAIT.as_secs()))
}
