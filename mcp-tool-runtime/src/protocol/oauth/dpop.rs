//! DPoP (RFC 9449), what the client's proofs and the resource server's check of them share:
//! the proof's type, the `ath` of an access token, the `htu` a request is compared by, the
//! thumbprint of a key (RFC 7638), and the names on the wire.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The `typ` of a DPoP proof's header.
pub(crate) const PROOF_TYPE: &str = "dpop+jwt";

/// The header that carries a proof (and the `Authorization` scheme of a bound token).
pub(crate) const HEADER: &str = "DPoP";

/// The header in which a server gives the nonce its next proofs must carry.
pub(crate) const NONCE_HEADER: &str = "DPoP-Nonce";

/// The error (`WWW-Authenticate` or the token endpoint's JSON) that asks for a proof with the
/// server's nonce.
pub(crate) const USE_NONCE: &str = "use_dpop_nonce";

/// The error of a proof that is not valid.
pub(crate) const INVALID_PROOF: &str = "invalid_dpop_proof";

/// `ath`: the base64url SHA-256 of the access token's ASCII (RFC 9449 §4.2).
pub(crate) fn ath(token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()))
}

/// The `htu` of a request to `url`: its scheme, host and port and path, without query or
/// fragment, scheme and host in lower case, a default port left out and an empty path `/`
/// (RFC 9449 §4.3: compared after the normalisation of RFC 3986 §6.2.2 and §6.2.3). `None`
/// when `url` is not an absolute http(s) URL.
pub(crate) fn htu(url: &str) -> Option<String> {
    let parsed = reqwest::Url::parse(url).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return None;
    }
    let mut out = format!("{}://{}", parsed.scheme(), parsed.host_str()?);
    if let Some(port) = parsed.port() {
        out.push(':');
        out.push_str(&port.to_string());
    }
    out.push_str(parsed.path());
    Some(out)
}

/// The JWK thumbprint (RFC 7638, SHA-256, base64url) of a P-256 public key given by its
/// coordinates, base64url: the members `crv`, `kty`, `x`, `y` in that order, no blanks.
pub(crate) fn thumbprint_p256(x: &str, y: &str) -> String {
    let canonical = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
    URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
}

/// A P-256 key that signs proofs (ES256): its public JWK and thumbprint beside it. The
/// private key never leaves it: no `Debug` of it, no serialization.
pub(crate) struct ProofKey {
    signing: SigningKey,
    jwk: Value,
    thumbprint: String,
}

impl fmt::Debug for ProofKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProofKey")
            .field("thumbprint", &self.thumbprint)
            .finish_non_exhaustive()
    }
}

impl ProofKey {
    /// A new random key; `None` only when the system gives no randomness.
    pub(crate) fn generate() -> Option<Self> {
        // A random 32-byte string is a valid scalar but with odds of about 2^-32: try again.
        for _ in 0..8 {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).ok()?;
            if let Ok(signing) = SigningKey::from_slice(&bytes) {
                let point = signing.verifying_key().to_sec1_point(false);
                let bytes = point.as_bytes();
                // Uncompressed: 0x04, then x and y, 32 bytes each.
                let x = URL_SAFE_NO_PAD.encode(&bytes[1..33]);
                let y = URL_SAFE_NO_PAD.encode(&bytes[33..65]);
                let thumbprint = thumbprint_p256(&x, &y);
                return Some(ProofKey {
                    signing,
                    jwk: json!({"kty": "EC", "crv": "P-256", "x": x, "y": y}),
                    thumbprint,
                });
            }
        }
        None
    }

    /// The key's JWK thumbprint (what a bound token's `cnf.jkt` holds).
    pub(crate) fn thumbprint(&self) -> &str {
        &self.thumbprint
    }

    /// The public JWK.
    #[cfg(test)]
    pub(crate) fn jwk(&self) -> &Value {
        &self.jwk
    }

    /// A proof with `claims`: header `{"typ": "dpop+jwt", "alg": "ES256", "jwk": …}`.
    pub(crate) fn sign(&self, claims: &Value) -> String {
        let header = json!({"typ": PROOF_TYPE, "alg": "ES256", "jwk": self.jwk});
        self.sign_with(&header, claims)
    }

    /// A JWS of `claims` under `header` (whatever it says), signed ES256 by this key.
    pub(crate) fn sign_with(&self, header: &Value, claims: &Value) -> String {
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature: Signature = self.signing.sign(signing_input.as_bytes());
        format!(
            "{signing_input}.{}",
            URL_SAFE_NO_PAD.encode(signature.to_bytes())
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ath_is_the_tokens_sha256_in_base64url() {
        // RFC 9449 §7.1's example token and its `ath` (Figure 13).
        assert_eq!(
            ath("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"),
            "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"
        );
    }

    #[test]
    fn htu_leaves_out_query_fragment_and_default_ports() {
        for (url, expected) in [
            (
                "https://Server.Example.com/token",
                "https://server.example.com/token",
            ),
            (
                "https://server.example.com:443/mcp?x=1#f",
                "https://server.example.com/mcp",
            ),
            ("http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/mcp"),
            ("HTTP://LOCALHOST:80", "http://localhost/"),
            ("http://[::1]:9/a/b/", "http://[::1]:9/a/b/"),
        ] {
            assert_eq!(htu(url).as_deref(), Some(expected), "{url}");
        }
        for url in ["/mcp", "ftp://example.com/x", "not a url", "mailto:a@b"] {
            assert_eq!(htu(url), None, "{url}");
        }
    }

    #[test]
    fn the_thumbprint_is_rfc_7638s() {
        // RFC 7638 gives an RSA example; this P-256 key's thumbprint was computed with an
        // independent implementation (jose, `calculateJwkThumbprint`).
        let x = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU";
        let y = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0";
        assert_eq!(
            thumbprint_p256(x, y),
            "oKIywvGUpTVTyxMQ3bwIIeQUudfr_CkLMjCE19ECD-U"
        );
    }
}
