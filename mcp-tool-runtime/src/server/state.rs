//! The `requestState` of a stateless request that needed input: what the request learned in
//! its earlier rounds (the answers the tool used), sealed so that the client can carry it
//! but not change it, and bound to the request it belongs to.
//!
//! A token is `<payload>.<tag>`, both base64url: the payload is JSON (`exp`, the answers);
//! the tag is HMAC-SHA256 under the server's key over a label, the binding (method, name, a
//! digest of the arguments, the principal) and the payload. Integrity, not secrecy: the
//! client can read the answers it gave. A tampered, expired or foreign token is refused.
//!
//! The key comes from the builder (`Server::state_key`; a server binary's command line sets
//! it from `MCP_TOOL_STATE_KEY`, at least 32 bytes, hex or base64), else is random per
//! process — then a retry that reaches
//! another process, or this one after a restart, is refused. Keys rotate: with several
//! (`Server::state_keys`, `MCP_TOOL_STATE_KEY=new,old`), the first seals and every one opens,
//! so rounds sealed before a rotation still open on replicas that took the new key.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::protocol::{RpcError, code};

/// Domain separation: a tag made here means nothing anywhere else.
const LABEL: &[u8] = b"mcp-tool/request-state/v1\0";

/// The server's key for request state.
#[derive(Clone)]
pub(crate) struct StateKey {
    /// The key that seals.
    key: [u8; 32],
    /// Older keys that still open what they sealed.
    older: Vec<[u8; 32]>,
    /// How long a token stays valid.
    ttl: Duration,
    /// Whether the keys were given (not drawn at random by this process).
    #[cfg_attr(not(feature = "client"), allow(dead_code))] // the gateway's sign-ins
    given: bool,
}

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateKey(…)")
    }
}

/// What a token is bound to: the request it was issued for — its method, the tool, prompt or
/// resource it names, a digest of its arguments, and who made it.
#[derive(Clone)]
pub(crate) struct Binding(Arc<[u8]>);

impl std::fmt::Debug for Binding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Binding(…)")
    }
}

impl Binding {
    pub(crate) fn new(
        method: &str,
        name: &str,
        arguments: &impl Serialize,
        principal: &str,
    ) -> Binding {
        // `serde_json::Map` keeps its keys sorted: equal arguments give equal text.
        let arguments = Sha256::digest(serde_json::to_vec(arguments).unwrap_or_default());
        let mut bytes = Vec::with_capacity(64 + method.len() + name.len() + principal.len());
        for part in [method.as_bytes(), name.as_bytes(), principal.as_bytes()] {
            bytes.extend_from_slice(&(part.len() as u64).to_be_bytes());
            bytes.extend_from_slice(part);
        }
        bytes.extend_from_slice(&arguments);
        Binding(bytes.into())
    }

    fn bytes(&self) -> &[u8] {
        &self.0
    }
}

#[derive(Serialize, Deserialize)]
struct Payload {
    /// Expiry, milliseconds since the epoch.
    exp: u64,
    answers: Map<String, Value>,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn refused(why: &str) -> RpcError {
    RpcError::new(
        code::INVALID_PARAMS,
        format!("Invalid `requestState`: {why}; send the request again without it"),
    )
}

impl StateKey {
    /// How long a sealed state stays valid.
    #[cfg(feature = "client")]
    pub(crate) fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Every key, the sealing one first: what other keys of the server are derived from
    /// (each for a purpose of its own), so that they rotate with these.
    #[cfg(feature = "client")]
    pub(crate) fn keys(&self) -> impl Iterator<Item = &[u8; 32]> {
        std::iter::once(&self.key).chain(&self.older)
    }

    /// Whether the keys were given (they are the same after a restart, and on every replica
    /// given them), not drawn at random by this process.
    #[cfg(feature = "client")]
    pub(crate) fn given(&self) -> bool {
        self.given
    }

    /// Keys of at least 32 bytes each (longer keys are hashed down): the first seals, every
    /// one opens.
    pub(crate) fn new(materials: &[Vec<u8>], ttl: Duration) -> Result<StateKey, String> {
        let mut keys = Vec::with_capacity(materials.len());
        for material in materials {
            if material.len() < 32 {
                return Err(format!(
                    "a request-state key has at least 32 bytes, this one has {}",
                    material.len()
                ));
            }
            keys.push(<[u8; 32]>::from(Sha256::digest(material)));
        }
        let Some((&key, older)) = keys.split_first() else {
            return Err("no request-state key given".to_owned());
        };
        Ok(StateKey {
            key,
            older: older.to_vec(),
            ttl,
            given: true,
        })
    }

    /// Key material written as text (hex or base64, as `MCP_TOOL_STATE_KEY` carries it;
    /// several keys separated by commas, the sealing one first), each checked for its length.
    pub(crate) fn decode(text: &str) -> Result<Vec<Vec<u8>>, String> {
        let keys = text
            .split(',')
            .map(|one| {
                let one = one.trim();
                decode_hex(one)
                    .or_else(|| STANDARD.decode(one).ok())
                    .or_else(|| URL_SAFE_NO_PAD.decode(one).ok())
                    .ok_or_else(|| "neither hex nor base64".to_owned())
            })
            .collect::<Result<Vec<_>, _>>()?;
        StateKey::new(&keys, Duration::ZERO)?;
        Ok(keys)
    }

    /// A random key (a retry must come back to this process, before it restarts).
    pub(crate) fn random(ttl: Duration) -> Result<StateKey, String> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| format!("no randomness for a state key: {e}"))?;
        Ok(StateKey {
            key,
            older: Vec::new(),
            ttl,
            given: false,
        })
    }

    fn tag(&self, binding: &Binding, payload: &str) -> Vec<u8> {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key)
            .expect("HMAC takes a key of any length");
        mac.update(LABEL);
        mac.update(binding.bytes());
        mac.update(payload.as_bytes());
        mac.finalize().into_bytes().to_vec()
    }

    /// Seals the answers for the request `binding` names.
    pub(crate) fn seal(&self, binding: &Binding, answers: Map<String, Value>) -> String {
        let payload = Payload {
            exp: now_ms().saturating_add(u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX)),
            answers,
        };
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&payload).unwrap_or_default());
        let tag = URL_SAFE_NO_PAD.encode(self.tag(binding, &payload));
        format!("{payload}.{tag}")
    }

    /// Opens a token issued for the request `binding` names: its answers, or -32602.
    pub(crate) fn open(
        &self,
        binding: &Binding,
        token: &str,
    ) -> Result<Map<String, Value>, RpcError> {
        let (payload, tag) = token
            .split_once('.')
            .ok_or_else(|| refused("it is not a state this server issued"))?;
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| refused("it is not a state this server issued"))?;
        // Each key is tried (each comparison in constant time): a state sealed before the
        // keys rotated still opens.
        let verified = std::iter::once(&self.key).chain(&self.older).any(|key| {
            let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key)
                .expect("HMAC takes a key of any length");
            mac.update(LABEL);
            mac.update(binding.bytes());
            mac.update(payload.as_bytes());
            mac.verify_slice(&tag).is_ok()
        });
        if !verified {
            return Err(refused(
                "it failed verification (changed, issued for another request, or by another server)",
            ));
        }
        let payload: Payload = URL_SAFE_NO_PAD
            .decode(payload)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .ok_or_else(|| refused("it is not a state this server issued"))?;
        if payload.exp < now_ms() {
            return Err(refused("it expired"));
        }
        Ok(payload.answers)
    }
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

/// A new id (of a task, a session, a replica): 128 random bits, hex.
pub(crate) fn new_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No entropy source: still unique within the process, but guessable; say so.
        tracing::error!("no random source for ids");
        let n = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
            .to_le_bytes();
        bytes.copy_from_slice(&n);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn binding(arguments: &Value, principal: &str) -> Binding {
        Binding::new("tools/call", "t", arguments, principal)
    }

    #[test]
    fn a_key_written_as_text_is_hex_or_base64_of_32_bytes_at_least() {
        let bytes = (0u8..32).collect::<Vec<u8>>();
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let one = vec![bytes.clone()];
        assert_eq!(StateKey::decode(&hex).unwrap(), one);
        assert_eq!(StateKey::decode(&STANDARD.encode(&bytes)).unwrap(), one);
        assert_eq!(StateKey::decode(&format!(" {hex}\n")).unwrap(), one);
        let both = StateKey::decode(&format!("{hex}, {}", STANDARD.encode([9u8; 40]))).unwrap();
        assert_eq!(both, [bytes.clone(), vec![9u8; 40]]);
        let e = StateKey::decode("not a key!").unwrap_err();
        assert!(e.contains("neither hex nor base64"), "{e}");
        let e = StateKey::decode("00112233").unwrap_err();
        assert!(e.contains("at least 32 bytes"), "{e}");
    }

    #[test]
    fn a_sealed_state_opens_only_for_its_request() {
        let key = StateKey::new(&[vec![7u8; 32]], Duration::from_secs(60)).unwrap();
        let args = json!({"a": 1});
        let answers = Map::from_iter([("k".to_owned(), json!({"action": "accept"}))]);
        let token = key.seal(&binding(&args, "local"), answers.clone());
        assert_eq!(key.open(&binding(&args, "local"), &token).unwrap(), answers);
        for bad in [format!("{token}-TAMPERED"), "x".into(), "a.b".into()] {
            assert_eq!(
                key.open(&binding(&args, "local"), &bad).unwrap_err().code,
                code::INVALID_PARAMS
            );
        }
        let other = json!({"a": 2});
        assert!(
            key.open(&binding(&other, "local"), &token).is_err(),
            "other arguments"
        );
        assert!(
            key.open(&binding(&args, "alice"), &token).is_err(),
            "another principal"
        );
        let other_key = StateKey::new(&[vec![8u8; 32]], Duration::from_secs(60)).unwrap();
        assert!(
            other_key.open(&binding(&args, "local"), &token).is_err(),
            "another server"
        );
    }

    /// Keys rotate without failing rounds in flight: a state sealed with the old key opens
    /// where the new key seals and the old one is kept; once the old key is dropped it does not.
    #[test]
    fn a_state_sealed_before_a_rotation_still_opens() {
        let ttl = Duration::from_secs(60);
        let (old, new) = (vec![1u8; 32], vec![2u8; 32]);
        let args = json!({"a": 1});
        let before = StateKey::new(std::slice::from_ref(&old), ttl).unwrap();
        let token = before.seal(&binding(&args, "p"), Map::new());
        let rotated = StateKey::new(&[new.clone(), old.clone()], ttl).unwrap();
        assert!(rotated.open(&binding(&args, "p"), &token).is_ok());
        // What the rotated key seals, it seals with the new key.
        let sealed_now = rotated.seal(&binding(&args, "p"), Map::new());
        assert!(before.open(&binding(&args, "p"), &sealed_now).is_err());
        let after = StateKey::new(&[new], ttl).unwrap();
        assert!(after.open(&binding(&args, "p"), &sealed_now).is_ok());
        assert!(
            after.open(&binding(&args, "p"), &token).is_err(),
            "the old key is gone"
        );
        // Tampering is refused whatever the keys.
        assert!(rotated.open(&binding(&args, "q"), &token).is_err());
    }

    #[test]
    fn an_expired_state_is_refused() {
        let key = StateKey::new(&[vec![7u8; 32]], Duration::ZERO).unwrap();
        let args = json!({});
        let token = key.seal(&binding(&args, "local"), Map::new());
        std::thread::sleep(Duration::from_millis(5));
        let e = key.open(&binding(&args, "local"), &token).unwrap_err();
        assert!(e.message.contains("expired"), "{e}");
    }

    #[test]
    fn short_keys_are_refused_and_hex_is_read() {
        assert!(StateKey::new(&[vec![1u8; 16]], Duration::ZERO).is_err());
        assert!(StateKey::new(&[vec![1u8; 32], vec![1u8; 16]], Duration::ZERO).is_err());
        assert!(StateKey::new(&[], Duration::ZERO).is_err());
        assert_eq!(decode_hex("0aff"), Some(vec![10, 255]));
        assert_eq!(decode_hex("0g"), None);
    }
}
