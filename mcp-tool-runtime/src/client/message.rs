//! What passes between the client's engine and its transports: a message from the server
//! ([`Inbound`]), one to it ([`Outbound`]), and the error code of a request a transport could
//! not complete ([`TRANSPORT`]). The engine (`core`) and both transports (`http`, `stdio`)
//! import it; it imports neither.

/// A message that came from the server, and the request whose stream carried it (HTTP).
pub(super) struct Inbound {
    pub(super) text: String,
    pub(super) via: Option<u64>,
    /// Nothing more can be read after this: `text` says why, and the requests waiting fail
    /// with it.
    last: bool,
}

impl Inbound {
    pub(super) fn message(text: String, via: Option<u64>) -> Self {
        Inbound {
            text,
            via,
            last: false,
        }
    }

    /// Whether nothing more can be read after this.
    pub(super) fn is_last(&self) -> bool {
        self.last
    }

    pub(super) fn closing(why: String) -> Self {
        Inbound {
            text: why,
            via: None,
            last: true,
        }
    }
}

/// What the client sends: the JSON text and what the HTTP transport puts in headers.
pub(super) struct Outbound<'a> {
    pub(super) text: String,
    /// The request's id (a request expects an answer on its own stream).
    pub(super) id: Option<u64>,
    pub(super) method: &'a str,
    /// The name a 2026-07-28 request acts on (`Mcp-Name`).
    pub(super) name: Option<String>,
    /// A 2026-07-28 call's arguments mirrored into `Mcp-Param-*` headers: each header's
    /// name part and its encoded value.
    pub(super) params: Vec<(String, String)>,
}

/// The code of an error the transport reports for a request it could not complete: the
/// waiting caller sees it as `ClientError::Unavailable`.
pub(super) const TRANSPORT: i64 = -32099;

/// The code of an error the transport reports for a request the server would not take
/// without an authorization the client could not obtain: the waiting caller sees it as
/// `ClientError::Unauthorized`.
pub(super) const UNAUTHORIZED: i64 = -32098;
