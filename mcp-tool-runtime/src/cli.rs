//! The command line every server binary gets from [`Server::main`]: serve MCP on stdio (no
//! arguments), or inspect and try the tools in-process.

use std::fmt;
use std::io::{self, Write};
use std::sync::Arc;

use serde_json::Value;

use crate::registry::StartError;
use crate::server::{Server, ServerCore};

/// An error that stops a server.
#[non_exhaustive]
pub enum Error {
    /// The server could not start (its tools have problems).
    Start(StartError),
    /// Reading or writing the transport failed.
    Io(io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Start(e) => fmt::Display::fmt(e, f),
            Error::Io(e) => write!(f, "i/o error: {e}"),
        }
    }
}

// `main` returning `Err` prints the `Debug` form: make it the readable one.
impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Error {}

impl From<StartError> for Error {
    fn from(e: StartError) -> Self {
        Error::Start(e)
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::Io(e)
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

fn usage(bin: &str) -> String {
    format!(
        "usage:\n  {bin}                      serve MCP on stdio (what MCP hosts launch)\n  {bin} --http [ADDR]        serve MCP over Streamable HTTP at http://ADDR/mcp (default 127.0.0.1:8080)\n  {bin} list                 show the tools\n  {bin} call <tool> [json]   call one tool in-process and print its result\n  {bin} schema               print the tools/list JSON\n  {bin} help                 show this message"
    )
}

impl Server {
    /// Runs the server's command line: with no arguments, serves MCP on stdio; `list`,
    /// `call <tool> '<json>'` and `schema` inspect and try the tools. Bad command-line input
    /// prints a message and exits with status 2; a `call` whose result is an error exits 1.
    pub async fn main(self) -> Result<()> {
        self.main_with_args(std::env::args()).await
    }

    /// [`Server::main`] with a command line of the caller's (the program name first), for
    /// servers that take options of their own and pass the rest on.
    pub async fn main_with_args<I: IntoIterator<Item = String>>(self, args: I) -> Result<()> {
        let args: Vec<String> = args.into_iter().collect();
        let bin = args
            .first()
            .and_then(|a| std::path::Path::new(a).file_name())
            .map_or_else(|| self.name.clone(), |n| n.to_string_lossy().into_owned());
        match self.run_cli(&bin, &args[1.min(args.len())..]).await? {
            0 => Ok(()),
            code => std::process::exit(code),
        }
    }

    /// Like [`Server::main`], on a Tokio runtime of its own: the whole `main` of a server.
    ///
    /// ```no_run
    /// fn main() -> mcp_tool::Result<()> {
    ///     mcp_tool::Server::new("calc", env!("CARGO_PKG_VERSION")).run()
    /// }
    /// ```
    pub fn run(self) -> Result<()> {
        self.run_with_args(std::env::args())
    }

    /// [`Server::run`] with a command line of the caller's (the program name first).
    pub fn run_with_args<I: IntoIterator<Item = String>>(self, args: I) -> Result<()> {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?
            .block_on(self.main_with_args(args))
    }

    /// Runs one command line (without the program name); returns the exit status.
    pub async fn run_cli(self, bin: &str, args: &[String]) -> Result<i32> {
        let command = args.first().map(String::as_str);
        match command {
            None => {
                init_tracing();
                let core = self.build()?;
                crate::stdio::serve_stdio(core).await?;
                Ok(0)
            }
            Some("--http") if args.len() <= 2 => {
                let text = args.get(1).map_or("127.0.0.1:8080", String::as_str);
                let Ok(addr) = text.parse::<std::net::SocketAddr>() else {
                    return Ok(cli_error(
                        bin,
                        &format!("`{text}` is not an address such as 127.0.0.1:8080"),
                    ));
                };
                init_tracing();
                let mut server = self;
                if server.http.auth.is_none()
                    && let Some(tokens) = crate::http::BearerTokens::from_env(TOKENS_ENV)
                {
                    server.http.auth = Some(Arc::new(tokens));
                }
                let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
                    io::Error::new(e.kind(), format!("cannot listen on {addr}: {e}"))
                })?;
                // Always said (stdout is not the protocol here): where to point a client,
                // with the real port when the address asked for port 0.
                eprintln!("{bin}: MCP endpoint http://{}/mcp", listener.local_addr()?);
                server.serve_http_on(listener).await?;
                Ok(0)
            }
            Some("--http") => Ok(cli_error(bin, "`--http` takes at most one address")),
            Some("list") if args.len() == 1 => {
                let core = self.build()?;
                write_out(&tool_table(&core))?;
                Ok(0)
            }
            Some("schema") if args.len() == 1 => {
                let core = self.build()?;
                let list = serde_json::json!({ "tools": core.tool_list() });
                write_out(&format!("{list:#}\n"))?;
                Ok(0)
            }
            Some("call") if (2..=3).contains(&args.len()) => {
                let name = &args[1];
                let arguments = match args.get(2) {
                    None => Value::Object(serde_json::Map::new()),
                    Some(text) => match serde_json::from_str::<Value>(text) {
                        Ok(v @ Value::Object(_)) => v,
                        Ok(_) => return Ok(cli_error(bin, "the arguments must be a JSON object")),
                        Err(e) => {
                            return Ok(cli_error(
                                bin,
                                &format!("the arguments are not valid JSON: {e}"),
                            ));
                        }
                    },
                };
                let core = self.build()?;
                match core.call(name, arguments).await {
                    Ok(result) => {
                        write_out(&format!("{:#}\n", result.to_json()))?;
                        Ok(if result.is_error { 1 } else { 0 })
                    }
                    Err(e) => {
                        let known: Vec<String> = core
                            .tools()
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
            Some("help" | "--help" | "-h") => {
                write_out(&(usage(bin) + "\n"))?;
                Ok(0)
            }
            Some("call") => Ok(cli_error(
                bin,
                "`call` takes a tool name and optional JSON arguments",
            )),
            Some(other @ ("list" | "schema")) => {
                Ok(cli_error(bin, &format!("`{other}` takes no arguments")))
            }
            Some(other) => Ok(cli_error(bin, &format!("unknown command `{other}`"))),
        }
    }
}

/// The environment variable whose bearer tokens guard `--http` (comma-separated `token` or
/// `subject:token` entries), when the server configured no authenticator of its own.
pub const TOKENS_ENV: &str = "MCP_TOOL_BEARER_TOKENS";

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
fn tool_table(core: &ServerCore) -> String {
    let hidden = core
        .tools()
        .filter(|t| t.hidden() || !t.for_model())
        .count();
    let rows: Vec<[String; 3]> = core
        .tools()
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
        core.tools().count() - hidden,
        core.name(),
        core.version()
    ));
    if hidden > 0 {
        out.push_str(&format!(
            " ({hidden} more: hidden until a session enables them, or for MCP Apps views only)"
        ));
    }
    out.push('\n');
    out
}

/// Sends `tracing` output to stderr (stdout carries the protocol), filtered by `RUST_LOG`
/// (default `warn`), and events inside tool calls to their clients too. Does nothing if the
/// application installed a subscriber already.
fn init_tracing() {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;

    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(io::stderr)
        .with_ansi(false)
        .with_filter(filter);
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(crate::logging::ClientLogLayer)
        .try_init();
}
