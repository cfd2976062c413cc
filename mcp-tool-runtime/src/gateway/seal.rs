//! What the gateway keeps of its users' sign-ins (tokens, refresh tokens, registrations) is
//! kept encrypted: ChaCha20-Poly1305 under keys derived (HKDF-SHA256, a label of their own)
//! from the server's request-state keys, so that they come from the same setting
//! (`MCP_TOOL_STATE_KEY`) and rotate with it — the first key seals, every key opens.
//!
//! A sealed record is `v1.<base64url(nonce ‖ ciphertext ‖ tag)>`, the nonce random. The record's
//! own name (its kind, the mount, the user) is the associated data: a record copied under
//! another user's name does not open.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::hkdf::{HKDF_SHA256, KeyType, Salt};

use crate::server::state::StateKey;

/// The HKDF salt and info: keys derived here mean nothing anywhere else.
const SALT: &[u8] = b"mcp-tool/sign-ins/salt/v1";
const INFO: &[u8] = b"mcp-tool/sign-ins/chacha20-poly1305/v1";

/// The prefix of every sealed record (the format's version).
const VERSION: &str = "v1.";

/// The keys sealing sign-ins: the first seals, every one opens. Its `Debug` shows none.
pub(super) struct SealKey {
    keys: Vec<LessSafeKey>,
    /// Whether the keys outlive this process (they were given, not drawn at random).
    given: bool,
}

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealKey(…)")
    }
}

/// How many bytes HKDF gives: one ChaCha20-Poly1305 key.
struct KeyLength;

impl KeyType for KeyLength {
    fn len(&self) -> usize {
        CHACHA20_POLY1305.key_len()
    }
}

/// The sign-in key derived from one request-state key.
fn derive(material: &[u8; 32]) -> Option<LessSafeKey> {
    let prk = Salt::new(HKDF_SHA256, SALT).extract(material);
    let info = [INFO];
    let okm = prk.expand(&info, KeyLength).ok()?;
    let mut key = [0u8; 32];
    okm.fill(&mut key).ok()?;
    let unbound = UnboundKey::new(&CHACHA20_POLY1305, &key).ok()?;
    Some(LessSafeKey::new(unbound))
}

impl SealKey {
    /// The keys derived from the server's request-state keys.
    pub(super) fn from_state_key(state: &StateKey) -> SealKey {
        SealKey::from_materials(state.keys(), state.given())
    }

    fn from_materials<'a>(materials: impl Iterator<Item = &'a [u8; 32]>, given: bool) -> SealKey {
        SealKey {
            keys: materials.filter_map(derive).collect(),
            given,
        }
    }

    /// Whether what this key seals opens after a restart (the keys were given).
    pub(super) fn lasts(&self) -> bool {
        self.given
    }

    /// `plain`, sealed under the first key, bound to `name`.
    pub(super) fn seal(&self, name: &str, plain: &[u8]) -> Result<String, String> {
        let key = self
            .keys
            .first()
            .ok_or_else(|| "no key to seal sign-ins with".to_owned())?;
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).map_err(|e| format!("no randomness: {e}"))?;
        let mut sealed = plain.to_vec();
        key.seal_in_place_append_tag(
            Nonce::assume_unique_for_key(nonce),
            Aad::from(name.as_bytes()),
            &mut sealed,
        )
        .map_err(|_| "a record could not be sealed".to_owned())?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        Ok(format!("{VERSION}{}", URL_SAFE_NO_PAD.encode(out)))
    }

    /// What `sealed` holds, if one of the keys sealed it for `name`. The error says why not
    /// (never what it holds).
    pub(super) fn open(&self, name: &str, sealed: &str) -> Result<Vec<u8>, String> {
        let bytes = sealed
            .strip_prefix(VERSION)
            .and_then(|b| URL_SAFE_NO_PAD.decode(b).ok())
            .filter(|b| b.len() >= NONCE_LEN + CHACHA20_POLY1305.tag_len())
            .ok_or_else(|| "not a record this gateway sealed".to_owned())?;
        let (nonce, body) = bytes.split_at(NONCE_LEN);
        for key in &self.keys {
            let Ok(nonce) = Nonce::try_assume_unique_for_key(nonce) else {
                break;
            };
            let mut buffer = body.to_vec();
            if let Ok(plain) = key.open_in_place(nonce, Aad::from(name.as_bytes()), &mut buffer) {
                return Ok(plain.to_vec());
            }
        }
        Err("the record opens under none of the keys (sealed under another key, or for another name)".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::SealKey;

    fn key(materials: &[[u8; 32]]) -> SealKey {
        SealKey::from_materials(materials.iter(), true)
    }

    #[test]
    fn a_record_opens_under_its_key_and_its_name_only() {
        let (a, b) = ([1u8; 32], [2u8; 32]);
        let sealer = key(&[a]);
        let sealed = sealer.seal("user\0m\0alice", b"{\"secret\":1}").unwrap();
        assert!(sealed.starts_with("v1."), "{sealed}");
        assert!(!sealed.contains("secret"));
        assert_eq!(
            sealer.open("user\0m\0alice", &sealed).unwrap(),
            b"{\"secret\":1}"
        );
        // Two seals of the same record differ (a random nonce).
        assert_ne!(
            sealed,
            sealer.seal("user\0m\0alice", b"{\"secret\":1}").unwrap()
        );
        // Another user's name, another mount's: refused.
        assert!(sealer.open("user\0m\0bob", &sealed).is_err());
        assert!(sealer.open("user\0n\0alice", &sealed).is_err());
        // Another key: refused, and the error shows nothing of the record.
        let e = key(&[b]).open("user\0m\0alice", &sealed).unwrap_err();
        assert!(!e.contains("secret"), "{e}");
        // Tampered, cut, or not a record at all: refused.
        let mut tampered = sealed.clone().into_bytes();
        let last = tampered.len() - 2;
        tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(tampered).unwrap();
        assert!(sealer.open("user\0m\0alice", &tampered).is_err());
        assert!(sealer.open("user\0m\0alice", &sealed[..20]).is_err());
        assert!(sealer.open("user\0m\0alice", "{}").is_err());
        assert_eq!(format!("{sealer:?}"), "SealKey(…)");
    }

    #[test]
    fn keys_rotate_the_first_seals_every_one_opens() {
        let (old, new) = ([7u8; 32], [8u8; 32]);
        let before = key(&[old]).seal("n", b"kept").unwrap();
        let rotated = key(&[new, old]);
        assert_eq!(rotated.open("n", &before).unwrap(), b"kept");
        let after = rotated.seal("n", b"kept").unwrap();
        assert!(
            key(&[old]).open("n", &after).is_err(),
            "sealed under the new key"
        );
        assert_eq!(key(&[new]).open("n", &after).unwrap(), b"kept");
        // Once the old key is dropped, what it sealed no longer opens.
        assert!(key(&[new]).open("n", &before).is_err());
    }

    #[test]
    fn the_key_is_derived_not_the_request_state_key_itself() {
        use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, UnboundKey};
        let material = [9u8; 32];
        let sealed = key(&[material]).seal("n", b"kept").unwrap();
        // The request-state key used directly does not open it.
        let direct = LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, &material).unwrap());
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(sealed.strip_prefix("v1.").unwrap())
            .unwrap();
        let (nonce, body) = bytes.split_at(12);
        let mut body = body.to_vec();
        let nonce = Nonce::try_assume_unique_for_key(nonce).unwrap();
        assert!(
            direct
                .open_in_place(nonce, Aad::from(&b"n"[..]), &mut body)
                .is_err()
        );
    }
}
