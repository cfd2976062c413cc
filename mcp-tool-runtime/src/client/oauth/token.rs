//! The token endpoint: a grant's request, the client authenticated as it registered (or by
//! what the server supports), and the answer checked before anything of it is kept.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;

use crate::client::ClientError;
use crate::protocol::oauth::fetch::{self, form_encode};

use super::discover::Discovered;
use super::dpop::DpopKey;
use super::{
    AuthAnswer, AuthFailure, Credential, Registration, Tokens, excerpt, fetch_error, now,
    oauth_error, random, unauthorized,
};
use crate::protocol::oauth::dpop::{HEADER as DPOP, NONCE_HEADER, USE_NONCE};

/// A token endpoint's answer, success or error (RFC 6749 §5.1, §5.2).
#[derive(Deserialize)]
struct TokenAnswer {
    #[serde(default)]
    access_token: Option<String>,
    #[serde(default)]
    token_type: Option<String>,
    #[serde(default)]
    expires_in: Option<serde_json::Value>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

/// Who the client is at one authorization server.
pub(super) struct ClientIdentity {
    pub(super) client_id: String,
    pub(super) credential: Credential,
    pub(super) method: Option<String>,
}

/// A request to the token endpoint, authenticated as `identity`; `asked` is the scope
/// asked for (kept when the answer does not say what was granted). With `dpop`, the request
/// carries a proof of that key (RFC 9449 §5), and is sent once more with the server's nonce
/// when it asks for one (§8).
pub(super) async fn token_request(
    http: &reqwest::Client,
    found: &Discovered,
    endpoint: &str,
    identity: &ClientIdentity,
    form: Vec<(&'static str, String)>,
    asked: Option<&str>,
    dpop: Option<&DpopKey>,
) -> Result<Tokens, ClientError> {
    let mut nonce_asked = false;
    let (status, bytes) = loop {
        let mut request = authenticated(http, found, endpoint, identity, form.clone())?;
        if let Some(key) = dpop {
            request = request.header(DPOP, key.proof("POST", endpoint, None)?);
        }
        let (status, headers, bytes) = fetch::read_with_headers(request, endpoint)
            .await
            .map_err(fetch_error)?;
        if let Some(key) = dpop
            && status == 400
            && !nonce_asked
            && error_code(&bytes).as_deref() == Some(USE_NONCE)
            && let Some(nonce) = headers.get(NONCE_HEADER).and_then(|v| v.to_str().ok())
        {
            nonce_asked = true;
            key.remember_nonce(endpoint, nonce);
            continue;
        }
        break (status, bytes);
    };
    if !(200..300).contains(&status) {
        let answer = AuthAnswer::of_status(status, error_code(&bytes).map(|e| excerpt(&e)));
        return Err(ClientError::Unauthorized(AuthFailure::new(
            format!(
                "the token endpoint `{endpoint}` refused (HTTP {status}){}",
                oauth_error(&bytes)
            ),
            answer,
        )));
    }
    let Ok(answer) = serde_json::from_slice::<TokenAnswer>(&bytes) else {
        return Err(unauthorized(format!(
            "the token endpoint `{endpoint}` answered what is not a token response"
        )));
    };
    if let Some(error) = &answer.error {
        return Err(ClientError::Unauthorized(AuthFailure::new(
            format!(
                "the token endpoint `{endpoint}` refused ({})",
                excerpt(error)
            ),
            AuthAnswer::Refused {
                error: Some(excerpt(error)),
                status,
            },
        )));
    }
    let Some(access_token) = answer.access_token.filter(|t| !t.is_empty()) else {
        return Err(unauthorized(format!(
            "the token endpoint `{endpoint}` answered without an access_token"
        )));
    };
    let dpop_jkt = match (answer.token_type.as_deref(), dpop) {
        (Some(t), _) if t.eq_ignore_ascii_case("bearer") => None,
        (Some(t), Some(key)) if t.eq_ignore_ascii_case("dpop") => Some(key.thumbprint().to_owned()),
        (Some(t), _) => {
            return Err(unauthorized(format!(
                "the token endpoint `{endpoint}` issued a token of type `{}`, not a bearer token{}",
                excerpt(t),
                if dpop.is_some() {
                    " nor a DPoP-bound one"
                } else {
                    ""
                }
            )));
        }
        (None, _) => {
            return Err(unauthorized(format!(
                "the token endpoint `{endpoint}` answered without a token_type"
            )));
        }
    };
    if reqwest::header::HeaderValue::try_from(format!("Bearer {access_token}")).is_err() {
        return Err(unauthorized(format!(
            "the token endpoint `{endpoint}` issued a token that cannot be sent in a header"
        )));
    }
    let expires_at = answer
        .expires_in
        .as_ref()
        .and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok()))
        .map(|seconds| now().saturating_add(seconds));
    Ok(Tokens {
        access_token,
        refresh_token: answer.refresh_token.filter(|t| !t.is_empty()),
        expires_at,
        scope: answer.scope.or_else(|| asked.map(str::to_owned)),
        dpop_jkt,
        obtained_at: Some(now()),
    })
}

/// The `error` of an OAuth error answer.
pub(super) fn error_code(body: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Refusal {
        error: Option<String>,
    }
    serde_json::from_slice::<Refusal>(body).ok()?.error
}

/// A POST of `form` to the token endpoint, the client authenticated as `identity` says
/// (a fresh client assertion each time).
fn authenticated(
    http: &reqwest::Client,
    found: &Discovered,
    endpoint: &str,
    identity: &ClientIdentity,
    mut form: Vec<(&'static str, String)>,
) -> Result<reqwest::RequestBuilder, ClientError> {
    let method = auth_method(found, identity);
    let mut request = http
        .post(endpoint)
        .header("accept", "application/json")
        .header("content-type", "application/x-www-form-urlencoded");
    match (&identity.credential, method.as_str()) {
        (Credential::Secret(secret), "client_secret_basic") => {
            let pair = format!(
                "{}:{}",
                form_encode(&identity.client_id),
                form_encode(secret)
            );
            let mut value =
                reqwest::header::HeaderValue::try_from(format!("Basic {}", STANDARD.encode(pair)))
                    .map_err(|_| unauthorized("the client's credentials cannot be sent"))?;
            value.set_sensitive(true);
            request = request.header("authorization", value);
        }
        (Credential::Secret(secret), "client_secret_post") => {
            form.push(("client_id", identity.client_id.clone()));
            form.push(("client_secret", secret.clone()));
        }
        (Credential::Secret(_), "none") | (Credential::None, _) => {
            form.push(("client_id", identity.client_id.clone()));
        }
        (Credential::Secret(_), other) => {
            return Err(unauthorized(format!(
                "the client was registered for token endpoint authentication `{}`, which this client does not do",
                excerpt(other)
            )));
        }
        (Credential::PrivateKey { pem, algorithm }, _) => {
            form.push(("client_id", identity.client_id.clone()));
            form.push((
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".into(),
            ));
            form.push((
                "client_assertion",
                assertion(&identity.client_id, &found.metadata.issuer, pem, algorithm)?,
            ));
        }
    }
    let body = form
        .iter()
        .map(|(name, value)| format!("{name}={}", form_encode(value)))
        .collect::<Vec<_>>()
        .join("&");
    Ok(request.body(body))
}

/// How `identity` authenticates at the token endpoint: as registered; else by its key;
/// else, with a secret, Basic when the server takes it (its default), else the form, else
/// as a public client when that is all the server takes; else as a public client.
fn auth_method(found: &Discovered, identity: &ClientIdentity) -> String {
    if let Some(method) = &identity.method {
        return method.clone();
    }
    match &identity.credential {
        Credential::PrivateKey { .. } => "private_key_jwt".into(),
        Credential::Secret(_) => {
            let supported = found
                .metadata
                .token_endpoint_auth_methods_supported
                .as_deref()
                .unwrap_or_default();
            if supported.is_empty() || supported.iter().any(|m| m == "client_secret_basic") {
                "client_secret_basic".into()
            } else if supported.iter().any(|m| m == "client_secret_post") {
                "client_secret_post".into()
            } else if supported.iter().any(|m| m == "none") {
                "none".into()
            } else {
                "client_secret_basic".into()
            }
        }
        Credential::None => "none".into(),
    }
}

/// A client assertion (RFC 7523 §3): a short-lived JWT about the client, for `audience`.
fn assertion(
    client_id: &str,
    audience: &str,
    pem: &str,
    algorithm: &str,
) -> Result<String, ClientError> {
    use jsonwebtoken::{Algorithm, EncodingKey, Header};
    let algorithm: Algorithm = algorithm
        .parse()
        .map_err(|_| unauthorized(format!("`{}` is not a JWS algorithm", excerpt(algorithm))))?;
    let key = match algorithm {
        Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(pem.as_bytes()),
        Algorithm::EdDSA => EncodingKey::from_ed_pem(pem.as_bytes()),
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => {
            return Err(unauthorized(
                "private_key_jwt needs an asymmetric algorithm, not an HMAC",
            ));
        }
        _ => EncodingKey::from_rsa_pem(pem.as_bytes()),
    }
    .map_err(|_| unauthorized("the client's private key is not a PEM key of its algorithm"))?;
    let issued = now();
    let claims = serde_json::json!({
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": issued,
        "exp": issued + 300,
        "jti": random(16)?,
    });
    jsonwebtoken::encode(&Header::new(algorithm), &claims, &key)
        .map_err(|_| unauthorized("the client assertion could not be signed"))
}

/// A token this close to its expiry is refreshed before it is sent.
pub(super) const EARLY: Duration = Duration::from_secs(30);

/// Whether `tokens` may still be sent as they are: less than three quarters of their
/// lifetime gone, and more than [`EARLY`] of it left (past that they are renewed: refreshed,
/// or granted again when no user is needed).
pub(super) fn fresh(tokens: &Tokens) -> bool {
    let Some(at) = tokens.expires_at else {
        return true;
    };
    let lifetime = tokens.obtained_at.map_or(0, |from| at.saturating_sub(from));
    let margin = EARLY.as_secs().max(lifetime / 4);
    now().saturating_add(margin) < at
}

/// Who a registration (kept, or made now) says the client is.
pub(super) fn registered(registration: Registration) -> ClientIdentity {
    ClientIdentity {
        client_id: registration.client_id,
        credential: registration
            .client_secret
            .map_or(Credential::None, Credential::Secret),
        method: registration.token_endpoint_auth_method,
    }
}

/// The scopes of a space-separated list, in order, without repeats. Only a space separates
/// (RFC 6749 §3.3): a tab or a line break is part of the scope it is in, which no
/// authorization server grants.
pub(super) fn scope_list(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for scope in text.split(' ').filter(|s| !s.is_empty()) {
        if !out.iter().any(|s| s == scope) {
            out.push(scope.to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::scope_list;

    #[test]
    fn scope_lists_lose_repeats_and_split_at_spaces_only() {
        assert_eq!(scope_list(" a b  a c"), ["a", "b", "c"]);
        assert_eq!(scope_list("a\tb c"), ["a\tb", "c"]);
    }
}
