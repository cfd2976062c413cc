//! The environment variables a server binary reads: the name of each, what it configures and
//! the format of its value. The command line of [`Server::run`](crate::server::Server::run)
//! reads them, and nothing else does: a server built and served by the library's own calls
//! takes its settings from the builder only. `help` lists them.
//!
//! Beside these, a server binary follows the variables of the tools it is built on:
//! `RUST_LOG` filters its log on stderr, and with the feature `otel` the standard
//! `OTEL_EXPORTER_OTLP_*`, `OTEL_SERVICE_NAME`, … configure the export of its traces.

/// Bearer tokens the HTTP endpoint (`--http`) requires, when the server configured no
/// authenticator of its own: comma-separated `subject:token` entries, the subject letters,
/// digits and `._@-`, the token everything after the first colon (colons included), visible
/// ASCII (`BearerTokens::parse`). Such a token is granted no scopes; write
/// `subject[users:read users:write]:token` to grant the scopes that tools declaring them need.
/// A list that does not fit stops the binary, naming the entry. Feature `http`.
pub const BEARER_TOKENS: &str = "MCP_TOOL_BEARER_TOKENS";

/// The HTTP endpoint's public URL (`https://…/mcp`), announced in the RFC 9728
/// protected-resource metadata and in every `WWW-Authenticate` challenge. Without it, an
/// endpoint with tokens announces the URL it listens on. Feature `http`.
pub const RESOURCE: &str = "MCP_TOOL_RESOURCE";

/// The authorization servers that issue the HTTP endpoint's tokens, for the RFC 9728
/// metadata: comma-separated URLs. Feature `http`.
pub const AUTHORIZATION_SERVERS: &str = "MCP_TOOL_AUTHORIZATION_SERVERS";

/// The scopes the HTTP endpoint understands, for the RFC 9728 metadata: comma-separated.
/// Feature `http`.
pub const SCOPES: &str = "MCP_TOOL_SCOPES";

/// The scopes a client may start with, named by the HTTP endpoint's `401` challenge
/// (`scope=`, RFC 6750 §3): separated by commas or spaces. Without it, the scopes the
/// read-only tools declare: a client asks for reading first, and steps up when a call's
/// `403` names more (`HttpConfig::initial_scopes`). Feature `http`.
pub const OAUTH_INITIAL_SCOPES: &str = "MCP_TOOL_OAUTH_INITIAL_SCOPES";

/// The OAuth authorization server whose access tokens the HTTP endpoint accepts (feature
/// `oauth`): its issuer URL, exactly as its tokens and metadata name it. Its metadata is
/// discovered and its keys fetched from it; the tokens must be issued for this server's
/// resource URL ([`RESOURCE`], or [`OAUTH_AUDIENCE`]). Not together with [`BEARER_TOKENS`].
pub const OAUTH_ISSUER: &str = "MCP_TOOL_OAUTH_ISSUER";

/// The audience the endpoint's access tokens must name, when it is not the resource URL.
/// Feature `oauth`.
pub const OAUTH_AUDIENCE: &str = "MCP_TOOL_OAUTH_AUDIENCE";

/// The server's own client id at the authorization server, to check opaque tokens by
/// introspection (with [`OAUTH_CLIENT_SECRET`]). Feature `oauth`.
pub const OAUTH_CLIENT_ID: &str = "MCP_TOOL_OAUTH_CLIENT_ID";

/// The server's client secret for introspection. Never logged. Feature `oauth`.
pub const OAUTH_CLIENT_SECRET: &str = "MCP_TOOL_OAUTH_CLIENT_SECRET";

/// The introspection endpoint, when the authorization server's metadata names none (or
/// another should be used). Feature `oauth`.
pub const OAUTH_INTROSPECTION: &str = "MCP_TOOL_OAUTH_INTROSPECTION";

/// The leeway on a token's `exp` and `nbf` (`30s`, `2m`; at most 5 minutes). Default `30s`.
/// Feature `oauth`.
pub const OAUTH_LEEWAY: &str = "MCP_TOOL_OAUTH_LEEWAY";

/// The longest an introspection answer is kept (`30s`, `5m`; never past the token's `exp`).
/// Default `5m`. Feature `oauth`.
pub const OAUTH_CACHE_CEILING: &str = "MCP_TOOL_OAUTH_CACHE_CEILING";

/// Whether the endpoint takes DPoP-bound access tokens (RFC 9449): `off` (the default),
/// `allowed` (bearer tokens too; a bound token sent as a bearer token is refused), or
/// `required` (DPoP only). Replicas sharing state ([`SHARED_STATE`]) share the proofs seen,
/// so a proof replayed to another replica is refused there too. Feature `oauth`.
pub const OAUTH_DPOP: &str = "MCP_TOOL_OAUTH_DPOP";

/// `1` or `true` asks DPoP clients for server nonces (RFC 9449 §9), a new one every 5
/// minutes, made from [`STATE_KEY`] (so that replicas agree; without it, each process makes
/// its own). Feature `oauth`.
pub const OAUTH_DPOP_NONCES: &str = "MCP_TOOL_OAUTH_DPOP_NONCES";

/// Where tasks are kept: `memory` (the default), or a Redis URL (`redis://host:port/db`,
/// `redis+unix:///path`, `rediss://…` for TLS; feature `redis`) shared by replicas.
/// `--task-store URL` on the command line wins.
pub const TASK_STORE: &str = "MCP_TOOL_TASK_STORE";

/// How long a running task's server vouches for it (`30s`, `500ms`, `2m`: a whole number and
/// a unit): a task whose server died is reported failed this long after. Default `30s`.
pub const TASK_LEASE: &str = "MCP_TOOL_TASK_LEASE";

/// Where the events of resumable SSE streams are kept (`--http`): `memory` (the default), or
/// a Redis URL shared by replicas (feature `redis`).
pub const EVENT_STORE: &str = "MCP_TOOL_EVENT_STORE";

/// The bounds of the in-memory event store (`--http`), any of them left out keeping its
/// default: `events=4096,bytes=16MiB,age=5m,per_stream=1024` (in all, in all, after a
/// stream's last event, per stream).
pub const EVENT_STORE_BOUNDS: &str = "MCP_TOOL_EVENT_STORE_BOUNDS";

/// The key sealing the state of stateless (2026-07-28) requests that need input: at least
/// 32 bytes, written as hex or base64. Give every replica the same; without it, each process
/// draws its own, and a retry that reaches another one is refused. Several keys separated by
/// commas rotate it: the first seals, every one opens (`Server::state_keys`).
pub const STATE_KEY: &str = "MCP_TOOL_STATE_KEY";

/// Where the replicas of a server share sessions and change notifications: `memory` or a
/// Redis URL (feature `redis`). `--shared-state URL` on the command line wins.
pub const SHARED_STATE: &str = "MCP_TOOL_SHARED_STATE";

/// `1` or `true` checks every structured result against its tool's output schema in
/// release builds too, as debug builds always do ([`Server::validate_output`]). Any other
/// value leaves it off.
///
/// [`Server::validate_output`]: crate::server::Server::validate_output
pub const VALIDATE_OUTPUT: &str = "MCP_TOOL_VALIDATE_OUTPUT";

/// `1` or `true` converts the arguments models send as the wrong JSON type (`"3"` for an
/// integer, `"true"` for a boolean, JSON text for an array or an object) before validation,
/// for every tool without a `coerce` setting of its own ([`Server::coerce_arguments`]). Any
/// other value leaves validation strict.
///
/// [`Server::coerce_arguments`]: crate::server::Server::coerce_arguments
pub const COERCE_ARGUMENTS: &str = "MCP_TOOL_COERCE_ARGUMENTS";

/// Tool calls per principal ([`RateLimit`]): `100/1m` (calls, `/`, a duration), and
/// `,tool=5/1s` for a tool of its own (`search=5/1s` alone limits that tool only). A value
/// that does not fit stops the binary, naming it.
///
/// [`RateLimit`]: crate::server::middleware::RateLimit
pub const RATE_LIMIT: &str = "MCP_TOOL_RATE_LIMIT";

/// `1` or `true` masks internal errors of tool calls ([`MaskErrors`]): the model reads a
/// generic message with an id, the log the details under that id.
///
/// [`MaskErrors`]: crate::server::middleware::MaskErrors
pub const MASK_ERRORS: &str = "MCP_TOOL_MASK_ERRORS";

/// The largest tool result, its JSON in bytes ([`ResultBudget`]): `65536`, `64KiB`, `1MiB`
/// (also `KB`/`MB`, counted as 1,000s). A larger result is cut, and kept whole as a resource
/// for 10 minutes.
///
/// [`ResultBudget`]: crate::server::middleware::ResultBudget
pub const RESULT_BUDGET: &str = "MCP_TOOL_RESULT_BUDGET";

/// `1` or `true` logs one line per tool call ([`Audit`], target `mcp_tool::audit`).
///
/// [`Audit`]: crate::server::middleware::Audit
pub const AUDIT: &str = "MCP_TOOL_AUDIT";

/// The most connections one address may hold (`HttpConfig::max_connections_per_address`,
/// default 512); behind a reverse proxy, where every client has the proxy's address, raise it
/// to the connection limit (1024).
pub const CONNECTIONS_PER_ADDRESS: &str = "MCP_TOOL_CONNECTIONS_PER_ADDRESS";

/// The reverse proxies whose `Forwarded` / `X-Forwarded-For` headers name the client a
/// request counts for (`HttpConfig::trusted_proxies`): addresses and CIDR blocks separated by
/// commas, such as `10.0.0.0/8,127.0.0.254`. A list that does not fit stops the binary,
/// naming the entry.
pub const TRUSTED_PROXIES: &str = "MCP_TOOL_TRUSTED_PROXIES";

/// CORS for clients that run in a browser (`HttpConfig::cors_origins`): the origins,
/// separated by commas (`https://app.example,https://other.example`, or `*`). `*` lets any
/// web page call the server: it is taken only with credentials required (`BEARER_TOKENS` or
/// `OAUTH_ISSUER`), and refused at start without.
pub const CORS_ORIGINS: &str = "MCP_TOOL_CORS_ORIGINS";

/// The connection store of mounted servers: the path of a JSON file mapping a connection id
/// (a mount's `project_connection_id` or `connector_id`) to
/// `{"server_url", "authorization", "headers"}`, so that no secret sits in the mount file
/// (`Server::connection_store`). Feature `client`.
pub const CONNECTIONS: &str = "MCP_TOOL_CONNECTIONS";

/// How long the first `tools/list` or `tools/call` waits for the mounted servers to list
/// their tools (`Server::mount_wait`; a duration such as `5s` or `500ms`; default 5 s).
/// Feature `client`.
pub const MOUNT_WAIT: &str = "MCP_TOOL_MOUNT_WAIT";

/// Whether a gateway serving stdio opens the sign-in page of a per-user mount with the
/// desktop's browser (`1` or `true`; `Server::open_sign_in_browser`), besides printing it on
/// stderr. Feature `client`.
pub const OPEN_BROWSER: &str = "MCP_TOOL_OPEN_BROWSER";

/// The threads a server binary runs on, as `--threads N` (which wins): `1` runs every
/// connection, session and call on one thread (a current-thread runtime, the least CPU per
/// call); `N` > 1 over HTTP N current-thread runtimes, each on a thread of its own serving its
/// share of the connections, and over stdio a multi-thread runtime with N workers. Without
/// either, one thread when the process may use one CPU (`taskset`, a cgroup quota), else one
/// per CPU. At most 1024. Synchronous tools that may block run on the blocking pool either way.
pub const THREADS: &str = "MCP_TOOL_THREADS";
