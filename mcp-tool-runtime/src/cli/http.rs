//! `--http` (feature `http`): the Streamable HTTP endpoint as the command line and the
//! environment configure it — the address, the event store, bearer tokens, the RFC 9728
//! metadata, the state replicas share.

use std::io::{self, Write};

use super::{HttpOptions, cli_error, env, init_tracing};
use crate::server::{Result, Server};
use crate::transport::http::streams::events::event_store_with_bounds;
use crate::transport::http::{BearerTokens, HttpConfig, OpenApi, ResourceMetadata, TrustedProxies};

/// Serves Streamable HTTP as the command line and the environment say; returns the exit status.
pub(super) async fn serve_http(server: Server, bin: &str, options: HttpOptions) -> Result<i32> {
    let at = match address(options.addr.as_deref().unwrap_or("127.0.0.1:8080")) {
        Ok(at) => at,
        Err(why) => return Ok(cli_error(bin, &why)),
    };
    init_tracing();
    let mut config = match config_from_environment(&server, &options) {
        Ok(config) => config,
        Err(why) => return Ok(cli_error(bin, &why)),
    };
    // The operator's choice of shared state: the flag, else the environment.
    let shared = options.shared_state.or_else(|| {
        std::env::var(env::SHARED_STATE)
            .ok()
            .filter(|v| !v.trim().is_empty())
    });
    let mut server = server;
    let mut shared_store = None;
    if let Some(url) = shared {
        match crate::server::replicas::replica_store_from_url(&url) {
            Ok(store) => {
                shared_store = Some(store.clone());
                server = server.replica_store_arc(store);
            }
            Err(e) => return Ok(cli_error(bin, &e.to_string())),
        }
    }
    config = config.with_connection_runtimes(options.other_threads);
    let server = server.build()?;
    let listener = at.bind().await?;
    if let Err(why) = resource_metadata(&mut config, &listener, shared_store) {
        return Ok(cli_error(bin, &why));
    }
    if config.any_origin_unauthenticated() {
        return Ok(cli_error(
            bin,
            &format!(
                "{}: `*` would let any web page a user opens call this server, which takes no credentials; list the origins of its browser clients (such as https://app.example), or require credentials ({} or {})",
                env::CORS_ORIGINS,
                env::BEARER_TOKENS,
                env::OAUTH_ISSUER
            ),
        ));
    }
    // Always said (stdout is not the protocol here): where to point a client, with the real
    // port when the address asked for port 0.
    let _ = writeln!(
        io::stderr(),
        "{bin}: MCP endpoint {}{}{}",
        listener.origin(),
        config.path,
        listener.socket_note()
    );
    match listener {
        Listening::Tcp(listener) => server.serve_http(listener, config).await?,
        #[cfg(unix)]
        Listening::Unix(listener, _) => server.serve_http_unix(listener, config).await?,
    }
    Ok(0)
}

/// Where to listen: `text` as a socket address, or `unix:PATH`.
fn address(text: &str) -> std::result::Result<At, String> {
    match text.strip_prefix("unix:") {
        Some(path) if cfg!(unix) && !path.is_empty() => Ok(At::Unix(path.into())),
        _ => text
            .parse::<std::net::SocketAddr>()
            .map(At::Tcp)
            .map_err(|_| {
                format!(
                    "`{text}` is not an address such as 127.0.0.1:8080 (or unix:/path/to/socket)"
                )
            }),
    }
}

/// The endpoint's settings from the command line and the environment: connections per
/// address, trusted proxies, CORS origins, the event store, bearer tokens.
fn config_from_environment(
    server: &Server,
    options: &HttpOptions,
) -> std::result::Result<HttpConfig, String> {
    let mut config = HttpConfig {
        sessionless: options.sessionless,
        sse_responses: options.sse,
        // The server's own grace for calls at shutdown, as over stdio.
        shutdown_grace: server.limits.shutdown_grace,
        openapi: options.openapi.then(OpenApi::default),
        ..HttpConfig::default()
    };
    if let Ok(text) = std::env::var(env::CONNECTIONS_PER_ADDRESS) {
        match text.trim().parse::<usize>() {
            Ok(n) if n > 0 => config.max_connections_per_address = n,
            _ => {
                return Err(format!(
                    "{}: `{text}` is not a number of connections (such as 1024)",
                    env::CONNECTIONS_PER_ADDRESS
                ));
            }
        }
    }
    if let Ok(text) = std::env::var(env::TRUSTED_PROXIES) {
        match TrustedProxies::parse(&text) {
            Ok(proxies) => config.trusted_proxies = proxies,
            Err(e) => return Err(format!("{}: {e}", env::TRUSTED_PROXIES)),
        }
    }
    if let Ok(text) = std::env::var(env::CORS_ORIGINS) {
        let origins: Vec<String> = text
            .split(',')
            .map(str::trim)
            .filter(|o| !o.is_empty())
            .map(str::to_owned)
            .collect();
        if let Some(bad) = origins
            .iter()
            .find(|o| *o != "*" && !o.starts_with("https://") && !o.starts_with("http://"))
        {
            return Err(format!(
                "{}: `{bad}` is not an origin such as https://app.example",
                env::CORS_ORIGINS
            ));
        }
        if !origins.is_empty() {
            config.cors_origins = Some(origins);
        }
    }
    // Where resumable streams' events are kept: memory unless the environment names Redis.
    let url = std::env::var(env::EVENT_STORE).unwrap_or_default();
    let bounds = std::env::var(env::EVENT_STORE_BOUNDS).unwrap_or_default();
    if !url.trim().is_empty() || !bounds.trim().is_empty() {
        config.event_store = event_store_with_bounds(&url, &bounds)?;
    }
    if let Ok(text) = std::env::var(env::BEARER_TOKENS) {
        match BearerTokens::parse(&text) {
            Ok(tokens) if tokens.is_empty() => {}
            Ok(tokens) => config = config.with_auth(tokens),
            Err(e) => return Err(format!("{}: {e}", env::BEARER_TOKENS)),
        }
    }
    Ok(config)
}

/// RFC 9728 metadata: what a client needs to find the authorization server, and the OAuth
/// verifier of `MCP_TOOL_OAUTH_ISSUER`. Given by the environment; with tokens but no public
/// URL, the URL this server listens on.
fn resource_metadata(
    config: &mut HttpConfig,
    listener: &Listening,
    shared_store: Option<std::sync::Arc<dyn crate::server::replicas::ReplicaStore>>,
) -> std::result::Result<(), String> {
    let public = std::env::var(env::RESOURCE)
        .ok()
        .filter(|v| !v.trim().is_empty());
    let servers = std::env::var(env::AUTHORIZATION_SERVERS)
        .ok()
        .filter(|v| !v.trim().is_empty());
    let issuer = std::env::var(env::OAUTH_ISSUER)
        .ok()
        .filter(|v| !v.trim().is_empty());
    if issuer.is_some() && config.auth.is_some() {
        return Err(format!(
            "{} and {} are both set: the endpoint takes OAuth access tokens or static ones, not both",
            env::OAUTH_ISSUER,
            env::BEARER_TOKENS
        ));
    }
    if config.auth.is_none() && public.is_none() && servers.is_none() && issuer.is_none() {
        return Ok(());
    }
    let resource = public.unwrap_or_else(|| format!("{}{}", listener.origin(), config.path));
    if !resource.starts_with("http://") && !resource.starts_with("https://") {
        return Err(format!(
            "{}=`{resource}` is not an http(s) URL",
            env::RESOURCE
        ));
    }
    let list = |v: Option<String>| -> Vec<String> {
        v.map(|v| {
            v.split(',')
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default()
    };
    let mut authorization_servers = list(servers);
    if let Some(issuer) = &issuer {
        if authorization_servers.is_empty() {
            authorization_servers.push(issuer.clone());
        }
        config.auth = Some(oauth::from_environment(issuer, &resource, shared_store)?);
    }
    if let Ok(text) = std::env::var(env::OAUTH_INITIAL_SCOPES)
        && !text.trim().is_empty()
    {
        let scopes: Vec<String> = text
            .split(|c: char| c == ',' || c.is_ascii_whitespace())
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        if let Some(bad) = scopes
            .iter()
            .find(|s| crate::transport::http::scope_value(std::slice::from_ref(*s)).is_empty())
        {
            return Err(format!(
                "{}: `{bad}` is not a scope (printable ASCII, without a quote or a backslash)",
                env::OAUTH_INITIAL_SCOPES
            ));
        }
        config.initial_scopes = Some(scopes);
    }
    config.resource_metadata = Some(ResourceMetadata {
        resource,
        authorization_servers,
        scopes_supported: list(std::env::var(env::SCOPES).ok()),
    });
    Ok(())
}

/// `openapi`: prints the document `--http --openapi` serves, its security as the environment
/// configures the endpoint's (bearer tokens, or OAuth with its public URL and authorization
/// servers).
pub(super) fn print_openapi(server: Server, bin: &str) -> Result<i32> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let mut config = HttpConfig {
        openapi: Some(OpenApi::default()),
        ..HttpConfig::default()
    };
    if let Some(text) = var(env::BEARER_TOKENS) {
        match BearerTokens::parse(&text) {
            Ok(tokens) if tokens.is_empty() => {}
            Ok(tokens) => config = config.with_auth(tokens),
            Err(e) => return Ok(cli_error(bin, &format!("{}: {e}", env::BEARER_TOKENS))),
        }
    }
    let issuer = var(env::OAUTH_ISSUER);
    if let Some(resource) = var(env::RESOURCE).filter(|_| config.auth.is_some() || issuer.is_some())
    {
        let mut authorization_servers: Vec<String> = var(env::AUTHORIZATION_SERVERS)
            .map(|v| {
                v.split(',')
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        if let Some(issuer) = &issuer
            && authorization_servers.is_empty()
        {
            authorization_servers.push(issuer.clone());
        }
        config.resource_metadata = Some(ResourceMetadata {
            resource,
            authorization_servers,
            scopes_supported: Vec::new(),
        });
    }
    if issuer.is_some() && config.auth.is_none() {
        // The document needs to know the endpoint takes tokens, not how it checks them.
        config = config.with_auth(BearerTokens::new());
    }
    let document = server.build()?.openapi_document(&config);
    let text = serde_json::to_string_pretty(&document).map_err(io::Error::other)?;
    writeln!(io::stdout(), "{text}")?;
    Ok(0)
}

/// Where `--http` serves: a TCP address, or (`unix:PATH`) a Unix socket file.
enum At {
    Tcp(std::net::SocketAddr),
    #[cfg_attr(not(unix), allow(dead_code))]
    Unix(std::path::PathBuf),
}

/// A listener bound where `--http` said.
enum Listening {
    Tcp(tokio::net::TcpListener),
    #[cfg(unix)]
    Unix(tokio::net::UnixListener, std::path::PathBuf),
}

impl At {
    async fn bind(self) -> io::Result<Listening> {
        match self {
            At::Tcp(addr) => tokio::net::TcpListener::bind(addr)
                .await
                .map(Listening::Tcp)
                .map_err(|e| io::Error::new(e.kind(), format!("cannot listen on {addr}: {e}"))),
            #[cfg(unix)]
            At::Unix(path) => {
                use std::os::unix::fs::FileTypeExt;
                // A socket file left by an earlier run is replaced; one a server still listens
                // on is not (connecting tells them apart), nor is any other file.
                if let Ok(meta) = std::fs::symlink_metadata(&path) {
                    if !meta.file_type().is_socket() {
                        return Err(io::Error::new(
                            io::ErrorKind::AlreadyExists,
                            format!(
                                "cannot listen on {}: it is a file, not a socket",
                                path.display()
                            ),
                        ));
                    }
                    let connect = tokio::net::UnixStream::connect(&path);
                    let answered = tokio::time::timeout(std::time::Duration::from_secs(5), connect)
                        .await
                        .unwrap_or_else(|_| Err(io::ErrorKind::TimedOut.into()));
                    match answered {
                        Ok(_) => {
                            return Err(io::Error::new(
                                io::ErrorKind::AddrInUse,
                                format!(
                                    "cannot listen on {}: a server is listening there already (stop it, or choose another path)",
                                    path.display()
                                ),
                            ));
                        }
                        // Nobody listens: the file is what a stopped server left.
                        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                            let _ = std::fs::remove_file(&path);
                        }
                        Err(e) => {
                            return Err(io::Error::new(
                                e.kind(),
                                format!(
                                    "cannot listen on {}: cannot tell whether a server listens there ({e}); it is left as it is",
                                    path.display()
                                ),
                            ));
                        }
                    }
                }
                tokio::net::UnixListener::bind(&path)
                    .map(|l| Listening::Unix(l, path.clone()))
                    .map_err(|e| {
                        io::Error::new(
                            e.kind(),
                            format!("cannot listen on {}: {e}", path.display()),
                        )
                    })
            }
            #[cfg(not(unix))]
            At::Unix(_) => Err(io::Error::other("Unix sockets exist only on Unix")),
        }
    }
}

impl Listening {
    /// The URL origin a client names (a Unix socket's requests say `localhost`).
    fn origin(&self) -> String {
        match self {
            Listening::Tcp(l) => l
                .local_addr()
                .map_or_else(|_| "http://127.0.0.1".to_owned(), |a| format!("http://{a}")),
            #[cfg(unix)]
            Listening::Unix(..) => "http://localhost".to_owned(),
        }
    }

    /// Where the socket is, for a Unix socket.
    fn socket_note(&self) -> String {
        match self {
            Listening::Tcp(_) => String::new(),
            #[cfg(unix)]
            Listening::Unix(_, path) => format!(" on the Unix socket {}", path.display()),
        }
    }
}

/// The OAuth verifier the environment configures (feature `oauth`).
#[cfg(feature = "oauth")]
mod oauth {
    use std::sync::Arc;

    use super::env;
    use crate::server::replicas::ReplicaStore;
    use crate::server::tasks::parse_duration;
    use crate::transport::http::{Authenticator, DpopMode, OAuthVerifier};

    /// The verifier of `issuer`'s tokens for `resource` (or the configured audience); DPoP
    /// proofs seen are shared through `shared`, when replicas share state.
    pub(super) fn from_environment(
        issuer: &str,
        resource: &str,
        shared: Option<Arc<dyn ReplicaStore>>,
    ) -> Result<Arc<dyn Authenticator>, String> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let audience = var(env::OAUTH_AUDIENCE).unwrap_or_else(|| resource.to_owned());
        let mut oauth = OAuthVerifier::new(issuer, audience);
        if let Some(text) = var(env::OAUTH_LEEWAY) {
            let leeway = parse_duration(&text).ok_or_else(|| {
                format!(
                    "{}=`{text}` is not a duration such as `30s`",
                    env::OAUTH_LEEWAY
                )
            })?;
            oauth = oauth.leeway(leeway);
        }
        if let Some(text) = var(env::OAUTH_CACHE_CEILING) {
            let ceiling = parse_duration(&text).ok_or_else(|| {
                format!(
                    "{}=`{text}` is not a duration such as `5m`",
                    env::OAUTH_CACHE_CEILING
                )
            })?;
            oauth = oauth.cache_ceiling(ceiling);
        }
        match (var(env::OAUTH_CLIENT_ID), var(env::OAUTH_CLIENT_SECRET)) {
            (Some(id), Some(secret)) => oauth = oauth.introspection(id, secret),
            (None, None) => {}
            _ => {
                return Err(format!(
                    "{} and {} go together (the server's credentials for introspection)",
                    env::OAUTH_CLIENT_ID,
                    env::OAUTH_CLIENT_SECRET
                ));
            }
        }
        if let Some(url) = var(env::OAUTH_INTROSPECTION) {
            oauth = oauth.introspection_endpoint(url);
        }
        if let Some(text) = var(env::OAUTH_DPOP) {
            let mode = DpopMode::parse(&text).ok_or_else(|| {
                format!(
                    "{}=`{text}` is not `off`, `allowed` or `required`",
                    env::OAUTH_DPOP
                )
            })?;
            oauth = oauth.dpop(mode);
        }
        if var(env::OAUTH_DPOP_NONCES).is_some_and(|v| matches!(v.trim(), "1" | "true")) {
            // Replicas agree on nonces made from the request-state key they share; without
            // one, this process's own random key.
            let key = match var(env::STATE_KEY) {
                Some(key) => key.into_bytes(),
                None => {
                    let mut key = vec![0u8; 32];
                    getrandom::fill(&mut key).map_err(|e| format!("no randomness: {e}"))?;
                    key
                }
            };
            oauth = oauth.dpop_nonces(key);
        }
        if let Some(store) = shared {
            oauth = oauth.dpop_replays(store);
        }
        Ok(Arc::new(oauth))
    }
}

/// Without OAuth (the `oauth` feature) a server cannot verify access tokens: setting an
/// issuer says so rather than serve unprotected.
#[cfg(not(feature = "oauth"))]
mod oauth {
    use std::sync::Arc;

    use super::env;
    use crate::transport::http::Authenticator;

    pub(super) fn from_environment(
        _: &str,
        _: &str,
        _: Option<Arc<dyn crate::server::replicas::ReplicaStore>>,
    ) -> Result<Arc<dyn Authenticator>, String> {
        Err(format!(
            "{} is set, but this server was built without OAuth (the `oauth` feature of mcp-tool)",
            env::OAUTH_ISSUER
        ))
    }
}
