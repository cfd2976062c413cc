//! JWT access tokens (RFC 9068, and plain JWTs): the header read first (its algorithm one the
//! key allows, `none` impossible, HMAC only with a configured secret), then the signature with
//! the issuer's published key, then the claims: `iss` exact, `aud` naming this server, `exp`
//! and `nbf` with a bounded leeway, `sub`; the scopes from `scope` or `scp`, the client from
//! `client_id` or `azp`.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Header, Validation, decode};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::protocol::oauth::scope_tokens;
use crate::tool::Identity;

use super::super::auth::AuthError;
use super::keys::Key;
use super::settings::{Accepted, Settings};

/// What a token is, from its first segment.
pub(super) enum Shape {
    /// A signed JWT whose header this verifier reads.
    Jwt(Box<Header>),
    /// A JOSE object (its first segment a header with `alg`) that cannot be taken: unsigned,
    /// encrypted, cut short, of an algorithm not known here. Refused as it is: an
    /// authorization server's introspection would refuse it too, as a request it cannot
    /// answer (an error, not `active: false`), which would turn a bad token into a 503.
    Unusable(&'static str),
    /// Anything else: an opaque token (or garbage).
    Opaque,
}

/// Reads what `token` is.
pub(super) fn shape(token: &str) -> Shape {
    let first = token.split('.').next().unwrap_or_default();
    let Some(head) = URL_SAFE_NO_PAD
        .decode(first)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Map<String, Value>>(&bytes).ok())
    else {
        return Shape::Opaque;
    };
    let Some(alg) = head.get("alg") else {
        return Shape::Opaque;
    };
    if head.contains_key("enc") {
        return Shape::Unusable("the token is encrypted, which this server does not accept");
    }
    if token.bytes().filter(|&b| b == b'.').count() != 2 {
        return Shape::Unusable("the token is not a valid JWT");
    }
    match alg.as_str() {
        Some("none") => return Shape::Unusable("the token is not signed"),
        Some(alg) if alg.parse::<Algorithm>().is_ok() => {}
        _ => return Shape::Unusable("the token's algorithm is not accepted"),
    }
    match jsonwebtoken::decode_header(token) {
        Ok(header) => Shape::Jwt(Box::new(header)),
        Err(_) => Shape::Unusable("the token's header is not valid"),
    }
}

/// Whether the token is signed with a shared secret (HMAC), not with a published key.
pub(super) fn is_hmac(header: &Header) -> bool {
    matches!(
        header.alg,
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512
    )
}

/// Checks the `typ` a token declares: an access token (`at+jwt`), a plain JWT, or none.
pub(super) fn check_type(header: &Header) -> Result<(), AuthError> {
    match header
        .typ
        .as_deref()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("at+jwt" | "application/at+jwt" | "jwt") => Ok(()),
        Some(_) => Err(AuthError::invalid("the token is not an access token")),
    }
}

/// The claims read from a verified token.
#[derive(Deserialize)]
struct Claims {
    /// Required (the validation refuses a token without it); optional here so that its
    /// absence is said as such.
    #[serde(default)]
    exp: Option<u64>,
    /// Read as it is: RFC 7519 makes it a string, which the validation does not insist on (it
    /// takes a list holding the issuer too).
    #[serde(default)]
    iss: Option<Value>,
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    scp: Option<Scopes>,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    azp: Option<String>,
    #[serde(default)]
    cnf: Option<Confirmation>,
}

/// `cnf` (RFC 7800): the key a token is bound to; DPoP's is `jkt` (RFC 9449 §6).
#[derive(Deserialize)]
pub(super) struct Confirmation {
    #[serde(default)]
    pub(super) jkt: Option<String>,
}

/// `scp`: a list, or (as some servers write it) one space-separated string.
#[derive(Deserialize)]
#[serde(untagged)]
enum Scopes {
    List(Vec<String>),
    Text(String),
}

/// Verifies `token` with `key` (published, or the shared secret) and reads its identity and
/// its `exp`.
pub(super) fn verify(
    token: &str,
    header: &Header,
    key: &Key,
    settings: &Settings,
) -> Result<(Accepted, u64), AuthError> {
    if let Some(pinned) = key.algorithm
        && format!("{pinned:?}") != format!("{:?}", header.alg)
    {
        return Err(AuthError::invalid(
            "the token's algorithm is not the one its key is for",
        ));
    }
    check(token, header.alg, &key.key, settings)
}

/// Verifies an HMAC-signed `token` with the configured shared secret.
pub(super) fn verify_shared(
    token: &str,
    header: &Header,
    secret: &[u8],
    settings: &Settings,
) -> Result<(Accepted, u64), AuthError> {
    let key = DecodingKey::from_secret(secret)
        .map_err(|_| AuthError::invalid("the configured shared secret is not usable"))?;
    check(token, header.alg, &key, settings)
}

fn check(
    token: &str,
    alg: Algorithm,
    key: &DecodingKey,
    settings: &Settings,
) -> Result<(Accepted, u64), AuthError> {
    let mut validation = Validation::new(alg);
    validation.set_issuer(&[&settings.issuer]);
    validation.set_audience(&settings.audiences);
    validation.leeway = settings.leeway.as_secs();
    validation.validate_nbf = true;
    validation.required_spec_claims = ["exp", "iss", "aud", "sub"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    let claims = decode::<Claims>(token, key, &validation)
        .map_err(|e| AuthError::invalid(refusal(e.kind())))?
        .claims;
    if !matches!(claims.iss, Some(Value::String(_))) {
        return Err(AuthError::invalid("the token's `iss` is not a string"));
    }
    let split = |text: &str, claim: &str| {
        scope_tokens(text)
            .map(|scopes| scopes.into_iter().map(str::to_owned).collect::<Vec<_>>())
            .ok_or_else(|| {
                AuthError::invalid(format!(
                    "the token's `{claim}` is not a list of scopes separated by spaces"
                ))
            })
    };
    let mut scopes: Vec<String> = match (&claims.scope, claims.scp) {
        (Some(scope), _) => split(scope, "scope")?,
        (None, Some(Scopes::List(list))) => list,
        (None, Some(Scopes::Text(text))) => split(&text, "scp")?,
        (None, None) => Vec::new(),
    };
    scopes.dedup();
    let Some(subject) = claims.sub else {
        return Err(AuthError::invalid("the token has no `sub`"));
    };
    if subject.is_empty() {
        return Err(AuthError::invalid("the token's `sub` is empty"));
    }
    let identity = Identity {
        subject,
        scopes,
        client_id: claims.client_id.or(claims.azp),
    };
    let Some(exp) = claims.exp else {
        return Err(AuthError::invalid("the token has no `exp`"));
    };
    let jkt = bound_to(claims.cnf)?;
    Ok((Accepted { identity, jkt }, exp))
}

/// The DPoP key thumbprint a token's `cnf` names, if it names one.
pub(super) fn bound_to(cnf: Option<Confirmation>) -> Result<Option<String>, AuthError> {
    match cnf.and_then(|c| c.jkt) {
        Some(jkt) if jkt.is_empty() || jkt.len() > 128 => Err(AuthError::invalid(
            "the token's `cnf.jkt` is not a key thumbprint",
        )),
        other => Ok(other),
    }
}

/// What a client is told of a token that failed (never the token).
fn refusal(kind: &ErrorKind) -> String {
    match kind {
        ErrorKind::ExpiredSignature => "the token has expired".into(),
        ErrorKind::ImmatureSignature => "the token is not valid yet".into(),
        ErrorKind::InvalidIssuer => "the token was issued by another issuer".into(),
        ErrorKind::InvalidAudience => "the token was issued for another resource".into(),
        ErrorKind::InvalidSignature => "the token's signature is not valid".into(),
        ErrorKind::MissingRequiredClaim(claim) => format!("the token has no `{claim}`"),
        ErrorKind::InvalidAlgorithm => "the token's algorithm does not fit its key".into(),
        _ => "the token is not a valid JWT".into(),
    }
}
