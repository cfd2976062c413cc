//! Driving a server over Streamable HTTP: M keep-alive clients, requests one after another.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use super::process::{CpuSample, ServerCmd, peak_rss_kib, percentile};
use super::wire::{Calls, INITIALIZED, Revision, Step, Tool, initialize_line};
use super::{Error, Result, Run};

pub(crate) mod http_client {
    //! A minimal Streamable HTTP client on hyper: one HTTP/1.1 keep-alive connection per
    //! client, requests one after another.

    use http_body_util::{BodyExt, Full};
    use hyper::body::{Bytes, Incoming};
    use hyper::client::conn::http1::SendRequest;
    use hyper_util::rt::TokioIo;

    use crate::Result;

    pub(crate) struct Conn {
        sender: SendRequest<Full<Bytes>>,
        host: String,
        /// The `MCP-Protocol-Version` header.
        version: &'static str,
        pub(crate) session: Option<String>,
    }

    /// An answer, read as it comes.
    pub(crate) struct Reply {
        pub(crate) status: u16,
        pub(crate) session: Option<String>,
        body: Option<Incoming>,
        pub(crate) sse: bool,
        buffer: Vec<u8>,
    }

    impl Conn {
        pub(crate) async fn open(
            addr: std::net::SocketAddr,
            version: &'static str,
        ) -> Result<Conn> {
            let stream = tokio::net::TcpStream::connect(addr).await?;
            stream.set_nodelay(true)?;
            let (sender, conn) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
            Ok(Conn {
                sender,
                host: addr.to_string(),
                version,
                session: None,
            })
        }

        /// Posts a message; `call`: the name of the tool a 2026-07-28 `tools/call` calls (its
        /// `Mcp-Method` and `Mcp-Name` headers). Read the reply to its end before the next post.
        pub(crate) async fn post(&mut self, body: String, call: Option<&str>) -> Result<Reply> {
            let mut request = hyper::Request::post("/mcp")
                .header("host", &self.host)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", self.version);
            if let Some(s) = &self.session {
                request = request.header("mcp-session-id", s);
            }
            if let Some(name) = call {
                request = request
                    .header("mcp-method", "tools/call")
                    .header("mcp-name", name);
            }
            let request = request.body(Full::new(Bytes::from(body)))?;
            self.sender.ready().await?;
            let response = self.sender.send_request(request).await?;
            let status = response.status().as_u16();
            let session = response
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let sse = response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("text/event-stream"));
            Ok(Reply {
                status,
                session,
                body: Some(response.into_body()),
                sse,
                buffer: Vec::new(),
            })
        }
    }

    impl Reply {
        /// The next JSON-RPC message of the answer: the JSON body, or the data of the next SSE
        /// event that holds one (events without JSON, such as priming events, are passed over).
        pub(crate) async fn next(&mut self) -> Result<Option<String>> {
            if !self.sse {
                let Some(body) = self.body.take() else {
                    return Ok(None);
                };
                let bytes = body.collect().await?.to_bytes();
                return Ok((!bytes.is_empty())
                    .then(|| String::from_utf8(bytes.to_vec()))
                    .transpose()?);
            }
            loop {
                if let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                    let event: Vec<u8> = self.buffer.drain(..end + 2).collect();
                    let event = String::from_utf8(event)?;
                    let data: Vec<&str> = event
                        .lines()
                        .filter_map(|l| l.strip_prefix("data:"))
                        .map(str::trim)
                        .collect();
                    let data = data.join("\n");
                    if data.starts_with('{') {
                        return Ok(Some(data));
                    }
                    continue;
                }
                let Some(body) = self.body.as_mut() else {
                    return Ok(None);
                };
                match body.frame().await {
                    Some(frame) => {
                        if let Ok(data) = frame?.into_data() {
                            self.buffer.extend_from_slice(&data);
                        }
                    }
                    None => {
                        self.body = None;
                        // A last event without its blank line.
                        self.buffer.extend_from_slice(b"\n\n");
                    }
                }
            }
        }

        /// Reads the answer to its end; returns its status.
        pub(crate) async fn finish(mut self) -> Result<u16> {
            while self.next().await?.is_some() {}
            Ok(self.status)
        }
    }
}

/// How an HTTP run talks to the server, and what form its answers must take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum HttpMode {
    /// No sessions (`--stateless`); every answer JSON.
    Stateless,
    /// Sessions, answered however the server answers by default (not checked).
    Session,
    /// Sessions, a request whose only message is its response answered with JSON.
    SessionJson,
    /// Sessions, every answer an SSE stream (`--sse` for the servers that have it; rmcp's
    /// session mode always answers so).
    SessionSse,
}

impl HttpMode {
    pub(crate) fn name(self) -> &'static str {
        match self {
            HttpMode::Stateless => "stateless, JSON answers",
            HttpMode::Session => "sessions",
            HttpMode::SessionJson => "sessions, JSON answers",
            HttpMode::SessionSse => "sessions, SSE answers",
        }
    }

    /// Whether `server` can answer in this form: rmcp's sessions answer only SSE.
    pub(crate) fn served_by(self, server: &ServerCmd) -> bool {
        !(self == HttpMode::SessionJson && server.label.starts_with("rmcp"))
    }

    fn args(self, server: &ServerCmd) -> Vec<String> {
        match self {
            HttpMode::Stateless => vec!["--stateless".to_owned()],
            HttpMode::SessionSse if !server.label.starts_with("rmcp") => {
                vec!["--sse".to_owned()]
            }
            _ => vec![],
        }
    }

    /// Whether a call's answer must be SSE (`Some(true)`) or JSON (`Some(false)`).
    fn expects_sse(self) -> Option<bool> {
        match self {
            HttpMode::Stateless | HttpMode::SessionJson => Some(false),
            HttpMode::SessionSse => Some(true),
            HttpMode::Session => None,
        }
    }
}

pub(crate) fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// One HTTP run: start the server on a free port in `mode`, `clients` connections (each
/// initializing a session in 2025-11-25 unless stateless), `n` calls of `tool` in all in
/// `revision`.
pub(crate) fn http_run(
    server: &ServerCmd,
    mode: HttpMode,
    tool: Tool,
    revision: Revision,
    n: usize,
    clients: usize,
    ticks: f64,
) -> Result<Run> {
    let port = free_port()?;
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse()?;
    let stateless = mode == HttpMode::Stateless;
    let mut extra = vec!["--http".to_owned(), addr.to_string()];
    extra.extend(mode.args(server));
    let t = Instant::now();
    let child = server.spawn(&extra)?;
    let pid = child.id();
    let ready = loop {
        if TcpStream::connect(addr).is_ok() {
            break t.elapsed();
        }
        if t.elapsed() > Duration::from_secs(20) {
            let mut child = child;
            let _ = child.kill();
            return Err(format!("{} did not listen on {addr}", server.label).into());
        }
        thread::sleep(Duration::from_millis(2));
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let outcome = runtime.block_on(http_drive(
        addr,
        (stateless, mode.expects_sse()),
        tool,
        revision,
        n,
        clients,
        pid,
        ticks,
    ));
    let rss = peak_rss_kib(pid);
    let mut child = child;
    let _ = child.kill();
    let _ = child.wait();
    let (latencies, elapsed, cpu) = outcome?;
    let mut latencies = latencies;
    latencies.sort_unstable();
    Ok(Run {
        calls_per_s: n as f64 / elapsed.as_secs_f64(),
        p50_us: percentile(&latencies, 0.50),
        p99_us: percentile(&latencies, 0.99),
        cpu_us: cpu * 1e6 / n as f64,
        rss_kib: rss?,
        start_ms: ready.as_secs_f64() * 1e3,
    })
}

/// One client: its connection and, for answering the server's questions in a session
/// (2025-11-25), a second one (the first is busy reading the call's answer).
struct Client {
    conn: http_client::Conn,
    side: Option<http_client::Conn>,
    /// The form every call's answer must take (SSE or JSON), if checked.
    expects_sse: Option<bool>,
}

async fn http_client_open(
    addr: SocketAddr,
    stateless: bool,
    tool: Tool,
    revision: Revision,
    c: usize,
) -> Result<Client> {
    let mut conn = http_client::Conn::open(addr, revision.version()).await?;
    let mut side = None;
    if !stateless && revision == Revision::Y2025 {
        let elicits = tool == Tool::ConfirmAdd;
        let reply = conn.post(initialize_line(c as u64, elicits), None).await?;
        let session = reply.session.clone();
        let status = reply.finish().await?;
        if status != 200 {
            return Err(format!("initialize: HTTP {status}").into());
        }
        conn.session = Some(session.ok_or("no Mcp-Session-Id")?);
        let status = conn
            .post(INITIALIZED.to_owned(), None)
            .await?
            .finish()
            .await?;
        if status != 202 && status != 200 {
            return Err(format!("notifications/initialized: HTTP {status}").into());
        }
        if elicits {
            let mut answers = http_client::Conn::open(addr, revision.version()).await?;
            answers.session.clone_from(&conn.session);
            side = Some(answers);
        }
    }
    Ok(Client {
        conn,
        side,
        expects_sse: None,
    })
}

/// Call number `i` to its end: the call; in 2026-07-28 the retry if input is required; in a
/// 2025-11-25 session the answer to the server's question, on the side connection.
async fn http_call(client: &mut Client, calls: &Calls, i: usize) -> Result<()> {
    let modern = calls.revision == Revision::Y2026;
    let name = modern.then(|| calls.tool.name());
    let mut body = calls.line(i);
    loop {
        let mut reply = client.conn.post(body, name).await?;
        if let Some(sse) = client.expects_sse
            && reply.sse != sse
        {
            let form = |sse| if sse { "SSE" } else { "JSON" };
            return Err(format!(
                "call {i}: answered with {} where {} was asked for",
                form(reply.sse),
                form(sse)
            )
            .into());
        }
        let mut retry = None;
        let mut done = false;
        while let Some(message) = reply.next().await? {
            match calls.read(&message)? {
                Step::Done(got) if got == i => done = true,
                Step::Done(got) => return Err(format!("call {i} answered as {got}").into()),
                Step::Send(line) if modern => retry = Some(line),
                Step::Send(line) => {
                    let side = client.side.as_mut().ok_or("a question without a session")?;
                    let status = side.post(line, None).await?.finish().await?;
                    if status != 202 && status != 200 {
                        return Err(format!("call {i}: the answer got HTTP {status}").into());
                    }
                }
                Step::Skip => {}
            }
        }
        if done {
            return Ok(());
        }
        body = retry.ok_or_else(|| format!("call {i}: HTTP {} without an answer", reply.status))?;
    }
}

#[allow(clippy::too_many_arguments)]
async fn http_drive(
    addr: SocketAddr,
    (stateless, expects_sse): (bool, Option<bool>),
    tool: Tool,
    revision: Revision,
    n: usize,
    clients: usize,
    pid: u32,
    ticks: f64,
) -> Result<(Vec<u64>, Duration, f64)> {
    let mut conns = Vec::with_capacity(clients);
    for c in 0..clients {
        let mut client = http_client_open(addr, stateless, tool, revision, c).await?;
        client.expects_sse = expects_sse;
        conns.push(client);
    }
    // Warm-up, then the measured calls; each client takes every `clients`-th call.
    let mut cpu_before = CpuSample::default();
    let mut result = (Vec::new(), Duration::ZERO);
    for (phase, count, first_id) in [(0, (n / 10).clamp(100, 2000), 1_000u64), (1, n, 1_000_000)] {
        if phase == 1 {
            cpu_before = CpuSample::take(pid, ticks)?;
        }
        let calls = Calls {
            tool,
            revision,
            first_id,
            n: count,
        };
        let base = Instant::now();
        let mut tasks = Vec::with_capacity(clients);
        for (c, mut client) in conns.drain(..).enumerate() {
            tasks.push(tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(count / clients + 1);
                for i in (c..count).step_by(clients) {
                    let t = Instant::now();
                    http_call(&mut client, &calls, i).await?;
                    latencies.push(t.elapsed().as_nanos() as u64);
                }
                Ok::<_, Error>((client, latencies))
            }));
        }
        let mut latencies = Vec::with_capacity(count);
        for task in tasks {
            let (client, l) = task.await??;
            conns.push(client);
            latencies.extend(l);
        }
        result = (latencies, base.elapsed());
    }
    let cpu = CpuSample::take(pid, ticks)?.since(&cpu_before);
    Ok((result.0, result.1, cpu))
}
