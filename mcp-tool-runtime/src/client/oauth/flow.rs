//! The authorization flow of one HTTP connection: what a 401 or a 403 `insufficient_scope`
//! starts (discovery, registration, a grant), and the token the wire sends until then.
//!
//! One flow runs at a time per connection; requests that were refused meanwhile find the new
//! token when it ends and are sent again with it.

use std::sync::{OnceLock, RwLock};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::client::ClientError;
use crate::protocol::oauth::fetch;
use crate::protocol::oauth::{AuthServerMetadata, Challenge, origin_and_path};
use crate::sync::lock;

use super::assertion::assertion_form;
use super::discover::{Discovered, Trust, discover, pin};
use super::dpop::DpopKey;
use super::token::{ClientIdentity, fresh, registered, scope_list, token_request};
use super::{
    Credential, Grant, OAuthClient, Registration, TokenKey, Tokens, excerpt, fetch_error,
    oauth_error, random, unauthorized,
};

/// A dynamic registration's answer (RFC 7591 §3.2.1).
#[derive(Deserialize)]
struct RegistrationAnswer {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
}

/// The flow of one connection to `server`.
pub(crate) struct Authorizer {
    settings: OAuthClient,
    server: String,
    http: reqwest::Client,
    /// The token sent now, and when it expires.
    current: RwLock<Option<Tokens>>,
    /// One flow at a time; what it found.
    flow: tokio::sync::Mutex<Option<Discovered>>,
    /// The connection's DPoP key, made when an authorization server first takes proofs.
    dpop: OnceLock<DpopKey>,
    /// The issuer the client's credentials belong to: configured, else (for a client with a
    /// secret or a key) the first one discovered.
    pinned: std::sync::Mutex<Option<String>>,
}

impl Authorizer {
    pub(crate) fn new(settings: OAuthClient, server: &str) -> Self {
        Authorizer {
            server: server.split('#').next().unwrap_or(server).to_owned(),
            http: fetch::client(),
            current: RwLock::new(None),
            flow: tokio::sync::Mutex::new(None),
            dpop: OnceLock::new(),
            pinned: std::sync::Mutex::new(settings.issuer.clone()),
            settings,
        }
    }

    /// The DPoP key token requests to `found`'s authorization server prove: when it takes
    /// ES256 proofs (`dpop_signing_alg_values_supported`) and the client allows DPoP.
    fn dpop_for(&self, found: &Discovered) -> Result<Option<&DpopKey>, ClientError> {
        let takes = found
            .metadata
            .dpop_signing_alg_values_supported
            .as_ref()
            .is_some_and(|algs| algs.iter().any(|a| a == "ES256"));
        if !takes || !self.settings.dpop {
            return Ok(None);
        }
        if let Some(key) = self.dpop.get() {
            return Ok(Some(key));
        }
        let key = DpopKey::generate()?;
        Ok(Some(self.dpop.get_or_init(|| key)))
    }

    /// Whether `tokens` can be sent by this connection: a bearer token, or one bound to this
    /// connection's DPoP key (a key of an earlier process is gone with it).
    fn usable(&self, tokens: &Tokens) -> bool {
        match &tokens.dpop_jkt {
            None => true,
            Some(jkt) => self.dpop.get().is_some_and(|key| key.thumbprint() == jkt),
        }
    }

    /// The DPoP proof a `method` request to `url` presenting `token` carries, when the token
    /// held is bound to this connection's key (it is then sent with the `DPoP` scheme).
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &str,
        token: &str,
    ) -> Result<Option<String>, ClientError> {
        let bound = self
            .current()
            .is_some_and(|t| t.access_token == token && t.dpop_jkt.is_some());
        match (bound, self.dpop.get()) {
            (true, Some(key)) => key.proof(method, url, Some(token)).map(Some),
            _ => Ok(None),
        }
    }

    /// Keeps the nonce the resource server at `url` gave for the next proofs; whether it is
    /// new (the refused request is then worth sending again once).
    pub(crate) fn dpop_nonce(&self, url: &str, nonce: &str) -> bool {
        self.dpop
            .get()
            .is_some_and(|key| key.remember_nonce(url, nonce))
    }

    fn current(&self) -> Option<Tokens> {
        self.current
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn set_current(&self, tokens: Option<Tokens>) {
        *self
            .current
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = tokens;
    }

    /// Discovers where the server's tokens come from, within what the client trusts; a
    /// client with credentials of its own (a secret, a key, an assertion) pins the first
    /// issuer it finds.
    async fn discover(&self, challenge: &Challenge) -> Result<Discovered, ClientError> {
        let pinned = lock(&self.pinned).clone();
        let trust = Trust {
            issuer: pinned.as_deref(),
            origins: &self.settings.trusted_origins,
        };
        let found = discover(&self.http, &self.server, challenge, &trust).await?;
        let own = !matches!(self.settings.credential, Credential::None)
            || matches!(
                self.settings.grant,
                Grant::WorkloadIdentity(_) | Grant::Enterprise(_)
            );
        pin(&mut lock(&self.pinned), &found.issuer, own)?;
        Ok(found)
    }

    fn key(&self, found: &Discovered) -> TokenKey {
        TokenKey {
            resource: found.resource.clone(),
            issuer: found.issuer.clone(),
            principal: self.settings.principal.clone(),
        }
    }

    /// The token held now, without a refresh (for requests that start no flow).
    pub(crate) fn held(&self) -> Option<String> {
        self.current().map(|t| t.access_token)
    }

    /// How many step-ups one request may make.
    pub(crate) fn step_up_limit(&self) -> usize {
        self.settings.step_ups()
    }

    /// The access token to send now (refreshed first when it is about to expire), or none
    /// before the server has asked for one.
    pub(crate) async fn token(&self) -> Result<Option<String>, ClientError> {
        let Some(tokens) = self.current() else {
            return Ok(None);
        };
        let renews_alone = self.settings.grant.renews_alone();
        if fresh(&tokens) || (tokens.refresh_token.is_none() && !renews_alone) {
            return Ok(Some(tokens.access_token));
        }
        let flow = self.flow.lock().await;
        // Another request may have refreshed it meanwhile.
        if let Some(now_sent) = self.current()
            && now_sent.access_token != tokens.access_token
        {
            return Ok(Some(now_sent.access_token));
        }
        let Some(found) = flow.clone() else {
            return Ok(Some(tokens.access_token));
        };
        if tokens.refresh_token.is_none() {
            // A grant of its own (client credentials, an assertion): made again before the
            // token dies; on failure the old one goes while it lives.
            let scopes = tokens.scope.as_deref().map(scope_list);
            return match self.grant(&found, scopes).await {
                Ok(()) => Ok(self.current().map(|t| t.access_token)),
                Err(e) => {
                    tracing::warn!(error = %e, "the token could not be renewed");
                    Ok(Some(tokens.access_token))
                }
            };
        }
        match self.refresh(&found, &tokens).await {
            Ok(refreshed) => Ok(Some(refreshed.access_token)),
            // Refused: the server will answer 401, and the flow starts over then.
            Err(e) => {
                tracing::debug!(error = %e, "the token could not be refreshed");
                self.forget(&found);
                Ok(None)
            }
        }
    }

    fn forget(&self, found: &Discovered) {
        self.set_current(None);
        self.settings.store.set_tokens(&self.key(found), None);
    }

    /// Whether another request's flow got a token since `rejected` was sent (this request
    /// then only needs to be sent again).
    fn replaced(&self, rejected: Option<&str>) -> bool {
        self.current()
            .is_some_and(|sent| Some(sent.access_token.as_str()) != rejected)
    }

    /// After a 401: the token `rejected` (the one the request carried) is no good; obtains
    /// another, from the store, by refreshing, or by a new grant.
    pub(crate) async fn unauthorized(
        &self,
        challenge: Option<&str>,
        rejected: Option<&str>,
    ) -> Result<(), ClientError> {
        let mut flow = self.flow.lock().await;
        if self.replaced(rejected) {
            return Ok(());
        }
        let challenge = challenge.and_then(Challenge::parse).unwrap_or_default();
        let found = self.discover(&challenge).await?;
        let key = self.key(&found);
        *flow = Some(found.clone());
        // Only tokens of this resource and issuer are used or refreshed here: a token of
        // another authorization server (the resource moved) is never shown to this one.
        if let Some(tokens) = self.settings.store.tokens(&key).filter(|t| self.usable(t)) {
            if Some(tokens.access_token.as_str()) != rejected && fresh(&tokens) {
                self.set_current(Some(tokens));
                return Ok(());
            }
            if tokens.refresh_token.is_some() {
                match self.refresh(&found, &tokens).await {
                    Ok(_) => return Ok(()),
                    Err(e) => tracing::debug!(error = %e, "the refresh token was refused"),
                }
            }
        }
        self.forget(&found);
        let scopes = self.scopes(&challenge, &found);
        self.grant(&found, scopes).await
    }

    /// After a 403 with `error="insufficient_scope"`: asks for the scopes the challenge names
    /// beside those held.
    pub(crate) async fn insufficient_scope(
        &self,
        challenge: &str,
        rejected: Option<&str>,
    ) -> Result<(), ClientError> {
        let mut flow = self.flow.lock().await;
        if self.replaced(rejected) {
            return Ok(());
        }
        let challenge = Challenge::parse(challenge).unwrap_or_default();
        let found = match flow.clone() {
            Some(found) => found,
            None => self.discover(&challenge).await?,
        };
        *flow = Some(found.clone());
        // The scopes held (as granted, else as asked for), and the challenge's beside them.
        let held: Vec<String> = self
            .current()
            .and_then(|t| t.scope)
            .map(|s| scope_list(&s))
            .or_else(|| self.settings.scopes.clone())
            .unwrap_or_default();
        let Some(wanted) = challenge.get("scope").map(scope_list) else {
            return Err(unauthorized(
                "the server refused the request for want of scopes (HTTP 403 insufficient_scope) without naming them",
            ));
        };
        let missing: Vec<&String> = wanted.iter().filter(|s| !held.contains(s)).collect();
        if missing.is_empty() {
            // Asking again for what was granted would change nothing.
            return Err(unauthorized(format!(
                "the server wants the scopes `{}`, which the token already has: it will not take this request with them",
                wanted.join(" ")
            )));
        }
        let mut scopes = held.clone();
        scopes.extend(missing.into_iter().cloned());
        self.add_offline_access(&mut scopes, &found);
        // The token held stays in use until another is granted.
        self.grant(&found, Some(scopes)).await
    }

    /// The scopes to ask for at first: the configured ones; else the challenge's; else the
    /// resource's `scopes_supported`; else none.
    fn scopes(&self, challenge: &Challenge, found: &Discovered) -> Option<Vec<String>> {
        let mut scopes = if let Some(configured) = &self.settings.scopes {
            configured.clone()
        } else if let Some(asked) = challenge.get("scope") {
            scope_list(asked)
        } else if let Some(supported) = &found.scopes_supported {
            supported.clone()
        } else {
            return None;
        };
        self.add_offline_access(&mut scopes, found);
        Some(scopes)
    }

    /// `offline_access`, added when the authorization server lists it and the client may
    /// refresh (an authorization code grant).
    fn add_offline_access(&self, scopes: &mut Vec<String>, found: &Discovered) {
        let refreshes = matches!(self.settings.grant, Grant::Code(_));
        if refreshes
            && found
                .metadata
                .scopes_supported
                .as_ref()
                .is_some_and(|s| s.iter().any(|s| s == "offline_access"))
            && !scopes.iter().any(|s| s == "offline_access")
        {
            scopes.push("offline_access".into());
        }
    }

    /// Obtains tokens by the configured grant, asking for `scopes`.
    async fn grant(
        &self,
        found: &Discovered,
        scopes: Option<Vec<String>>,
    ) -> Result<(), ClientError> {
        let token_endpoint = self.endpoint(found, "token", |m| m.token_endpoint.as_deref())?;
        let scope = scopes.filter(|s| !s.is_empty()).map(|s| s.join(" "));
        if let Grant::Code(agent) = &self.settings.grant {
            let identity = self.identity(found, agent.redirect_uri()).await?;
            let tokens = self
                .code(found, agent.as_ref(), &identity, &token_endpoint, scope)
                .await?;
            self.keep(found, tokens);
            return Ok(());
        }
        // A grant without a user: the client as pre-registered, and the form of its grant.
        let identity = self.preregistered().ok_or_else(|| {
            unauthorized("a grant without a user needs a client id (OAuthClient::client_id)")
        })?;
        let form = match &self.settings.grant {
            Grant::ClientCredentials => {
                let mut form = vec![
                    ("grant_type", "client_credentials".to_owned()),
                    ("resource", found.resource.clone()),
                ];
                if let Some(scope) = &scope {
                    form.push(("scope", scope.clone()));
                }
                form
            }
            grant => assertion_form(grant, &self.http, found, &scope).await?,
        };
        let tokens = token_request(
            &self.http,
            found,
            &token_endpoint,
            &identity,
            form,
            scope.as_deref(),
            self.dpop_for(found)?,
        )
        .await?;
        self.keep(found, tokens);
        Ok(())
    }

    fn keep(&self, found: &Discovered, tokens: Tokens) {
        self.settings
            .store
            .set_tokens(&self.key(found), Some(tokens.clone()));
        self.set_current(Some(tokens));
    }

    fn endpoint(
        &self,
        found: &Discovered,
        what: &str,
        pick: impl Fn(&AuthServerMetadata) -> Option<&str>,
    ) -> Result<String, ClientError> {
        let url = pick(&found.metadata).ok_or_else(|| {
            unauthorized(format!(
                "the authorization server `{}` names no {what} endpoint",
                found.issuer
            ))
        })?;
        if !url.starts_with("https://") && !url.starts_with("http://") {
            return Err(unauthorized(format!(
                "the {what} endpoint `{url}` is not an http(s) URL"
            )));
        }
        Ok(url.to_owned())
    }

    fn preregistered(&self) -> Option<ClientIdentity> {
        Some(ClientIdentity {
            client_id: self.settings.client_id.clone()?,
            credential: self.settings.credential.clone(),
            method: None,
        })
    }

    /// Who the client is at `found`'s authorization server: pre-registered, by its metadata
    /// document, by a registration kept from before, or registered now.
    async fn identity(
        &self,
        found: &Discovered,
        redirect_uri: String,
    ) -> Result<ClientIdentity, ClientError> {
        if let Some(identity) = self.preregistered() {
            return Ok(identity);
        }
        if let Some(url) = &self.settings.client_metadata_url
            && found.metadata.client_id_metadata_document_supported == Some(true)
        {
            return Ok(ClientIdentity {
                client_id: url.clone(),
                credential: Credential::None,
                method: Some("none".into()),
            });
        }
        let store = &self.settings.store;
        if let Some(kept) = store.registration(&found.issuer)
            && kept.issuer == found.issuer
        {
            return Ok(registered(kept));
        }
        let endpoint = self
            .endpoint(found, "registration", |m| m.registration_endpoint.as_deref())
            .map_err(|_| {
                unauthorized(format!(
                    "the authorization server `{}` offers no registration, and this client has no client id for it (OAuthClient::client_id) nor a metadata document it takes",
                    found.issuer
                ))
            })?;
        let native = {
            let (origin, _) = origin_and_path(&redirect_uri);
            origin.starts_with("http://127.")
                || origin.starts_with("http://localhost")
                || origin.starts_with("http://[::1]")
                || !origin.starts_with("http")
        };
        let body = serde_json::json!({
            "client_name": self.settings.client_name,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "application_type": if native { "native" } else { "web" },
        });
        let request = self
            .http
            .post(&endpoint)
            .header("content-type", "application/json")
            .body(body.to_string());
        let (status, bytes) = fetch::read(request, &endpoint).await.map_err(fetch_error)?;
        if !(200..300).contains(&status) {
            return Err(unauthorized(format!(
                "the registration at `{endpoint}` was refused (HTTP {status}){}",
                oauth_error(&bytes)
            )));
        }
        let answer: RegistrationAnswer = serde_json::from_slice(&bytes).map_err(|_| {
            unauthorized(format!(
                "the registration at `{endpoint}` answered without a client id"
            ))
        })?;
        let registration = Registration {
            issuer: found.issuer.clone(),
            client_id: answer.client_id,
            client_secret: answer.client_secret,
            token_endpoint_auth_method: answer.token_endpoint_auth_method,
        };
        store.set_registration(&found.issuer, Some(registration.clone()));
        Ok(registered(registration))
    }

    /// The authorization code grant: the user agent sent to the authorization page, the
    /// redirect checked, the code exchanged.
    async fn code(
        &self,
        found: &Discovered,
        agent: &dyn super::UserAgent,
        identity: &ClientIdentity,
        token_endpoint: &str,
        scope: Option<String>,
    ) -> Result<Tokens, ClientError> {
        let metadata = &found.metadata;
        if found.documented
            && !metadata
                .code_challenge_methods_supported
                .as_ref()
                .is_some_and(|m| m.iter().any(|m| m == "S256"))
        {
            return Err(unauthorized(format!(
                "the authorization server `{}` does not say it supports PKCE with S256 (code_challenge_methods_supported): no authorization is attempted",
                found.issuer
            )));
        }
        let authorize = self.endpoint(found, "authorization", |m| {
            m.authorization_endpoint.as_deref()
        })?;
        let mut url = reqwest::Url::parse(&authorize).map_err(|_| {
            unauthorized(format!(
                "the authorization endpoint `{authorize}` is not a URL"
            ))
        })?;
        let verifier = random(32)?;
        let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        let state = random(24)?;
        let redirect_uri = agent.redirect_uri();
        {
            let mut query = url.query_pairs_mut();
            query
                .append_pair("response_type", "code")
                .append_pair("client_id", &identity.client_id)
                .append_pair("redirect_uri", &redirect_uri)
                .append_pair("code_challenge", &challenge)
                .append_pair("code_challenge_method", "S256")
                .append_pair("state", &state)
                .append_pair("resource", &found.resource);
            if let Some(scope) = &scope {
                query.append_pair("scope", scope);
                // OpenID Connect grants `offline_access` (a refresh token) only when the
                // user is asked to consent to it.
                if scope.split(' ').any(|s| s == "offline_access") {
                    query.append_pair("prompt", "consent");
                }
            }
        }
        let back = agent
            .authorize(url.as_str())
            .await
            .map_err(|why| unauthorized(format!("the authorization did not complete: {why}")))?;
        let back = reqwest::Url::parse(&back)
            .map_err(|_| unauthorized("the authorization's redirect is not a URL"))?;
        // The answer must come back to this client's own redirect URI (scheme, host, port,
        // path): a code delivered anywhere else is not this client's to use.
        let place = |u: &reqwest::Url| {
            (
                u.scheme().to_owned(),
                u.host_str().map(str::to_ascii_lowercase),
                u.port_or_known_default(),
                u.path().to_owned(),
            )
        };
        let ours = reqwest::Url::parse(&redirect_uri).ok();
        if ours.as_ref().map(place) != Some(place(&back)) {
            return Err(unauthorized(format!(
                "the authorization server redirected to `{}://{}{}`, not to this client's redirect URI `{redirect_uri}`: refused",
                back.scheme(),
                back.host_str().unwrap_or_default(),
                back.path()
            )));
        }
        let param = |name: &str| {
            back.query_pairs()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.into_owned())
        };
        // RFC 9207: the response says which server issued it, where that server says it will.
        let iss = param("iss");
        match (
            metadata.authorization_response_iss_parameter_supported,
            &iss,
        ) {
            (Some(true), None) => {
                return Err(unauthorized(format!(
                    "the authorization response has no `iss`, which `{}` says it sends: refused (RFC 9207)",
                    found.issuer
                )));
            }
            (_, Some(iss)) if *iss != metadata.issuer => {
                return Err(unauthorized(format!(
                    "the authorization response comes from `{iss}`, not from `{}`: refused (RFC 9207)",
                    metadata.issuer
                )));
            }
            _ => {}
        }
        if param("state").as_deref() != Some(state.as_str()) {
            return Err(unauthorized(
                "the authorization response does not carry the request's state: refused",
            ));
        }
        if let Some(error) = param("error") {
            let description = param("error_description")
                .map(|d| format!(": {}", excerpt(&d)))
                .unwrap_or_default();
            return Err(unauthorized(format!(
                "the authorization server refused ({}){description}",
                excerpt(&error)
            )));
        }
        let code = param("code")
            .ok_or_else(|| unauthorized("the authorization response carries no code"))?;
        let form = vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code),
            ("redirect_uri", redirect_uri),
            ("code_verifier", verifier),
            ("resource", found.resource.clone()),
        ];
        token_request(
            &self.http,
            found,
            token_endpoint,
            identity,
            form,
            scope.as_deref(),
            self.dpop_for(found)?,
        )
        .await
    }

    /// A refresh of `tokens`; the new ones kept.
    async fn refresh(&self, found: &Discovered, tokens: &Tokens) -> Result<Tokens, ClientError> {
        let Some(refresh_token) = &tokens.refresh_token else {
            return Err(unauthorized("no refresh token"));
        };
        let token_endpoint = self.endpoint(found, "token", |m| m.token_endpoint.as_deref())?;
        let identity = match &self.settings.grant {
            Grant::Code(agent) => self.identity(found, agent.redirect_uri()).await?,
            _ => self
                .preregistered()
                .ok_or_else(|| unauthorized("no client id"))?,
        };
        let form = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", refresh_token.clone()),
            ("resource", found.resource.clone()),
        ];
        let mut fresh = token_request(
            &self.http,
            found,
            &token_endpoint,
            &identity,
            form,
            tokens.scope.as_deref(),
            self.dpop_for(found)?,
        )
        .await?;
        if fresh.refresh_token.is_none() {
            fresh.refresh_token = tokens.refresh_token.clone();
        }
        self.keep(found, fresh.clone());
        Ok(fresh)
    }
}
