//! Opaque tokens, checked by the authorization server (RFC 7662 introspection), the server
//! authenticating with its own client credentials. Answers are kept by a hash of the token
//! (never the token): an active one until its `exp` but no longer than the ceiling, a refusal
//! briefly; the table is bounded. The requests that carry one token share one introspection,
//! at most a few run at once, a request waits no longer than its own deadline, and an
//! endpoint that failed is not asked again within the interval.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use serde::Deserialize;

use crate::sync::lock;
use crate::tool::Identity;

use super::super::auth::AuthError;
use super::settings::{Accepted, Settings, later};
use crate::protocol::oauth::fetch::{self, FetchError, form_encode};
use crate::protocol::oauth::scope_tokens;

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

/// How many introspections may be under way at once (one per lane; a token always takes the
/// same lane, so the requests that carry it share one introspection).
const LANES: usize = 16;

/// The answers kept, by the SHA-256 of the token; the lanes introspections run in; the last
/// failure of the endpoint.
pub(super) struct Introspector {
    cache: Mutex<HashMap<[u8; 32], (Instant, Verdict)>>,
    lanes: [tokio::sync::Mutex<()>; LANES],
    /// When the endpoint last failed, and how: it is not asked again within the interval.
    down: Mutex<Option<(Instant, FetchError)>>,
}

impl Default for Introspector {
    fn default() -> Self {
        Introspector {
            cache: Mutex::default(),
            lanes: std::array::from_fn(|_| tokio::sync::Mutex::new(())),
            down: Mutex::default(),
        }
    }
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
        if let Some(verdict) = self.kept(&key) {
            return Ok(verdict);
        }
        // The token's lane, waited for within the request's own deadline; then the answer
        // another request got meanwhile.
        let deadline = tokio::time::Instant::now() + fetch::WAIT;
        let lane = &self.lanes[usize::from(key[0]) % LANES];
        let Ok(_lane) = tokio::time::timeout_at(deadline, lane.lock()).await else {
            return Err(fetch::waited(endpoint));
        };
        if let Some(verdict) = self.kept(&key) {
            return Ok(verdict);
        }
        if let Some((at, e)) = &*lock(&self.down)
            && at.elapsed() < settings.refresh_interval
        {
            return Err(e.clone());
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
        let asked = fetch::json::<Answer>(request, endpoint, false);
        let answer = tokio::time::timeout_at(deadline, asked)
            .await
            .unwrap_or_else(|_| Err(fetch::waited(endpoint)))
            .and_then(|answer| {
                answer.ok_or_else(|| FetchError::Status {
                    url: endpoint.to_owned(),
                    status: 404,
                })
            });
        let answer = match answer {
            Ok(answer) => answer,
            Err(e) => {
                *lock(&self.down) = Some((Instant::now(), e.clone()));
                return Err(e);
            }
        };
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
        cache.insert(key, (later(keep), verdict.clone()));
        Ok(verdict)
    }
}

impl Introspector {
    /// The answer kept for the token whose SHA-256 is `key`, while it holds.
    fn kept(&self, key: &[u8; 32]) -> Option<Verdict> {
        match lock(&self.cache).get(key) {
            Some((until, verdict)) if Instant::now() < *until => Some(verdict.clone()),
            _ => None,
        }
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
    let Some(subject) = answer
        .sub
        .or_else(|| answer.client_id.clone())
        .filter(|s| !s.is_empty())
    else {
        return Err(AuthError::invalid("the token names no subject"));
    };
    let Some(scopes) = scope_tokens(answer.scope.as_deref().unwrap_or("")) else {
        return Err(AuthError::invalid(
            "the token's `scope` is not a list of scopes separated by spaces",
        ));
    };
    let jkt = super::jwt::bound_to(answer.cnf)?;
    let identity = Identity {
        subject,
        scopes: scopes.into_iter().map(str::to_owned).collect(),
        client_id: answer.client_id,
    };
    Ok(Accepted { identity, jkt })
}
