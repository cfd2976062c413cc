//! The context of one request: its id, `_meta`, the client that sent it and the session it
//! belongs to.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::protocol::ProtocolVersion;

/// What the client said about itself when the session was initialized.
#[derive(Debug, Clone, Default)]
pub struct ClientInfo {
    /// The negotiated protocol version.
    pub protocol_version: ProtocolVersion,
    /// The client's `clientInfo` (name, version, …).
    pub info: Value,
    /// The client's `capabilities`.
    pub capabilities: Value,
}

/// The context of one request.
#[derive(Debug)]
pub struct RequestContext {
    pub(crate) id: Value,
    pub(crate) tool: Arc<str>,
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) client: Arc<ClientInfo>,
}

impl RequestContext {
    /// The JSON-RPC id of the request (a string or a number), as the client sent it.
    pub fn id(&self) -> &Value {
        &self.id
    }

    /// The name of the tool being called.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The request's `_meta`, if it had one.
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.meta.as_ref()
    }

    /// The request's progress token, echoed exactly as received (string or number).
    pub fn progress_token(&self) -> Option<&Value> {
        self.meta.as_ref()?.get("progressToken")
    }

    /// The client and the negotiated protocol version.
    pub fn client(&self) -> &ClientInfo {
        &self.client
    }

    /// The negotiated protocol version.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.client.protocol_version
    }
}
