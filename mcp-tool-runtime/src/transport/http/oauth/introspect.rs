//! Opaque tokens, checked by the authorization server (RFC 7662 introspection), the server
//! authenticating with its own client credentials. Answers are kept by a hash of the token
//! (never the token): an active one until its `exp` but no longer than the ceiling, a refusal
//! briefly; the table is bounded.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use serde::Deserialize;

use crate::sync::lock;
use crate::tool::Identity;

use super::super::auth::AuthError;
use super::settings::{Accepted, Settings};
use crate::protocol::oauth::fetch::{self, FetchError, form_encode};

/// The most answers kept.
const MAX_CACHED: usize = 10_000;

/// An introspection answer (the members the verifier reads).
#[derive(Deserialize)]
struct Answer {
    active: bool,
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    exp: Option<u64>,
    #[serde(default)]
    nbf: Option<u64>,
    #[serde(default)]
    iss: Option<String>,
    #[serde(default)]
    aud: Option<Audience>,
    #[serde(default)]
    cnf: Option<super::jwt::Confirmation>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Audience {
    One(String),
    Many(Vec<String>),
}

impl Audience {
    fn contains(&self, wanted: &[String]) -> bool {
        match self {
            Audience::One(a) => wanted.contains(a),
            Audience::Many(all) => all.iter().any(|a| wanted.contains(a)),
        }
    }
}

type Verdict = Result<Accepted, AuthError>;

/// The answers kept, by the SHA-256 of the token.
#[derive(Default)]
pub(super) struct Introspector {
    cache: Mutex<HashMap<[u8; 32], (Instant, Verdict)>>,
}

impl Introspector {
    /// Checks `token` (whose SHA-256 is `key`) at `endpoint`: the kept answer, or the
    /// server's.
    pub(super) async fn check(
        &self,
        http: &reqwest::Client,
        endpoint: &str,
        (token, key): (&str, [u8; 32]),
        settings: &Settings,
    ) -> Result<Verdict, FetchError> {
        if let Some((until, verdict)) = lock(&self.cache).get(&key)
            && Instant::now() < *until
        {
            return Ok(verdict.clone());
        }
        let mut request = http
            .post(endpoint)
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .body(format!(
                "token={}&token_type_hint=access_token",
                form_encode(token)
            ));
        if let Some((id, secret)) = &settings.client {
            let credentials = format!("{}:{}", form_encode(id), form_encode(secret));
            let basic = base64::engine::general_purpose::STANDARD.encode(credentials);
            request = request.header("authorization", format!("Basic {basic}"));
        }
        let answer: Answer = fetch::json(request, endpoint, false)
            .await?
            .ok_or_else(|| FetchError::Status {
                url: endpoint.to_owned(),
                status: 404,
            })?;
        let now = unix_now();
        let exp = answer.exp;
        let verdict = judge(answer, now, settings);
        // An accepted token is trusted until its `exp`, and no longer than the ceiling.
        let keep = match &verdict {
            Ok(_) => exp.map_or(settings.cache_ceiling, |exp| {
                settings
                    .cache_ceiling
                    .min(Duration::from_secs(exp.saturating_sub(now)))
            }),
            Err(_) => settings.negative_ttl,
        };
        let mut cache = lock(&self.cache);
        if cache.len() >= MAX_CACHED {
            let now = Instant::now();
            cache.retain(|_, (until, _)| *until > now);
            if cache.len() >= MAX_CACHED {
                cache.clear();
            }
        }
        cache.insert(key, (Instant::now() + keep, verdict.clone()));
        Ok(verdict)
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// What an answer says of the token: inactive, expired, not yet valid, from another issuer or
/// for another resource is refused.
fn judge(answer: Answer, now: u64, settings: &Settings) -> Verdict {
    let leeway = settings.leeway.as_secs();
    if !answer.active {
        return Err(AuthError::invalid("the token is not active"));
    }
    if answer
        .exp
        .is_some_and(|exp| exp.saturating_add(leeway) <= now)
    {
        return Err(AuthError::invalid("the token has expired"));
    }
    if answer
        .nbf
        .is_some_and(|nbf| nbf > now.saturating_add(leeway))
    {
        return Err(AuthError::invalid("the token is not valid yet"));
    }
    if answer
        .iss
        .as_ref()
        .is_some_and(|iss| *iss != settings.issuer)
    {
        return Err(AuthError::invalid("the token was issued by another issuer"));
    }
    match &answer.aud {
        Some(aud) if aud.contains(&settings.audiences) => {}
        _ => {
            return Err(AuthError::invalid(
                "the token was issued for another resource",
            ));
        }
    }
    let Some(subject) = answer.sub.or_else(|| answer.client_id.clone()) else {
        return Err(AuthError::invalid("the token names no subject"));
    };
    let jkt = super::jwt::bound_to(answer.cnf)?;
    let identity = Identity {
        subject,
        scopes: answer
            .scope
            .as_deref()
            .unwrap_or("")
            .split_ascii_whitespace()
            .map(str::to_owned)
            .collect(),
        client_id: answer.client_id,
    };
    Ok(Accepted { identity, jkt })
}
