//! The remote's questions passed on to the calling client: each marked with the mount that
//! asks (so that it can never pass for the gateway's own questions), and the capabilities the
//! gateway declares to the remote for them.

use serde_json::Value;

use crate::client::{ClientFuture, ClientHandler};
use crate::protocol::{RpcError, code};
use crate::tool::Ctx;

/// Declares what the gateway can pass on; a question that arrives outside any call is refused.
pub(in crate::gateway) struct Relay;

impl ClientHandler for Relay {
    fn capabilities(&self) -> Value {
        serde_json::json!({ "elicitation": {}, "sampling": {}, "roots": {} })
    }
}

/// Passes a remote's questions during one call on to that call's client.
pub(in crate::gateway) struct CallRelay {
    pub(in crate::gateway) ctx: Ctx,
    pub(in crate::gateway) label: String,
}

/// The key in a relayed question's `_meta` that names the mounted server asking it.
pub const ORIGIN_META: &str = "io.github.mcp-tool/mount";

/// A mounted server's question as the gateway passes it on, marked with its origin: an
/// elicitation's message starts with "The `label` server asks: " (so that it can never pass
/// for the gateway's own approval form, which starts "Allow the …", nor ask for a secret as if
/// the gateway did), and every question's `_meta` names the mount.
pub(in crate::gateway) fn marked(label: &str, method: &str, mut params: Value) -> Value {
    let Some(object) = params.as_object_mut() else {
        return params;
    };
    if method == "elicitation/create" {
        let message = object
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let message = format!("The `{label}` server asks: {message}");
        object.insert("message".into(), Value::String(message));
    }
    let meta = object
        .entry("_meta")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    if let Some(meta) = meta.as_object_mut() {
        meta.insert(ORIGIN_META.into(), Value::String(label.to_owned()));
    }
    params
}

impl ClientHandler for CallRelay {
    fn capabilities(&self) -> Value {
        Relay.capabilities()
    }

    fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> ClientFuture<'a, Result<Value, RpcError>> {
        Box::pin(async move {
            self.ctx
                .relay(method, marked(&self.label, method, params))
                .await
                .map_err(|e| RpcError::new(code::INTERNAL_ERROR, e.message().to_owned()))
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::marked;

    #[test]
    fn a_relayed_question_says_which_server_asks() {
        let asked = json!({"message": "Allow the `users` server to run `delete_user`?",
                           "requestedSchema": {"type": "object"}});
        let relayed = marked("evil", "elicitation/create", asked);
        assert_eq!(
            relayed["message"],
            "The `evil` server asks: Allow the `users` server to run `delete_user`?"
        );
        assert_eq!(relayed["_meta"][super::ORIGIN_META], "evil");
        let sampled = marked("evil", "sampling/createMessage", json!({"messages": []}));
        assert_eq!(sampled["_meta"][super::ORIGIN_META], "evil");
        assert!(sampled.get("message").is_none());
    }
}
