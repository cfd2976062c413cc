//! What resumable SSE streams cost per event. An in-process server answers `tick` (ten log
//! messages, then the result: eleven SSE events a call) over Streamable HTTP on
//! loopback, to M keep-alive clients calling one after another, in three ways:
//! - a 2025-06-18 session: no event ids, nothing stored (the cost before resumption);
//! - a 2025-11-25 session with the in-memory event store (the default);
//! - a 2025-11-25 session with the Redis event store (a `redis-server` started here on a free
//!   loopback port, without persistence).
//!
//! `cargo run --release -p mcp-tool-bench --bin sse-events [-- CALLS]`

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use mcp_tool::http::HttpConfig;
use mcp_tool::http::events::RedisEventStore;
use mcp_tool::prelude::*;

/// Log messages per call (plus the result: one event more).
const TICKS: u32 = 10;

/// Logs `TICKS` messages, then answers. (Log messages rather than progress: a result waits
/// 30 ms after the last progress notification, which would hide the cost measured here.)
#[tool]
async fn tick(log: Logger) -> &'static str {
    for i in 1..=TICKS {
        log.info(format!("tick {i}"));
    }
    "done"
}

type Error = Box<dyn std::error::Error + Send + Sync>;

/// One keep-alive client with its session.
struct Client {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    session: Option<String>,
}

impl Client {
    async fn open(addr: SocketAddr, version: &str) -> Result<Client, Error> {
        let tcp = tokio::net::TcpStream::connect(addr).await?;
        tcp.set_nodelay(true)?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let mut client = Client {
            sender,
            session: None,
        };
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"sse-events","version":"0"}}}}}}"#
        );
        client.post(&init, addr).await?;
        client
            .post(
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                addr,
            )
            .await?;
        client
            .post(
                r#"{"jsonrpc":"2.0","id":0,"method":"logging/setLevel","params":{"level":"info"}}"#,
                addr,
            )
            .await?;
        Ok(client)
    }

    /// Posts a message, reads the answer to its end; the number of SSE events in it.
    async fn post(&mut self, body: &str, addr: SocketAddr) -> Result<usize, Error> {
        let mut request = hyper::Request::post("/mcp")
            .header("host", addr.to_string())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(id) = &self.session {
            request = request.header("mcp-session-id", id);
        }
        let request = request.body(Full::new(Bytes::from(body.to_owned())))?;
        self.sender.ready().await?;
        let response = self.sender.send_request(request).await?;
        if let Some(id) = response.headers().get("mcp-session-id") {
            self.session = Some(id.to_str()?.to_owned());
        }
        let status = response.status();
        let bytes = response.into_body().collect().await?.to_bytes();
        if !status.is_success() {
            return Err(format!("{status}: {}", String::from_utf8_lossy(&bytes)).into());
        }
        Ok(bytes.windows(6).filter(|w| w == b"data: ").count())
    }
}

/// A `redis-server` on a free loopback port; killed when dropped.
struct Redis(Child, u16);

impl Redis {
    fn start() -> Result<Redis, Error> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("redis-server does not start: {e}"))?;
        let redis = Redis(child, port);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                return Err("redis-server never listened".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(redis)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Calls `tick` `calls` times from `clients` clients; (calls/s, µs per call at the median,
/// events per call).
async fn run(
    config: HttpConfig,
    version: &str,
    calls: usize,
    clients: usize,
) -> Result<(f64, f64, usize), Error> {
    let server = Server::new("sse-events", "0").only(["tick"]).build()?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let serving = tokio::spawn(async move {
        let _ = server.serve_http(listener, config).await;
    });
    let call =
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tick","arguments":{}}}"#;
    let mut tasks = Vec::new();
    let started = Instant::now();
    for _ in 0..clients {
        let mut client = Client::open(addr, version).await?;
        let share = calls / clients;
        tasks.push(tokio::spawn(async move {
            let mut times = Vec::with_capacity(share);
            let mut events = 0;
            for _ in 0..share {
                let t = Instant::now();
                events = client.post(call, addr).await?;
                times.push(t.elapsed());
            }
            Ok::<_, Error>((times, events))
        }));
    }
    let mut times = Vec::new();
    let mut events = 0;
    for task in tasks {
        let (t, e) = task.await??;
        times.extend(t);
        events = e;
    }
    let elapsed = started.elapsed();
    serving.abort();
    times.sort();
    let median = times[times.len() / 2].as_secs_f64() * 1e6;
    Ok((times.len() as f64 / elapsed.as_secs_f64(), median, events))
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let calls: usize = std::env::args()
        .nth(1)
        .map_or(Ok(4000), |a| a.parse())
        .map_err(|e| format!("CALLS: {e}"))?;
    let redis = Redis::start()?;
    let url = format!("redis://127.0.0.1:{}", redis.1);
    println!(
        "### Resumable SSE streams: {calls} calls of `tick` ({TICKS} log messages and the result), one in-process server, loopback\n"
    );
    println!(
        "| store | clients | calls/s | p50 µs/call | SSE events/call | added µs/event (p50) |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for clients in [1, 16] {
        let (base_rate, base_p50, base_events) =
            run(HttpConfig::default(), "2025-06-18", calls, clients).await?;
        println!(
            "| none (2025-06-18, no ids) | {clients} | {base_rate:.0} | {base_p50:.0} | {base_events} | – |"
        );
        let stores: [(&str, HttpConfig); 2] = [
            ("memory (2025-11-25)", HttpConfig::default()),
            (
                "Redis (2025-11-25)",
                HttpConfig::default().with_event_store(RedisEventStore::open(&url)?),
            ),
        ];
        for (name, config) in stores {
            let (rate, p50, events) = run(config, "2025-11-25", calls, clients).await?;
            // Each call's stored events: all but the priming one.
            let stored = events.saturating_sub(1).max(1) as f64;
            println!(
                "| {name} | {clients} | {rate:.0} | {p50:.0} | {events} | {:.1} |",
                (p50 - base_p50) / stored
            );
        }
    }
    drop(redis);
    Ok(())
}
