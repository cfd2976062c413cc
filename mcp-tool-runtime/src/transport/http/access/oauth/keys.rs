//! The authorization server's signing keys (its JWKS, fetched from the metadata's `jwks_uri`
//! only, never from a URL a token names): kept, fetched again when they grow old, and on a
//! `kid` they do not have — at most once per interval, so a flood of tokens with made-up
//! `kid`s makes no flood of fetches. The interval holds before the first success too (a
//! failure is remembered, and said again, until it is over), one fetch is under way at a time,
//! and a request waits for it no longer than its own deadline ([`fetch::WAIT`]).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use jsonwebtoken::DecodingKey;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet, KeyAlgorithm, PublicKeyUse};

use super::settings::Settings;
use crate::protocol::oauth::fetch::{self, FetchError};

/// One signing key: the key, and the algorithm it is pinned to, if the set says.
pub(super) struct Key {
    pub(super) key: DecodingKey,
    pub(super) algorithm: Option<KeyAlgorithm>,
}

/// A fetched key set.
struct Set {
    by_kid: HashMap<String, Arc<Key>>,
    /// The keys without a `kid` (used only by tokens without one, when there is exactly one).
    unnamed: Vec<Arc<Key>>,
    fetched: Instant,
}

/// What looking a key up found.
pub(super) enum Found {
    Key(Arc<Key>),
    /// The set, fetched again or not, has no such key.
    Unknown,
}

/// The last try.
#[derive(Default)]
struct Tried {
    at: Option<Instant>,
    failed: Option<FetchError>,
}

/// The key set and when it was last fetched (or tried).
#[derive(Default)]
pub(super) struct KeyCache {
    set: tokio::sync::RwLock<Option<Set>>,
    /// When the set was last fetched or tried, and why that try failed: fetches are at least
    /// an interval apart. Held while a fetch is under way.
    tried: tokio::sync::Mutex<Tried>,
    /// How many times the set was fetched: what a token was verified with.
    generation: std::sync::atomic::AtomicU64,
}

impl KeyCache {
    /// How many times the set was fetched (tokens verified with an older set are verified
    /// again).
    pub(super) fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The key `kid` names (or the one unnamed key, for a token without `kid`), fetching the
    /// set at `jwks_uri` when it is not known yet, has grown old, or lacks the key — at most
    /// once per interval.
    pub(super) async fn find(
        &self,
        http: &reqwest::Client,
        jwks_uri: &str,
        kid: Option<&str>,
        settings: &Settings,
    ) -> Result<Found, FetchError> {
        if let Some(set) = &*self.set.read().await
            && set.fetched.elapsed() < settings.keys_max_age
            && let Some(key) = pick(set, kid)
        {
            return Ok(Found::Key(key));
        }
        // One fetch at a time; the others wait for it (within their own deadline) and look
        // again.
        let deadline = tokio::time::Instant::now() + fetch::WAIT;
        let Ok(mut tried) = tokio::time::timeout_at(deadline, self.tried.lock()).await else {
            return Err(fetch::waited(jwks_uri));
        };
        let known = self.set.read().await.as_ref().map(|set| {
            let fresh = set.fetched.elapsed() < settings.keys_max_age;
            (pick(set, kid), fresh)
        });
        let recently = tried
            .at
            .is_some_and(|t| t.elapsed() < settings.refresh_interval);
        match known {
            Some((Some(key), fresh)) if fresh || recently => return Ok(Found::Key(key)),
            Some((None, _)) if recently => return Ok(Found::Unknown),
            // Never fetched: the last failure stands until the interval is over.
            None if recently => {
                return Err(tried
                    .failed
                    .clone()
                    .unwrap_or_else(|| fetch::waited(jwks_uri)));
            }
            _ => {}
        }
        // Marked before the fetch: a request that gives up waiting leaves a try behind.
        tried.at = Some(Instant::now());
        tried.failed = Some(fetch::waited(jwks_uri));
        let request = fetch::json::<JwkSet>(http.get(jwks_uri), jwks_uri, false);
        let outcome = tokio::time::timeout_at(deadline, request)
            .await
            .unwrap_or_else(|_| Err(fetch::waited(jwks_uri)));
        let fetched = match outcome {
            Ok(fetched) => {
                tried.failed = None;
                fetched.unwrap_or(JwkSet { keys: Vec::new() })
            }
            // A key already known stays usable while the set cannot be fetched again.
            Err(e) => {
                tried.failed = Some(e.clone());
                return match known {
                    Some((Some(key), _)) => Ok(Found::Key(key)),
                    _ => Err(e),
                };
            }
        };
        let set = build(&fetched);
        let found = pick(&set, kid);
        *self.set.write().await = Some(set);
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Ok(found.map_or(Found::Unknown, Found::Key))
    }
}

fn pick(set: &Set, kid: Option<&str>) -> Option<Arc<Key>> {
    match kid {
        Some(kid) => set.by_kid.get(kid).cloned(),
        None if set.unnamed.len() == 1 && set.by_kid.is_empty() => set.unnamed.first().cloned(),
        None => None,
    }
}

/// The signing keys of a set: asymmetric ones (a key set never supplies an HMAC secret), not
/// marked for encryption only.
fn build(fetched: &JwkSet) -> Set {
    let mut set = Set {
        by_kid: HashMap::new(),
        unnamed: Vec::new(),
        fetched: Instant::now(),
    };
    for jwk in &fetched.keys {
        if let Some(key) = signing_key(jwk) {
            let key = Arc::new(key);
            match &jwk.common.key_id {
                Some(kid) => {
                    set.by_kid.insert(kid.clone(), key);
                }
                None => set.unnamed.push(key),
            }
        }
    }
    set
}

fn signing_key(jwk: &Jwk) -> Option<Key> {
    if matches!(
        jwk.common.public_key_use,
        Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))
    ) {
        return None;
    }
    if matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_)) {
        return None;
    }
    let key = DecodingKey::from_jwk(jwk).ok()?;
    Some(Key {
        key,
        algorithm: jwk.common.key_algorithm,
    })
}
