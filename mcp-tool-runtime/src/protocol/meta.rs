//! What a stateless (2026-07-28) request says about itself in its `_meta`: the protocol
//! version, the client's capabilities and identity, the log level it wants, its progress
//! token — read and checked the way the version orders it (required fields first, then the
//! version). The fields the server reads of any request's `_meta` are read here too.

use std::borrow::Cow;
use std::cell::RefCell;
use std::ops::Range;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::error::{RpcError, code};
use super::version::ProtocolVersion;
use super::walk::{JsonText, Object, Seen};

/// The `_meta` key of the request's protocol version.
pub(crate) const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of the client's capabilities.
pub(crate) const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `_meta` key of the client's name and version.
pub(crate) const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// The `_meta` key of the log level the request wants.
pub(crate) const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// The severity of a log message (RFC 5424 levels, as MCP uses them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(missing_docs)]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The level's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// Parses a level's wire name.
    pub fn parse(s: &str) -> Option<LogLevel> {
        Self::ALL.into_iter().find(|l| l.as_str() == s)
    }
}

/// The per-request `_meta` of a stateless request, read without building values: the
/// capabilities and client info stay text until [`RequestMeta::values`] (a client sends the
/// same text with every request, and the server builds their values once per text).
#[derive(Debug)]
pub(crate) struct RequestMeta<'a> {
    /// The version the request declares, as written (checked by [`RequestMeta::version`]).
    pub(crate) declared_version: Cow<'a, str>,
    /// The client's capabilities (an object), as sent.
    pub(crate) capabilities: JsonText<'a>,
    /// The client's name and version (optional), as sent.
    pub(crate) client_info: Option<JsonText<'a>>,
    /// The level at and above which the request wants log messages; none: no log messages.
    pub(crate) log_level: Option<LogLevel>,
}

impl RequestMeta<'_> {
    /// The capabilities and the client info (`null` when not sent) as values.
    pub(crate) fn values(&self) -> (Value, Value) {
        // Both were read as JSON already: building their values cannot fail.
        let value = |raw: JsonText<'_>| serde_json::from_str(raw.get()).unwrap_or(Value::Null);
        (
            value(self.capabilities),
            self.client_info.map_or(Value::Null, value),
        )
    }

    /// The declared version, if this server speaks it; otherwise -32022 with the versions it
    /// speaks.
    pub(crate) fn version(&self) -> Result<ProtocolVersion, RpcError> {
        ProtocolVersion::parse(&self.declared_version).ok_or_else(|| {
            #[derive(serde::Serialize)]
            struct Data<'a> {
                supported: Vec<&'static str>,
                requested: &'a str,
            }
            RpcError::new(
                code::UNSUPPORTED_PROTOCOL_VERSION,
                format!(
                    "Unsupported protocol version `{}`; supported: {}",
                    self.declared_version,
                    ProtocolVersion::supported_list()
                ),
            )
            .with_data(Data {
                supported: ProtocolVersion::SUPPORTED
                    .map(ProtocolVersion::as_str)
                    .to_vec(),
                requested: &self.declared_version,
            })
        })
    }
}

/// The fields of a request's `_meta` that the server reads itself, as borrowed text.
#[derive(Deserialize, Default, Debug)]
pub(crate) struct MetaFields<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow, default)]
    pub(crate) version: Option<Cow<'a, str>>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", borrow, default)]
    pub(crate) capabilities: Option<JsonText<'a>>,
    #[serde(rename = "io.modelcontextprotocol/clientInfo", borrow, default)]
    pub(crate) client_info: Option<JsonText<'a>>,
    #[serde(rename = "io.modelcontextprotocol/logLevel", borrow, default)]
    pub(crate) log_level: Option<Cow<'a, str>>,
    #[serde(rename = "progressToken", borrow, default)]
    pub(crate) progress_token: Option<JsonText<'a>>,
    /// W3C trace context (SEP-414: unprefixed keys), read when spans are exported.
    #[cfg(feature = "otel")]
    #[serde(borrow, default)]
    pub(crate) traceparent: Option<Cow<'a, str>>,
    #[cfg(feature = "otel")]
    #[serde(borrow, default)]
    pub(crate) tracestate: Option<Cow<'a, str>>,
    #[cfg(feature = "otel")]
    #[serde(borrow, default)]
    pub(crate) baggage: Option<Cow<'a, str>>,
}

impl<'a> MetaFields<'a> {
    /// Whether the fields name a stateless version's required keys.
    pub(crate) fn speaks_stateless(&self) -> bool {
        self.version.is_some() || self.capabilities.is_some()
    }

    /// The fields of a `_meta` object, walked to its end; `None` when only serde's derive
    /// reads them as it does: a key written with an escape, a field given twice, a text
    /// field that is no plain string.
    pub(crate) fn walk(meta: &mut Object<'a>) -> Option<MetaFields<'a>> {
        let mut fields = MetaFields::default();
        let mut seen = Seen::default();
        // The keys every stateless request sends, found by comparison (numbered as below).
        const SENT: [&str; 3] = [PROTOCOL_VERSION, CLIENT_CAPABILITIES, CLIENT_INFO];
        while let Some(key) = meta.key_of(&SENT) {
            if key.escaped {
                return None;
            }
            let n = match key.known {
                Some(n) => n,
                None => match key.text {
                    PROTOCOL_VERSION => 0,
                    CLIENT_CAPABILITIES => 1,
                    CLIENT_INFO => 2,
                    LOG_LEVEL => 3,
                    "progressToken" => 4,
                    #[cfg(feature = "otel")]
                    "traceparent" => 5,
                    #[cfg(feature = "otel")]
                    "tracestate" => 6,
                    #[cfg(feature = "otel")]
                    "baggage" => 7,
                    // Skipped by the next key.
                    _ => continue,
                },
            };
            seen.first(n)?;
            let value = meta.value()?;
            match n {
                0 => fields.version = value.plain_text()?,
                1 => fields.capabilities = value.present(),
                2 => fields.client_info = value.present(),
                3 => fields.log_level = value.plain_text()?,
                4 => fields.progress_token = value.present(),
                #[cfg(feature = "otel")]
                5 => fields.traceparent = value.plain_text()?,
                #[cfg(feature = "otel")]
                6 => fields.tracestate = value.plain_text()?,
                #[cfg(feature = "otel")]
                7 => fields.baggage = value.plain_text()?,
                _ => {}
            }
        }
        (!meta.broken()).then_some(fields)
    }

    /// The fields of `meta` (an object) read by serde: for a `_meta` the walk leaves to it.
    /// One that cannot be read is refused when it names a stateless version's keys (the
    /// request is of that version all the same); another's is its own business.
    pub(crate) fn parse(
        meta: JsonText<'a>,
        stateless: &mut bool,
        malformed: &mut Option<RpcError>,
    ) -> MetaFields<'a> {
        match serde_json::from_str::<MetaFields<'_>>(meta.get()) {
            Ok(fields) => fields,
            Err(e) if mentions_required_key(meta.get()) => {
                *stateless = true;
                malformed.get_or_insert_with(|| invalid(format!("Invalid `_meta`: {e}")));
                MetaFields::default()
            }
            Err(_) => {
                // Only the progress token is the server's (a tool may read the rest).
                #[derive(Deserialize)]
                struct Token<'a> {
                    #[serde(rename = "progressToken", borrow, default)]
                    token: Option<JsonText<'a>>,
                }
                MetaFields {
                    progress_token: serde_json::from_str::<Token<'_>>(meta.get())
                        .ok()
                        .and_then(|t| t.token),
                    ..MetaFields::default()
                }
            }
        }
    }
}

/// The `_meta` of the last stateless request read on this thread, and where its fields are in
/// its text. A client sends the same `_meta` with every request: one that begins with this
/// text is this `_meta` (a value ends where its text says), and its fields are found here
/// instead of walked again. Only a `_meta` whose fields the server reads are all of the kind a
/// client repeats (no progress token, no trace context) is kept, of at most
/// [`MEMO_LONGEST`] bytes, one a thread.
struct Memo {
    text: Arc<str>,
    version: Option<Range<usize>>,
    capabilities: Option<Range<usize>>,
    client_info: Option<Range<usize>>,
    log_level: Option<Range<usize>>,
}

/// The longest `_meta` kept ([`Memo`]), in bytes.
const MEMO_LONGEST: usize = 4096;

thread_local! {
    static MEMO: RefCell<Option<Memo>> = const { RefCell::new(None) };
}

/// Where `inner`, a part of `outer`, is in it; `None` when it is no part of it.
fn within(outer: &str, inner: &str) -> Option<Range<usize>> {
    let start = inner.as_ptr().addr().checked_sub(outer.as_ptr().addr())?;
    let end = start.checked_add(inner.len())?;
    (end <= outer.len()).then_some(start..end)
}

impl<'a> MetaFields<'a> {
    /// Keeps these fields, walked from `text`, for the next request of this thread whose
    /// `_meta` is the same text ([`MetaFields::recall`]); not those a client changes from one
    /// request to the next, nor those of a `_meta` of no stateless request.
    pub(crate) fn remember(&self, text: JsonText<'_>) {
        let text = text.get();
        if self.progress_token.is_some() || !self.speaks_stateless() || text.len() > MEMO_LONGEST {
            return;
        }
        #[cfg(feature = "otel")]
        if self.traceparent.is_some() || self.tracestate.is_some() || self.baggage.is_some() {
            return;
        }
        // Each field is a part of the text (a walk borrows them all).
        let at = |part: Option<&str>| match part {
            None => Some(None),
            Some(part) => within(text, part).map(Some),
        };
        let (Some(version), Some(capabilities), Some(client_info), Some(log_level)) = (
            at(self.version.as_deref()),
            at(self.capabilities.map(JsonText::get)),
            at(self.client_info.map(JsonText::get)),
            at(self.log_level.as_deref()),
        ) else {
            return;
        };
        let memo = Memo {
            text: text.into(),
            version,
            capabilities,
            client_info,
            log_level,
        };
        let _ = MEMO.try_with(|kept| {
            if let Ok(mut kept) = kept.try_borrow_mut() {
                *kept = Some(memo);
            }
        });
    }

    /// The `_meta` value `walk` is at and its fields, when its text is the one kept by
    /// [`MetaFields::remember`]: the walk goes on past it. `None`, the walk unchanged, for
    /// another text; `Some(None)` when the walk broke past it.
    pub(crate) fn recall(walk: &mut Object<'a>) -> Option<Option<(JsonText<'a>, MetaFields<'a>)>> {
        MEMO.try_with(|kept| {
            let kept = kept.try_borrow().ok()?;
            let memo = kept.as_ref()?;
            let Some(value) = walk.value_known(&memo.text)? else {
                return Some(None);
            };
            let part = |at: &Option<Range<usize>>| at.clone().and_then(|at| value.part(at));
            let text = |at: &Option<Range<usize>>| {
                let text = value.get();
                at.clone().and_then(|at| text.get(at)).map(Cow::Borrowed)
            };
            Some(Some((
                value,
                MetaFields {
                    version: text(&memo.version),
                    capabilities: part(&memo.capabilities),
                    client_info: part(&memo.client_info),
                    log_level: text(&memo.log_level),
                    ..MetaFields::default()
                },
            )))
        })
        .ok()
        .flatten()
    }
}

/// The `_meta` kept on this thread ([`Memo`]) when `text` is it: a call keeps it so, shared,
/// instead of a copy of its own (a client sends the same `_meta` with every request).
pub(crate) fn shared_text(text: &str) -> Option<Arc<str>> {
    MEMO.try_with(|kept| {
        let kept = kept.try_borrow().ok()?;
        let memo = kept.as_ref()?;
        (*memo.text == *text).then(|| memo.text.clone())
    })
    .ok()
    .flatten()
}

/// The text of the `_meta` kept on this thread ([`Memo`]), for tests.
#[cfg(test)]
pub(crate) fn kept_text() -> Option<String> {
    MEMO.with(|m| m.borrow().as_ref().map(|m| m.text.to_string()))
}

impl<'a> RequestMeta<'a> {
    /// Checks a stateless request's `_meta` fields (read with the request): a missing
    /// required field is -32602, naming it.
    pub(crate) fn from_fields(fields: &MetaFields<'a>) -> Result<RequestMeta<'a>, RpcError> {
        let declared_version = fields
            .version
            .clone()
            .ok_or_else(|| invalid(format!("`_meta` needs `{PROTOCOL_VERSION}`")))?;
        let capabilities = match fields.capabilities {
            Some(c) if c.get().starts_with('{') => c,
            Some(c) if c.get() != "null" => {
                return Err(invalid(format!(
                    "`{CLIENT_CAPABILITIES}` must be an object"
                )));
            }
            _ => return Err(invalid(format!("`_meta` needs `{CLIENT_CAPABILITIES}`"))),
        };
        let log_level =
            match fields.log_level.as_deref() {
                None => None,
                Some(level) => Some(LogLevel::parse(level).ok_or_else(|| {
                    invalid(format!("`{LOG_LEVEL}`: unknown log level `{level}`"))
                })?),
            };
        Ok(RequestMeta {
            declared_version,
            capabilities,
            client_info: fields.client_info.filter(|i| i.get() != "null"),
            log_level,
        })
    }
}

/// Whether `text` mentions [`PROTOCOL_VERSION`] or [`CLIENT_CAPABILITIES`]: a byte search over
/// the `/`s of the text (no substring searcher built per key).
fn mentions_required_key(text: &str) -> bool {
    const PREFIX: &str = "io.modelcontextprotocol";
    let keys = [PROTOCOL_VERSION, CLIENT_CAPABILITIES].map(|k| &k[PREFIX.len() + 1..]);
    text.match_indices('/').any(|(at, _)| {
        text[..at].ends_with(PREFIX) && keys.iter().any(|k| text[at + 1..].starts_with(k))
    })
}

fn invalid(why: String) -> RpcError {
    RpcError::new(code::INVALID_PARAMS, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_required_keys_are_found_where_a_substring_search_finds_them() {
        for text in [
            r#"{"name":"add","arguments":{"a":1,"b":2}}"#,
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#,
            r#"{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}"#,
            r#"{"a":"io.modelcontextprotocol/clientInfo","b":"x/y//io.modelcontextprotocol/"}"#,
            r#"{"a":"/io.modelcontextprotocol/protocolVersio"}"#,
            r#"{"a":"é/io.modelcontextprotocol/clientCapabilitiesé"}"#,
            "io.modelcontextprotocol/protocolVersion",
            "",
            "/",
        ] {
            let expected = text.contains(PROTOCOL_VERSION) || text.contains(CLIENT_CAPABILITIES);
            assert_eq!(mentions_required_key(text), expected, "{text}");
        }
    }
}
