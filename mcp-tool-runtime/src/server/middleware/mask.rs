//! [`MaskErrors`]: an internal error reaches the model as a generic message with a
//! correlation id; its details go to the log under that id.

#[cfg(test)]
use serde_json::Value;
use serde_json::{Map, json};

use crate::protocol::Content;
use crate::tool::{ERROR_META_KEY, ToolResult};

use super::{Call, CallFuture, Middleware, Next, random_id};

/// Masks the errors of tool calls that were not written for the model: a panic, or a
/// `Result`'s error that is no [`ToolError`](crate::tool::ToolError) of the author's (an
/// `io::Error`, an `anyhow::Error`, a `String`, or one `?` turned into a `ToolError`) — see
/// [`ToolResult::internal_error`]. The model reads `Internal error (id 5f0c…)`; the log gets
/// one `error` event (target `mcp_tool::masked`) with that id, the tool and the error's own
/// text. A `ToolError` the author wrote, an invalid argument and a timeout are not masked: they
/// are meant for the model. `MCP_TOOL_MASK_ERRORS=1` switches it on for a server binary.
#[derive(Clone, Copy, Debug, Default)]
pub struct MaskErrors;

impl Middleware for MaskErrors {
    fn call<'a>(&'a self, call: Call<'a>, next: Next<'a>) -> CallFuture<'a> {
        Box::pin(async move {
            let ctx = call.ctx;
            let mut outcome = next.run(call).await;
            if let Some(result) = outcome.result_mut()
                && result.is_error
                && result.internal_error
            {
                let id = random_id();
                let detail = text_of(result);
                tracing::event!(
                    target: "mcp_tool::masked",
                    tracing::Level::ERROR,
                    error.id = %id,
                    gen_ai.tool.name = ctx.tool(),
                    // The error's text may quote what a client sent: a string value, escaped by
                    // the formatter, so that a line break in it cannot forge a log line.
                    error.message = detail.as_str(),
                    "a tool failed with an internal error; the model was told only its id"
                );
                *result = masked(result, &id);
            }
            outcome
        })
    }
}

/// The text of a result's text blocks.
fn text_of(result: &ToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The masked result: the generic message, the id in the error's `_meta`; the tool changes
/// the result asked for stay (they are not sent to the client).
fn masked(result: &mut ToolResult, id: &str) -> ToolResult {
    let message = format!(
        "Internal error (id {id}): the tool failed for a reason of the server's own; the server's operators can find it in the log under this id."
    );
    let detail =
        json!({ "code": "INTERNAL_ERROR", "message": message, "retryable": false, "id": id });
    ToolResult {
        content: vec![Content::text(message)],
        is_error: true,
        meta: Some(Map::from_iter([(ERROR_META_KEY.to_owned(), detail)])),
        enable_tools: std::mem::take(&mut result.enable_tools),
        disable_tools: std::mem::take(&mut result.disable_tools),
        internal_error: true,
        ..ToolResult::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_masked_result_says_nothing_of_the_error_but_its_id() {
        let mut result = ToolResult {
            internal_error: true,
            ..ToolResult::error("open /etc/secret/db.key: permission denied")
        };
        result.enable_tools = vec!["retry_tool".into()];
        let masked = masked(&mut result, "0123456789abcdef");
        let wire = serde_json::to_string(&masked).unwrap();
        assert!(!wire.contains("secret"), "{wire}");
        assert!(
            wire.contains("Internal error (id 0123456789abcdef)"),
            "{wire}"
        );
        assert_eq!(
            masked.meta.unwrap()[ERROR_META_KEY]["id"],
            Value::from("0123456789abcdef")
        );
        assert_eq!(masked.enable_tools, ["retry_tool"]);
    }
}
