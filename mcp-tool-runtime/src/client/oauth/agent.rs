//! The command line's user agent (RFC 8252): the authorization page printed (and opened in a
//! browser when asked), its redirect received on a loopback port.

use std::net::{SocketAddr, TcpListener as StdListener};
use std::sync::Mutex;
use std::time::Duration;

use tokio::net::TcpListener;

use crate::client::ClientFuture;
use crate::sync::lock;

use super::UserAgent;
use super::loopback;

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
        let (listener, address) = loopback::bind(port)?;
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
            loopback::open_in_browser(url);
        }
        loop {
            let request = loopback::next(&listener)
                .await
                .map_err(|e| format!("the loopback listener: {e}"))?;
            if request.path() != "/callback" {
                request
                    .answer("404 Not Found", &[], "Not the redirect.")
                    .await;
                continue;
            }
            let target = request.target.clone();
            request
                .answer(
                    "200 OK",
                    &[],
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
