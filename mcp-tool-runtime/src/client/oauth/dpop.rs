//! DPoP in the client (RFC 9449): the key a connection proves possession of (ES256, made when
//! the connection first needs it and kept for its life, refreshes included), the proofs it
//! signs for token and resource requests, and the nonces servers hand out (RFC 9449 §8, §9),
//! kept per server origin.
//!
//! The private key never leaves this module: no `Debug`, no log, no store.

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

use serde_json::json;

use crate::client::ClientError;
use crate::protocol::oauth::dpop::{ProofKey, ath, htu};
use crate::sync::lock;

use super::{now, random, unauthorized};

/// The most origins whose nonce a key remembers (a client talks to a few servers).
const MAX_NONCES: usize = 64;

/// A connection's DPoP key, and the last nonce each server gave.
pub(crate) struct DpopKey {
    key: ProofKey,
    nonces: Mutex<HashMap<String, String>>,
}

impl fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DpopKey")
            .field("thumbprint", &self.key.thumbprint())
            .finish_non_exhaustive()
    }
}

impl DpopKey {
    /// A new random P-256 key.
    pub(crate) fn generate() -> Result<Self, ClientError> {
        let key =
            ProofKey::generate().ok_or_else(|| unauthorized("no randomness for a DPoP key"))?;
        Ok(DpopKey {
            key,
            nonces: Mutex::new(HashMap::new()),
        })
    }

    /// The key's JWK thumbprint (what a bound token's `cnf.jkt` holds).
    pub(crate) fn thumbprint(&self) -> &str {
        self.key.thumbprint()
    }

    /// A fresh proof for a `method` request to `url`, carrying `token`'s `ath` when the request
    /// presents one, and the nonce the server at `url`'s origin gave last, if any.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &str,
        token: Option<&str>,
    ) -> Result<String, ClientError> {
        let target =
            htu(url).ok_or_else(|| unauthorized(format!("`{url}` is not an http(s) URL")))?;
        let mut claims = json!({
            "jti": random(16)?,
            "htm": method,
            "htu": target,
            "iat": now(),
        });
        if let Some(token) = token {
            claims["ath"] = ath(token).into();
        }
        if let Some(nonce) = self.nonce_for(url) {
            claims["nonce"] = nonce.into();
        }
        Ok(self.key.sign(&claims))
    }

    /// Keeps the nonce the server at `url`'s origin gave (`DPoP-Nonce`); whether it is new
    /// (a request refused for want of it is worth one more try).
    pub(crate) fn remember_nonce(&self, url: &str, nonce: &str) -> bool {
        let Some(origin) = origin(url) else {
            return false;
        };
        // A nonce is opaque, but it travels in a JWT claim: a bounded, printable one only.
        if nonce.is_empty() || nonce.len() > 512 || nonce.chars().any(|c| c.is_control()) {
            return false;
        }
        let mut nonces = lock(&self.nonces);
        if nonces.get(&origin).is_some_and(|known| known == nonce) {
            return false;
        }
        if nonces.len() >= MAX_NONCES && !nonces.contains_key(&origin) {
            nonces.clear();
        }
        nonces.insert(origin, nonce.to_owned());
        true
    }

    fn nonce_for(&self, url: &str) -> Option<String> {
        lock(&self.nonces).get(&origin(url)?).cloned()
    }
}

/// `scheme://host:port` of `url`.
fn origin(url: &str) -> Option<String> {
    let parsed = reqwest::Url::parse(url).ok()?;
    Some(parsed.origin().ascii_serialization())
}

#[cfg(test)]
mod tests {
    use jsonwebtoken::jwk::Jwk;
    use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
    use serde_json::Value;

    use super::*;
    use crate::protocol::oauth::dpop::PROOF_TYPE;

    fn claims_of(proof: &str, key: &DpopKey) -> Value {
        let header = decode_header(proof).unwrap();
        assert_eq!(header.typ.as_deref(), Some(PROOF_TYPE));
        assert_eq!(header.alg, Algorithm::ES256);
        let jwk: Jwk = header.jwk.clone().unwrap();
        assert_eq!(
            jwk.thumbprint(jsonwebtoken::jwk::ThumbprintHash::SHA256)
                .unwrap(),
            key.thumbprint(),
            "the thumbprint is the JWK's, as jsonwebtoken computes it"
        );
        let mut validation = Validation::new(Algorithm::ES256);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        validation.validate_aud = false;
        decode::<Value>(proof, &DecodingKey::from_jwk(&jwk).unwrap(), &validation)
            .unwrap()
            .claims
    }

    #[test]
    fn a_proof_is_signed_by_its_key_and_names_the_request() {
        let key = DpopKey::generate().unwrap();
        let proof = key
            .proof("POST", "https://AS.example.com:443/token?x=1#y", None)
            .unwrap();
        let claims = claims_of(&proof, &key);
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://as.example.com/token");
        assert!(claims.get("ath").is_none() && claims.get("nonce").is_none());
        assert!(claims["iat"].as_u64().unwrap() + 5 >= now());
        let again = claims_of(
            &key.proof("POST", "https://as.example.com/token", None)
                .unwrap(),
            &key,
        );
        assert_ne!(claims["jti"], again["jti"], "every proof has its own jti");
        assert!(!proof.contains("\"d\""), "no private part in the header");
    }

    #[test]
    fn a_resource_proof_carries_the_tokens_hash_and_the_servers_nonce() {
        let key = DpopKey::generate().unwrap();
        assert!(key.remember_nonce("http://127.0.0.1:9/mcp", "n-1"));
        assert!(
            !key.remember_nonce("http://127.0.0.1:9/other", "n-1"),
            "known already"
        );
        assert!(!key.remember_nonce("http://127.0.0.1:9/mcp", "bad\nnonce"));
        let claims = claims_of(
            &key.proof("GET", "http://127.0.0.1:9/mcp", Some("tok"))
                .unwrap(),
            &key,
        );
        assert_eq!(claims["ath"], ath("tok"));
        assert_eq!(claims["nonce"], "n-1");
        let elsewhere = claims_of(
            &key.proof("GET", "http://127.0.0.1:10/mcp", Some("tok"))
                .unwrap(),
            &key,
        );
        assert!(
            elsewhere.get("nonce").is_none(),
            "a nonce is its origin's only"
        );
    }

    #[test]
    fn keys_differ_and_debug_shows_no_secret() {
        let (a, b) = (DpopKey::generate().unwrap(), DpopKey::generate().unwrap());
        assert_ne!(a.thumbprint(), b.thumbprint());
        let shown = format!("{a:?}");
        assert!(shown.contains(a.thumbprint()) && !shown.contains("key:"));
    }

    /// The cost of one proof made (a random `jti`, `ath`, ES256 signature), in µs:
    /// `cargo test -p mcp-tool-runtime --release --lib dpop_proof_cost -- --ignored --nocapture`
    /// (BENCHMARKS.md, "DPoP").
    #[test]
    #[ignore = "a measurement, run by hand"]
    fn dpop_proof_cost() {
        const N: u32 = 2000;
        let key = DpopKey::generate().unwrap();
        let start = std::time::Instant::now();
        for _ in 0..N {
            let proof = key
                .proof("POST", "https://mcp.example.com/mcp", Some("tok"))
                .unwrap();
            assert!(proof.len() > 100);
        }
        let each = start.elapsed() / N;
        eprintln!("DPoP proof made: {:.1} µs", each.as_secs_f64() * 1e6);
    }
}
