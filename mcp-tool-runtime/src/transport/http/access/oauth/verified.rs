//! JWTs verified already, by the SHA-256 of the token (never the token): a request that
//! presents the same token again is not verified again until the token expires or the keys
//! are fetched anew (a key gone from the set then takes its tokens with it). Bounded.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use crate::sync::lock;

use super::settings::{Accepted, later};

/// The most tokens remembered.
const MAX_KEPT: usize = 10_000;

struct Kept {
    accepted: Accepted,
    until: Instant,
    /// The key set's generation the token was verified with.
    generation: u64,
}

/// The verified tokens.
#[derive(Default)]
pub(super) struct Verified {
    kept: Mutex<HashMap<[u8; 32], Kept>>,
}

/// A token's key in the table.
pub(super) fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl Verified {
    /// What a token verified with the key set of `generation` says, while it is valid.
    pub(super) fn get(&self, digest: &[u8; 32], generation: u64) -> Option<Accepted> {
        let kept = lock(&self.kept);
        let found = kept.get(digest)?;
        (found.generation == generation && Instant::now() < found.until)
            .then(|| found.accepted.clone())
    }

    /// Remembers a token verified with the key set of `generation`, until its `exp` (a Unix
    /// time), less the leeway it was given.
    pub(super) fn put(&self, digest: [u8; 32], accepted: &Accepted, exp: u64, generation: u64) {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let left = Duration::from_secs(exp.saturating_sub(now));
        if left.is_zero() {
            return;
        }
        let mut kept = lock(&self.kept);
        if kept.len() >= MAX_KEPT {
            let now = Instant::now();
            kept.retain(|_, k| k.until > now && k.generation == generation);
            if kept.len() >= MAX_KEPT {
                kept.clear();
            }
        }
        kept.insert(
            digest,
            Kept {
                accepted: accepted.clone(),
                until: later(left),
                generation,
            },
        );
    }
}
