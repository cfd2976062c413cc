//! A request of the common shape read from the bytes a connection received: an HTTP/1.1
//! head (`httparse`) and the body its `Content-Length` announces, both arrived. Anything
//! else — another version, a chunked or `Expect`ed body, an upgrade, a head or body past
//! the bounds, bytes that are no head — is left to hyper, which answers it as it always did.

use std::convert::Infallible;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Bytes, HttpBody};
use axum::http::{HeaderName, HeaderValue, Method, Request, Uri, Version};
use http_body::{Frame, SizeHint};

use crate::transport::http::streams::sse;

/// The most headers a request of the common shape has (more: hyper reads it).
const MAX_HEADERS: usize = 64;

/// The longest head read here (longer ones, up to hyper's own bound, are hyper's).
pub(super) const MAX_HEAD: usize = 16 * 1024;

/// Why the bytes received so far are no request to answer here yet.
#[derive(Debug)]
pub(super) enum NotYet {
    /// Not a whole request yet: `wants` bytes at least, and whether the head is whole (then
    /// the body is awaited).
    More { wants: usize, head_whole: bool },
    /// Something hyper is to answer.
    HandOff,
}

/// The request at the start of `received`, the bytes it takes, and whether the client asked
/// for the connection to close after it; bodies longer than `max_body` are hyper's.
pub(super) fn read(
    received: &[u8],
    max_body: usize,
) -> Result<(Request<Whole>, usize, bool), NotYet> {
    // Left uninitialised until parsed into: a request's 64 empty headers written for
    // nothing cost as much as its head's parse.
    let mut headers = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut []);
    let head = match parsed.parse_with_uninit_headers(received, &mut headers) {
        Ok(httparse::Status::Complete(head)) => head,
        Ok(httparse::Status::Partial) if received.len() < MAX_HEAD => {
            return Err(NotYet::More {
                wants: received.len() + 1,
                head_whole: false,
            });
        }
        // Too long, too many headers, or no head at all: hyper says which.
        Ok(httparse::Status::Partial) | Err(_) => return Err(NotYet::HandOff),
    };
    if parsed.version != Some(1) {
        return Err(NotYet::HandOff);
    }
    let (Some(method), Some(path)) = (parsed.method, parsed.path) else {
        return Err(NotYet::HandOff);
    };
    let mut length: Option<usize> = None;
    let mut close = false;
    for h in parsed.headers.iter() {
        let name = h.name.as_bytes();
        if name.eq_ignore_ascii_case(b"content-length") {
            // One length, digits only (hyper answers a doubled or odd one).
            if length.is_some() || h.value.is_empty() || !h.value.iter().all(u8::is_ascii_digit) {
                return Err(NotYet::HandOff);
            }
            match std::str::from_utf8(h.value)
                .ok()
                .and_then(|v| v.parse().ok())
            {
                Some(n) => length = Some(n),
                None => return Err(NotYet::HandOff),
            }
        } else if name.eq_ignore_ascii_case(b"transfer-encoding")
            || name.eq_ignore_ascii_case(b"expect")
            || name.eq_ignore_ascii_case(b"upgrade")
        {
            return Err(NotYet::HandOff);
        } else if name.eq_ignore_ascii_case(b"connection") {
            close |= has_token(h.value, b"close");
        }
    }
    let body = length.unwrap_or(0);
    if body > max_body || method == "CONNECT" {
        return Err(NotYet::HandOff);
    }
    let Some(len) = head.checked_add(body) else {
        return Err(NotYet::HandOff);
    };
    if received.len() < len {
        return Err(NotYet::More {
            wants: len,
            head_whole: true,
        });
    }
    // One copy of the request, its parts views of it: the connection's buffer is free again
    // at once (hyper's parts hold its read buffer, which it then replaces for the next read).
    let bytes = Bytes::copy_from_slice(&received[..len]);
    let at = |part: &[u8]| {
        let start = part.as_ptr() as usize - received.as_ptr() as usize;
        bytes.slice(start..start + part.len())
    };
    let Ok(method) = Method::from_bytes(method.as_bytes()) else {
        return Err(NotYet::HandOff);
    };
    let Ok(uri) = Uri::from_maybe_shared(at(path.as_bytes())) else {
        return Err(NotYet::HandOff);
    };
    // The last answer's map, emptied, when there is one: no allocation.
    let mut map = sse::spare_headers();
    map.reserve(parsed.headers.len());
    for h in parsed.headers.iter() {
        let Some(name) = name_of(h.name.as_bytes()) else {
            return Err(NotYet::HandOff);
        };
        let Ok(value) = HeaderValue::from_maybe_shared(at(h.value)) else {
            return Err(NotYet::HandOff);
        };
        map.append(name, value);
    }
    let body = Whole((body > 0).then(|| bytes.slice(head..len)));
    let mut request = Request::new(body);
    *request.method_mut() = method;
    *request.uri_mut() = uri;
    *request.version_mut() = Version::HTTP_11;
    *request.headers_mut() = map;
    Ok((request, len, close))
}

/// A header's name; the MCP ones (not among `http`'s standard names) without an allocation.
fn name_of(name: &[u8]) -> Option<HeaderName> {
    static KNOWN: [HeaderName; 4] = [
        HeaderName::from_static("mcp-session-id"),
        HeaderName::from_static("mcp-protocol-version"),
        HeaderName::from_static("last-event-id"),
        HeaderName::from_static("x-forwarded-for"),
    ];
    if name.len() > 12 {
        for known in KNOWN.iter() {
            if known.as_str().len() == name.len()
                && known.as_str().as_bytes().eq_ignore_ascii_case(name)
            {
                return Some(known.clone());
            }
        }
    }
    HeaderName::from_bytes(name).ok()
}

/// Whether a comma-separated header value holds `token` (any case).
pub(super) fn has_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|b| *b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token))
}

/// A request's body, whole: it came with its head.
pub(crate) struct Whole(pub(super) Option<Bytes>);

impl HttpBody for Whole {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.get_mut().0.take().map(|b| Ok(Frame::data(b))))
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.0.as_ref().map_or(0, |b| b.len() as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::header;

    fn request(text: &str) -> (Request<Whole>, usize, bool) {
        read(text.as_bytes(), 1024).unwrap()
    }

    #[test]
    fn a_post_and_its_body_are_read_and_what_follows_is_left() {
        let text = "POST /mcp?x=1 HTTP/1.1\r\nHost: a\r\nMcp-Session-Id: s1\r\nX-Custom: v\r\n\
                    Content-Length: 4\r\nConnection: keep-alive, Close\r\n\r\nbodyGET / HTTP/1.1";
        let (request, len, close) = request(text);
        assert_eq!(len, text.len() - "GET / HTTP/1.1".len());
        assert!(close);
        assert_eq!(request.method(), Method::POST);
        assert_eq!(request.uri().path(), "/mcp");
        assert_eq!(request.uri().query(), Some("x=1"));
        assert_eq!(request.headers()["mcp-session-id"], "s1");
        assert_eq!(request.headers()["x-custom"], "v");
        assert_eq!(request.headers()[header::HOST], "a");
        let body = request.into_body();
        assert_eq!(body.size_hint().exact(), Some(4));
        assert_eq!(body.0.as_deref(), Some(&b"body"[..]));
    }

    #[test]
    fn a_request_cut_short_asks_for_more() {
        assert!(matches!(
            read(b"GET / HTTP/1.1\r\nHost:", 1024),
            Err(NotYet::More {
                head_whole: false,
                ..
            })
        ));
        let head = "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n";
        let wants = head.len() + 10;
        assert!(matches!(
            read(format!("{head}abc").as_bytes(), 1024),
            Err(NotYet::More { wants: w, head_whole: true }) if w == wants
        ));
        let (request, _, close) = request("GET / HTTP/1.1\r\n\r\n");
        assert!(!close);
        assert!(request.body().is_end_stream());
    }

    #[test]
    fn what_hyper_answers_is_handed_off() {
        for text in [
            "GET / HTTP/1.0\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n",
            "GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
            "POST / HTTP/1.1\r\nContent-Length: +1\r\n\r\nx",
            "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 2048\r\n\r\n",
            "CONNECT a:443 HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.1\r\nBad Name: x\r\n\r\n",
            "\u{16}\u{3}\u{1}",
            "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        ] {
            assert!(
                matches!(read(text.as_bytes(), 1024), Err(NotYet::HandOff)),
                "{text:?}"
            );
        }
        let long = format!("GET /{} HTTP/1.1\r\n", "a".repeat(MAX_HEAD));
        assert!(matches!(read(long.as_bytes(), 1024), Err(NotYet::HandOff)));
        let many: String = (0..=MAX_HEADERS).map(|i| format!("h{i}: v\r\n")).collect();
        let many = format!("GET / HTTP/1.1\r\n{many}\r\n");
        assert!(matches!(read(many.as_bytes(), 1024), Err(NotYet::HandOff)));
    }

    #[test]
    fn known_names_are_the_names_http_makes() {
        for name in [
            "Mcp-Session-Id",
            "MCP-PROTOCOL-VERSION",
            "last-event-id",
            "X-Forwarded-For",
        ] {
            let ours = name_of(name.as_bytes()).unwrap();
            assert_eq!(ours, HeaderName::from_bytes(name.as_bytes()).unwrap());
            assert_eq!(ours.as_str(), name.to_ascii_lowercase());
        }
    }

    /// Valid requests with bytes changed, cut, or doubled at random places (a fixed seed):
    /// each is read, asked more of, or handed off, and a request read takes no more bytes
    /// than came, nor fewer than its head.
    #[test]
    fn changed_requests_never_break_the_reader() {
        let seeds: [&[u8]; 3] = [
            b"POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nMcp-Session-Id: s\r\nContent-Length: 7\r\n\r\n{\"a\":1}",
            b"GET /mcp?x=%20 HTTP/1.1\r\nAccept: text/event-stream\r\nLast-Event-Id: 5\r\nConnection: close\r\n\r\n",
            b"DELETE http://h:1/p HTTP/1.1\r\nx-forwarded-for: 1.2.3.4\r\ncontent-length:0\r\n\r\n",
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for round in 0..20_000 {
            let mut bytes = seeds[round % seeds.len()].to_vec();
            for _ in 0..1 + next(4) {
                let at = next(bytes.len());
                match next(4) {
                    0 => bytes[at] = next(256) as u8,
                    1 => bytes.truncate(at),
                    2 => {
                        let tail = bytes[at..].to_vec();
                        bytes.extend_from_slice(&tail);
                    }
                    _ => bytes.insert(at, b"\r\n:0 \t\x7f\xff"[next(8)]),
                }
                if bytes.is_empty() {
                    bytes.push(b'G');
                }
            }
            match read(&bytes, 64) {
                Ok((request, len, _)) => {
                    assert!(len <= bytes.len(), "{bytes:?}");
                    let body = request.body().size_hint().exact().unwrap_or(0) as usize;
                    assert!(body <= 64 && body <= len, "{bytes:?}");
                }
                Err(NotYet::More { wants, .. }) => assert!(wants > bytes.len(), "{bytes:?}"),
                Err(NotYet::HandOff) => {}
            }
        }
    }
}
