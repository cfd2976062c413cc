//! Resumable SSE streams of 2025-11-25 sessions: every event has an id naming its stream, the
//! stream opens with a priming event (an id, empty data, and `retry:`), and a client whose
//! connection broke — or that the server let go (polling, [`Ctx::close_stream`]) — gets the
//! events it missed with a GET carrying `Last-Event-ID`, then the rest of the stream.
//!
//! Each stream has a writer task that outlives the connection: it takes the session's
//! messages for the stream, appends each to the [`EventStore`] and then hands it to the
//! connection following the stream, if any. A resume registers as the follower first and
//! reads the store second, so that no event falls between the two; events it gets twice are
//! told apart by number. A stream whose writer is on another replica (a shared store) is
//! followed by reading the store.
//!
//! [`Ctx::close_stream`]: crate::tool::Ctx::close_stream

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use axum::http::header::{HeaderMap, HeaderName};
use axum::response::Response;
use sha2::{Digest, Sha256};
use tokio::sync::{mpsc, watch};

use crate::protocol::{ProtocolVersion, RpcError, code, jsonrpc};
use crate::server::core::session::Outgoing;
use crate::sync::lock;
use crate::tool::Identity;

use crate::transport::http::refusal::{Refusal, refuse};
use crate::transport::http::streams::events::{
    EventStore, StreamKeys, event_id, hex, is_stream_key, parse_event_id,
};
use crate::transport::http::streams::sse;

const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// How often a stream that is not written here is read again from a shared store.
const POLL: Duration = Duration::from_millis(100);

/// The resumable streams of one endpoint: where their events are kept, and the writers
/// running in this process, by stream key.
pub(crate) struct Streams {
    store: Arc<dyn EventStore>,
    retry: Duration,
    /// What comes between a whole answer's stream key and the key again: the end of its
    /// priming event's id, its `retry:` and its empty data, and the start of its message's id.
    primed: String,
    /// `None` without system randomness: then no stream is resumable.
    keys: Option<StreamKeys>,
    taps: Mutex<HashMap<Arc<str>, Arc<Tap>>>,
}

/// A stream's writer as its followers see it: whose stream it is, and where the next event
/// goes.
#[derive(Default)]
pub(crate) struct Tap {
    owner: String,
    state: Mutex<TapState>,
}

#[derive(Default)]
struct TapState {
    follower: Option<mpsc::UnboundedSender<Live>>,
    /// The writer ended: nothing more comes through the tap.
    closed: bool,
}

/// What a writer hands its follower.
enum Live {
    Event(u64, String),
    /// Let the connection go (polling): the client resumes with `Last-Event-ID`.
    Close,
}

impl Tap {
    /// Follows the stream from now on, replacing the previous follower (whose connection
    /// ends); `None` once the writer ended.
    fn follow(&self) -> Option<mpsc::UnboundedReceiver<Live>> {
        let mut state = lock(&self.state);
        if state.closed {
            return None;
        }
        let (tx, rx) = mpsc::unbounded_channel();
        state.follower = Some(tx);
        Some(rx)
    }

    /// Whether a connection follows the stream.
    pub(crate) fn connected(&self) -> bool {
        lock(&self.state)
            .follower
            .as_ref()
            .is_some_and(|f| !f.is_closed())
    }

    fn send(&self, live: Live) {
        let mut state = lock(&self.state);
        let close = matches!(live, Live::Close);
        if let Some(f) = &state.follower
            && (f.send(live).is_err() || close)
        {
            state.follower = None;
        }
    }

    fn close(&self) {
        let mut state = lock(&self.state);
        state.closed = true;
        state.follower = None;
    }
}

/// A new stream, before its writer runs: its key, its owner, its tap, and the first
/// follower's channel.
pub(crate) struct NewStream {
    key: Arc<str>,
    owner: String,
    pub(crate) tap: Arc<Tap>,
    live: mpsc::UnboundedReceiver<Live>,
}

impl Streams {
    pub(crate) fn new(store: Arc<dyn EventStore>, retry: Duration) -> Self {
        Streams {
            store,
            retry,
            primed: format!(".0\nretry: {}\ndata: \n\nid: ", retry.as_millis()),
            keys: StreamKeys::new(),
            taps: Mutex::new(HashMap::new()),
        }
    }

    /// Whether the events are kept where every replica reads them.
    pub(crate) fn shared(&self) -> bool {
        self.store.shared()
    }

    /// A new stream of `owner` with its first follower (`None` without system randomness).
    pub(crate) fn create(&self, owner: String) -> Option<NewStream> {
        let key: Arc<str> = self.keys.as_ref()?.make().into();
        let tap = Arc::new(Tap {
            owner: owner.clone(),
            state: Mutex::default(),
        });
        let live = tap.follow()?;
        lock(&self.taps).insert(key.clone(), tap.clone());
        Some(NewStream {
            key,
            owner,
            tap,
            live,
        })
    }

    /// Answers a request of a 2025-11-25 session (`request`: its id): JSON when its response
    /// is its first message (unless `sse`) — the store is not touched — otherwise a
    /// resumable stream of everything that belongs to it, ending with the response.
    pub(crate) async fn respond(
        self: &Arc<Self>,
        mut rx: sse::Messages,
        sse: bool,
        request: &str,
        owner: &str,
    ) -> Response {
        let first = rx.recv().await;
        let plain = match &first {
            None => true,
            Some(m) => m.is_response && (m.text.is_empty() || !sse),
        };
        if plain {
            return sse::respond_as(first, rx, sse, |_| StatusCode::OK, Some(request)).await;
        }
        if let Some(only) = first.as_ref().filter(|m| m.is_response)
            && let Some(key) = self.keep_whole(owner, &only.text).await
        {
            // The whole answer at once (`sse`): kept, and sent, without a writer.
            return sse::sse_response(Body::from(self.whole(&key, &only.text)));
        }
        let Some(stream) = self.create(owner.to_owned()) else {
            return sse::respond_as(first, rx, sse, |_| StatusCode::OK, Some(request)).await;
        };
        let ended = jsonrpc::error_response(
            request,
            &RpcError::new(
                code::INTERNAL_ERROR,
                "the session ended before the request was answered",
            ),
        );
        self.serve(stream, rx, first, Some(ended), None).await
    }

    /// Keeps a whole answer and names its stream: the store names it, or else a key of ours
    /// names it (`None` without system randomness: the answer is sent without a stream).
    async fn keep_whole(&self, owner: &str, text: &str) -> Option<String> {
        match self.store.keep_answer(owner, text).await {
            Ok(Some(key)) if is_stream_key(&key) => return Some(key),
            Ok(Some(_)) => {
                // A resume could not name it: the answer goes to a stream of ours instead.
                tracing::warn!("the event store named an answer's stream with no stream key");
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(error = %e, "an event of a resumable stream was not recorded");
                return self.keys.as_ref().map(StreamKeys::make);
            }
        }
        let key = self.keys.as_ref()?.make();
        if let Err(e) = self.store.append(&key, owner, 1, text, true).await {
            tracing::warn!(error = %e, "an event of a resumable stream was not recorded");
        }
        Some(key)
    }

    /// The body of a stream sent whole: its priming event, then its one message.
    fn whole(&self, key: &str, text: &str) -> String {
        const MESSAGE: &str = ".1\nevent: message\ndata: ";
        let mut body = String::with_capacity(
            "id: ".len() + 2 * key.len() + self.primed.len() + MESSAGE.len() + text.len() + 2,
        );
        for part in ["id: ", key, &self.primed, key, MESSAGE, text, "\n\n"] {
            body.push_str(part);
        }
        body
    }

    /// Opens the stream in the store, starts its writer (`first`: a message taken already;
    /// `ended`: the last event if the session goes first) and answers with the priming event
    /// and whatever the writer hands on. `shutdown` ends the connection (the GET stream).
    pub(crate) async fn serve(
        self: &Arc<Self>,
        stream: NewStream,
        rx: sse::Messages,
        first: Option<Outgoing>,
        ended: Option<String>,
        shutdown: Option<watch::Receiver<bool>>,
    ) -> Response {
        let NewStream {
            key,
            owner,
            tap,
            live,
        } = stream;
        if let Err(e) = self.store.open(&key, &owner).await {
            // The stream goes on; only a resume of it will be refused.
            tracing::warn!(error = %e, "a resumable stream could not be recorded");
        }
        tokio::spawn(
            self.clone()
                .write(key.clone(), owner, tap, rx, first, ended),
        );
        let priming = format!(
            "id: {}\nretry: {}\ndata: \n\n",
            event_id(&key, 0),
            self.retry.as_millis()
        );
        let follower = Follower {
            key,
            queue: VecDeque::from([Bytes::from(priming)]),
            last: 0,
            end: None,
            live: Some(live),
            poll: None,
            retry: self.retry,
            shutdown,
        };
        sse::sse_response(follower.into_body())
    }

    /// The writer: each message of the stream into the store, then to its follower.
    async fn write(
        self: Arc<Self>,
        key: Arc<str>,
        owner: String,
        tap: Arc<Tap>,
        mut rx: sse::Messages,
        mut first: Option<Outgoing>,
        ended: Option<String>,
    ) {
        let mut seq = 0;
        loop {
            let message = match first.take() {
                Some(m) => Some(m),
                None => rx.recv().await,
            };
            let (text, last) = match message {
                // The session went: a request's stream ends with an error, the GET stream
                // just ends.
                None => match &ended {
                    Some(text) => (text.clone(), true),
                    None => {
                        self.end(&key, seq).await;
                        break;
                    }
                },
                Some(m) if m.text.is_empty() && !m.is_response => {
                    tap.send(Live::Close);
                    continue;
                }
                // Cancelled: the stream ends without a response.
                Some(m) if m.text.is_empty() => {
                    self.end(&key, seq).await;
                    break;
                }
                Some(m) => (m.text, m.is_response),
            };
            seq += 1;
            if let Err(e) = self.store.append(&key, &owner, seq, &text, last).await {
                tracing::warn!(error = %e, "an event of a resumable stream was not recorded");
            }
            tap.send(Live::Event(seq, text));
            if last {
                break;
            }
        }
        tap.close();
        lock(&self.taps).remove(&key);
    }

    async fn end(&self, key: &str, seq: u64) {
        if let Err(e) = self.store.end(key, seq).await {
            tracing::warn!(error = %e, "the end of a resumable stream was not recorded");
        }
    }

    /// Resumes the stream `Last-Event-ID` names after that event: its missed events, then
    /// the rest of it.
    pub(crate) async fn resume(
        self: &Arc<Self>,
        last_event: &str,
        owner: &str,
        shutdown: watch::Receiver<bool>,
    ) -> Result<Response, Refusal> {
        let Some((key, after)) = parse_event_id(last_event) else {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                code::INVALID_REQUEST,
                &format!(
                    "Bad Request: Last-Event-ID `{last_event}` is not an event id of this server"
                ),
            ));
        };
        // Follow first, read the store second: an event written in between comes both ways.
        // (Only the owner's resume may take the stream's connection over.)
        let tap = lock(&self.taps).get(key).cloned();
        let live = tap
            .as_ref()
            .filter(|t| t.owner == owner)
            .and_then(|t| t.follow());
        let gone = |why: &str| {
            refuse(
                StatusCode::GONE,
                code::INVALID_REQUEST,
                &format!("Gone: the events after Last-Event-ID `{last_event}` {why}"),
            )
        };
        let replay = match self.store.replay(key, after).await {
            Ok(Some(r)) if r.owner == owner => r,
            Ok(_) => {
                return Err(gone(
                    "cannot be replayed: its stream is unknown or expired; send the request again",
                ));
            }
            Err(e) => {
                tracing::warn!(error = %e, "a resume could not read the event store");
                return Err(refuse(
                    StatusCode::SERVICE_UNAVAILABLE,
                    code::INTERNAL_ERROR,
                    &format!("Service Unavailable: {e}"),
                ));
            }
        };
        if after < replay.floor {
            return Err(gone(&format!(
                "were dropped (only events after {} are kept); send the request again",
                event_id(key, replay.floor)
            )));
        }
        let mut last = after;
        let mut queue = VecDeque::new();
        for (seq, data) in replay.events {
            if seq > last {
                last = seq;
                queue.push_back(event(key, seq, &data));
            }
        }
        // No writer here: one elsewhere may still add to a shared store.
        let poll = (live.is_none() && replay.end.is_none() && self.store.shared())
            .then(|| self.store.clone());
        let follower = Follower {
            key: key.into(),
            queue,
            last,
            end: replay
                .end
                .or((live.is_none() && poll.is_none()).then_some(last)),
            live,
            poll,
            retry: self.retry,
            shutdown: Some(shutdown),
        };
        Ok(sse::sse_response(follower.into_body()))
    }
}

/// One connection following a stream: what it has yet to send, then live events (or the
/// store's, when the writer is elsewhere).
struct Follower {
    key: Arc<str>,
    queue: VecDeque<Bytes>,
    /// The number of the last event sent.
    last: u64,
    /// The number of the stream's last event, once known.
    end: Option<u64>,
    live: Option<mpsc::UnboundedReceiver<Live>>,
    poll: Option<Arc<dyn EventStore>>,
    retry: Duration,
    shutdown: Option<watch::Receiver<bool>>,
}

impl Follower {
    fn into_body(self) -> Body {
        let stream = futures_util::stream::unfold(self, |mut f| async move {
            let bytes = f.next().await?;
            Some((Ok::<_, std::convert::Infallible>(bytes), f))
        });
        Body::from_stream(stream)
    }

    async fn next(&mut self) -> Option<Bytes> {
        loop {
            if let Some(bytes) = self.queue.pop_front() {
                return Some(bytes);
            }
            if self.end.is_some_and(|end| self.last >= end) {
                return None;
            }
            let shutdown = stopped(&mut self.shutdown);
            if let Some(live) = &mut self.live {
                tokio::select! {
                    received = tokio::time::timeout(sse::KEEP_ALIVE, live.recv()) => {
                        match received {
                            Err(_) => return Some(Bytes::from_static(b": keep-alive\n\n")),
                            Ok(Some(Live::Event(seq, text))) => {
                                if seq > self.last {
                                    self.last = seq;
                                    return Some(event(&self.key, seq, &text));
                                }
                            }
                            Ok(Some(Live::Close)) => {
                                self.end = Some(0);
                                let retry = format!("retry: {}\n\n", self.retry.as_millis());
                                return Some(Bytes::from(retry));
                            }
                            Ok(None) => return None,
                        }
                    }
                    () = shutdown => return None,
                }
            } else if let Some(store) = self.poll.clone() {
                tokio::select! {
                    () = tokio::time::sleep(POLL) => {}
                    () = shutdown => return None,
                }
                let replay = match store.replay(&self.key, self.last).await {
                    Ok(Some(r)) => r,
                    // Expired, or the store failed: nothing more can come.
                    _ => return None,
                };
                for (seq, data) in replay.events {
                    if seq > self.last {
                        self.last = seq;
                        self.queue.push_back(event(&self.key, seq, &data));
                    }
                }
                self.end = replay.end;
            } else {
                return None;
            }
        }
    }
}

/// Completes when the server shuts down, if the connection ends then.
async fn stopped(shutdown: &mut Option<watch::Receiver<bool>>) {
    if let Some(s) = shutdown
        && s.wait_for(|stop| *stop).await.is_ok()
    {
        return;
    }
    std::future::pending().await
}

/// Event `seq` of stream `key`, carrying `data`.
fn event(key: &str, seq: u64, data: &str) -> Bytes {
    let mut event = String::with_capacity(data.len() + key.len() + 48);
    let _ = write!(event, "id: {key}.{seq}\nevent: message\ndata: ");
    event.push_str(data);
    event.push_str("\n\n");
    Bytes::from(event)
}

/// Whether a session's streams are resumable: 2025-11-25 (earlier clients may not expect
/// the priming event; 2026-07-28 has no resumption).
pub(crate) fn resumable(version: ProtocolVersion) -> bool {
    version == ProtocolVersion::V2025_11_25
}

/// Who a stream belongs to, as the store keeps it: a digest of the session id (a secret that
/// is not stored) and the caller's principal, its subject through its client. Not its scopes:
/// the same principal's stepped-up token resumes what its narrower one started.
pub(crate) fn owner_of(session_id: &str, identity: Option<&Identity>) -> String {
    let mut hash = Sha256::new();
    // Each part after its length, so that no two principals give the same bytes.
    let mut part = |text: &str| {
        hash.update((text.len() as u64).to_be_bytes());
        hash.update(text.as_bytes());
    };
    part(session_id);
    part(identity.map_or("", |i| i.subject.as_str()));
    match identity.and_then(|i| i.client_id.as_deref()) {
        Some(client) => {
            part("client");
            part(client);
        }
        None => part(""),
    }
    hex(&hash.finalize())
}

/// The `Last-Event-ID` of a request, if it sent one.
pub(crate) fn last_event_id(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(&LAST_EVENT_ID)
        .map(|v| v.to_str().unwrap_or(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tap_hands_events_to_its_latest_follower_until_it_closes() {
        let tap = Tap::default();
        let mut first = tap.follow().unwrap();
        tap.send(Live::Event(1, "a".into()));
        let mut second = tap.follow().unwrap();
        tap.send(Live::Event(2, "b".into()));
        assert!(matches!(first.try_recv(), Ok(Live::Event(1, _))));
        // Replaced: the first follower's channel ends.
        assert!(first.try_recv().is_err());
        assert!(matches!(second.try_recv(), Ok(Live::Event(2, _))));
        assert!(tap.connected());
        tap.close();
        assert!(!tap.connected());
        assert!(tap.follow().is_none());
    }

    #[test]
    fn a_whole_answer_is_its_priming_event_then_its_message() {
        let streams = Streams::new(
            Arc::new(crate::transport::http::streams::events::MemoryEventStore::new()),
            Duration::from_millis(1500),
        );
        assert_eq!(
            streams.whole("ab12", r#"{"id":1}"#),
            "id: ab12.0\nretry: 1500\ndata: \n\nid: ab12.1\nevent: message\ndata: {\"id\":1}\n\n"
        );
    }

    #[test]
    fn owners_differ_by_session_and_identity() {
        let alice = Identity::new("alice", Vec::<String>::new());
        assert_ne!(owner_of("s1", None), owner_of("s2", None));
        assert_ne!(owner_of("s1", None), owner_of("s1", Some(&alice)));
        assert_eq!(owner_of("s1", Some(&alice)), owner_of("s1", Some(&alice)));
    }

    #[test]
    fn owners_are_principals_whatever_their_scopes() {
        let client = |subject: &str, client: Option<&str>, scopes: &[&str]| Identity {
            client_id: client.map(str::to_owned),
            ..Identity::new(subject, scopes.iter().copied())
        };
        let reader = client("alice", Some("app"), &["read"]);
        let stepped_up = client("alice", Some("app"), &["read", "write"]);
        assert_eq!(
            owner_of("s1", Some(&reader)),
            owner_of("s1", Some(&stepped_up))
        );
        for other in [
            client("alice", Some("other"), &["read"]),
            client("alice", None, &["read"]),
            client("bob", Some("app"), &["read"]),
        ] {
            assert_ne!(owner_of("s1", Some(&reader)), owner_of("s1", Some(&other)));
        }
    }
}
