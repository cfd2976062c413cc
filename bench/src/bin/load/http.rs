//! Driving a server over Streamable HTTP: M keep-alive connections, each with one request in
//! flight at a time (HTTP/1.1 without pipelining), every request built before the clock starts.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use super::process::{CpuSample, ServerCmd, peak_rss_kib, percentile};
use super::wire::{Calls, INITIALIZED, Step, Tool, Version, initialize_line};
use super::{Error, Result, Run};

pub(crate) mod http_client {
    //! A lean Streamable HTTP client: one HTTP/1.1 keep-alive connection, one request at a time
    //! (no pipelining), on a tokio `TcpStream` with nothing between: a request is one buffer
    //! (head and body, built once) sent with one `write`; the answer's head is parsed with
    //! `httparse`, its body read by `Content-Length` or chunked into a buffer the connection
    //! keeps, an SSE body split into events as they come. Nothing is allocated per request
    //! but the `Mcp-Session-Id` an answer may carry.

    use std::io::Write as _;
    use std::net::SocketAddr;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    use crate::Result;

    pub(crate) struct Conn {
        stream: TcpStream,
        host: String,
        /// The `MCP-Protocol-Version` header.
        version: &'static str,
        /// The `Authorization` header's line, if the server requires a token.
        authorization: Option<String>,
        pub(crate) session: Option<String>,
        /// Bytes read and not yet used: `input[start..]`.
        input: Vec<u8>,
        start: usize,
        /// The request being sent (when not given whole).
        out: Vec<u8>,
        /// The answer's body as far as it is read (de-chunked).
        body: Vec<u8>,
        /// The data of the SSE event last returned.
        event: Vec<u8>,
        /// The answer being read, if any: no request is sent until it is read to its end.
        reading: Option<Framing>,
    }

    /// How the body of the answer being read ends.
    #[derive(Debug, Clone, Copy)]
    enum Framing {
        /// This many bytes are still to come.
        Length(usize),
        /// Chunked: `left` bytes of the current chunk to come (then its CRLF), or at 0 a
        /// chunk-size line.
        Chunked { left: usize, in_chunk: bool },
    }

    /// An answer, read as it comes. Read it to its end (`next` until `None`, or `finish`)
    /// before the connection's next request.
    pub(crate) struct Reply<'c> {
        conn: &'c mut Conn,
        pub(crate) status: u16,
        pub(crate) session: Option<String>,
        pub(crate) sse: bool,
        /// Bytes of `conn.body` already returned as events (SSE).
        taken: usize,
        /// The JSON body was returned.
        returned: bool,
    }

    impl Conn {
        pub(crate) async fn open(
            addr: SocketAddr,
            version: &'static str,
            bearer: Option<&str>,
        ) -> Result<Conn> {
            let stream = TcpStream::connect(addr).await?;
            stream.set_nodelay(true)?;
            Ok(Conn {
                stream,
                host: addr.to_string(),
                version,
                authorization: bearer.map(|t| format!("authorization: Bearer {t}\r\n")),
                session: None,
                input: Vec::with_capacity(16 * 1024),
                start: 0,
                out: Vec::with_capacity(1024),
                body: Vec::with_capacity(4096),
                event: Vec::new(),
                reading: None,
            })
        }

        /// Appends the whole request that posts `body` to `out`: its head (this connection's
        /// session; `call`: the name of the tool a 2026-07-28 `tools/call` calls, its
        /// `Mcp-Method` and `Mcp-Name` headers), then the body.
        pub(crate) fn request(&self, body: &[u8], call: Option<&str>, out: &mut Vec<u8>) {
            // Writing into a Vec cannot fail.
            let _ = write!(
                out,
                "POST /mcp HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: {}\r\n",
                self.host, self.version
            );
            if let Some(line) = &self.authorization {
                out.extend_from_slice(line.as_bytes());
            }
            if let Some(s) = &self.session {
                let _ = write!(out, "mcp-session-id: {s}\r\n");
            }
            if let Some(name) = call {
                let _ = write!(out, "mcp-method: tools/call\r\nmcp-name: {name}\r\n");
            }
            let _ = write!(out, "content-length: {}\r\n\r\n", body.len());
            out.extend_from_slice(body);
        }

        /// Posts a message (see [`Conn::request`]).
        pub(crate) async fn post(&mut self, body: &[u8], call: Option<&str>) -> Result<Reply<'_>> {
            let mut out = std::mem::take(&mut self.out);
            out.clear();
            self.request(body, call, &mut out);
            let reply = self.send_prepared(&out).await;
            // `reply` borrows `self`: put the buffer back through it.
            match reply {
                Ok(reply) => {
                    reply.conn.out = out;
                    Ok(reply)
                }
                Err(e) => Err(e),
            }
        }

        /// Sends a whole request built by [`Conn::request`] and reads the answer's head.
        pub(crate) async fn send_prepared(&mut self, request: &[u8]) -> Result<Reply<'_>> {
            if self.reading.is_some() {
                return Err("a request before the last answer was read to its end".into());
            }
            self.stream.write_all(request).await?;
            self.body.clear();
            let (status, session, sse, framing) = loop {
                let mut headers = [httparse::EMPTY_HEADER; 32];
                let mut head = httparse::Response::new(&mut headers);
                if let httparse::Status::Complete(len) = head.parse(&self.input[self.start..])? {
                    let status = head.code.unwrap_or(0);
                    let (mut session, mut sse, mut length, mut chunked) =
                        (None, false, None, false);
                    for h in head.headers.iter() {
                        let value = std::str::from_utf8(h.value).unwrap_or("").trim();
                        if h.name.eq_ignore_ascii_case("content-length") {
                            length = Some(value.parse::<usize>()?);
                        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                            chunked = value.eq_ignore_ascii_case("chunked");
                        } else if h.name.eq_ignore_ascii_case("content-type") {
                            sse = value.starts_with("text/event-stream");
                        } else if h.name.eq_ignore_ascii_case("mcp-session-id") {
                            session = Some(value.to_owned());
                        }
                    }
                    self.start += len;
                    let framing = match (chunked, length) {
                        (true, _) => Framing::Chunked {
                            left: 0,
                            in_chunk: false,
                        },
                        (false, Some(n)) => Framing::Length(n),
                        // No body: 1xx, 204, 304.
                        (false, None) if status < 200 || status == 204 || status == 304 => {
                            Framing::Length(0)
                        }
                        (false, None) => {
                            return Err(format!(
                                "HTTP {status}: an answer with neither Content-Length nor chunks"
                            )
                            .into());
                        }
                    };
                    break (status, session, sse, framing);
                }
                self.fill().await?;
            };
            self.reading = Some(framing);
            Ok(Reply {
                conn: self,
                status,
                session,
                sse,
                taken: 0,
                returned: false,
            })
        }

        /// Reads more bytes from the socket after `input[start..]`.
        async fn fill(&mut self) -> Result<()> {
            if self.start == self.input.len() {
                self.input.clear();
                self.start = 0;
            } else if self.start > self.input.capacity() / 2 {
                self.input.drain(..self.start);
                self.start = 0;
            }
            if self.input.capacity() - self.input.len() < 4096 {
                self.input.reserve(16 * 1024);
            }
            if self.stream.read_buf(&mut self.input).await? == 0 {
                return Err("the server closed the connection".into());
            }
            Ok(())
        }

        /// Moves the next body bytes of the answer being read into `body`; false once the
        /// body has ended.
        async fn more_body(&mut self) -> Result<bool> {
            loop {
                let Some(framing) = self.reading else {
                    return Ok(false);
                };
                let available = self.input.len() - self.start;
                match framing {
                    Framing::Length(0) => {
                        self.reading = None;
                        return Ok(false);
                    }
                    Framing::Length(left) => {
                        if available == 0 {
                            self.fill().await?;
                            continue;
                        }
                        let n = available.min(left);
                        self.take(n);
                        self.reading = Some(Framing::Length(left - n));
                        return Ok(true);
                    }
                    Framing::Chunked {
                        left: 0,
                        in_chunk: true,
                    } => {
                        // The CRLF after a chunk's data.
                        if available < 2 {
                            self.fill().await?;
                            continue;
                        }
                        if &self.input[self.start..self.start + 2] != b"\r\n" {
                            return Err("a chunk not ended by CRLF".into());
                        }
                        self.start += 2;
                        self.reading = Some(Framing::Chunked {
                            left: 0,
                            in_chunk: false,
                        });
                    }
                    Framing::Chunked { left: 0, .. } => {
                        // A chunk-size line; at size 0, the trailers and the blank line.
                        let rest = &self.input[self.start..];
                        let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") else {
                            self.fill().await?;
                            continue;
                        };
                        let line = std::str::from_utf8(&rest[..eol])?;
                        let hex = line.split(';').next().unwrap_or("").trim();
                        let size = usize::from_str_radix(hex, 16)
                            .map_err(|_| format!("a bad chunk size: {line:?}"))?;
                        if size > 0 {
                            self.start += eol + 2;
                            self.reading = Some(Framing::Chunked {
                                left: size,
                                in_chunk: true,
                            });
                            continue;
                        }
                        // The last chunk: skip trailer lines up to the empty one.
                        let Some(end) = rest.windows(4).position(|w| w == b"\r\n\r\n") else {
                            self.fill().await?;
                            continue;
                        };
                        self.start += end + 4;
                        self.reading = None;
                        return Ok(false);
                    }
                    Framing::Chunked { left, .. } => {
                        if available == 0 {
                            self.fill().await?;
                            continue;
                        }
                        let n = available.min(left);
                        self.take(n);
                        self.reading = Some(Framing::Chunked {
                            left: left - n,
                            in_chunk: true,
                        });
                        return Ok(true);
                    }
                }
            }
        }

        fn take(&mut self, n: usize) {
            self.body
                .extend_from_slice(&self.input[self.start..self.start + n]);
            self.start += n;
        }
    }

    impl Reply<'_> {
        /// The next JSON-RPC message of the answer: the JSON body, or the data of the next SSE
        /// event that holds one (events without JSON, such as priming events, are passed over).
        pub(crate) async fn next(&mut self) -> Result<Option<&str>> {
            if !self.sse {
                while self.conn.more_body().await? {}
                if self.returned || self.conn.body.is_empty() {
                    return Ok(None);
                }
                self.returned = true;
                return Ok(Some(std::str::from_utf8(&self.conn.body)?));
            }
            loop {
                let found = self.conn.body[self.taken..]
                    .windows(2)
                    .position(|w| w == b"\n\n");
                let (event, used) = match found {
                    Some(end) => (end, end + 2),
                    None => {
                        if self.conn.more_body().await? {
                            continue;
                        }
                        // A last event without its blank line.
                        let left = self.conn.body.len() - self.taken;
                        if left == 0 {
                            return Ok(None);
                        }
                        (left, left)
                    }
                };
                let conn = &mut *self.conn;
                let text = &conn.body[self.taken..self.taken + event];
                self.taken += used;
                conn.event.clear();
                for line in text.split(|&b| b == b'\n') {
                    let line = line.strip_suffix(b"\r").unwrap_or(line);
                    if let Some(data) = line.strip_prefix(b"data:") {
                        if !conn.event.is_empty() {
                            conn.event.push(b'\n');
                        }
                        conn.event.extend_from_slice(data.trim_ascii());
                    }
                }
                if conn.event.first() == Some(&b'{') {
                    break;
                }
            }
            Ok(Some(std::str::from_utf8(&self.conn.event)?))
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
    /// No sessions (`--sessionless`); every answer JSON.
    Sessionless,
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
            HttpMode::Sessionless => "sessionless, JSON answers",
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
            HttpMode::Sessionless => vec!["--sessionless".to_owned()],
            HttpMode::SessionSse if !server.label.starts_with("rmcp") => {
                vec!["--sse".to_owned()]
            }
            _ => vec![],
        }
    }

    /// Whether a call's answer must be SSE (`Some(true)`) or JSON (`Some(false)`).
    fn expects_sse(self) -> Option<bool> {
        match self {
            HttpMode::Sessionless | HttpMode::SessionJson => Some(false),
            HttpMode::SessionSse => Some(true),
            HttpMode::Session => None,
        }
    }
}

/// How long the driver's runtime stays awake before it sleeps waiting for answers.
const PARK_SPIN: Duration = Duration::from_micros(5);

pub(crate) fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// One HTTP run: start the server on a free port in `mode`, `clients` connections (each
/// initializing a session in 2025-11-25 unless sessionless), `n` calls of `tool` in all in
/// `version`.
pub(crate) fn http_run(
    server: &ServerCmd,
    mode: HttpMode,
    tool: Tool,
    version: Version,
    n: usize,
    clients: usize,
    ticks: f64,
) -> Result<Run> {
    let port = free_port()?;
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse()?;
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
    let bearer = server.bearer.as_deref();
    let outcome = http_run_at(
        addr,
        Some(pid),
        bearer,
        mode,
        tool,
        version,
        n,
        clients,
        ticks,
    );
    let rss = peak_rss_kib(pid);
    let mut child = child;
    let _ = child.kill();
    let _ = child.wait();
    let mut run = outcome?;
    run.rss_kib = rss?;
    run.start_ms = ready.as_secs_f64() * 1e3;
    Ok(run)
}

/// One HTTP run against a server already listening on `addr` (its process `pid`, when known,
/// for its CPU time; started in `mode`'s form): no peak RSS or start time.
#[allow(clippy::too_many_arguments)]
pub(crate) fn http_run_at(
    addr: SocketAddr,
    pid: Option<u32>,
    bearer: Option<&str>,
    mode: HttpMode,
    tool: Tool,
    version: Version,
    n: usize,
    clients: usize,
    ticks: f64,
) -> Result<Run> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .on_thread_park(|| {
            // Before the driver sleeps in `epoll_wait` with no task to run, it stays awake a
            // moment: the next answer is most often there by then, and the server's send
            // need not wake a sleeping driver. A wake-up costs the waker microseconds on a
            // VM, charged to the server: without this the driver slept at about every sixth
            // call, and the floor spent 9-47 % more CPU per call under it than under h2load.
            let t = Instant::now();
            while t.elapsed() < PARK_SPIN {
                std::hint::spin_loop();
            }
        })
        .build()?;
    let (mut latencies, elapsed, cpu) = runtime.block_on(http_drive(
        addr,
        bearer,
        (mode == HttpMode::Sessionless, mode.expects_sse()),
        tool,
        version,
        n,
        clients,
        pid,
        ticks,
    ))?;
    latencies.sort_unstable();
    Ok(Run {
        calls_per_s: n as f64 / elapsed.as_secs_f64(),
        p50_us: percentile(&latencies, 0.50),
        p99_us: percentile(&latencies, 0.99),
        cpu_us: cpu.map_or(f64::NAN, |cpu| cpu * 1e6 / n as f64),
        rss_kib: 0,
        start_ms: f64::NAN,
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
    bearer: Option<&str>,
    sessionless: bool,
    tool: Tool,
    version: Version,
    c: usize,
) -> Result<Client> {
    let mut conn = http_client::Conn::open(addr, version.as_str(), bearer).await?;
    let mut side = None;
    if !sessionless && version == Version::V2025_11_25 {
        let elicits = tool == Tool::ConfirmAdd;
        let line = initialize_line(c as u64, elicits);
        let reply = conn.post(line.as_bytes(), None).await?;
        let session = reply.session.clone();
        let status = reply.finish().await?;
        if status != 200 {
            return Err(format!("initialize: HTTP {status}").into());
        }
        conn.session = Some(session.ok_or("no Mcp-Session-Id")?);
        let status = conn
            .post(INITIALIZED.as_bytes(), None)
            .await?
            .finish()
            .await?;
        if status != 202 && status != 200 {
            return Err(format!("notifications/initialized: HTTP {status}").into());
        }
        if elicits {
            let mut answers = http_client::Conn::open(addr, version.as_str(), bearer).await?;
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

/// A client's requests of one phase, built whole (head and body) before it starts: request
/// `k` is `bytes[ends[k - 1]..ends[k]]`.
#[derive(Default)]
struct Prepared {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Prepared {
    fn build(
        conn: &http_client::Conn,
        calls: &Calls,
        numbers: impl Iterator<Item = usize>,
    ) -> Self {
        let call = (calls.version == Version::V2026_07_28).then(|| calls.tool.name());
        let mut prepared = Prepared::default();
        for i in numbers {
            conn.request(calls.line(i).as_bytes(), call, &mut prepared.bytes);
            prepared.ends.push(prepared.bytes.len());
        }
        prepared
    }

    fn get(&self, k: usize) -> &[u8] {
        let start = if k == 0 { 0 } else { self.ends[k - 1] };
        &self.bytes[start..self.ends[k]]
    }
}

/// Call number `i` (sent as `request`) to its end: the call; in 2026-07-28 the retry if input
/// is required; in a 2025-11-25 session the answer to the server's question, on the side
/// connection. Every answer is checked in full ([`Calls::read`]), or when `quick` only for its
/// outcome ([`Calls::read_quick`]).
async fn http_call(
    client: &mut Client,
    calls: &Calls,
    i: usize,
    request: &[u8],
    quick: bool,
) -> Result<()> {
    let stateless = calls.version == Version::V2026_07_28;
    let name = stateless.then(|| calls.tool.name());
    let mut retry_body: Option<String> = None;
    loop {
        let mut reply = match &retry_body {
            None => client.conn.send_prepared(request).await?,
            Some(body) => client.conn.post(body.as_bytes(), name).await?,
        };
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
            let step = if quick {
                calls.read_quick(message)?
            } else {
                calls.read(message)?
            };
            match step {
                Step::Done(got) if got == i => done = true,
                Step::Done(got) => return Err(format!("call {i} answered as {got}").into()),
                Step::Send(line) if stateless => retry = Some(line),
                Step::Send(line) => {
                    let side = client.side.as_mut().ok_or("a question without a session")?;
                    let status = side.post(line.as_bytes(), None).await?.finish().await?;
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
        let status = reply.status;
        retry_body =
            Some(retry.ok_or_else(|| format!("call {i}: HTTP {status} without an answer"))?);
    }
}

/// Opens the clients, runs the warm-up and then the `n` measured calls; returns the measured
/// calls' latencies (ns), the time they took and the server's CPU time over them (when its
/// `pid` is known).
#[allow(clippy::too_many_arguments)]
async fn http_drive(
    addr: SocketAddr,
    bearer: Option<&str>,
    (sessionless, expects_sse): (bool, Option<bool>),
    tool: Tool,
    version: Version,
    n: usize,
    clients: usize,
    pid: Option<u32>,
    ticks: f64,
) -> Result<(Vec<u64>, Duration, Option<f64>)> {
    let mut conns = Vec::with_capacity(clients);
    for c in 0..clients {
        let mut client = http_client_open(addr, bearer, sessionless, tool, version, c).await?;
        client.expects_sse = expects_sse;
        conns.push(client);
    }
    // Warm-up, then the measured calls; each client takes every `clients`-th call. Every answer
    // of the warm-up is checked in full, the measured ones for their outcome: the checks of
    // what an answer holds (an `add`'s sum, a `create_user`'s email back) would take as much
    // of the driver's time per call as a fast server takes of its own.
    let mut cpu_before = None;
    let mut result = (Vec::new(), Duration::ZERO);
    for (phase, count, first_id) in [(0, (n / 10).clamp(100, 2000), 1_000u64), (1, n, 1_000_000)] {
        let calls = Calls {
            tool,
            version,
            first_id,
            n: count,
        };
        let prepared: Vec<Prepared> = conns
            .iter()
            .enumerate()
            .map(|(c, client)| Prepared::build(&client.conn, &calls, (c..count).step_by(clients)))
            .collect();
        if phase == 1 {
            cpu_before = pid.map(|pid| CpuSample::take(pid, ticks)).transpose()?;
        }
        let base = Instant::now();
        let mut tasks = Vec::with_capacity(clients);
        for ((c, mut client), requests) in conns.drain(..).enumerate().zip(prepared) {
            tasks.push(tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(count / clients + 1);
                for (k, i) in (c..count).step_by(clients).enumerate() {
                    let t = Instant::now();
                    http_call(&mut client, &calls, i, requests.get(k), phase == 1).await?;
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
    let cpu = match (pid, cpu_before) {
        (Some(pid), Some(before)) => Some(CpuSample::take(pid, ticks)?.since(&before)),
        _ => None,
    };
    Ok((result.0, result.1, cpu))
}
