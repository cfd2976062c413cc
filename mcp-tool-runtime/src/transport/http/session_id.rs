//! Session ids: made of system randomness, and hashed in the endpoint's map of sessions by a
//! hash that need not be keyed, since no key of that map is chosen by a client. Request ids,
//! which clients choose, are hashed the same way under a key of the process's.

use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;

/// 32 random bytes, hex: visible ASCII, unguessable. `None` without system randomness (a
/// guessable id is never handed out).
pub(super) fn new_session_id() -> Option<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The hasher of the map of sessions by id. Every id in it is [`new_session_id`]'s (made
/// here, or by another replica the same way and taken up from the shared state): 256 random
/// bits, so a keyed hash (std's SipHash, about 300 instructions for 64 bytes, on every
/// request) guards against nothing. A client chooses only the ids it looks up, and a lookup
/// adds no key: it cannot crowd the map's buckets.
#[derive(Clone, Copy, Default)]
pub(super) struct SessionIds;

impl BuildHasher for SessionIds {
    type Hasher = SessionIdHasher;

    fn build_hasher(&self) -> SessionIdHasher {
        SessionIdHasher(0, SPREAD)
    }
}

/// The hasher of a session's map of requests in flight, by request id. A client chooses the
/// ids it adds there, so the hash is keyed, by a random key of the process's (as std's
/// `RandomState` is) that starts the state and changes the multiplier; the map is small (the
/// requests one session has in flight) and its ids short, where SipHash took about 200
/// instructions for each insert, lookup and removal.
#[derive(Clone, Copy)]
pub(super) struct RequestIds(u64);

impl Default for RequestIds {
    fn default() -> Self {
        static KEY: OnceLock<u64> = OnceLock::new();
        RequestIds(*KEY.get_or_init(|| {
            let mut key = [0u8; 8];
            match getrandom::fill(&mut key) {
                Ok(()) => u64::from_le_bytes(key),
                // Without system randomness, std's own keys.
                Err(_) => std::hash::RandomState::new().hash_one(SPREAD),
            }
        }))
    }
}

impl BuildHasher for RequestIds {
    type Hasher = SessionIdHasher;

    fn build_hasher(&self) -> SessionIdHasher {
        SessionIdHasher(self.0, (SPREAD ^ self.0.rotate_left(32)) | 1)
    }
}

/// [`SessionIds`]'s and [`RequestIds`]' hasher: each 8 bytes multiplied in (by the second
/// field), folded (both halves of the product).
pub(super) struct SessionIdHasher(u64, u64);

/// An odd constant with its bits well spread (the fractional part of the golden ratio).
const SPREAD: u64 = 0x9e37_79b9_7f4a_7c15;

fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

impl Hasher for SessionIdHasher {
    fn write(&mut self, bytes: &[u8]) {
        let (words, rest) = bytes.as_chunks::<8>();
        let mut h = self.0;
        for word in words {
            h = fold(h ^ u64::from_le_bytes(*word), self.1);
        }
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            // The length tells `ab` from `ab\0`.
            h = fold(h ^ u64::from_le_bytes(last), self.1 ^ rest.len() as u64);
        }
        self.0 = h;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::hash::BuildHasher;

    use super::{RequestIds, SessionIds, new_session_id};

    #[test]
    fn ids_are_64_hex_digits_and_differ() {
        let a = new_session_id().unwrap();
        let b = new_session_id().unwrap();
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn ids_spread_over_the_buckets() {
        // The low bits pick a bucket, the top seven the byte its group compares: both spread.
        let ids: Vec<String> = (0..4096).filter_map(|_| new_session_id()).collect();
        let low: HashSet<u64> = ids
            .iter()
            .map(|id| SessionIds.hash_one(id) & 0xfff)
            .collect();
        let top: HashSet<u64> = ids.iter().map(|id| SessionIds.hash_one(id) >> 57).collect();
        assert!(low.len() > 2400, "{} of 4096 buckets", low.len());
        assert_eq!(top.len(), 128);
        // Ids that differ in one digit, or only in length, hash apart.
        let id = &ids[0];
        let mut other = id.clone().into_bytes();
        other[63] ^= 1;
        let other = String::from_utf8(other).unwrap();
        assert_ne!(SessionIds.hash_one(id), SessionIds.hash_one(&other));
        assert_ne!(SessionIds.hash_one("ab"), SessionIds.hash_one("ab\0"));
    }

    #[test]
    fn request_ids_spread_and_are_keyed() {
        let ids: Vec<String> = (0..4096).map(|n| n.to_string()).collect();
        let keyed = RequestIds::default();
        let low: HashSet<u64> = ids.iter().map(|id| keyed.hash_one(id) & 0xfff).collect();
        assert!(low.len() > 2400, "{} of 4096 buckets", low.len());
        // Another key, other hashes.
        let other = RequestIds(keyed.0 ^ 1);
        assert_ne!(keyed.hash_one("\"1\""), other.hash_one("\"1\""));
        assert_ne!(keyed.hash_one("1"), keyed.hash_one("\"1\""));
    }
}
