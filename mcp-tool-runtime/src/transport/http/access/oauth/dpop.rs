//! DPoP proofs checked as RFC 9449 §4.3 says, for the resource server: one well-formed
//! JWT of type `dpop+jwt`, an asymmetric algorithm this server accepts, signed by the public
//! key in its own header (never a private one), `htm` and `htu` naming this request as the
//! public URL names it, `iat` within a window, `ath` the presented token's, the server's
//! nonce when it asks for one, and a `jti` not seen before within the window. The key's
//! thumbprint is what a bound token's `cnf.jkt` must name.
//!
//! The replay memory here is this process's (bounded; when full, proofs are refused until
//! entries expire, never let through). Replicas share it through the store.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode};
use serde::Deserialize;

use crate::protocol::oauth::dpop::{PROOF_TYPE, ath, htu};
use crate::sync::lock;

/// The algorithms a proof may be signed with: asymmetric ones only.
pub(crate) const ALGORITHMS: [Algorithm; 8] = [
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
];

/// The longest proof read (a proof carries one public key: an RSA-4096 JWK is under 1 KiB).
const MAX_PROOF: usize = 8 * 1024;

/// How far a proof's `iat` may lie from now, either way.
pub(crate) const DEFAULT_WINDOW: Duration = Duration::from_secs(60);

/// The most `jti`s remembered at once.
const MAX_SEEN: usize = 200_000;

/// Why a proof is refused (said to the client as `invalid_dpop_proof`, or `use_dpop_nonce`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ProofError {
    /// The proof is not valid: why.
    Invalid(&'static str),
    /// The proof does not carry the server's current nonce.
    UseNonce,
    /// Too many proofs within the window to remember them all: try again shortly.
    Busy,
}

/// A request as a proof must name it.
pub(crate) struct Request<'a> {
    /// The method, upper case.
    pub(crate) method: &'a str,
    /// The request's URL as the public URL names it.
    pub(crate) url: &'a str,
    /// The access token it presents, if any.
    pub(crate) token: Option<&'a str>,
    /// The nonce the server expects, if it asks for one.
    pub(crate) nonce: Option<&'a str>,
    /// The nonce before it, still taken.
    pub(crate) previous_nonce: Option<&'a str>,
    /// Now, in seconds since the Unix epoch.
    pub(crate) now: u64,
    /// How far `iat` may lie from `now`.
    pub(crate) window: Duration,
}

/// A proof that passed: its key's thumbprint, and its `jti` and how long to remember it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Proof {
    pub(crate) thumbprint: String,
    pub(crate) jti: String,
}

#[derive(Deserialize)]
struct Claims {
    jti: Option<serde_json::Value>,
    htm: Option<serde_json::Value>,
    htu: Option<serde_json::Value>,
    iat: Option<serde_json::Value>,
    #[serde(default)]
    ath: Option<serde_json::Value>,
    #[serde(default)]
    nonce: Option<serde_json::Value>,
}

/// Checks `proof` (the one `DPoP` header's value) for `request`, all but the `jti`'s
/// freshness ([`Seen::first`] does that).
pub(crate) fn check(proof: &str, request: &Request<'_>) -> Result<Proof, ProofError> {
    use ProofError::Invalid;
    if proof.len() > MAX_PROOF {
        return Err(Invalid("the DPoP proof is too long"));
    }
    if proof.bytes().filter(|&b| b == b'.').count() != 2 {
        return Err(Invalid("the DPoP proof is not a JWT"));
    }
    let header = jsonwebtoken::decode_header(proof)
        .map_err(|_| Invalid("the DPoP proof's header is not valid"))?;
    if header.typ.as_deref() != Some(PROOF_TYPE) {
        return Err(Invalid("the DPoP proof's `typ` is not `dpop+jwt`"));
    }
    if !ALGORITHMS.contains(&header.alg) {
        return Err(Invalid("the DPoP proof's algorithm is not accepted"));
    }
    let jwk: &Jwk = header
        .jwk
        .as_ref()
        .ok_or(Invalid("the DPoP proof has no `jwk`"))?;
    if has_private_part(proof) {
        return Err(Invalid("the DPoP proof's `jwk` holds a private key"));
    }
    let key = DecodingKey::from_jwk(jwk)
        .map_err(|_| Invalid("the DPoP proof's `jwk` is not a usable key"))?;
    let mut validation = Validation::new(header.alg);
    validation.algorithms = vec![header.alg];
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    let claims = decode::<Claims>(proof, &key, &validation)
        .map_err(|_| Invalid("the DPoP proof's signature is not valid"))?
        .claims;
    let text = |v: Option<serde_json::Value>, what: &'static str| match v {
        Some(serde_json::Value::String(s)) if !s.is_empty() => Ok(s),
        _ => Err(Invalid(what)),
    };
    let jti = text(claims.jti, "the DPoP proof has no `jti`")?;
    if jti.len() > 256 {
        return Err(Invalid("the DPoP proof's `jti` is too long"));
    }
    let htm = text(claims.htm, "the DPoP proof has no `htm`")?;
    if htm != request.method {
        return Err(Invalid(
            "the DPoP proof's `htm` is not this request's method",
        ));
    }
    let claimed = text(claims.htu, "the DPoP proof has no `htu`")?;
    if claimed.contains(['?', '#']) || htu(&claimed).is_none() || htu(&claimed) != htu(request.url)
    {
        return Err(Invalid("the DPoP proof's `htu` is not this request's URL"));
    }
    let iat = match claims.iat {
        Some(serde_json::Value::Number(n)) => n.as_u64(),
        _ => None,
    }
    .ok_or(Invalid("the DPoP proof has no `iat`"))?;
    if iat.abs_diff(request.now) > request.window.as_secs() {
        return Err(Invalid("the DPoP proof's `iat` is not recent"));
    }
    match (request.token, claims.ath) {
        (Some(token), Some(serde_json::Value::String(hash))) => {
            if !constant_eq(hash.as_bytes(), ath(token).as_bytes()) {
                return Err(Invalid("the DPoP proof's `ath` is not the access token's"));
            }
        }
        (Some(_), _) => return Err(Invalid("the DPoP proof has no `ath`")),
        (None, _) => {}
    }
    if let Some(expected) = request.nonce {
        let taken = |n: &str| {
            constant_eq(n.as_bytes(), expected.as_bytes())
                || request
                    .previous_nonce
                    .is_some_and(|p| constant_eq(n.as_bytes(), p.as_bytes()))
        };
        match claims.nonce {
            Some(serde_json::Value::String(n)) if taken(&n) => {}
            _ => return Err(ProofError::UseNonce),
        }
    }
    let thumbprint = jwk
        .thumbprint(ThumbprintHash::SHA256)
        .map_err(|_| Invalid("the DPoP proof's `jwk` has no thumbprint"))?;
    Ok(Proof { thumbprint, jti })
}

/// Whether the proof's `jwk` holds a member of a private key (`d`, or RSA's `p`, `q`, `dp`,
/// `dq`, `qi`, `oth`): read from the raw header, since a parsed JWK drops what it does not
/// know.
fn has_private_part(proof: &str) -> bool {
    use base64::Engine as _;
    let first = proof.split('.').next().unwrap_or_default();
    let Ok(bytes) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(first) else {
        return true;
    };
    let Ok(head) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return true;
    };
    let Some(jwk) = head.get("jwk").and_then(|j| j.as_object()) else {
        return true;
    };
    ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]
        .iter()
        .any(|member| jwk.contains_key(*member))
}

/// Equal byte strings, in time that depends on their lengths only.
pub(crate) fn constant_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// How long one server nonce is given out.
const NONCE_PERIOD: u64 = 300;

/// The server nonces of now: the one given out, and the one before it (still taken).
pub(crate) struct Nonces {
    pub(crate) current: String,
    pub(crate) previous: String,
}

/// The nonces made from `key` at `now` (seconds since the Unix epoch): an HMAC of the
/// period's number, so every replica with the key makes the same ones, and nobody without it.
pub(crate) fn nonces(key: &[u8], now: u64) -> Nonces {
    let period = now / NONCE_PERIOD;
    Nonces {
        current: nonce(key, period),
        previous: nonce(key, period.saturating_sub(1)),
    }
}

fn nonce(key: &[u8], period: u64) -> String {
    use base64::Engine as _;
    use hmac::{KeyInit as _, Mac as _};
    let Ok(mut mac) = hmac::Hmac::<sha2::Sha256>::new_from_slice(key) else {
        return String::new();
    };
    mac.update(b"mcp-tool dpop nonce ");
    mac.update(&period.to_be_bytes());
    let tag = mac.finalize().into_bytes();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&tag[..16])
}

/// Seconds since the Unix epoch.
pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A `jti` as the shared store keeps it: its SHA-256, base64url (bounded, and any text).
pub(crate) fn digest(jti: &str) -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(jti.as_bytes()))
}

/// The `jti`s of proofs taken within the window, with when each may be forgotten.
#[derive(Default)]
pub(crate) struct Seen {
    seen: Mutex<HashMap<String, Instant>>,
}

impl Seen {
    /// Whether `proof`'s `jti` (for its key) is new; it is remembered for `keep` either way.
    /// A memory full of live entries refuses ([`ProofError::Busy`]) rather than forget one.
    pub(crate) fn first(&self, proof: &Proof, keep: Duration) -> Result<bool, ProofError> {
        let now = Instant::now();
        let key = format!("{}:{}", proof.thumbprint, proof.jti);
        let mut seen = lock(&self.seen);
        if seen.len() >= MAX_SEEN {
            seen.retain(|_, until| *until > now);
            if seen.len() >= MAX_SEEN {
                return Err(ProofError::Busy);
            }
        }
        match seen.get(&key) {
            Some(until) if *until > now => Ok(false),
            _ => {
                seen.insert(key, now.checked_add(keep).unwrap_or(now));
                Ok(true)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::protocol::oauth::dpop::ProofKey;

    const URL: &str = "https://mcp.example.com/mcp";
    const NOW: u64 = 1_800_000_000;

    fn request<'a>(token: Option<&'a str>, nonce: Option<&'a str>) -> Request<'a> {
        Request {
            method: "POST",
            url: URL,
            token,
            nonce,
            previous_nonce: None,
            now: NOW,
            window: DEFAULT_WINDOW,
        }
    }

    fn claims(token: Option<&str>) -> Value {
        let mut c = json!({"jti": "j-1", "htm": "POST", "htu": URL, "iat": NOW});
        if let Some(t) = token {
            c["ath"] = ath(t).into();
        }
        c
    }

    fn refusal(proof: &str, request: &Request<'_>) -> &'static str {
        match check(proof, request) {
            Err(ProofError::Invalid(why)) => why,
            other => panic!("not refused as invalid: {other:?}"),
        }
    }

    #[test]
    fn a_good_proof_gives_its_keys_thumbprint() {
        let key = ProofKey::generate().unwrap();
        let proof = key.sign(&claims(Some("tok")));
        let taken = check(&proof, &request(Some("tok"), None)).unwrap();
        assert_eq!(taken.thumbprint, key.thumbprint());
        assert_eq!(taken.jti, "j-1");
        // The URL as a client may write it: a default port, upper-case host, a query.
        let mut c = claims(None);
        c["htu"] = "https://MCP.example.com:443/mcp".into();
        assert!(check(&key.sign(&c), &request(None, None)).is_ok());
    }

    #[test]
    fn every_forgery_is_refused_naming_what_is_wrong() {
        let key = ProofKey::generate().unwrap();
        let other = ProofKey::generate().unwrap();
        let good = claims(Some("tok"));
        let r = request(Some("tok"), None);
        let with = |k: &str, v: Value| {
            let mut c = good.clone();
            c[k] = v;
            key.sign(&c)
        };
        let cases: Vec<(String, &str)> = vec![
            (with("htm", "GET".into()), "`htm`"),
            (with("htu", "https://mcp.example.com/other".into()), "`htu`"),
            (with("htu", format!("{URL}?a=b").into()), "`htu`"),
            (with("htu", "https://evil.example.com/mcp".into()), "`htu`"),
            (with("iat", (NOW - 120).into()), "`iat`"),
            (with("iat", (NOW + 120).into()), "`iat`"),
            (with("iat", "soon".into()), "no `iat`"),
            (with("ath", ath("another").into()), "`ath`"),
            (with("jti", "".into()), "no `jti`"),
            (with("jti", 7.into()), "no `jti`"),
            (
                key.sign(&json!({"jti": "j", "htm": "POST", "htu": URL, "iat": NOW})),
                "no `ath`",
            ),
            (
                key.sign_with(
                    &json!({"typ": "JWT", "alg": "ES256", "jwk": key.jwk()}),
                    &good,
                ),
                "`typ`",
            ),
            (
                key.sign_with(&json!({"typ": "dpop+jwt", "alg": "ES256"}), &good),
                "no `jwk`",
            ),
            (
                // Signed by one key, naming another: the signature does not verify.
                key.sign_with(
                    &json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": other.jwk()}),
                    &good,
                ),
                "signature",
            ),
            (
                {
                    let mut jwk = key.jwk().clone();
                    jwk["d"] = "AAAA".into();
                    key.sign_with(
                        &json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": jwk}),
                        &good,
                    )
                },
                "private key",
            ),
            (
                key.sign_with(
                    &json!({"typ": "dpop+jwt", "alg": "HS256", "jwk": key.jwk()}),
                    &good,
                ),
                "algorithm",
            ),
            ("a.b".to_owned(), "not a JWT"),
            ("x".repeat(9000), "too long"),
        ];
        for (proof, expected) in cases {
            let why = refusal(&proof, &r);
            assert!(why.contains(expected), "{why:?} should name {expected}");
        }
        // A proof without `ath` is fine where no token is presented (the token endpoint).
        let mut c = good.clone();
        c.as_object_mut().unwrap().remove("ath");
        assert!(check(&key.sign(&c), &request(None, None)).is_ok());
    }

    #[test]
    fn the_challenge_names_the_algorithms_taken() {
        let names: Vec<String> = ALGORITHMS.iter().map(|a| format!("{a:?}")).collect();
        assert_eq!(
            names.join(" "),
            crate::transport::http::access::auth::DPOP_ALGORITHMS
        );
    }

    #[test]
    fn a_server_nonce_is_required_when_asked_for() {
        let key = ProofKey::generate().unwrap();
        let without = key.sign(&claims(None));
        assert_eq!(
            check(&without, &request(None, Some("n1"))),
            Err(ProofError::UseNonce)
        );
        let mut c = claims(None);
        c["nonce"] = "n0".into();
        assert_eq!(
            check(&key.sign(&c), &request(None, Some("n1"))),
            Err(ProofError::UseNonce)
        );
        c["nonce"] = "n1".into();
        assert!(check(&key.sign(&c), &request(None, Some("n1"))).is_ok());
        // The nonce before the current one is still taken.
        c["nonce"] = "n0".into();
        let mut r = request(None, Some("n1"));
        r.previous_nonce = Some("n0");
        assert!(check(&key.sign(&c), &r).is_ok());
    }

    #[test]
    fn nonces_change_with_the_period_and_the_key() {
        let a = nonces(b"key", NOW);
        assert_eq!(a.current, nonces(b"key", NOW + 1).current);
        let later = nonces(b"key", NOW + NONCE_PERIOD);
        assert_eq!(later.previous, a.current, "the last one is still taken");
        assert_ne!(later.current, a.current);
        assert_ne!(nonces(b"other", NOW).current, a.current);
        assert_eq!(a.current.len(), 22);
    }

    #[test]
    fn a_jti_is_taken_once_per_key_within_its_time() {
        let seen = Seen::default();
        let proof = Proof {
            thumbprint: "k".into(),
            jti: "j".into(),
        };
        let keep = Duration::from_secs(60);
        assert_eq!(seen.first(&proof, keep), Ok(true));
        assert_eq!(seen.first(&proof, keep), Ok(false), "a replay");
        let other_key = Proof {
            thumbprint: "k2".into(),
            jti: "j".into(),
        };
        assert_eq!(seen.first(&other_key, keep), Ok(true));
        let brief = Proof {
            thumbprint: "k".into(),
            jti: "brief".into(),
        };
        assert_eq!(seen.first(&brief, Duration::ZERO), Ok(true));
        assert_eq!(
            seen.first(&brief, keep),
            Ok(true),
            "forgotten once its time is over"
        );
    }

    /// The cost of one verified proof (its signature, claims and `jti` remembered), in µs:
    /// `cargo test -p mcp-tool-runtime --release --lib dpop_verify_cost -- --ignored --nocapture`
    /// (BENCHMARKS.md, "DPoP").
    #[test]
    #[ignore = "a measurement, run by hand"]
    fn dpop_verify_cost() {
        const N: u32 = 2000;
        let key = ProofKey::generate().unwrap();
        let proofs: Vec<String> = (0..N)
            .map(|i| {
                let mut c = claims(Some("tok"));
                c["jti"] = format!("j-{i}").into();
                key.sign(&c)
            })
            .collect();
        let seen = Seen::default();
        let r = request(Some("tok"), None);
        let start = Instant::now();
        for proof in &proofs {
            let taken = check(proof, &r).unwrap();
            assert!(seen.first(&taken, DEFAULT_WINDOW).unwrap());
        }
        let each = start.elapsed() / N;
        eprintln!(
            "DPoP proof verified (check + jti): {:.1} µs",
            each.as_secs_f64() * 1e6
        );
    }
}
