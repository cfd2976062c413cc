//! Bounded requests to the authorization server: every answer is limited in time and size,
//! and a failure says what was fetched, never with what credentials.

use std::time::Duration;

use serde::de::DeserializeOwned;

/// The longest an authorization server may take to answer.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(5);

/// The longest a request waits for a fetch, its own or the one under way that it waits on:
/// a request never queues behind fetches that each take this long.
pub(crate) const WAIT: Duration = TIMEOUT;

/// The error of a request that waited [`WAIT`] for an answer from `url`.
pub(crate) fn waited(url: &str) -> FetchError {
    FetchError::Unreachable {
        url: url.to_owned(),
        reason: format!("no answer within {} s", WAIT.as_secs()),
    }
}

/// The largest answer read (metadata, a key set, an introspection answer).
pub(crate) const MAX_BODY: usize = 1 << 20;

/// Why a fetch failed: the server's fault or the network's, never the token's.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum FetchError {
    #[error("`{url}` could not be reached: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("`{url}` answered {status}")]
    Status { url: String, status: u16 },
    #[error("`{url}` answered more than {MAX_BODY} bytes")]
    TooLarge { url: String },
    #[error("`{url}` answered what is not the JSON expected: {reason}")]
    NotJson { url: String, reason: String },
}

/// An HTTP client for the authorization server (rustls, with ring as the process's
/// provider).
pub(crate) fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .timeout(TIMEOUT)
        .connect_timeout(TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_else(|_| reqwest::Client::new())
}

/// Sends `request` and reads its answer as `T`, within [`TIMEOUT`] and [`MAX_BODY`]; `None`
/// for a 404 when `missing_ok` (a well-known document a server may not have).
pub(crate) async fn json<T: DeserializeOwned>(
    request: reqwest::RequestBuilder,
    url: &str,
    missing_ok: bool,
) -> Result<Option<T>, FetchError> {
    let (status, body) = read(request, url).await?;
    if missing_ok && status == 404 {
        return Ok(None);
    }
    if !(200..300).contains(&status) {
        return Err(FetchError::Status {
            url: url.to_owned(),
            status,
        });
    }
    parse(&body, url).map(Some)
}

/// Sends `request` and reads its status and body (at most [`MAX_BODY`], within [`TIMEOUT`]),
/// whatever the status: an OAuth error answer is JSON too.
pub(crate) async fn read(
    request: reqwest::RequestBuilder,
    url: &str,
) -> Result<(u16, Vec<u8>), FetchError> {
    read_with_headers(request, url)
        .await
        .map(|(status, _, body)| (status, body))
}

/// [`read`], with the answer's headers.
pub(crate) async fn read_with_headers(
    request: reqwest::RequestBuilder,
    url: &str,
) -> Result<(u16, reqwest::header::HeaderMap, Vec<u8>), FetchError> {
    let unreachable = |e: reqwest::Error| FetchError::Unreachable {
        url: url.to_owned(),
        reason: e.without_url().to_string(),
    };
    let mut response = request.send().await.map_err(unreachable)?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    if response
        .content_length()
        .is_some_and(|n| n > MAX_BODY as u64)
    {
        return Err(FetchError::TooLarge {
            url: url.to_owned(),
        });
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(unreachable)? {
        if body.len() + chunk.len() > MAX_BODY {
            return Err(FetchError::TooLarge {
                url: url.to_owned(),
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok((status, headers, body))
}

/// `body` read as `T`; the error names `url` and where the body went wrong, never what it
/// holds (serde's own message may quote a value of it: a fetched body is the server's, and may
/// be an internal page a server pointed the client at).
pub(crate) fn parse<T: DeserializeOwned>(body: &[u8], url: &str) -> Result<T, FetchError> {
    serde_json::from_slice(body).map_err(|e| {
        let what = match e.classify() {
            serde_json::error::Category::Data => "JSON of another shape",
            _ => "not JSON",
        };
        FetchError::NotJson {
            url: url.to_owned(),
            reason: format!("{what} (line {}, column {})", e.line(), e.column()),
        }
    })
}

/// `application/x-www-form-urlencoded` encoding of one value (RFC 6749 appendix B).
pub(crate) fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
