//! The client's Streamable HTTP transport: each message a POST; a request's answer comes as
//! JSON or as an SSE stream (with the server's own requests and notifications before it),
//! resumed with `Last-Event-ID` when it breaks and the server numbered its events; a 2025
//! session's id and version on every request, its GET stream for messages of no request, and
//! DELETE at the end; a 2026-07-28 request's `MCP-Protocol-Version`, `Mcp-Method` and
//! `Mcp-Name` headers.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{
    ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, WWW_AUTHENTICATE,
};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::protocol::ProtocolVersion;
use crate::sync::lock;
use crate::tool::definition::headers::header_text;

use super::message::{Inbound, Outbound, TRANSPORT, UNAUTHORIZED};
use super::oauth::{AuthAnswer, AuthFailure, Authorizer, OAuthClient};
use super::sse::{Event, Events};
use super::{ClientError, MAX_MESSAGE};

/// How many times a broken SSE answer is resumed.
const RESUMES: usize = 5;

/// How many times one message starts the authorization flow (a server that refuses each
/// fresh token is not asked forever).
const AUTHORIZATIONS: usize = 2;

const SESSION: &str = "mcp-session-id";

pub(crate) struct HttpWire {
    endpoint: Endpoint,
    shared: Arc<Shared>,
    standalone: Mutex<Option<tokio::task::AbortHandle>>,
}

/// What the wire's tasks share.
struct Shared {
    session: RwLock<Option<String>>,
    version: RwLock<Option<ProtocolVersion>>,
    stateless: AtomicBool,
    inbox: mpsc::UnboundedSender<Inbound>,
}

impl Shared {
    /// `request` with the session's version and id, once `initialize` gave them.
    fn session_headers(&self, mut request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        if let Some(version) = *crate::sync::read(&self.version) {
            request = request.header("MCP-Protocol-Version", version.as_str());
        }
        if let Some(session) = crate::sync::read(&self.session).clone() {
            request = request.header(SESSION, session);
        }
        request
    }
}

impl HttpWire {
    pub(super) fn new(
        url: &str,
        headers: &BTreeMap<String, String>,
        oauth: Option<&OAuthClient>,
        inbox: mpsc::UnboundedSender<Inbound>,
    ) -> Result<Self, ClientError> {
        if !url.starts_with("http://") && !url.starts_with("https://") {
            return Err(ClientError::Unavailable(format!(
                "`{url}` is not an http(s) URL"
            )));
        }
        // TLS through rustls with the ring provider (installed once for the process).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .tcp_nodelay(true)
            .connect_timeout(Duration::from_secs(10))
            .redirect(same_origin_only())
            .build()
            .map_err(|e| ClientError::Unavailable(format!("no HTTP client: {e}")))?;
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            let name = HeaderName::try_from(name.as_str())
                .map_err(|_| ClientError::Protocol(format!("`{name}` is not a header name")))?;
            let value = HeaderValue::try_from(value.as_str()).map_err(|_| {
                ClientError::Protocol(format!("the value of `{name}` is not a header value"))
            })?;
            map.insert(name, value);
        }
        Ok(HttpWire {
            endpoint: Endpoint {
                http,
                url: url.to_owned(),
                headers: map,
                auth: oauth.map(|o| Arc::new(Authorizer::new(o.clone(), url))),
            },
            shared: Arc::new(Shared {
                session: RwLock::new(None),
                version: RwLock::new(None),
                stateless: AtomicBool::new(true),
                inbox,
            }),
            standalone: Mutex::new(None),
        })
    }

    /// The version `initialize` settled on: the session's requests say it (and are no longer
    /// 2026-07-28 requests).
    pub(super) fn set_version(&self, version: ProtocolVersion) {
        *crate::sync::write(&self.shared.version) = Some(version);
        self.shared.stateless.store(false, Ordering::SeqCst);
    }

    /// Whether requests are 2026-07-28's (with its headers) until `initialize` says otherwise.
    pub(super) fn set_stateless(&self, stateless: bool) {
        self.shared.stateless.store(stateless, Ordering::SeqCst);
    }

    /// Sends a message. A request's answer is read by a task of its own (its abort handle is
    /// returned: aborting it closes the request's stream); anything else is sent and done.
    pub(super) async fn send(
        &self,
        out: Outbound<'_>,
    ) -> Result<Option<tokio::task::AbortHandle>, ClientError> {
        let is_initialize = out.method == "initialize";
        let post = Post {
            text: bytes::Bytes::from(out.text),
            method: out.method.to_owned(),
            name: out.name,
            params: out.params,
        };
        let Some(id) = out.id else {
            let response = self.endpoint.send(&self.shared, &post).await?;
            let status = response.status();
            if !status.is_success() {
                let body = body(response).await.unwrap_or_default();
                return Err(not_mcp(
                    status,
                    format!(
                        "HTTP {status}: {}",
                        excerpt(&String::from_utf8_lossy(&body))
                    ),
                ));
            }
            return Ok(None);
        };
        let shared = self.shared.clone();
        let endpoint = self.endpoint.clone();
        let task = tokio::spawn(async move {
            if let Err(e) = answer(&shared, &endpoint, &post, id, is_initialize).await {
                // The waiting request hears of it as an error from the transport.
                let (code, message, data) = match e {
                    ClientError::Unauthorized(why) => (
                        UNAUTHORIZED,
                        why.message().to_owned(),
                        why.answer().to_data(),
                    ),
                    e => (TRANSPORT, e.to_string(), Value::Null),
                };
                let text = serde_json::json!({
                    "jsonrpc": "2.0",
                    "id": id,
                    "error": { "code": code, "message": message, "data": data }
                })
                .to_string();
                let _ = shared.inbox.send(Inbound::message(text, Some(id)));
            }
        });
        Ok(Some(task.abort_handle()))
    }

    /// After `initialize`: the GET stream of messages that belong to no request, reopened
    /// (from the last event) when it ends. Returns once the server has answered the first GET
    /// (at most 5 s): a server that sends a request on that stream right after the handshake
    /// (one not tied to a call) must find it open.
    pub(super) async fn open_standalone_stream(&self) {
        let shared = self.shared.clone();
        let resume = self.endpoint.clone();
        let (opened, first) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let mut opened = Some(opened);
            let mut events = Events::new(MAX_MESSAGE);
            let mut backoff = Duration::from_millis(200);
            loop {
                let request = resume.get(&shared, &events);
                let response = request.send().await;
                if let Some(opened) = opened.take() {
                    let _ = opened.send(());
                }
                match response {
                    Ok(response) if response.status().is_success() => {
                        backoff = Duration::from_millis(200);
                        let _ = read_events(&shared, response, None, &mut events).await;
                    }
                    // No GET stream here (405), or no session any more (404).
                    Ok(response)
                        if response.status().as_u16() == 405
                            || response.status().as_u16() == 404 =>
                    {
                        return;
                    }
                    Ok(_) | Err(_) => {}
                }
                if shared.inbox.is_closed() {
                    return;
                }
                tokio::time::sleep(events.retry.unwrap_or(backoff)).await;
                backoff = (backoff * 2).min(Duration::from_secs(30));
            }
        });
        *lock(&self.standalone) = Some(task.abort_handle());
        let _ = tokio::time::timeout(Duration::from_secs(5), first).await;
    }

    /// Ends the session: the GET stream stopped, DELETE sent.
    pub(super) async fn close(&self) {
        if let Some(task) = lock(&self.standalone).take() {
            task.abort();
        }
        let session = crate::sync::read(&self.shared.session).clone();
        if let Some(session) = session {
            let endpoint = &self.endpoint;
            let _ = endpoint
                .http
                .delete(&endpoint.url)
                .headers(endpoint.headers_with("DELETE", endpoint.held().as_deref()))
                .header(SESSION, session)
                .send()
                .await;
        }
    }
}

/// Redirects followed within the server's origin only (at most 10): every request of the wire
/// may carry the configured headers, a token and a message, which go to this server and no
/// other. A redirect elsewhere is not followed; the request fails naming where it led.
fn same_origin_only() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let from = attempt.previous().first().map(reqwest::Url::origin);
        if attempt.previous().len() > 10 {
            attempt.error("more than 10 redirects")
        } else if from.as_ref() == Some(&attempt.url().origin()) {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

/// The error of a response that redirects (elsewhere: a redirect within the origin was
/// followed), if it does.
fn redirected(url: &str, response: &reqwest::Response) -> Option<ClientError> {
    if !response.status().is_redirection() {
        return None;
    }
    let to = response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|l| l.to_str().ok())
        .and_then(|l| response.url().join(l).ok())
        .map_or_else(
            || "nowhere".to_owned(),
            |u| u.origin().ascii_serialization(),
        );
    Some(ClientError::Unavailable(format!(
        "`{url}` redirected (HTTP {}) to another origin, `{to}`: not followed, since the request carries this server's headers, token and message",
        response.status().as_u16()
    )))
}

fn unavailable(e: reqwest::Error) -> ClientError {
    ClientError::Unavailable(e.to_string())
}

/// Where the wire's requests go, and how: its HTTP client (its pool and settings), its
/// address and headers, and its authorization flow when it has one.
#[derive(Clone)]
struct Endpoint {
    http: reqwest::Client,
    url: String,
    headers: HeaderMap,
    auth: Option<Arc<Authorizer>>,
}

/// A message to POST: its text, and what the 2026-07-28 headers say of it.
struct Post {
    /// Shared, not copied, by the attempts an authorization flow makes.
    text: bytes::Bytes,
    method: String,
    name: Option<String>,
    params: Vec<(String, String)>,
}

impl Endpoint {
    /// The wire's headers, with `Authorization: Bearer token` (marked sensitive) in place of
    /// any set by hand when the flow has a token: one header, one token. A token bound to the
    /// connection's DPoP key goes as `Authorization: DPoP token`, with a fresh proof for this
    /// `method` request in `DPoP` (RFC 9449 §7.1).
    fn headers_with(&self, method: &str, token: Option<&str>) -> HeaderMap {
        let mut headers = self.headers.clone();
        let Some(token) = token else {
            return headers;
        };
        let proof = match self
            .auth
            .as_ref()
            .map(|a| a.proof(method, &self.url, token))
        {
            Some(Ok(proof)) => proof,
            Some(Err(e)) => {
                tracing::warn!(error = %e, "no DPoP proof could be made");
                None
            }
            None => None,
        };
        let scheme = if proof.is_some() { "DPoP" } else { "Bearer" };
        if let Ok(mut value) = HeaderValue::try_from(format!("{scheme} {token}")) {
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        if let Some(proof) = proof
            && let Ok(value) = HeaderValue::try_from(proof)
        {
            headers.insert(HeaderName::from_static("dpop"), value);
        }
        headers
    }

    /// The token held now, if any (for a GET or a DELETE, which start no flow).
    fn held(&self) -> Option<String> {
        self.auth.as_ref().and_then(|a| a.held())
    }

    fn post(&self, shared: &Shared, post: &Post, token: Option<&str>) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .post(&self.url)
            .headers(self.headers_with("POST", token))
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .body(post.text.clone());
        let method = post.method.as_str();
        let stateless = shared.stateless.load(Ordering::SeqCst) && method != "initialize";
        if stateless && !method.is_empty() {
            request = request
                .header("MCP-Protocol-Version", "2026-07-28")
                .header("Mcp-Method", method);
            if let Some(name) = &post.name {
                request = request.header("Mcp-Name", header_text(name));
            }
            for (header, value) in &post.params {
                request = request.header(format!("Mcp-Param-{header}"), value.as_str());
            }
        } else {
            request = shared.session_headers(request);
        }
        request
    }

    /// POSTs `post`, with the flow's token when there is a flow: a 401 starts the flow (at
    /// most [`AUTHORIZATIONS`] times for one message) and a 403 `insufficient_scope` asks for
    /// more scopes (at most the flow's step-up limit), each followed by the message again.
    async fn send(&self, shared: &Shared, post: &Post) -> Result<reqwest::Response, ClientError> {
        let Some(auth) = &self.auth else {
            let response = self
                .post(shared, post, None)
                .send()
                .await
                .map_err(unavailable)?;
            return match redirected(&self.url, &response) {
                Some(e) => Err(e),
                None => Ok(response),
            };
        };
        let mut authorizations = 0;
        let mut step_ups = 0;
        let mut nonce_taken = false;
        loop {
            let token = auth.token().await?;
            let response = self
                .post(shared, post, token.as_deref())
                .send()
                .await
                .map_err(unavailable)?;
            if let Some(e) = redirected(&self.url, &response) {
                return Err(e);
            }
            let challenge = response
                .headers()
                .get(WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            match response.status().as_u16() {
                // The server wants its nonce in the proof (RFC 9449 §9): once more with it.
                401 if !nonce_taken
                    && wants_dpop_nonce(response.headers())
                    && response
                        .headers()
                        .get("dpop-nonce")
                        .and_then(|v| v.to_str().ok())
                        .is_some_and(|nonce| auth.dpop_nonce(&self.url, nonce)) =>
                {
                    nonce_taken = true;
                }
                401 => {
                    if authorizations == AUTHORIZATIONS {
                        return Err(ClientError::Unauthorized(AuthFailure::new(
                            format!(
                                "the server refused {AUTHORIZATIONS} fresh authorizations in a row (HTTP 401)"
                            ),
                            AuthAnswer::ServerRefused { status: 401 },
                        )));
                    }
                    authorizations += 1;
                    auth.unauthorized(challenge.as_deref(), token.as_deref())
                        .await?;
                }
                403 if challenge.as_deref().is_some_and(insufficient_scope) => {
                    let limit = auth.step_up_limit();
                    if step_ups >= limit {
                        return Err(ClientError::Unauthorized(AuthFailure::new(
                            format!(
                                "the server still wants more scopes after {limit} step-ups (HTTP 403 insufficient_scope)"
                            ),
                            AuthAnswer::ServerRefused { status: 403 },
                        )));
                    }
                    step_ups += 1;
                    let challenge = challenge.unwrap_or_default();
                    auth.insufficient_scope(&challenge, token.as_deref())
                        .await?;
                }
                _ => return Ok(response),
            }
        }
    }

    /// A GET of the stream `events` reads, from the event after its last.
    fn get(&self, shared: &Shared, events: &Events) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .get(&self.url)
            .headers(self.headers_with("GET", self.held().as_deref()))
            .header(ACCEPT, "text/event-stream");
        request = shared.session_headers(request);
        if let Some(id) = &events.last_id {
            request = request.header("Last-Event-ID", id.as_str());
        }
        request
    }
}

/// Sends a request and feeds its answer (JSON, or the events of an SSE stream, resumed when
/// broken) to the client.
async fn answer(
    shared: &Shared,
    endpoint: &Endpoint,
    post: &Post,
    id: u64,
    is_initialize: bool,
) -> Result<(), ClientError> {
    let response = endpoint.send(shared, post).await?;
    let status = response.status();
    if is_initialize
        && let Some(session) = response
            .headers()
            .get(SESSION)
            .and_then(|v| v.to_str().ok())
    {
        *crate::sync::write(&shared.session) = Some(session.to_owned());
    }
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if content_type.starts_with("text/event-stream") {
        let mut events = Events::new(MAX_MESSAGE);
        let mut answered = read_events(shared, response, Some(id), &mut events).await?;
        let mut tries = 0;
        while !answered && events.last_id.is_some() && tries < RESUMES {
            tries += 1;
            // The server's `retry:` when it gave one (SEP-1699), else a growing pause.
            let pause = events
                .retry
                .unwrap_or(Duration::from_millis(100 * tries as u64));
            tokio::time::sleep(pause).await;
            match endpoint.get(shared, &events).send().await {
                Ok(r) if r.status().is_success() => {
                    events.reconnected();
                    answered = read_events(shared, r, Some(id), &mut events).await?;
                }
                _ => {}
            }
        }
        if answered {
            Ok(())
        } else {
            Err(ClientError::Unavailable(
                "the answer's stream ended before the answer".into(),
            ))
        }
    } else {
        // JSON: the answer, or an error the server put in the body (any status).
        let body = String::from_utf8(body(response).await?).map_err(|_| {
            not_mcp(
                status,
                format!("HTTP {status} with a body that is not UTF-8"),
            )
        })?;
        let envelope: Envelope<'_> = serde_json::from_str(&body).map_err(|_| {
            not_mcp(
                status,
                format!(
                    "HTTP {status} with a body that is not JSON: {}",
                    excerpt(&body)
                ),
            )
        })?;
        if envelope.jsonrpc.is_none() {
            return Err(not_mcp(
                status,
                format!("HTTP {status}: {}", excerpt(&body)),
            ));
        }
        // A refusal before the request was read (a session gone, a bad header) names no id.
        let text = if envelope.id.is_none_or(|id| id.get() == "null") {
            let mut fixed: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            fixed["id"] = Value::from(id);
            fixed.to_string()
        } else {
            body
        };
        let _ = shared.inbox.send(Inbound::message(text, Some(id)));
        Ok(())
    }
}

/// The error of an answer with HTTP `status` that holds no JSON-RPC message (`message` says
/// what it holds): the server refusing the credentials it was sent (401, 403: a token just
/// obtained, or the configured ones), else an answer that is not MCP.
fn not_mcp(status: reqwest::StatusCode, message: String) -> ClientError {
    match status.as_u16() {
        status @ (401 | 403) => ClientError::Unauthorized(AuthFailure::new(
            message,
            AuthAnswer::ServerRefused { status },
        )),
        _ => ClientError::Protocol(message),
    }
}

/// What the JSON answer's check reads of it (the client reads the rest).
#[derive(serde::Deserialize)]
struct Envelope<'a> {
    jsonrpc: Option<serde::de::IgnoredAny>,
    #[serde(borrow)]
    id: Option<&'a serde_json::value::RawValue>,
}

/// A response's body, refused beyond [`MAX_MESSAGE`] (before it is read when the server
/// says its length, else as soon as it passes the limit).
async fn body(response: reqwest::Response) -> Result<Vec<u8>, ClientError> {
    let too_large = |bytes: u64| {
        ClientError::Protocol(format!(
            "the server sent a message of {bytes} bytes or more, over the limit of {MAX_MESSAGE}"
        ))
    };
    if let Some(length) = response.content_length()
        && length > MAX_MESSAGE as u64
    {
        return Err(too_large(length));
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(unavailable)?;
        if body.len() + chunk.len() > MAX_MESSAGE {
            return Err(too_large((body.len() + chunk.len()) as u64));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The start of a body quoted in an error (at most 512 bytes, cut at a character).
fn excerpt(body: &str) -> &str {
    let mut end = body.len().min(512);
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    &body[..end]
}

/// Feeds the events of an SSE response to the client (tagged with `via`); returns whether the
/// answer to request `via` was among them. `events` keeps the last event id and the server's
/// `retry:` across reconnections. An event over the size limit fails a request's stream (its
/// answer may have been it); the standalone stream skips it.
async fn read_events(
    shared: &Shared,
    response: reqwest::Response,
    via: Option<u64>,
    events: &mut Events,
) -> Result<bool, ClientError> {
    let mut stream = response.bytes_stream();
    let mut answered = false;
    let mut too_large = None;
    while let Some(chunk) = stream.next().await {
        let Ok(chunk) = chunk else { break };
        events.feed(&chunk, &mut |event| match event {
            Event::Data(text) => {
                if let Some(want) = via
                    && is_answer_to(&text, want)
                {
                    answered = true;
                }
                let _ = shared.inbox.send(Inbound::message(text, via));
            }
            Event::TooLarge(bytes) => {
                tracing::warn!(
                    bytes,
                    limit = MAX_MESSAGE,
                    "the server sent an event over the limit"
                );
                too_large = Some(bytes);
            }
        });
        if let (Some(bytes), Some(_)) = (too_large, via) {
            return Err(ClientError::Protocol(format!(
                "the server sent a message of {bytes} bytes or more, over the limit of {MAX_MESSAGE}"
            )));
        }
        if answered {
            return Ok(true);
        }
    }
    Ok(answered)
}

/// Whether an event's message is the answer (not a request of the server's) to request `want`.
fn is_answer_to(text: &str, want: u64) -> bool {
    #[derive(serde::Deserialize)]
    struct Head<'a> {
        #[serde(borrow)]
        id: Option<&'a serde_json::value::RawValue>,
        method: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_str::<Head<'_>>(text)
        .is_ok_and(|h| h.method.is_none() && h.id.is_some_and(|id| id.get() == want.to_string()))
}

/// Whether a 403's challenge says the token lacks scopes.
/// Whether a 401's challenges ask for a DPoP proof with the server's nonce (a `DPoP`
/// challenge with `error="use_dpop_nonce"`, RFC 9449 §9), whichever of them says it.
fn wants_dpop_nonce(headers: &HeaderMap) -> bool {
    headers
        .get_all(WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| crate::protocol::oauth::Challenge::parse_scheme(v, &["dpop"]))
        .any(|c| c.get("error") == Some(crate::protocol::oauth::dpop::USE_NONCE))
}

fn insufficient_scope(challenge: &str) -> bool {
    crate::protocol::oauth::Challenge::parse(challenge)
        .is_some_and(|c| c.get("error") == Some("insufficient_scope"))
}
