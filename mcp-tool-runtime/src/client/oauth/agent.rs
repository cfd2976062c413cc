//! The command line's user agent (RFC 8252): the authorization page printed (and opened in a
//! browser when asked), its redirect received on a loopback port.

use std::net::{Ipv4Addr, SocketAddr, TcpListener as StdListener};
use std::sync::Mutex;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

use crate::client::ClientFuture;
use crate::sync::lock;

use super::UserAgent;

/// The most a redirect's request head may hold.
const MAX_HEAD: usize = 16 << 10;

/// Prints the authorization page's address on stderr (and opens it with the desktop's browser
/// when [`open_browser`](Self::open_browser) says so), then waits for the authorization
/// server's redirect to `http://127.0.0.1:<port>/callback` (at most
/// [`timeout`](Self::timeout), 5 minutes by default).
#[derive(Debug)]
pub struct LoopbackBrowser {
    listener: Mutex<Option<StdListener>>,
    address: SocketAddr,
    open: bool,
    timeout: Duration,
}

impl LoopbackBrowser {
    /// Listens on `127.0.0.1:port` (0: a port the system picks; a pre-registered client
    /// names its port in its redirect URI).
    pub fn bind(port: u16) -> std::io::Result<Self> {
        let listener = StdListener::bind((Ipv4Addr::LOCALHOST, port))?;
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        Ok(LoopbackBrowser {
            listener: Mutex::new(Some(listener)),
            address,
            open: false,
            timeout: Duration::from_secs(300),
        })
    }

    /// Also opens the page with the desktop's browser (`xdg-open`, `open`, `start`).
    #[must_use]
    pub fn open_browser(mut self, open: bool) -> Self {
        self.open = open;
        self
    }

    /// How long to wait for the user (default 5 minutes).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    async fn wait(&self, url: &str) -> Result<String, String> {
        let listener = {
            let mut slot = lock(&self.listener);
            match slot.as_ref().map(StdListener::try_clone) {
                Some(Ok(l)) => l,
                Some(Err(e)) => return Err(format!("the loopback listener: {e}")),
                None => {
                    *slot = None;
                    return Err("the loopback listener is gone".into());
                }
            }
        };
        let listener =
            TcpListener::from_std(listener).map_err(|e| format!("the loopback listener: {e}"))?;
        eprintln!("Open this address in a browser to authorize: {url}");
        if self.open {
            open(url);
        }
        loop {
            let (mut stream, _) = listener
                .accept()
                .await
                .map_err(|e| format!("the loopback listener: {e}"))?;
            let mut head = Vec::new();
            let mut buffer = [0u8; 2048];
            let read = tokio::time::timeout(Duration::from_secs(10), async {
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
                continue;
            }
            let line = head.split(|b| *b == b'\n').next().unwrap_or_default();
            let line = String::from_utf8_lossy(line);
            let mut parts = line.split_whitespace();
            let (Some("GET"), Some(target)) = (parts.next(), parts.next()) else {
                let _ = reply(&mut stream, "405 Method Not Allowed", "Not a redirect.").await;
                continue;
            };
            if !target.starts_with("/callback") {
                let _ = reply(&mut stream, "404 Not Found", "Not the redirect.").await;
                continue;
            }
            let _ = reply(
                &mut stream,
                "200 OK",
                "The authorization is done; this window may be closed.",
            )
            .await;
            return Ok(format!("http://{}{target}", self.address));
        }
    }
}

impl UserAgent for LoopbackBrowser {
    fn redirect_uri(&self) -> String {
        format!("http://{}/callback", self.address)
    }

    fn authorize<'a>(&'a self, url: &'a str) -> ClientFuture<'a, Result<String, String>> {
        Box::pin(async move {
            tokio::time::timeout(self.timeout, self.wait(url))
                .await
                .map_err(|_| format!("nobody authorized within {} s", self.timeout.as_secs_f64()))?
        })
    }
}

async fn reply(
    stream: &mut tokio::net::TcpStream,
    status: &str,
    text: &str,
) -> std::io::Result<()> {
    let body = format!("<!doctype html><title>Authorization</title><p>{text}</p>");
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

/// Opens `url` with the desktop's browser, if there is one; nothing happens otherwise (the
/// address is printed already).
fn open(url: &str) {
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

#[cfg(test)]
mod tests {
    use super::{LoopbackBrowser, UserAgent};

    #[tokio::test]
    async fn the_redirect_is_received_on_the_loopback_port() {
        // Bounded: a failure below ends the test instead of leaving it waiting.
        let browser = LoopbackBrowser::bind(0)
            .unwrap()
            .timeout(std::time::Duration::from_secs(20));
        let redirect = browser.redirect_uri();
        assert!(redirect.starts_with("http://127.0.0.1:"), "{redirect}");
        let target = format!("{redirect}?code=abc&state=xyz");
        let follow = tokio::spawn(async move {
            // A stray request first, then the redirect.
            let _ = rustls::crypto::ring::default_provider().install_default();
            let http = reqwest::Client::new();
            let base = target.split("/callback").next().unwrap().to_owned();
            let stray = http
                .get(format!("{base}/favicon.ico"))
                .send()
                .await
                .unwrap();
            assert_eq!(stray.status().as_u16(), 404);
            http.get(&target).send().await.unwrap().status().as_u16()
        });
        let back = browser
            .authorize("https://as.example.com/authorize?x=1")
            .await
            .unwrap();
        assert!(back.ends_with("/callback?code=abc&state=xyz"), "{back}");
        assert_eq!(follow.await.unwrap(), 200);
    }
}
