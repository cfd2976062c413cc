//! The loopback redirect listener of RFC 8252 §7.3, as little HTTP as a browser coming back
//! needs: one `GET` request head read (bounded in size and time), one answer written, the
//! connection closed. The command line's user agent ([`super::LoopbackBrowser`]) and a stdio
//! gateway's sign-ins both receive their redirects through it.

use std::net::{Ipv4Addr, SocketAddr, TcpListener as StdListener};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// The most a request head may hold.
const MAX_HEAD: usize = 16 << 10;

/// How long a connection may take to send its request head.
const HEAD_WAIT: Duration = Duration::from_secs(10);

/// Binds `127.0.0.1:port` (0: a port the system picks), ready for the runtime.
pub(crate) fn bind(port: u16) -> std::io::Result<(StdListener, SocketAddr)> {
    let listener = StdListener::bind((Ipv4Addr::LOCALHOST, port))?;
    listener.set_nonblocking(true)?;
    let address = listener.local_addr()?;
    Ok((listener, address))
}

/// A browser's `GET` on the loopback listener: its target (path and query), its `Cookie`
/// headers (joined by `; `), and the connection to answer on.
pub(crate) struct Request {
    pub(crate) target: String,
    pub(crate) cookies: String,
    stream: TcpStream,
}

impl Request {
    /// The path of the target, without its query.
    pub(crate) fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }

    /// The query of the target (empty when it has none).
    pub(crate) fn query(&self) -> &str {
        self.target.split_once('?').map_or("", |(_, q)| q)
    }

    /// Answers with `status` (`"200 OK"`), `headers` besides the content type, and a page
    /// saying `text` (HTML-escaped already); then closes the connection.
    pub(crate) async fn answer(mut self, status: &str, headers: &[(&str, &str)], text: &str) {
        let _ = reply(&mut self.stream, status, headers, text).await;
    }
}

/// Reads the request head of `stream`: `None` when it did not come within the bounds, or was
/// not a `GET` (answered 405).
pub(crate) async fn read(mut stream: TcpStream) -> Option<Request> {
    let mut head = Vec::new();
    let mut buffer = [0u8; 2048];
    let read = tokio::time::timeout(HEAD_WAIT, async {
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
            let n = stream.read(&mut buffer).await?;
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buffer[..n]);
        }
        Ok::<(), std::io::Error>(())
    })
    .await;
    if !matches!(read, Ok(Ok(()))) {
        return None;
    }
    let text = String::from_utf8_lossy(&head);
    let mut lines = text.split("\r\n");
    let mut parts = lines.next().unwrap_or_default().split_whitespace();
    let (Some("GET"), Some(target)) = (parts.next(), parts.next()) else {
        let _ = reply(
            &mut stream,
            "405 Method Not Allowed",
            &[],
            "Not a redirect.",
        )
        .await;
        return None;
    };
    let target = target.to_owned();
    let cookies: Vec<&str> = lines
        .take_while(|line| !line.is_empty())
        .filter_map(|line| line.split_once(':'))
        .filter(|(name, _)| name.trim().eq_ignore_ascii_case("cookie"))
        .map(|(_, value)| value.trim())
        .collect();
    Some(Request {
        target,
        cookies: cookies.join("; "),
        stream,
    })
}

/// Accepts the next connection and reads its request (connections that send no `GET` in time
/// are dropped, and the next one waited for).
pub(crate) async fn next(listener: &TcpListener) -> std::io::Result<Request> {
    loop {
        let (stream, _) = listener.accept().await?;
        if let Some(request) = read(stream).await {
            return Ok(request);
        }
    }
}

async fn reply(
    stream: &mut TcpStream,
    status: &str,
    headers: &[(&str, &str)],
    text: &str,
) -> std::io::Result<()> {
    let body = format!("<!doctype html><title>Authorization</title><p>{text}</p>");
    let mut head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\ncache-control: no-store\r\nreferrer-policy: no-referrer\r\nconnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        // A value is the server's own (a cookie, an authorization page's address): a line
        // break in it would start another header.
        if !value.contains(['\r', '\n']) {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

/// Opens `url` with the desktop's browser, if there is one; nothing happens otherwise (the
/// address is printed already).
pub(crate) fn open_in_browser(url: &str) {
    let command = if cfg!(target_os = "macos") {
        ("open", vec![url])
    } else if cfg!(windows) {
        ("cmd", vec!["/C", "start", "", url])
    } else {
        ("xdg-open", vec![url])
    };
    let _ = std::process::Command::new(command.0)
        .args(command.1)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}
