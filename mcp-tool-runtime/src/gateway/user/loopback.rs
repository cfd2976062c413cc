//! A sign-in for the user of a stdio connection (RFC 8252 §7.3): the gateway has no HTTP
//! endpoint for the authorization server to send them back to, so each sign-in binds a
//! loopback listener of its own (`127.0.0.1`, any port, or the port of a loopback
//! `redirect_uri`), which serves the sign-in's start link and its redirect back only — with
//! the same checks as the HTTP endpoint (`Redirects::page`) — and is closed when the sign-in
//! ends. The start link is printed on stderr (stdout is the protocol's), and opened with the
//! desktop's browser when the gateway was told to.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use super::super::redirect::Redirects;
use super::ServerHandle;
use crate::client::oauth::loopback;
use crate::server::core::handle::SignInPage;
use crate::tool::ToolError;

/// The path a loopback redirect comes back on, when the connection names no `redirect_uri`.
const CALLBACK: &str = "/callback";

/// The most browser connections one listener serves at once (a browser opens a few; a page
/// waits for the code exchange, at most 30 s).
const MAX_CONNECTIONS: usize = 8;

/// Whether the sign-in of user `key` comes back on a loopback listener: the one local client
/// of a stdio connection, when no HTTP endpoint of the server receives sign-ins.
pub(super) fn applies(key: &str, server: &ServerHandle) -> bool {
    key == "local"
        && !server
            .shared
            .receives_redirects
            .load(std::sync::atomic::Ordering::SeqCst)
}

impl super::Users {
    /// Where the sign-in of user `key` comes back to: a loopback listener of its own (kept
    /// open as long as it is held), or the gateway's HTTP endpoint.
    pub(super) fn redirect_to(
        &self,
        label: &str,
        key: &str,
        server: &ServerHandle,
    ) -> Result<(String, Option<Listener>), ToolError> {
        if !applies(key, server) {
            return Ok((self.redirect_uri(label, server)?, None));
        }
        let configured = self.grant.redirect_uri.as_deref();
        let listener = Listener::bind(label, configured, self.redirects.clone())?;
        Ok((listener.redirect_uri.clone(), Some(listener)))
    }
}

/// A sign-in's loopback listener, closed when dropped (a page it is answering still gets its
/// answer).
pub(super) struct Listener {
    redirect_uri: String,
    task: tokio::task::AbortHandle,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Listener {
    /// Binds the listener of a sign-in of mount `label`, as the connection's `redirect_uri`
    /// says (`http://127.0.0.1:PORT/path`; port 0 or none: any port) or on any port at
    /// `/callback`.
    fn bind(
        label: &str,
        configured: Option<&str>,
        redirects: Arc<Redirects>,
    ) -> Result<Listener, ToolError> {
        let unavailable = |why: String| ToolError::new("SIGN_IN_UNAVAILABLE", why);
        let (port, path) = match configured {
            None => (0, CALLBACK.to_owned()),
            Some(uri) => loopback_uri(uri).ok_or_else(|| {
                unavailable(format!(
                    "signing in to `{label}` over stdio needs a loopback redirect URI, such as `http://127.0.0.1:8976/callback`, or none: its connection's `redirect_uri` is another address, which this gateway does not serve"
                ))
            })?,
        };
        let (listener, address) = loopback::bind(port).map_err(|e| {
            unavailable(format!(
                "signing in to `{label}` needs a loopback port for the browser to come back to: 127.0.0.1:{port}: {e}"
            ))
        })?;
        let listener = TcpListener::from_std(listener)
            .map_err(|e| unavailable(format!("the loopback listener of `{label}`: {e}")))?;
        let redirect_uri = format!("http://{address}{path}");
        let task = tokio::spawn(serve(listener, path, redirects)).abort_handle();
        Ok(Listener { redirect_uri, task })
    }
}

/// The port and path of `uri` when it is `http://127.0.0.1[:PORT]/path` (no port: any).
fn loopback_uri(uri: &str) -> Option<(u16, String)> {
    let url = reqwest::Url::parse(uri).ok()?;
    // The address bound is 127.0.0.1: the redirect URI names it as it is.
    let loopback = url.host_str() == Some("127.0.0.1");
    (url.scheme() == "http" && loopback && url.query().is_none())
        .then(|| (url.port().unwrap_or(0), url.path().to_owned()))
}

/// Tells the user of a stdio connection where to sign in: on stderr, and in the desktop's
/// browser when `open`.
pub(super) fn tell(label: &str, page: &str, open: bool) {
    eprintln!("To sign in to `{label}`, open this address in a browser on this machine: {page}");
    if open {
        loopback::open_in_browser(page);
    }
}

/// The answer to a call whose client cannot show a page (no `elicitation.url`): the page is
/// in the error (and on stderr); the sign-in goes on, and a call after it finds the user in.
pub(super) fn open_and_call_again(label: &str, page: &str) -> ToolError {
    ToolError::new(
        "SIGN_IN_REQUIRED",
        format!(
            "to use `{label}`, sign in first: open {page} in a browser on this machine (the gateway printed it on its stderr too), then call again"
        ),
    )
    .retryable(true)
}

/// Serves the start link and the redirect back on `path`; anything else is not found.
async fn serve(listener: TcpListener, path: String, redirects: Arc<Redirects>) {
    let permits = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors, say: tried again shortly, not at once.
                tracing::warn!(error = %e, "a sign-in's loopback listener could not accept");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            continue;
        };
        let (path, redirects) = (path.clone(), redirects.clone());
        tokio::spawn(async move {
            let _permit = permit;
            let Some(request) = loopback::read(stream).await else {
                return;
            };
            if request.path() != path {
                request.answer("404 Not Found", &[], "Not a sign-in.").await;
                return;
            }
            let page = redirects.page(request.query(), &request.cookies).await;
            match page {
                SignInPage::Redirect { location, cookie } => {
                    let headers = [("location", location.as_str()), ("set-cookie", &cookie)];
                    request.answer("303 See Other", &headers, "").await;
                }
                SignInPage::Page { ok, text, cookie } => {
                    let status = if ok { "200 OK" } else { "400 Bad Request" };
                    let headers: Vec<(&str, &str)> =
                        cookie.iter().map(|c| ("set-cookie", c.as_str())).collect();
                    request.answer(status, &headers, &text).await;
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::loopback_uri;

    #[test]
    fn only_an_http_uri_on_a_loopback_address_is_listened_on() {
        assert_eq!(
            loopback_uri("http://127.0.0.1:8976/callback"),
            Some((8976, "/callback".to_owned()))
        );
        assert_eq!(
            loopback_uri("http://127.0.0.1/cb"),
            Some((0, "/cb".to_owned()))
        );
        for other in [
            "https://127.0.0.1:8976/callback",
            "http://gw.example.com/callback",
            "http://10.0.0.1:8976/callback",
            "http://localhost:8976/callback",
            "http://127.0.0.1:8976/callback?x=1",
        ] {
            assert_eq!(loopback_uri(other), None, "{other}");
        }
    }
}
