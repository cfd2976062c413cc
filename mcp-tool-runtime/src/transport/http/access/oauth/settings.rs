//! What an [`OAuthVerifier`](super::OAuthVerifier) was configured with, and the one warning per
//! interval it logs while the authorization server cannot be reached.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::server::replicas::ReplicaStore;
use crate::sync::lock;
use crate::tool::Identity;

use super::super::auth::DpopMode;

/// The most a clock may be off: `exp` and `nbf` are given this much leeway at most.
pub(super) const MAX_LEEWAY: Duration = Duration::from_secs(300);

/// The longest token read: longer ones are refused before anything is decoded.
pub(super) const MAX_TOKEN: usize = 8 * 1024;

/// How long a client is told to wait when the authorization server cannot be reached.
pub(super) const RETRY_AFTER: Duration = Duration::from_secs(5);

/// The longest anything a token says is remembered (a token's `exp` may lie centuries ahead).
pub(super) const MAX_REMEMBERED: Duration = Duration::from_secs(24 * 3600);

/// The instant `after` from now, at most [`MAX_REMEMBERED`] ahead: a time read from a token
/// (or a setting) never overflows the clock.
pub(super) fn later(after: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(after.min(MAX_REMEMBERED)).unwrap_or(now)
}

/// The verifier's settings.
#[derive(Clone)]
pub(super) struct Settings {
    /// The issuer, exactly as tokens and metadata name it.
    pub(super) issuer: String,
    /// What a token's `aud` must contain one of: this server's resource URL, or a configured
    /// audience.
    pub(super) audiences: Vec<String>,
    /// Leeway on `exp` and `nbf` (at most [`MAX_LEEWAY`]).
    pub(super) leeway: Duration,
    /// A shared secret for HMAC-signed tokens, only when configured explicitly.
    pub(super) shared_secret: Option<Vec<u8>>,
    /// The introspection endpoint, if configured (else the metadata's).
    pub(super) introspection_endpoint: Option<String>,
    /// The server's own client credentials at the introspection endpoint.
    pub(super) client: Option<(String, String)>,
    /// The longest an introspection answer is trusted.
    pub(super) cache_ceiling: Duration,
    /// How long a refusal by introspection is remembered.
    pub(super) negative_ttl: Duration,
    /// The shortest time between two fetches of the key set (a flood of unknown `kid`s makes
    /// no flood of fetches), and between two tries of unreachable metadata.
    pub(super) refresh_interval: Duration,
    /// How long a fetched key set is used before it is fetched again.
    pub(super) keys_max_age: Duration,
    /// Whether tokens may, or must, be bound to a DPoP key.
    pub(super) dpop: DpopMode,
    /// How far a DPoP proof's `iat` may lie from now.
    pub(super) dpop_window: Duration,
    /// The key server nonces are made with, when the server asks for them.
    pub(super) dpop_nonce_key: Option<Vec<u8>>,
    /// Where replicas share the `jti`s of the DPoP proofs taken, when they do.
    pub(super) dpop_replays: Option<Arc<dyn ReplicaStore>>,
}

/// What an accepted token says: who it stands for, and the thumbprint of the DPoP key it is
/// bound to (`cnf.jkt`), if any.
#[derive(Clone, Debug)]
pub(super) struct Accepted {
    pub(super) identity: Identity,
    pub(super) jkt: Option<String>,
}

/// Logs a warning at most once per interval.
pub(super) struct Alarm {
    last: Mutex<Option<Instant>>,
    every: Duration,
}

impl Alarm {
    pub(super) fn new(every: Duration) -> Self {
        Alarm {
            last: Mutex::new(None),
            every,
        }
    }

    /// Logs `message` unless it was logged less than an interval ago.
    pub(super) fn raise(&self, message: &str) {
        let mut last = lock(&self.last);
        if last.is_some_and(|t| t.elapsed() < self.every) {
            return;
        }
        *last = Some(Instant::now());
        drop(last);
        tracing::warn!(problem = message, "OAuth: tokens cannot be checked");
    }
}
