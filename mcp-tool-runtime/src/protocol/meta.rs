//! What a stateless (2026-07-28) request says about itself in its `_meta`: the protocol
//! version, the client's capabilities and identity, the log level it wants, its progress
//! token — read and checked the way the revision orders it (required fields first, then the
//! version).

use std::borrow::Cow;

use serde_json::Value;
use serde_json::value::RawValue;

use super::error::{RpcError, code};
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

impl RequestMeta<'_> {
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
