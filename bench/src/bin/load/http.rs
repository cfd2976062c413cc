//! Driving a server over Streamable HTTP: M keep-alive clients, requests one after another.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use super::process::{CpuSample, ServerCmd, peak_rss_kib, percentile};
use super::{Error, INITIALIZED, Result, Run, Tool, call_line, check_response, initialize_line};

pub(crate) mod http_client {
    //! A minimal Streamable HTTP client on hyper: one HTTP/1.1 keep-alive connection per
    //! client, requests one after another.

    use http_body_util::{BodyExt, Full};
    use hyper::body::Bytes;
    use hyper::client::conn::http1::SendRequest;
    use hyper_util::rt::TokioIo;

    use crate::Result;

    pub(crate) struct Conn {
        sender: SendRequest<Full<Bytes>>,
        host: String,
        pub(crate) session: Option<String>,
    }

    pub(crate) struct Answer {
        pub(crate) status: u16,
        pub(crate) session: Option<String>,
        /// The JSON-RPC message: the body, or the data of the SSE event that carries it.
        pub(crate) message: Option<String>,
    }

    impl Conn {
        pub(crate) async fn open(addr: std::net::SocketAddr) -> Result<Conn> {
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
                session: None,
            })
        }

        pub(crate) async fn post(&mut self, body: String) -> Result<Answer> {
            let mut request = hyper::Request::post("/mcp")
                .header("host", &self.host)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", crate::PROTOCOL);
            if let Some(s) = &self.session {
                request = request.header("mcp-session-id", s);
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
            let body = response.into_body().collect().await?.to_bytes();
            let text = String::from_utf8(body.to_vec())?;
            let message = if sse {
                // The last `data:` line that holds a JSON-RPC response.
                text.lines()
                    .rev()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim)
                    .find(|d| {
                        d.starts_with('{') && (d.contains("\"result\"") || d.contains("\"error\""))
                    })
                    .map(str::to_owned)
            } else if text.is_empty() {
                None
            } else {
                Some(text)
            };
            Ok(Answer {
                status,
                session,
                message,
            })
        }
    }
}

pub(crate) fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// One HTTP run: start the server on a free port, `clients` connections (each initializing a
/// session unless stateless), `n` calls of `tool` in all.
pub(crate) fn http_run(
    server: &ServerCmd,
    stateless: bool,
    tool: Tool,
    n: usize,
    clients: usize,
    ticks: f64,
) -> Result<Run> {
    let port = free_port()?;
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse()?;
    let mut extra = vec!["--http".to_owned(), addr.to_string()];
    if stateless {
        extra.push("--stateless".to_owned());
    }
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
    let outcome = runtime.block_on(http_drive(addr, stateless, tool, n, clients, pid, ticks));
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

pub(crate) async fn http_client_open(
    addr: SocketAddr,
    stateless: bool,
    c: usize,
) -> Result<http_client::Conn> {
    let mut conn = http_client::Conn::open(addr).await?;
    if !stateless {
        let answer = conn.post(initialize_line(c as u64)).await?;
        if answer.status != 200 {
            return Err(format!("initialize: HTTP {}", answer.status).into());
        }
        conn.session = Some(answer.session.ok_or("no Mcp-Session-Id")?);
        let answer = conn.post(INITIALIZED.to_owned()).await?;
        if answer.status != 202 && answer.status != 200 {
            return Err(format!("notifications/initialized: HTTP {}", answer.status).into());
        }
    }
    Ok(conn)
}

pub(crate) async fn http_drive(
    addr: SocketAddr,
    stateless: bool,
    tool: Tool,
    n: usize,
    clients: usize,
    pid: u32,
    ticks: f64,
) -> Result<(Vec<u64>, Duration, f64)> {
    let mut conns = Vec::with_capacity(clients);
    for c in 0..clients {
        conns.push(http_client_open(addr, stateless, c).await?);
    }
    // Warm-up, then the measured calls; each client takes every `clients`-th call.
    let mut cpu_before = CpuSample::default();
    let mut result = (Vec::new(), Duration::ZERO);
    for (phase, count, first_id) in [(0, (n / 10).clamp(100, 2000), 1_000u64), (1, n, 1_000_000)] {
        if phase == 1 {
            cpu_before = CpuSample::take(pid, ticks)?;
        }
        let base = Instant::now();
        let mut tasks = Vec::with_capacity(clients);
        for (c, mut conn) in conns.drain(..).enumerate() {
            tasks.push(tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(count / clients + 1);
                for i in (c..count).step_by(clients) {
                    let t = Instant::now();
                    let answer = conn.post(call_line(first_id + i as u64, tool, i)).await?;
                    let message = answer.message.ok_or_else(|| {
                        format!("call {i}: HTTP {} without a message", answer.status)
                    })?;
                    let got = check_response(&message, tool, first_id, count)?;
                    if got != i {
                        return Err::<_, Error>(format!("call {i} answered as {got}").into());
                    }
                    latencies.push(t.elapsed().as_nanos() as u64);
                }
                Ok((conn, latencies))
            }));
        }
        let mut latencies = Vec::with_capacity(count);
        for task in tasks {
            let (conn, l) = task.await??;
            conns.push(conn);
            latencies.extend(l);
        }
        result = (latencies, base.elapsed());
    }
    let cpu = CpuSample::take(pid, ticks)?.since(&cpu_before);
    Ok((result.0, result.1, cpu))
}
