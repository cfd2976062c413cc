//! The Streamable HTTP transport (MCP 2025-11-25), secure by default.
//!
//! One endpoint (`/mcp` unless configured): POST carries client messages (a request is
//! answered with JSON, or with an SSE stream when the call sends progress, logs or requests of
//! its own before its result), GET opens the session's stream for messages that belong to no
//! request, DELETE ends the session. Sessions have cryptographically random ids and expire when
//! idle; a sessionless mode answers every POST on its own. Host and Origin are checked (DNS
//! rebinding), bodies are limited, and an [`Authenticator`] (such as [`BearerTokens`]) can
//! guard the endpoint, with RFC 9728 protected-resource metadata.
//!
//! Two entry points, both taking an [`HttpConfig`]: [`ServerHandle::serve_http`] serves on a
//! listener until SIGINT or SIGTERM; [`ServerHandle::into_router`] gives the endpoint as an axum
//! `Router`, to mount in an application beside its own routes.
//!
//! ```no_run
//! use mcp_tool::Server;
//! use mcp_tool::http::{BearerTokens, HttpConfig};
//!
//! # async fn run() -> mcp_tool::Result<()> {
//! let server = Server::new("users", "1.0.0").build()?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! let config = HttpConfig::default().with_auth(BearerTokens::new().token("s3cret", "alice"));
//! server.serve_http(listener, config).await?;
//! # Ok(())
//! # }
//! ```
//!
//! Inside, the imports go one way: `router` wires the handlers (`post`, `get`, `delete`, and
//! `stateless` behind `post`) to the path; the handlers share `endpoint`, the endpoint's state
//! and sessions and the checks every request passes, which uses only the leaves below it
//! (`access` — who may use it: `auth`, the OAuth verifier `oauth`, `cors` —, `config`, `head`
//! — the headers every POST reads, in one pass, and where a request comes from —, `origin`,
//! `refusal`, and `streams`: SSE answers, the resumable streams of `resume` and the
//! `events` they replay).
//!
//! Layer: the top one with stdio; imports `protocol`, `tool` and `server`.

pub(crate) mod access;
mod config;
mod delete;
mod endpoint;
mod get;
mod head;
mod headers;
mod origin;
mod post;
mod refusal;
mod rest;
mod router;
mod serve;
mod session_id;
mod stateless;
pub(crate) mod streams;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::Router;
use tokio::sync::watch;

use crate::server::ServerHandle;

pub use access::auth::{
    AuthError, AuthFuture, Authenticator, BearerTokens, BearerTokensError, DpopMode,
};
pub use access::forwarded::{TrustedProxies, TrustedProxiesError};
#[cfg(feature = "oauth")]
#[cfg_attr(docsrs, doc(cfg(feature = "oauth")))]
pub use access::oauth::OAuthVerifier;
pub use config::{HttpConfig, OpenApi, ResourceMetadata};
pub(crate) use endpoint::scope_value;
pub use rest::status_of_code;
pub use streams::events;

// The module's cfg again, on the impl itself: a crate that re-exports `ServerHandle` (the
// facade) shows the feature of these methods only from their own item's attributes.
#[cfg(feature = "http")]
impl ServerHandle {
    /// The MCP endpoint as an axum `Router` (the endpoint's path, plus the protected-resource
    /// metadata when configured), to serve or to merge into an application
    /// (`app.merge(router)`).
    pub fn into_router(self, config: HttpConfig) -> Router {
        router::build(self, config).0
    }

    /// The OpenAPI 3.1 document of the tools served as REST with `config`
    /// ([`HttpConfig::openapi`]; with none, every tool): what `GET {base}/openapi.json` answers.
    pub fn openapi_document(&self, config: &HttpConfig) -> serde_json::Value {
        let mut config = config.clone();
        config.openapi.get_or_insert_with(OpenApi::default);
        rest::document(self, &config, None)
    }

    /// Serves MCP over Streamable HTTP on a listener bound already (port 0 included: its
    /// `local_addr` says where it listens) until SIGINT or SIGTERM; then refuses new requests,
    /// lets the calls in flight finish (for at most `config.shutdown_grace`) and returns.
    pub async fn serve_http(
        &self,
        listener: tokio::net::TcpListener,
        config: HttpConfig,
    ) -> std::io::Result<()> {
        let addr = listener.local_addr()?;
        let mut config = config;
        if config.allowed_hosts.is_none() && !addr.ip().is_loopback() {
            tracing::warn!(
                %addr,
                "serving on a non-loopback address: every Host is accepted; set `allowed_hosts` to restrict them"
            );
            config.allowed_hosts = Some(vec!["*".into()]);
        }
        tracing::info!(%addr, "serving MCP over HTTP");
        if !addr.ip().is_unspecified() {
            let _ = self.shared.http_origin.set(format!("http://{addr}"));
        }
        self.serve_on(listener, config).await
    }

    /// Serves MCP over Streamable HTTP on a Unix socket bound already, for hosts on the same
    /// machine (only they can reach the socket file, as its permissions allow), as
    /// [`serve_http`](Self::serve_http) does on TCP. Its connections have no address: the
    /// per-address shares do not apply to them (per-subject ones still do).
    #[cfg(unix)]
    #[cfg_attr(docsrs, doc(cfg(unix)))]
    pub async fn serve_http_unix(
        &self,
        listener: tokio::net::UnixListener,
        config: HttpConfig,
    ) -> std::io::Result<()> {
        let path = listener
            .local_addr()?
            .as_pathname()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        tracing::info!(socket = %path, "serving MCP over HTTP on a Unix socket");
        self.serve_on(listener, config).await
    }

    /// Serves on `listener` until SIGINT or SIGTERM, then shuts down gracefully.
    async fn serve_on<L: serve::Listen>(
        &self,
        listener: L,
        config: HttpConfig,
    ) -> std::io::Result<()> {
        if config.any_origin_unauthenticated() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "{} (HttpConfig::with_auth)",
                    config::ANY_ORIGIN_UNAUTHENTICATED
                ),
            ));
        }
        self.start_mounts();
        let grace = config.shutdown_grace;
        let bounds = serve::Bounds {
            header_timeout: config.header_timeout,
            body_timeout: config.body_timeout,
            max_body: config.body_limit.min(serve::MAX_WHOLE_BODY),
            max_connections: config.max_connections,
            max_per_address: config.max_connections_per_address,
            trusted: Arc::new(config.trusted_proxies.clone()),
            placement: serve::Placement::new(config.connection_runtimes.clone()),
        };
        // Without a layer around the routes, the endpoint's POSTs skip the router.
        let path = config.cors_origins.is_none().then(|| config.path.clone());
        let (router, endpoint) = router::build(self.clone(), config);
        let direct = path.map(|path| serve::Direct {
            path: path.into(),
            endpoint: endpoint.clone(),
        });
        let (stop_tx, stop_rx) = watch::channel(false);
        if bounds.placement.len() > 1 {
            // The runtimes in use follow the CPUs other processes leave over.
            tokio::spawn(bounds.placement.clone().follow(stop_rx.clone()));
        }
        let signal_endpoint = endpoint.clone();
        let server = self.clone();
        tokio::spawn(async move {
            shutdown_signal().await;
            tracing::info!("shutting down: refusing new requests, finishing calls in flight");
            server.close_subscriptions();
            signal_endpoint.shutting_down.store(true, Ordering::SeqCst);
            let _ = signal_endpoint.shutdown.send(true);
            let _ = stop_tx.send(true);
        });
        serve::accept_loop(listener, (router, direct), bounds, stop_rx, grace).await
    }
}

/// Completes on SIGINT or SIGTERM.
pub(crate) async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
