//! What the endpoint reads of a request's head: the headers a POST's handling reads, found in
//! one pass over its map (a lookup by name hashes the name and probes the map: eight of them
//! cost more than walking the half dozen headers a request carries once), the reading of
//! `Accept`, and where the request comes from.

use std::net::{IpAddr, SocketAddr};

use axum::http::Extensions;
use axum::http::header::{self, HeaderMap, HeaderName, HeaderValue};

/// The address a connection comes from (set by `serve_http`'s accept loop on each request).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Peer(pub(crate) SocketAddr);

/// A request that came over a Unix socket (set by `serve_http_unix`'s accept loop): its
/// client, like every other on that socket, is the one local principal (as over stdio).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LocalSocket;

/// Where a request comes from: told by the accept loop, either as a value handed on with the
/// request (to a handler it calls itself) or as a mark in the request's extensions (through
/// the router).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Source {
    Peer(Peer),
    Local,
}

impl Source {
    /// Marks a request's extensions with where it comes from.
    pub(super) fn mark(self, extensions: &mut Extensions) {
        match self {
            Source::Peer(peer) => {
                extensions.insert(peer);
            }
            Source::Local => {
                extensions.insert(LocalSocket);
            }
        }
    }

    /// Where a request comes from as its extensions are marked (`None`: not marked, served
    /// without the accept loop).
    pub(super) fn marked(extensions: &Extensions) -> Option<Source> {
        if let Some(peer) = extensions.get::<Peer>() {
            return Some(Source::Peer(*peer));
        }
        extensions.get::<LocalSocket>().map(|_| Source::Local)
    }

    /// The address of a request from `source`, when known.
    pub(super) fn address(source: Option<Source>) -> Option<IpAddr> {
        match source {
            Some(Source::Peer(Peer(peer))) => Some(peer.ip()),
            _ => None,
        }
    }

    /// Whether a request from `source` came over a Unix socket.
    pub(super) fn local(source: Option<Source>) -> bool {
        matches!(source, Some(Source::Local))
    }
}

pub(super) const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
pub(super) const VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");

/// The first value of each header the endpoint reads on every POST (what
/// [`HeaderMap::get`] gives for its name), `None` for one not sent.
#[derive(Default, Clone, Copy)]
pub(super) struct Head<'a> {
    pub(super) host: Option<&'a HeaderValue>,
    pub(super) origin: Option<&'a HeaderValue>,
    pub(super) accept: Option<&'a HeaderValue>,
    pub(super) content_type: Option<&'a HeaderValue>,
    pub(super) version: Option<&'a HeaderValue>,
    pub(super) session: Option<&'a HeaderValue>,
}

impl<'a> Head<'a> {
    /// The headers of `headers` the endpoint reads, in one pass.
    pub(super) fn of(headers: &'a HeaderMap) -> Head<'a> {
        let mut head = Head::default();
        for (name, value) in headers {
            let slot = if *name == header::HOST {
                &mut head.host
            } else if *name == header::ORIGIN {
                &mut head.origin
            } else if *name == header::ACCEPT {
                &mut head.accept
            } else if *name == header::CONTENT_TYPE {
                &mut head.content_type
            } else if *name == VERSION_HEADER {
                &mut head.version
            } else if *name == SESSION_HEADER {
                &mut head.session
            } else {
                continue;
            };
            // A repeated header's first value, as a lookup by name gives it.
            if slot.is_none() {
                *slot = Some(value);
            }
        }
        head
    }
}

/// Whether the client takes an SSE answer: its `Accept` names `text/event-stream` (or
/// anything), or it sent none.
pub(super) fn accepts_sse(headers: &HeaderMap) -> bool {
    accepts_sse_value(headers.get(header::ACCEPT))
}

/// [`accepts_sse`] of an `Accept` value (`None`: not sent).
pub(super) fn accepts_sse_value(accept: Option<&HeaderValue>) -> bool {
    let Some(accept) = accept else {
        return true;
    };
    let bytes = accept.as_bytes();
    // What the MCP clients send (the specification asks for both types), compared whole.
    if bytes == b"application/json, text/event-stream"
        || bytes == b"text/event-stream, application/json"
    {
        return true;
    }
    // A value that is not visible ASCII is read as none sent.
    if !bytes
        .iter()
        .all(|&b| b == b'\t' || (0x20..0x7f).contains(&b))
    {
        return true;
    }
    // Item by item: each media type without its parameters.
    bytes.split(|&b| b == b',').any(|item| {
        let media = item
            .split(|&b| b == b';')
            .next()
            .unwrap_or(item)
            .trim_ascii();
        media.eq_ignore_ascii_case(b"text/event-stream") || media == b"*/*" || media == b"text/*"
    })
}

#[cfg(test)]
mod tests {
    use axum::http::header::{self, HeaderMap, HeaderValue};

    use super::{Head, SESSION_HEADER, VERSION_HEADER, accepts_sse};

    #[test]
    fn an_accept_header_is_read_for_event_streams() {
        let accepts = |value: &[u8]| {
            let mut headers = HeaderMap::new();
            headers.insert(header::ACCEPT, HeaderValue::from_bytes(value).unwrap());
            accepts_sse(&headers)
        };
        assert!(accepts_sse(&HeaderMap::new()));
        assert!(accepts(b"application/json, text/event-stream"));
        assert!(accepts(b"text/event-stream, application/json"));
        assert!(accepts(b"application/json,text/event-stream"));
        assert!(accepts(b"application/json,\tTEXT/Event-Stream ; q=0.5"));
        assert!(accepts(b"*/*"));
        assert!(accepts(b"text/*;q=1"));
        assert!(!accepts(b"application/json"));
        assert!(!accepts(b"application/json, text/event-streams"));
        assert!(!accepts(b"text/event-streams, text/html"));
        assert!(!accepts(b""));
        assert!(!accepts(b","));
        // Not visible ASCII: read as no Accept at all.
        assert!(accepts(b"application/json, \xe2\x82\xac"));
    }

    #[test]
    fn one_pass_finds_what_lookups_by_name_find() {
        let mut headers = HeaderMap::new();
        for (name, value) in [
            ("host", "127.0.0.1:8080"),
            ("x-other", "1"),
            ("accept", "application/json"),
            ("mcp-protocol-version", "2025-11-25"),
            ("mcp-protocol-version", "2025-06-18"),
            ("content-type", "application/json"),
            ("mcp-session-id", "abc"),
            ("origin", "http://localhost"),
            ("accept", "text/event-stream"),
        ] {
            headers.append(name, HeaderValue::from_static(value));
        }
        let head = Head::of(&headers);
        assert_eq!(head.host, headers.get(header::HOST));
        assert_eq!(head.origin, headers.get(header::ORIGIN));
        assert_eq!(head.accept, headers.get(header::ACCEPT));
        assert_eq!(head.content_type, headers.get(header::CONTENT_TYPE));
        assert_eq!(head.version, headers.get(VERSION_HEADER));
        assert_eq!(head.version.unwrap(), "2025-11-25");
        assert_eq!(head.session, headers.get(SESSION_HEADER));
        assert_eq!(head.accept.unwrap(), "application/json");
        let empty = HeaderMap::new();
        let head = Head::of(&empty);
        assert!(head.host.is_none() && head.session.is_none() && head.accept.is_none());
    }
}
