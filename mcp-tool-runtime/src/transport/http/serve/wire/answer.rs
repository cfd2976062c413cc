//! An answer's head, written as hyper writes it: the status line, the handler's headers, then
//! the framing the body needs (`content-length` when its length is known, chunks when not),
//! `date`, and `connection: close` when the connection ends after it.

use std::cell::RefCell;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::http::response::Parts;
use axum::http::{Method, StatusCode, header};

/// How an answer's body is framed on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Framing {
    /// No body (`HEAD`, 1xx, 204, 304).
    None,
    /// This many bytes.
    Length(u64),
    /// Chunks, then an empty one.
    Chunked,
}

/// Writes the head of an answer (`parts`, and its body's length when known) to `out`; gives
/// how its body goes and whether the handler asked for the connection to close.
pub(super) fn head(
    parts: &Parts,
    body_length: Option<u64>,
    method: &Method,
    close: bool,
    out: &mut Vec<u8>,
) -> (Framing, bool) {
    let status = parts.status;
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(status.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(status.canonical_reason().unwrap_or("").as_bytes());
    out.extend_from_slice(b"\r\n");
    let headers = &parts.headers;
    let mut length: Option<u64> = None;
    let mut dated = false;
    let mut closes = false;
    for (name, value) in headers {
        if name == header::CONTENT_LENGTH {
            // The handler's own length stands when it is one; a body that disagrees ends
            // its connection (see the connection's writer).
            match value.to_str().ok().and_then(|v| v.parse().ok()) {
                Some(n) if length.is_none() => length = Some(n),
                _ => continue,
            }
        } else if name == header::TRANSFER_ENCODING {
            // The framing is the connection's to choose.
            continue;
        } else if name == header::DATE {
            dated = true;
        } else if name == header::CONNECTION {
            closes |= super::request::has_token(value.as_bytes(), b"close");
        }
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    let bodiless = status.is_informational()
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED;
    let framing = if bodiless {
        Framing::None
    } else {
        let length = length.or(body_length);
        match length {
            Some(n) => {
                if !headers.contains_key(header::CONTENT_LENGTH) {
                    out.extend_from_slice(b"content-length: ");
                    number(n, 10, out);
                    out.extend_from_slice(b"\r\n");
                }
                if method == Method::HEAD {
                    Framing::None
                } else {
                    Framing::Length(n)
                }
            }
            None if method == Method::HEAD => Framing::None,
            None => {
                out.extend_from_slice(b"transfer-encoding: chunked\r\n");
                Framing::Chunked
            }
        }
    };
    if !dated {
        out.extend_from_slice(b"date: ");
        date(out);
        out.extend_from_slice(b"\r\n");
    }
    if close && !closes {
        out.extend_from_slice(b"connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    (framing, closes)
}

/// Today's `date` (RFC 9110's IMF-fixdate), made once a second on each thread.
fn date(out: &mut Vec<u8>) {
    thread_local! {
        static NOW: RefCell<(u64, String)> = const { RefCell::new((u64::MAX, String::new())) };
    }
    let now = SystemTime::now();
    let second = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    NOW.with_borrow_mut(|(at, text)| {
        if *at != second {
            *at = second;
            *text = httpdate::fmt_http_date(now);
        }
        out.extend_from_slice(text.as_bytes());
    });
}

/// A chunk's size line.
pub(super) fn chunk_size(len: usize, out: &mut Vec<u8>) {
    number(len as u64, 16, out);
    out.extend_from_slice(b"\r\n");
}

/// `n` in base `radix` (10 or 16), lower-case.
fn number(mut n: u64, radix: u64, out: &mut Vec<u8>) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b"0123456789abcdef"[(n % radix) as usize];
        n /= radix;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::{Body, HttpBody};
    use axum::http::HeaderValue;
    use axum::response::Response;

    fn written(response: Response, method: &Method, close: bool) -> (String, Framing, bool) {
        let mut out = Vec::new();
        let length = response.body().size_hint().exact();
        let (parts, _) = response.into_parts();
        let (framing, closes) = head(&parts, length, method, close, &mut out);
        (String::from_utf8(out).unwrap(), framing, closes)
    }

    #[test]
    fn a_whole_body_is_given_its_length_and_a_stream_its_chunks() {
        let mut response = Response::new(Body::from("{}"));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        let (text, framing, closes) = written(response, &Method::POST, false);
        assert!(
            text.starts_with(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\ndate: "
            ),
            "{text}"
        );
        assert!(text.ends_with(" GMT\r\n\r\n"), "{text}");
        assert_eq!((framing, closes), (Framing::Length(2), false));

        let stream =
            futures_util::stream::iter([Ok::<_, std::io::Error>(axum::body::Bytes::from("x"))]);
        let response = Response::new(Body::from_stream(stream));
        let (text, framing, _) = written(response, &Method::GET, true);
        assert!(text.contains("transfer-encoding: chunked\r\n"), "{text}");
        assert!(text.ends_with("connection: close\r\n\r\n"), "{text}");
        assert_eq!(framing, Framing::Chunked);
    }

    #[test]
    fn bodiless_answers_have_no_framing_but_a_head_keeps_its_length() {
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::NO_CONTENT;
        let (text, framing, _) = written(response, &Method::DELETE, false);
        assert!(!text.contains("content-length"), "{text}");
        assert_eq!(framing, Framing::None);

        let response = Response::new(Body::from("abc"));
        let (text, framing, _) = written(response, &Method::HEAD, false);
        assert!(text.contains("content-length: 3\r\n"), "{text}");
        assert_eq!(framing, Framing::None);
    }

    #[test]
    fn the_handlers_framing_headers_are_kept_or_replaced() {
        let mut response = Response::new(Body::from("abc"));
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from_static("3"));
        headers.insert(header::TRANSFER_ENCODING, HeaderValue::from_static("gzip"));
        headers.insert(header::CONNECTION, HeaderValue::from_static("Close"));
        headers.insert(header::DATE, HeaderValue::from_static("then"));
        let (text, framing, closes) = written(response, &Method::GET, true);
        assert_eq!(text.matches("content-length").count(), 1, "{text}");
        assert!(
            !text.contains("gzip") && !text.contains("connection: close"),
            "{text}"
        );
        assert!(text.contains("date: then\r\n"), "{text}");
        assert_eq!((framing, closes), (Framing::Length(3), true));
    }

    #[test]
    fn chunk_sizes_are_hexadecimal() {
        for (n, text) in [
            (0, "0\r\n"),
            (10, "a\r\n"),
            (4096, "1000\r\n"),
            (usize::MAX, "ffffffffffffffff\r\n"),
        ] {
            let mut out = Vec::new();
            chunk_size(n, &mut out);
            assert_eq!(String::from_utf8(out).unwrap(), text);
        }
    }
}
