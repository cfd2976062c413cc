//! The lifecycle methods: `initialize`, `ping` and `logging/setLevel` of a session
//! (2025-11-25 and before), and `server/discover` of the stateless revision (2026-07-28).

use std::sync::atomic::Ordering;

use serde::de::IgnoredAny;

use crate::protocol::request::Request;
use crate::protocol::wire::{
    DiscoverResult, Empty, InitializeParams, InitializeResult, SetLevelParams,
};
use crate::protocol::{LogLevel, ProtocolVersion, RpcError, code};
use crate::server::core::request::Cx;
use crate::server::tasks;
use crate::tool::ClientInfo;

/// `initialize`: negotiates the version and records the client.
pub(crate) fn initialize<'a>(
    cx: &'a Cx<'_>,
    params: Option<InitializeParams<'_>>,
) -> Result<InitializeResult<'a>, RpcError> {
    let session = cx.session;
    if session.initialized.load(Ordering::Relaxed) {
        return Err(RpcError::new(
            code::INVALID_REQUEST,
            "Invalid Request: the session is initialized already; open a new one to negotiate again",
        ));
    }
    let params =
        params.ok_or_else(|| RpcError::new(code::INVALID_PARAMS, "`initialize` needs params"))?;
    let version = ProtocolVersion::negotiate(&params.protocol_version);
    session.set_client(ClientInfo {
        protocol_version: version,
        info: params.client_info,
        capabilities: params.capabilities,
    });
    session.initialized.store(true, Ordering::Relaxed);
    let shared = &cx.server().shared;
    Ok(InitializeResult {
        protocol_version: version.as_str(),
        capabilities: &shared.capabilities,
        server_info: &shared.info,
        instructions: shared.instructions.as_deref(),
    })
}

/// `ping`: an empty answer, whatever the params.
pub(crate) fn ping(_: &Cx<'_>, _: Option<IgnoredAny>) -> Result<Empty, RpcError> {
    Ok(Empty {})
}

/// `logging/setLevel`: the least severe level the session's client is sent.
pub(crate) fn set_level(
    cx: &Cx<'_>,
    params: Option<SetLevelParams<'_>>,
) -> Result<Empty, RpcError> {
    let params = params
        .ok_or_else(|| RpcError::new(code::INVALID_PARAMS, "`logging/setLevel` needs params"))?;
    let level = LogLevel::parse(&params.level).ok_or_else(|| {
        RpcError::new(
            code::INVALID_PARAMS,
            format!("unknown log level `{}`", params.level),
        )
    })?;
    cx.session.log_level.store(level as u8, Ordering::Relaxed);
    cx.session.persist();
    Ok(Empty {})
}

/// `server/discover`: the versions this server speaks, what it offers, its instructions; with
/// the server's cache hints.
pub(crate) fn discover(cx: &Cx<'_>, _: &Request<'_>) {
    let shared = &cx.server().shared;
    // 2026-07-28 has no `tasks` capability: tasks are an extension there.
    let mut capabilities = shared.capabilities.clone();
    if capabilities.tasks.take().is_some() {
        capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(tasks::TASKS_EXTENSION, serde_json::json!({}));
    }
    let result = DiscoverResult {
        supported_versions: ProtocolVersion::SUPPORTED
            .map(ProtocolVersion::as_str)
            .to_vec(),
        capabilities: &capabilities,
        instructions: shared.instructions.as_deref(),
    };
    cx.respond(cx.reply(Ok(result), Some(shared.hints)));
}
