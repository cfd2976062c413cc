//! What a stateless (2026-07-28) request says about itself in its `_meta`: the protocol
//! version, the client's capabilities and identity, the log level it wants, its progress
//! token — read and checked the way the revision orders it (required fields first, then the
//! version).

use std::borrow::Cow;

use serde_json::Value;
use serde_json::value::RawValue;

use super::error::{RpcError, code};
use super::request::MetaFields;
use super::version::ProtocolVersion;

/// The `_meta` key of the request's protocol version.
pub(crate) const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of the client's capabilities.
pub(crate) const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
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
    pub(crate) capabilities: &'a RawValue,
    /// The client's name and version (optional), as sent.
    pub(crate) client_info: Option<&'a RawValue>,
    /// The level at and above which the request wants log messages; none: no log messages.
    pub(crate) log_level: Option<LogLevel>,
}

fn invalid(why: String) -> RpcError {
    RpcError::new(code::INVALID_PARAMS, why)
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

    /// The capabilities and the client info (`null` when not sent) as values.
    pub(crate) fn values(&self) -> (Value, Value) {
        // Both were read as JSON already: building their values cannot fail.
        let value = |raw: &RawValue| serde_json::from_str(raw.get()).unwrap_or(Value::Null);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::request::Request;

    fn parse(params: &str) -> Result<RequestMeta<'static>, RpcError> {
        let raw: &'static RawValue =
            Box::leak(serde_json::from_str::<Box<RawValue>>(params).unwrap());
        let request = Box::leak(Box::new(Request::read(
            None,
            "tools/list".into(),
            Some(raw),
        )));
        request.stateless_meta()
    }

    #[test]
    fn required_fields_are_checked_before_the_version() {
        assert_eq!(parse("{}").unwrap_err().code, code::INVALID_PARAMS);
        let e =
            parse(r#"{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}"#).unwrap_err();
        assert!(e.message.contains(PROTOCOL_VERSION), "{e}");
        let e =
            parse(r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999"}}"#).unwrap_err();
        assert!(e.message.contains(CLIENT_CAPABILITIES), "{e}");
        let meta = parse(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999","io.modelcontextprotocol/clientCapabilities":{}}}"#,
        )
        .unwrap();
        let e = meta.version().unwrap_err();
        assert_eq!(e.code, code::UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(e.data.as_ref().unwrap()["requested"], "v999");
        assert_eq!(e.data.as_ref().unwrap()["supported"][0], "2026-07-28");
    }

    #[test]
    fn the_log_level_is_read_and_checked() {
        let meta = parse(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"warning"}}"#,
        )
        .unwrap();
        assert_eq!(meta.log_level, Some(LogLevel::Warning));
        assert_eq!(meta.version().unwrap(), ProtocolVersion::V2026_07_28);
        let e = parse(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"}}"#,
        )
        .unwrap_err();
        assert_eq!(e.code, code::INVALID_PARAMS);
    }

    #[test]
    fn capabilities_must_be_an_object_and_become_values_on_demand() {
        let e = parse(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[1]}}"#,
        )
        .unwrap_err();
        assert!(e.message.contains("must be an object"), "{e}");
        let e = parse(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null}}"#,
        )
        .unwrap_err();
        assert!(e.message.contains("needs"), "{e}");
        let meta = parse(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}}"#,
        )
        .unwrap();
        let (capabilities, info) = meta.values();
        assert_eq!(capabilities, serde_json::json!({"sampling": {}}));
        assert_eq!(info, serde_json::json!({"name": "c", "version": "1"}));
        let meta = parse(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}"#,
        )
        .unwrap();
        assert_eq!(meta.values().1, Value::Null);
    }
}
