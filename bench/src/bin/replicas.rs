//! Calls per second through an MCP endpoint (nginx in front of replicas, or one replica): C
//! clients on keep-alive HTTP/1.1 connections, each making requests one after another for S
//! seconds, then the rate and the latency percentiles.
//!
//!   replicas URL MODE [CLIENTS] [SECONDS]
//!
//! MODE: `call2026` (stateless `tools/call` of `multiply`), `call2025` (`tools/call` of `multiply` in a
//! 2025-11-25 session per client), `init2025` (`initialize`, `notifications/initialized` and
//! DELETE: a new session each time). Start the replicas with `deploy/replicas.sh up N` (MCP_SERVER=
//! target/release/calc) and point URL at nginx or at one replica.

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

struct Conn {
    stream: TcpStream,
    addr: String,
    path: String,
    buffer: Vec<u8>,
}

impl Conn {
    async fn open(url: &str) -> Conn {
        let rest = url.strip_prefix("http://").expect("an http:// URL");
        let (addr, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let stream = TcpStream::connect(addr).await.expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        Conn {
            stream,
            addr: addr.to_owned(),
            path: path.to_owned(),
            buffer: Vec::new(),
        }
    }

    /// POSTs `body`; returns the status, the session header and the body (JSON answers with a
    /// Content-Length: what `tools/call` of a quick tool gets).
    async fn post(
        &mut self,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, Option<String>, String) {
        self.send("POST", headers, body).await
    }

    /// Sends a request; a keep-alive connection the other side closed (nginx ends one after
    /// `keepalive_requests`) is opened again and the request sent once more.
    async fn send(
        &mut self,
        method: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, Option<String>, String) {
        if let Some(reply) = self.try_send(method, headers, body).await {
            return reply;
        }
        *self = Conn::open(&format!("http://{}{}", self.addr, self.path)).await;
        self.try_send(method, headers, body)
            .await
            .expect("an answer on a new connection")
    }

    async fn try_send(
        &mut self,
        method: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Option<(u16, Option<String>, String)> {
        let mut head = format!(
            "{method} {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.path,
            self.addr,
            body.len()
        );
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        head.push_str(body);
        self.stream.write_all(head.as_bytes()).await.ok()?;
        let mut chunk = [0u8; 16384];
        loop {
            if let Some(end) = self.buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&self.buffer[..end]).into_owned();
                let field = |name: &str| {
                    head.lines().find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.trim()
                            .eq_ignore_ascii_case(name)
                            .then(|| v.trim().to_owned())
                    })
                };
                let length: usize = field("content-length")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                if self.buffer.len() >= end + 4 + length {
                    let status = head
                        .split_whitespace()
                        .nth(1)
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(0);
                    let body = String::from_utf8_lossy(&self.buffer[end + 4..end + 4 + length])
                        .into_owned();
                    self.buffer.drain(..end + 4 + length);
                    return Some((status, field("mcp-session-id"), body));
                }
            }
            let n = self.stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                assert!(self.buffer.is_empty(), "the connection closed mid-answer");
                return None;
            }
            self.buffer.extend_from_slice(&chunk[..n]);
        }
    }
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"0"}}"#;

async fn initialize(conn: &mut Conn) -> String {
    let body = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;
    let (status, session, text) = conn.post(&[], body).await;
    assert_eq!(status, 200, "{text}");
    let session = session.expect("a session id");
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let (status, _, _) = conn.post(&headers, note).await;
    assert_eq!(status, 202);
    session
}

async fn client(url: String, mode: String, until: Instant) -> Vec<Duration> {
    let mut conn = Conn::open(&url).await;
    let session = if mode == "call2025" {
        Some(initialize(&mut conn).await)
    } else {
        None
    };
    let mut latencies = Vec::new();
    let mut id = 1u64;
    while Instant::now() < until {
        id += 1;
        let started = Instant::now();
        match mode.as_str() {
            "call2026" => {
                let body = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"multiply","arguments":{{"a":{id},"b":1}},{META}}}}}"#
                );
                let headers = [
                    ("MCP-Protocol-Version", "2026-07-28"),
                    ("Mcp-Method", "tools/call"),
                    ("Mcp-Name", "multiply"),
                ];
                let (status, _, text) = conn.post(&headers, &body).await;
                assert!(status == 200 && text.contains(&id.to_string()), "{text}");
            }
            "call2025" => {
                let body = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"multiply","arguments":{{"a":{id},"b":1}}}}}}"#
                );
                let session = session.as_deref().unwrap_or_default();
                let headers = [
                    ("Mcp-Session-Id", session),
                    ("MCP-Protocol-Version", "2025-11-25"),
                ];
                let (status, _, text) = conn.post(&headers, &body).await;
                assert!(status == 200 && text.contains(&id.to_string()), "{text}");
            }
            "init2025" => {
                // Opened and ended: the server's session count stays flat.
                let session = initialize(&mut conn).await;
                let headers = [
                    ("Mcp-Session-Id", session.as_str()),
                    ("MCP-Protocol-Version", "2025-11-25"),
                ];
                let (status, _, _) = conn.send("DELETE", &headers, "").await;
                assert_eq!(status, 200);
            }
            other => panic!("unknown mode `{other}`"),
        }
        latencies.push(started.elapsed());
    }
    latencies
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, mode, rest @ ..] = args.as_slice() else {
        eprintln!("usage: replicas URL call2026|call2025|init2025 [CLIENTS] [SECONDS]");
        std::process::exit(2);
    };
    let clients: usize = rest.first().and_then(|c| c.parse().ok()).unwrap_or(16);
    let seconds: u64 = rest.get(1).and_then(|s| s.parse().ok()).unwrap_or(10);
    let started = Instant::now();
    let until = started + Duration::from_secs(seconds);
    let tasks: Vec<_> = (0..clients)
        .map(|_| tokio::spawn(client(url.clone(), mode.clone(), until)))
        .collect();
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.expect("a client"));
    }
    let elapsed = started.elapsed().as_secs_f64();
    all.sort();
    let pct = |p: f64| all[((all.len() - 1) as f64 * p) as usize].as_secs_f64() * 1e3;
    println!(
        "{mode} {url} clients={clients}: {} calls in {elapsed:.1} s = {:.0}/s; p50 {:.2} ms, p99 {:.2} ms",
        all.len(),
        all.len() as f64 / elapsed,
        pct(0.5),
        pct(0.99)
    );
}
