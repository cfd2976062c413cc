//! The command line every server binary gets from [`Server::run`]: serve MCP on stdio (no
//! arguments) or over Streamable HTTP (`--http`), inspect and try the tools in-process
//! (`list`, `schema`, `call`), write the server into an MCP host's configuration (`install`),
//! or open the MCP Inspector on it (`inspect`).
//!
//! Layer: above the transports; it starts them.

use std::io::{self, Write};

pub mod env;

mod inspect;
mod install;
mod log;
mod runtime;

use log::init_tracing;

#[cfg(feature = "http")]
mod http;

/// Without HTTP (the `http` feature) `--http` says so.
#[cfg(not(feature = "http"))]
mod http {
    use super::{HttpOptions, cli_error};
    use crate::server::{Result, Server};

    pub(super) async fn serve_http(_: Server, bin: &str, _: HttpOptions) -> Result<i32> {
        Ok(cli_error(
            bin,
            "this server was built without HTTP (the `http` feature of mcp-tool)",
        ))
    }

    pub(super) fn print_openapi(_: Server, bin: &str) -> Result<i32> {
        Ok(cli_error(
            bin,
            "this server was built without HTTP (the `http` feature of mcp-tool), so it serves no REST API",
        ))
    }
}

#[cfg(feature = "client")]
mod mount;

/// Without the MCP client (the `client` feature) a server mounts nothing: `--mount` says so,
/// and the connection store is not read.
#[cfg(not(feature = "client"))]
mod mount {
    use crate::server::Server;

    pub(super) fn connection_store(server: Server) -> Result<Server, String> {
        Ok(server)
    }

    pub(super) fn mount_files(_: Server, _: &[String]) -> Result<Server, String> {
        Err("this server was built without mounting (the `client` feature of mcp-tool)".into())
    }
}

#[cfg(feature = "otel")]
mod otel;

/// Without OpenTelemetry (the `otel` feature) nothing is exported, whatever the environment
/// says.
#[cfg(not(feature = "otel"))]
mod otel {
    use tracing_subscriber::layer::Identity;

    /// No exporter is ever installed: there is no value to stop.
    pub(super) enum Telemetry {}

    impl Telemetry {
        pub(super) fn shutdown(self) {
            match self {}
        }
    }

    pub(super) fn install(_: &str) -> Option<Telemetry> {
        None
    }

    pub(super) fn layer() -> Option<Identity> {
        None
    }
}

use serde::Serialize;
use serde_json::Value;

use crate::protocol::ProtocolVersion;
use crate::server::tasks::{parse_duration, store_from_url};
use crate::server::{Result, Server, ServerHandle};
use crate::tool::TaskSupport;

/// The HTTP options the command line gives; ignored without `--http`.
#[derive(Default)]
struct HttpOptions {
    addr: Option<String>,
    sessionless: bool,
    sse: bool,
    /// Where the replicas share sessions and changes (`--shared-state`).
    shared_state: Option<String>,
    /// The tools as a REST API with its OpenAPI document too (`--openapi`).
    openapi: bool,
    /// The runtimes of the other threads that serve connections (`--threads`).
    other_threads: Vec<tokio::runtime::Handle>,
}

/// The settings a command line gives beside its command: the task store (`--task-store`), the
/// files of servers to mount (`--mount`), the runtime's threads (`--threads`).
#[derive(Default)]
struct Settings {
    task_store: Option<String>,
    mounts: Vec<String>,
    threads: Option<String>,
}

/// What a command line asks for.
enum Command {
    Stdio,
    Http(HttpOptions),
    List,
    Schema,
    Call(String, Option<String>),
    OpenApi,
    Install(install::InstallOptions),
    Inspect(inspect::InspectOptions),
    Help,
}

fn usage(bin: &str) -> String {
    format!(
        "usage:
  {bin}                      serve MCP on stdio (what MCP hosts launch)
  {bin} --http [ADDR]        serve MCP over Streamable HTTP at http://ADDR/mcp (default 127.0.0.1:8080;
                            unix:PATH for a Unix socket)
        --sessionless        ... without sessions: every POST answered on its own
        --sse                ... every answer as an SSE stream, not JSON
        --openapi            ... and the tools as REST: POST /tools/NAME, GET /openapi.json
        --task-store URL     keep tasks in `memory` (the default) or Redis (`redis://host:port`)
        --shared-state URL   ... share sessions and change notifications with the other
                             replicas in Redis (`redis://host:port`)
        --mount FILE         mount the remote MCP servers FILE lists (a JSON list of MCPTool objects)
        --threads N          run on N threads; 1: one thread for everything (default: 1 when the
                             process may use one CPU, else one per CPU; over HTTP each thread
                             serves its share of the connections)
  {bin} list                 show the tools
  {bin} call <tool> [json]   call one tool in-process and print its result
  {bin} schema               print the tools/list JSON
  {bin} openapi              print the OpenAPI 3.1 document of the tools as REST (as --openapi
                            serves it; its security from the environment below)
  {bin} install <HOST> [--name NAME] [--env KEY=VALUE]… [--dry-run] [-- ARGS…]
                            add this server (this binary, run with ARGS and the variables given)
                            to the MCP configuration of HOST: claude-desktop, claude-code, cursor
                            or vscode; an entry of the same name is replaced, the file as it was
                            kept as FILE.bak. --env KEY copies KEY's value from here; --name
                            defaults to the server's name; --dry-run shows the change only
  {bin} inspect [OPTIONS…] [-- ARGS…]
                            open the MCP Inspector on this server run with ARGS, through npx
                            (Node.js): {inspector}@{inspector_version}; OPTIONS go to the
                            Inspector, e.g. --cli --method tools/list (its CLI mode) or --tui
  {bin} help                 show this message

environment:
  {tokens:<42}require a bearer token over HTTP
  {resource:<42}the endpoint's public URL (RFC 9728 metadata)
  {servers:<42}the authorization servers that issue its tokens
  {scopes:<42}the scopes the endpoint understands
  {initial:<42}the scopes a client starts with (default: reading)
  {issuer:<42}accept OAuth access tokens of this issuer (feature oauth)
  {audience:<42}the audience they must name (default: the public URL)
  {client_id}, {client_secret}
  {empty:<42}the server's credentials to introspect opaque tokens
  {introspection:<42}the introspection endpoint, if not the metadata's
  {leeway:<42}the leeway on exp and nbf (at most 5m)
  {ceiling:<42}the longest an introspection answer is kept
  {dpop:<42}take DPoP-bound tokens (RFC 9449)
  {dpop_nonces:<42}ask DPoP clients for server nonces
  {store:<42}where tasks are kept (as --task-store)
  {lease:<42}how long a running task's server vouches for it
  {events:<42}where resumable SSE streams' events are kept
  {event_bounds:<42}their bounds in memory (also bytes=16MiB,age=5m)
  {key:<42}the key sealing 2026-07-28 request state (the same on every replica)
  {shared:<42}where replicas share sessions and changes (as --shared-state)
  {validate:<42}check every result against its output schema
  {coerce:<42}convert arguments sent as the wrong JSON type
  {rate:<42}tool calls per client (and `,tool=5/1s` per tool)
  {mask:<42}internal errors reach the model as an id only
  {budget:<42}cut larger results, keep them whole as resources
  {audit:<42}one log line per tool call
  {per_address:<42}connections one address may hold (raise behind a proxy)
  {proxies:<42}believe these proxies' X-Forwarded-For
  {cors:<42}CORS for browser clients from these origins
  {connections:<42}the connection store of --mount's servers (a JSON file)
  {mount_wait:<42}how long the first tools/list waits for the mounts
  {open_browser:<42}open a stdio user's sign-in page in the browser
  {threads:<42}the runtime's threads (as --threads)
  {log:<42}filter the log on stderr",
        tokens = format!("{}=subject:token,…", env::BEARER_TOKENS),
        resource = format!("{}=https://…/mcp", env::RESOURCE),
        servers = format!("{}=https://…", env::AUTHORIZATION_SERVERS),
        scopes = format!("{}=scope,…", env::SCOPES),
        initial = format!("{}=scope,…", env::OAUTH_INITIAL_SCOPES),
        issuer = format!("{}=https://…", env::OAUTH_ISSUER),
        audience = format!("{}=…", env::OAUTH_AUDIENCE),
        client_id = env::OAUTH_CLIENT_ID,
        client_secret = env::OAUTH_CLIENT_SECRET,
        introspection = format!("{}=https://…", env::OAUTH_INTROSPECTION),
        leeway = format!("{}=30s", env::OAUTH_LEEWAY),
        ceiling = format!("{}=5m", env::OAUTH_CACHE_CEILING),
        dpop = format!("{}=off|allowed|required", env::OAUTH_DPOP),
        dpop_nonces = format!("{}=1", env::OAUTH_DPOP_NONCES),
        empty = "",
        store = format!("{}=URL", env::TASK_STORE),
        lease = format!("{}=30s", env::TASK_LEASE),
        events = format!("{}=memory|redis://…", env::EVENT_STORE),
        event_bounds = format!("{}=events=4096", env::EVENT_STORE_BOUNDS),
        key = format!("{}=hex[,older]", env::STATE_KEY),
        shared = format!("{}=URL", env::SHARED_STATE),
        validate = format!("{}=1", env::VALIDATE_OUTPUT),
        coerce = format!("{}=1", env::COERCE_ARGUMENTS),
        rate = format!("{}=100/1m", env::RATE_LIMIT),
        mask = format!("{}=1", env::MASK_ERRORS),
        budget = format!("{}=64KiB", env::RESULT_BUDGET),
        audit = format!("{}=1", env::AUDIT),
        per_address = format!("{}=512", env::CONNECTIONS_PER_ADDRESS),
        proxies = format!("{}=CIDR,…", env::TRUSTED_PROXIES),
        cors = format!("{}=https://…,…", env::CORS_ORIGINS),
        connections = format!("{}=FILE", env::CONNECTIONS),
        mount_wait = format!("{}=5s", env::MOUNT_WAIT),
        open_browser = format!("{}=1", env::OPEN_BROWSER),
        threads = format!("{}=N", env::THREADS),
        log = "RUST_LOG=debug",
        inspector = inspect::INSPECTOR,
        inspector_version = inspect::INSPECTOR_VERSION,
    )
}

/// Reads a command line (without the program name): the command, and the settings beside it.
fn parse(args: &[String]) -> std::result::Result<(Command, Settings), String> {
    // `install` and `inspect` read the rest themselves: after `--` come the server's arguments.
    let (first, rest) = args
        .split_first()
        .map_or(("", &[][..]), |(f, r)| (f.as_str(), r));
    let asks_help = rest
        .iter()
        .take_while(|a| *a != "--")
        .any(|a| a == "-h" || a == "--help");
    match first {
        "install" if asks_help => return Ok((Command::Help, Settings::default())),
        "install" => return Ok((Command::Install(install::parse(rest)?), Settings::default())),
        "inspect" => return Ok((Command::Inspect(inspect::parse(rest)), Settings::default())),
        _ => {}
    }
    let mut settings = Settings::default();
    let mut http = HttpOptions::default();
    let mut wants_http = false;
    let mut rest: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        match arg {
            "--http" => {
                wants_http = true;
                // The address is optional: the next word is one unless it is a flag.
                if let Some(next) = args.get(i + 1).filter(|a| !a.starts_with("--")) {
                    http.addr = Some(next.clone());
                    i += 1;
                }
            }
            "--task-store" => match args.get(i + 1).filter(|a| !a.starts_with("--")) {
                Some(url) => {
                    settings.task_store = Some(url.clone());
                    i += 1;
                }
                None => return Err("`--task-store` needs `memory` or a `redis://` URL".into()),
            },
            "--mount" => match args.get(i + 1).filter(|a| !a.starts_with("--")) {
                Some(file) => {
                    settings.mounts.push(file.clone());
                    i += 1;
                }
                None => return Err("`--mount` needs a file of remote servers (JSON)".into()),
            },
            "--shared-state" => match args.get(i + 1).filter(|a| !a.starts_with("--")) {
                Some(url) => {
                    http.shared_state = Some(url.clone());
                    i += 1;
                }
                None => return Err("`--shared-state` needs a `redis://` URL".into()),
            },
            "--threads" => match args.get(i + 1).filter(|a| !a.starts_with("--")) {
                Some(n) => {
                    settings.threads = Some(n.clone());
                    i += 1;
                }
                None => return Err("`--threads` needs a number of threads".into()),
            },
            "--sessionless" => http.sessionless = true,
            "--sse" => http.sse = true,
            "--openapi" => http.openapi = true,
            "-h" | "--help" => return Ok((Command::Help, Settings::default())),
            flag if flag.starts_with("--") => return Err(format!("unknown option `{flag}`")),
            word => rest.push(word),
        }
        i += 1;
    }
    if (http.sessionless || http.sse || http.openapi || http.shared_state.is_some()) && !wants_http
    {
        return Err(
            "`--sessionless`, `--sse`, `--openapi` and `--shared-state` go with `--http`".into(),
        );
    }
    let command = match rest.as_slice() {
        [] if wants_http => Command::Http(http),
        [] => Command::Stdio,
        _ if wants_http => return Err("`--http` takes at most one address".into()),
        ["list"] => Command::List,
        ["schema"] => Command::Schema,
        ["openapi"] => Command::OpenApi,
        ["help"] => Command::Help,
        ["call", tool] => Command::Call((*tool).to_owned(), None),
        ["call", tool, json] => Command::Call((*tool).to_owned(), Some((*json).to_owned())),
        ["call", ..] => return Err("`call` takes a tool name and optional JSON arguments".into()),
        [other @ ("list" | "schema" | "openapi"), ..] => {
            return Err(format!("`{other}` takes no arguments"));
        }
        [other, ..] => return Err(format!("unknown command `{other}`")),
    };
    Ok((command, settings))
}

impl Server {
    /// Runs the server's command line on a Tokio runtime of its own: the whole `main` of a
    /// server. With no arguments it serves MCP on stdio; `--http [ADDR]` serves Streamable
    /// HTTP; `list`, `call <tool> '<json>'` and `schema` inspect and try the tools;
    /// `install <host>` writes the server into an MCP host's configuration (Claude Desktop,
    /// Claude Code, Cursor, VS Code) and `inspect` opens the MCP Inspector on it. Bad
    /// command-line input prints a message and exits with status 2; a `call` whose result is
    /// an error exits 1.
    ///
    /// ```no_run
    /// fn main() -> mcp_tool::Result<()> {
    ///     mcp_tool::Server::new("calc", env!("CARGO_PKG_VERSION")).run()
    /// }
    /// ```
    ///
    /// It starts a runtime, so call it from a plain `fn main`; inside an async runtime, build
    /// the server and serve it with `serve_stdio` or `serve_http`. The runtime has one thread
    /// when the process may use one CPU, else a thread per CPU (over HTTP each a runtime of its
    /// own serving its share of the connections); `--threads N` or
    /// `MCP_TOOL_THREADS=N` choose (1: one thread for everything).
    pub fn run(self) -> Result<()> {
        self.run_with_args(std::env::args())
    }

    /// [`Server::run`] with a command line of the caller's (the program name first), for
    /// servers that take options of their own and pass the rest on.
    pub fn run_with_args<I: IntoIterator<Item = String>>(self, args: I) -> Result<()> {
        let args: Vec<String> = args.into_iter().collect();
        let bin = args
            .first()
            .and_then(|a| std::path::Path::new(a).file_name())
            .map_or_else(|| self.name.clone(), |n| n.to_string_lossy().into_owned());
        let (command, settings) = match parse(args.get(1..).unwrap_or_default()) {
            Ok(parsed) => parsed,
            Err(message) => std::process::exit(cli_error(&bin, &message)),
        };
        let threads = match runtime::threads_asked(settings.threads.as_deref()) {
            Ok(threads) => threads,
            Err(message) => std::process::exit(cli_error(&bin, &message)),
        };
        // `install` and `inspect` serve nothing here: they need neither the settings the
        // environment gives a server nor a runtime.
        let command = match command {
            Command::Install(options) => {
                return exit_with(install::install(&self.name, &bin, &options));
            }
            Command::Inspect(options) => return exit_with(inspect::inspect(&bin, &options)),
            command => command,
        };
        // The operator's choice of task store: the flag, else the environment.
        let task_store = settings.task_store.or_else(|| {
            std::env::var(env::TASK_STORE)
                .ok()
                .filter(|v| !v.trim().is_empty())
        });
        let mut server = match from_environment(self) {
            Ok(server) => server,
            Err(message) => std::process::exit(cli_error(&bin, &message)),
        };
        if let Ok(text) = std::env::var(env::TASK_LEASE) {
            match parse_duration(&text) {
                Some(lease) => server.task_settings.lease = lease,
                None => std::process::exit(cli_error(
                    &bin,
                    &format!(
                        "{}=`{text}` is not a duration such as `30s`",
                        env::TASK_LEASE
                    ),
                )),
            }
        }
        if let Some(url) = task_store {
            match store_from_url(&url) {
                Ok(store) => server = server.task_store_arc(store),
                Err(e) => std::process::exit(cli_error(&bin, &e.to_string())),
            }
        }
        match with_mounts(server, &settings.mounts) {
            Ok(s) => server = s,
            Err(message) => std::process::exit(cli_error(&bin, &message)),
        }
        // OpenTelemetry export for the serving commands, started (and stopped) outside the
        // runtime: its HTTP client is a blocking one.
        let telemetry = match command {
            Command::Stdio | Command::Http(_) => otel::install(&server.name),
            _ => None,
        };
        let runtimes = runtime::build(
            threads,
            server.limits.blocking_threads,
            matches!(command, Command::Http(_)),
            std::time::Duration::from_secs(1),
        )?;
        let mut command = command;
        if let Command::Http(options) = &mut command {
            options.other_threads = runtimes.others();
        }
        let outcome = runtimes.main.block_on(server.execute(&bin, command));
        // A blocking tool stuck for ever (a read that never returns) must not hold the exit:
        // the threads still running are left behind.
        runtimes.shutdown(std::time::Duration::from_secs(1));
        if let Some(telemetry) = telemetry {
            telemetry.shutdown();
        }
        match outcome? {
            0 => Ok(()),
            code => std::process::exit(code),
        }
    }

    /// Runs one command; returns the exit status.
    async fn execute(self, bin: &str, command: Command) -> Result<i32> {
        match command {
            Command::Stdio => {
                init_tracing();
                self.build()?.serve_stdio().await?;
                Ok(0)
            }
            Command::Http(options) => http::serve_http(self, bin, options).await,
            Command::List => {
                write_out(&tool_table(&self.build()?))?;
                Ok(0)
            }
            Command::Schema => {
                let server = self.build()?;
                let tools = server.tools();
                let keep_refs = server.catalog().keeps_refs();
                let list = Tools {
                    tools: tools
                        .iter()
                        .filter(|t| !t.hidden() && t.for_model())
                        .map(|t| t.wire_as(ProtocolVersion::V2025_11_25, keep_refs))
                        .collect(),
                };
                let text = serde_json::to_string_pretty(&list).map_err(io::Error::other)?;
                write_out(&format!("{text}\n"))?;
                Ok(0)
            }
            Command::OpenApi => http::print_openapi(self, bin),
            Command::Call(name, arguments) => {
                let arguments = match arguments.as_deref().map(serde_json::from_str::<Value>) {
                    None => Value::Object(serde_json::Map::new()),
                    Some(Ok(v @ Value::Object(_))) => v,
                    Some(Ok(_)) => {
                        return Ok(cli_error(bin, "the arguments must be a JSON object"));
                    }
                    Some(Err(e)) => {
                        return Ok(cli_error(
                            bin,
                            &format!("the arguments are not valid JSON: {e}"),
                        ));
                    }
                };
                let server = self.build()?;
                match server.call(&name, arguments).await {
                    Ok(result) => {
                        write_out(&format!("{:#}\n", result.to_json()))?;
                        Ok(if result.is_error { 1 } else { 0 })
                    }
                    Err(e) => {
                        let known: Vec<String> = server
                            .tools()
                            .iter()
                            .filter(|t| !t.hidden() && t.for_model())
                            .map(|t| t.name().to_owned())
                            .collect();
                        Ok(cli_error(
                            bin,
                            &format!("{}; the tools are: {}", e.message, known.join(", ")),
                        ))
                    }
                }
            }
            Command::Install(options) => Ok(install::install(&self.name, bin, &options)),
            Command::Inspect(options) => Ok(inspect::inspect(bin, &options)),
            Command::Help => {
                write_out(&(usage(bin) + "\n"))?;
                Ok(0)
            }
        }
    }
}

/// Returns from [`Server::run`] on status 0, else exits with the status.
fn exit_with(code: i32) -> Result<()> {
    match code {
        0 => Ok(()),
        code => std::process::exit(code),
    }
}

/// The settings a server binary takes from its environment (this layer alone reads it): the
/// request-state key, output validation, argument coercion, the connection store of mounts.
fn from_environment(mut server: Server) -> std::result::Result<Server, String> {
    if let Ok(text) = std::env::var(env::STATE_KEY) {
        let keys = crate::server::state::StateKey::decode(&text)
            .map_err(|e| format!("{}: {e}", env::STATE_KEY))?;
        server = server.state_keys(keys);
    }
    if std::env::var(env::VALIDATE_OUTPUT).is_ok_and(|v| v == "1" || v == "true") {
        server = server.validate_output(true);
    }
    if std::env::var(env::COERCE_ARGUMENTS).is_ok_and(|v| v == "1" || v == "true") {
        server = server.coerce_arguments(true);
    }
    server = middleware_from_environment(server)?;
    mount::connection_store(server)
}

/// The built-in middleware the environment switches on, inside the server's own layers:
/// the audit outermost (it logs refused calls too), then the rate limit, the masking of
/// internal errors, and the result budget.
fn middleware_from_environment(mut server: Server) -> std::result::Result<Server, String> {
    use crate::server::middleware::{Audit, MaskErrors, RateLimit, ResultBudget};
    let on = |name| std::env::var(name).is_ok_and(|v| v == "1" || v == "true");
    let given = |name| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    if on(env::AUDIT) {
        server = server.middleware(Audit);
    }
    if let Some(text) = given(env::RATE_LIMIT) {
        let limit = RateLimit::parse(&text).map_err(|e| format!("{}: {e}", env::RATE_LIMIT))?;
        server = server.middleware(limit);
    }
    if on(env::MASK_ERRORS) {
        server = server.middleware(MaskErrors);
    }
    if let Some(text) = given(env::RESULT_BUDGET) {
        let budget =
            ResultBudget::parse(&text).map_err(|e| format!("{}: {e}", env::RESULT_BUDGET))?;
        server = server.middleware(budget);
    }
    Ok(server)
}

/// Mounts the remote servers each `--mount` file lists (feature `client`).
fn with_mounts(server: Server, files: &[String]) -> std::result::Result<Server, String> {
    if files.is_empty() {
        return Ok(server);
    }
    mount::mount_files(server, files)
}

/// The `schema` command's output: the `tools/list` result of every listed tool.
#[derive(Serialize)]
struct Tools<'a> {
    tools: Vec<crate::protocol::wire::Tool<'a>>,
}

fn cli_error(bin: &str, message: &str) -> i32 {
    let _ = writeln!(io::stderr(), "error: {message}\n\n{}", usage(bin));
    2
}

fn write_out(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// A readable table of the tools: name, hints, title and the description's first line.
fn tool_table(server: &ServerHandle) -> String {
    let tools = server.tools();
    let hidden = tools
        .iter()
        .filter(|t| t.hidden() || !t.for_model())
        .count();
    let rows: Vec<[String; 3]> = tools
        .iter()
        .filter(|t| !t.hidden() && t.for_model())
        .map(|t| {
            let a = t.annotations();
            let mut hints = Vec::new();
            for (flag, label) in [
                (a.read_only, "read-only"),
                (a.destructive, "destructive"),
                (a.idempotent, "idempotent"),
                (a.open_world, "open-world"),
            ] {
                if flag == Some(true) {
                    hints.push(label);
                }
            }
            match t.task_support() {
                TaskSupport::Optional => hints.push("task"),
                TaskSupport::Required => hints.push("task-only"),
                TaskSupport::Forbidden => {}
            }
            let description = t.description().unwrap_or("").lines().next().unwrap_or("");
            let about = match t.title() {
                Some(title) => format!("{title}: {description}"),
                None => description.to_owned(),
            };
            [t.name().to_owned(), hints.join(","), about]
        })
        .collect();
    let w0 = rows.iter().map(|r| r[0].len()).max().unwrap_or(0).max(4);
    let w1 = rows.iter().map(|r| r[1].len()).max().unwrap_or(0).max(5);
    let mut out = format!("{:<w0$}  {:<w1$}  ABOUT\n", "TOOL", "HINTS");
    for [name, hints, about] in rows {
        out.push_str(&format!("{name:<w0$}  {hints:<w1$}  {about}\n"));
    }
    out.push_str(&format!(
        "{} tools on {} {}",
        tools.len() - hidden,
        server.name(),
        server.version()
    ));
    if hidden > 0 {
        out.push_str(&format!(
            " ({hidden} more: hidden until a session enables them, or for MCP Apps views only)"
        ));
    }
    out.push('\n');
    out
}
