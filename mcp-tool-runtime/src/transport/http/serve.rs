//! The accept loop of [`ServerHandle::serve_http`](crate::server::ServerHandle::serve_http):
//! HTTP/1.1 connections (served by [`wire`], and by hyper from the first request of an
//! uncommon shape) with a deadline for each request's head (which also closes a kept-alive
//! connection idle between requests), bounded in number and per address; then a graceful
//! shutdown. The listener is a TCP one, or (Unix) a socket file for hosts on
//! the same machine, whose connections have no address to share by.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use axum::Router;
use axum::response::Response;
use futures_util::FutureExt as _;
use futures_util::future::{Either, NeverError};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::runtime::Handle;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

use crate::sync::lock;
use crate::transport::http::access::forwarded::TrustedProxies;
use crate::transport::http::endpoint::Endpoint;
use crate::transport::http::head::{Peer, Source};
use crate::transport::http::post::post;

mod placement;
mod wire;

pub(super) use placement::Placement;

/// The longest request body read whole before its handler is called, at most (a longer one,
/// or one longer than the endpoint's limit, streams to its handler through hyper, which can
/// refuse it before it comes).
pub(super) const MAX_WHOLE_BODY: usize = 256 * 1024;

/// What the accept loop needs from the configuration.
pub(super) struct Bounds {
    pub(super) header_timeout: Duration,
    pub(super) body_timeout: Duration,
    /// The longest request body read whole before its handler runs (a longer one streams).
    pub(super) max_body: usize,
    pub(super) max_connections: usize,
    pub(super) max_per_address: usize,
    /// The proxies whose forwarding headers name the client (their own connections are not
    /// counted per address: every client behind them shares it).
    pub(super) trusted: Arc<TrustedProxies>,
    /// The runtimes the connections are shared between: this one and
    /// [`HttpConfig::with_connection_runtimes`](super::HttpConfig::with_connection_runtimes)'s.
    pub(super) placement: Arc<Placement>,
}

/// Where connections come from: a TCP listener, or a Unix socket.
pub(super) trait Listen: Send + 'static {
    type Io: AsyncRead + AsyncWrite + Unpin + Send + 'static;

    /// The next connection, and the address it comes from (none over a Unix socket).
    fn next(&self) -> impl Future<Output = io::Result<(Self::Io, Option<SocketAddr>)>> + Send;

    /// Readies a connection to be served.
    fn tune(_io: &Self::Io) {}

    /// Tells a refused connection why, if that can be done without waiting.
    fn refuse(_io: &Self::Io) {}

    /// The connection moved to the reactor of `home`, the runtime that will serve it.
    fn rehome(io: Self::Io, home: &Handle) -> io::Result<Self::Io>;
}

impl Listen for TcpListener {
    type Io = tokio::net::TcpStream;

    async fn next(&self) -> io::Result<(Self::Io, Option<SocketAddr>)> {
        self.accept().await.map(|(io, peer)| (io, Some(peer)))
    }

    fn tune(io: &Self::Io) {
        // Responses (SSE events especially) go out in several writes: without TCP_NODELAY,
        // Nagle's algorithm holds each one back for about 40 ms.
        if let Err(e) = io.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
    }

    fn refuse(io: &Self::Io) {
        let _ = io.try_write(
            b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
        );
    }

    fn rehome(io: Self::Io, home: &Handle) -> io::Result<Self::Io> {
        let io = io.into_std()?;
        let _entered = home.enter();
        Self::Io::from_std(io)
    }
}

#[cfg(unix)]
impl Listen for tokio::net::UnixListener {
    type Io = tokio::net::UnixStream;

    async fn next(&self) -> io::Result<(Self::Io, Option<SocketAddr>)> {
        self.accept().await.map(|(io, _)| (io, None))
    }

    fn rehome(io: Self::Io, home: &Handle) -> io::Result<Self::Io> {
        let io = io.into_std()?;
        let _entered = home.enter();
        Self::Io::from_std(io)
    }
}

/// How many connections each address holds.
#[derive(Default)]
struct PerAddress(Mutex<HashMap<IpAddr, usize>>);

impl PerAddress {
    /// Counts a connection from `ip`, unless it holds `max` already.
    fn take(self: &Arc<Self>, ip: IpAddr, max: usize) -> Option<AddressSlot> {
        let mut held = lock(&self.0);
        let n = held.entry(ip).or_default();
        if *n >= max {
            return None;
        }
        *n += 1;
        Some(AddressSlot {
            counts: self.clone(),
            ip,
        })
    }
}

/// One connection's place in its address's count, given back when it closes.
struct AddressSlot {
    counts: Arc<PerAddress>,
    ip: IpAddr,
}

impl Drop for AddressSlot {
    fn drop(&mut self) {
        let mut held = lock(&self.counts.0);
        if let Some(n) = held.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                held.remove(&self.ip);
            }
        }
    }
}

/// The endpoint whose POSTs skip the router (see [`WithPeer`]): its path, and its state.
#[derive(Clone)]
pub(super) struct Direct {
    pub(super) path: Arc<str>,
    pub(super) endpoint: Arc<Endpoint>,
}

/// The router, with each request told the address it comes from (per-client shares): the
/// connection's, or behind a trusted proxy the one its forwarding headers name. A POST
/// to the endpoint's path — every MCP message — goes straight to its handler (`direct`,
/// when no layer wraps the routes), with hyper's body as it came: the router would hand the
/// same request to the same handler, after matching its path, boxing its body and going
/// through three boxed services of its own. Served to hyper as its own service: one for the
/// connection, called by reference (tower's adapter clones the service for each request).
///
/// The handler (`post`, the function `P` is) is a type parameter so that its future can be
/// named: hyper keeps each request's future in one allocation of the connection's, where a
/// boxed one would be allocated (a few kilobytes) and freed for every request.
#[derive(Clone)]
struct WithPeer<P> {
    router: Router,
    peer: Option<Peer>,
    trusted: Arc<TrustedProxies>,
    direct: Option<Direct>,
    post: P,
}

impl<P> WithPeer<P> {
    /// The same service, its endpoint's POSTs handled by `post`.
    fn with_post<Q>(&self, post: Q) -> WithPeer<Q> {
        WithPeer {
            router: self.router.clone(),
            peer: self.peer,
            trusted: self.trusted.clone(),
            direct: self.direct.clone(),
            post,
        }
    }
}

type RouterFuture = <Router as tower_service::Service<axum::http::Request<Incoming>>>::Future;

impl<P, F, B> hyper::service::Service<axum::http::Request<B>> for WithPeer<P>
where
    P: Fn(Arc<Endpoint>, axum::http::Request<B>, Option<Source>) -> F,
    F: Future<Output = Response>,
    Router: tower_service::Service<
            axum::http::Request<B>,
            Response = Response,
            Error = Infallible,
            Future = RouterFuture,
        >,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<RouterFuture, NeverError<F>>;

    fn call(&self, mut request: axum::http::Request<B>) -> Self::Future {
        // Only a Unix socket's connections come without an address.
        let source = match self.peer {
            Some(Peer(peer)) => Source::Peer(Peer(self.trusted.client(peer, request.headers()))),
            None => Source::Local,
        };
        if let Some(direct) = &self.direct
            && request.method() == axum::http::Method::POST
            && request.uri().path() == &*direct.path
        {
            // Marked by the handler, if it needs to know: most requests do not.
            let endpoint = direct.endpoint.clone();
            return Either::Right((self.post)(endpoint, request, Some(source)).never_error());
        }
        source.mark(request.extensions_mut());
        // axum's router is always ready (its `poll_ready` returns at once): no readiness to
        // wait for before calling a clone of it (a reference count).
        Either::Left(tower_service::Service::call(
            &mut self.router.clone(),
            request,
        ))
    }
}

/// The clock hyper times a connection's request heads with (its `header_read_timeout`): one
/// deadline per head, from when hyper starts waiting for it, as tokio's own timer gives; but
/// one tokio timer for the whole connection, an alarm set once and moved only when it rings
/// before the deadline of the head then awaited. A head that comes in time (most come within
/// a millisecond) costs a look at the alarm, not a timer registered and taken out again.
#[derive(Clone, Default)]
struct HeadClock(Arc<Mutex<Alarm>>);

/// A connection's one alarm.
#[derive(Default)]
struct Alarm {
    /// The timer, once a head was awaited, and when it rings (not moved since).
    timer: Option<(Pin<Box<tokio::time::Sleep>>, Instant)>,
    /// Who the timer wakes (the connection's task).
    wakes: Option<Waker>,
}

/// The deadline of one request's head.
struct HeadDeadline {
    alarm: Arc<Mutex<Alarm>>,
    deadline: Instant,
}

impl hyper::rt::Timer for HeadClock {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        self.sleep_until(self.now() + duration)
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(HeadDeadline {
            alarm: self.0.clone(),
            deadline,
        })
    }

    fn now(&self) -> Instant {
        tokio::time::Instant::now().into_std()
    }
}

impl Future for HeadDeadline {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let deadline = self.deadline;
        let mut alarm = lock(&self.alarm);
        let Alarm { timer, wakes } = &mut *alarm;
        if let Some((sleep, rings)) = timer
            && *rings <= deadline
            && !sleep.is_elapsed()
            && wakes.as_ref().is_some_and(|w| w.will_wake(cx.waker()))
        {
            // It will wake this task no later than the deadline: looked at again then.
            return Poll::Pending;
        }
        loop {
            let (sleep, rings) = timer.get_or_insert_with(|| {
                (
                    Box::pin(tokio::time::sleep_until(deadline.into())),
                    deadline,
                )
            });
            if sleep.is_elapsed() || *rings > deadline {
                if tokio::time::Instant::now().into_std() >= deadline {
                    return Poll::Ready(());
                }
                // Rung for an earlier head's deadline (or set for a later one): moved to this one.
                sleep.as_mut().reset(deadline.into());
                *rings = deadline;
            }
            if sleep.as_mut().poll(cx).is_pending() {
                *wakes = Some(cx.waker().clone());
                return Poll::Pending;
            }
        }
    }
}

impl hyper::rt::Sleep for HeadDeadline {}

/// What serving one connection takes, wherever it is served: it moves, between two
/// requests, to the runtime [`Placement`] says, with its slots among the connections.
struct Connection<P> {
    /// Its requests' service; `P` is the endpoint's POST handler (`post`), named by its type.
    service: WithPeer<P>,
    http1: hyper::server::conn::http1::Builder,
    wire: wire::Bounds,
    stop: watch::Receiver<bool>,
    placement: Arc<Placement>,
    /// Given back when the connection ends.
    _slots: (OwnedSemaphorePermit, Option<AddressSlot>),
}

impl<P, F> Connection<P>
where
    P: Fn(Arc<Endpoint>, axum::http::Request<wire::Whole>, Option<Source>) -> F
        + Copy
        + Send
        + Sync
        + 'static,
    F: Future<Output = Response> + Send + 'static,
{
    /// Serves `io` on the runtime numbered `at` (the one this runs on) until it ends, or
    /// until it moves to another runtime, where it goes on.
    fn serve<L: Listen>(self, io: L::Io, at: usize) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        Box::pin(async move {
            let hyper_service = self.service.with_post(post::<Incoming>);
            let mut http1 = self.http1.clone();
            let mut hyper_stop = self.stop.clone();
            let hand_off = |io| async move {
                // Each connection its own clock for its heads' deadlines.
                let connection = http1
                    .timer(HeadClock::default())
                    .serve_connection(TokioIo::new(io), hyper_service);
                let mut connection = std::pin::pin!(connection);
                let served = tokio::select! {
                    served = connection.as_mut() => served,
                    () = async { drop(hyper_stop.wait_for(|s| *s).await) } => {
                        connection.as_mut().graceful_shutdown();
                        connection.await
                    }
                };
                if let Err(e) = served {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
            };
            let placement = self.placement.clone();
            let moving = || placement.moving(at);
            let service = self.service.clone();
            let served = wire::serve(io, service, hand_off, self.wire, self.stop.clone(), moving);
            match served.await {
                Some((io, to)) => self.start::<L>(io, at, to),
                None => self.placement.left(at),
            }
        })
    }

    /// Serves `io`, registered with the reactor of the runtime numbered `from` (the accept
    /// loop's is 0), on the runtime numbered `to` (counted there already): its socket moved to
    /// that runtime's reactor first when the two differ.
    fn start<L: Listen>(self, io: L::Io, from: usize, to: usize) {
        let home = self.placement.handle(to).clone();
        let io = match from == to {
            true => io,
            false => match L::rehome(io, &home) {
                Ok(io) => io,
                Err(e) => {
                    self.placement.left(to);
                    tracing::warn!(error = %e, "a connection could not be moved to its thread");
                    return;
                }
            },
        };
        drop(home.spawn(self.serve::<L>(io, to)));
    }
}

/// Serves `router` on `listener` until `stop` says so; then stops accepting and waits (at most
/// `grace`) for the connections to finish their requests.
pub(super) async fn accept_loop<L: Listen>(
    listener: L,
    (router, direct): (Router, Option<Direct>),
    bounds: Bounds,
    mut stop: watch::Receiver<bool>,
    grace: Duration,
) -> io::Result<()> {
    let mut http1 = hyper::server::conn::http1::Builder::new();
    http1
        .header_read_timeout(bounds.header_timeout)
        .keep_alive(true)
        // An answer's head and body go out in one write, the body copied after the head
        // (a small JSON answer's is): not queued as a buffer of its own for a vectored write.
        .writev(false);
    let wire = wire::Bounds {
        header_timeout: bounds.header_timeout,
        body_timeout: bounds.body_timeout,
        max_body: bounds.max_body,
    };
    let slots = Arc::new(Semaphore::new(bounds.max_connections.max(1)));
    let per_address = Arc::new(PerAddress::default());
    let mut full_said = false;
    let placement = bounds.placement.clone();
    let mut address_said: Option<IpAddr> = None;
    loop {
        let permit = match slots.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                if !full_said {
                    tracing::warn!(
                        max = bounds.max_connections,
                        "as many connections as allowed: new ones wait until one closes"
                    );
                    full_said = true;
                }
                tokio::select! {
                    p = slots.clone().acquire_owned() => match p {
                        Ok(p) => p,
                        Err(_) => break,
                    },
                    _ = stop.wait_for(|s| *s) => break,
                }
            }
        };
        let accepted = tokio::select! {
            a = listener.next() => a,
            _ = stop.wait_for(|s| *s) => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors, or a connection reset before it was accepted: wait a
                // moment rather than spin.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        full_said = false;
        let address_slot = match peer {
            Some(peer) if bounds.trusted.contains(peer.ip()) => None,
            Some(peer) => {
                let Some(slot) = per_address.take(peer.ip(), bounds.max_per_address.max(1)) else {
                    if address_said != Some(peer.ip()) {
                        tracing::warn!(
                            address = %peer.ip(),
                            max = bounds.max_per_address,
                            "a connection was refused: its address holds as many as one address may"
                        );
                        address_said = Some(peer.ip());
                    }
                    // Told why if it can be without waiting; closed either way.
                    L::refuse(&stream);
                    continue;
                };
                Some(slot)
            }
            None => None,
        };
        L::tune(&stream);
        let connection = Connection {
            // Each request knows the address it comes from (per-client shares): served
            // here, or by hyper once a request of an uncommon shape comes.
            service: WithPeer {
                router: router.clone(),
                peer: peer.map(Peer),
                trusted: bounds.trusted.clone(),
                direct: direct.clone(),
                post: post::<wire::Whole>,
            },
            http1: http1.clone(),
            wire,
            stop: stop.clone(),
            placement: placement.clone(),
            _slots: (permit, address_slot),
        };
        connection.start::<L>(stream, 0, placement.place());
    }
    drop(listener);
    // Every connection holds a slot until it ends: all of them back, all ended.
    let all = u32::try_from(bounds.max_connections.max(1)).unwrap_or(u32::MAX);
    if tokio::time::timeout(grace, slots.acquire_many(all))
        .await
        .is_err()
    {
        tracing::warn!("connections still open after the shutdown grace period were dropped");
    }
    Ok(())
}

#[cfg(test)]
mod tests;
