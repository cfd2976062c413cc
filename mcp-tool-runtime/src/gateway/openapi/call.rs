//! One call of an operation: approval first where required, the request sent with the
//! mount's credentials (an OAuth token obtained again once when refused), and the answer read
//! within bounds as the tool's result — JSON as structured content, text as text, anything
//! else as an embedded resource; 4xx and 5xx answers as error results with their status and
//! (the start of) their body; a redirect to another origin refused.

use std::sync::Arc;

use reqwest::header::{HeaderMap, WWW_AUTHENTICATE};
use serde_json::{Map, Value};

use super::operation::{Operation, is_json};
use super::{ApiMount, CALL_TIMEOUT, request};
use crate::client::oauth::Authorizer;
use crate::protocol::{Content, ResourceContents};
use crate::tool::{Ctx, DynamicArgs, Elicitation, ToolError, ToolResult};

/// The largest answer read; a larger one is an error.
pub(super) const MAX_ANSWER: usize = 8 << 20;

/// How much of an error answer's body the error result shows.
const ERROR_BODY: usize = 2000;

/// Sends `request` and reads its status, headers and body (at most `max` bytes).
pub(super) async fn read_bounded(
    request: reqwest::RequestBuilder,
    max: usize,
) -> Result<(u16, HeaderMap, Vec<u8>), String> {
    let mut response = request.send().await.map_err(describe)?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    if response.content_length().is_some_and(|n| n > max as u64) {
        return Err(format!("the answer is larger than {max} bytes: not read"));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(describe)? {
        if body.len() + chunk.len() > max {
            return Err(format!("the answer is larger than {max} bytes: not read"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((status, headers, body))
}

/// A request's task, ended when the call no longer waits for it.
struct Abort<T>(tokio::task::JoinHandle<Result<T, String>>);

impl<T> Abort<T> {
    async fn finish(mut self) -> Result<T, String> {
        (&mut self.0)
            .await
            .unwrap_or_else(|e| Err(format!("the request ended without an answer ({e})")))
    }
}

impl<T> Drop for Abort<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A failure to reach the service, without its URL (whose query may hold a key).
fn describe(e: reqwest::Error) -> String {
    if e.is_timeout() {
        format!("no answer within {} s", CALL_TIMEOUT.as_secs())
    } else if e.is_connect() {
        format!("the service could not be reached ({})", e.without_url())
    } else if e.is_redirect() {
        format!("the redirects were refused ({})", e.without_url())
    } else {
        e.without_url().to_string()
    }
}

/// `text` cut to `max` bytes (at a character's boundary), saying so.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &text[..end], text.len())
}

impl ApiMount {
    /// The authorizer of the mount's OAuth connection, made for the server of its first call.
    fn authorizer(&self, op: &Operation) -> Option<&Authorizer> {
        let oauth = self.credentials.oauth.as_ref()?;
        Some(
            self.credentials
                .authorizer
                .get_or_init(|| Authorizer::new(oauth.clone(), op.base.as_str())),
        )
    }

    /// One call of `op`.
    pub(super) async fn call(
        self: &Arc<Self>,
        op: &Operation,
        args: DynamicArgs,
        approval: bool,
    ) -> Result<ToolResult, ToolError> {
        let ctx = args.ctx.clone();
        if approval {
            self.approve(&ctx, &op.name, &args.arguments).await?;
        }
        let built = request::build(op, args.arguments, &self.credentials.query)
            .map_err(|e| ToolError::new("INVALID_ARGUMENTS", e))?;
        let authorizer = self.authorizer(op);
        let mut refused_once = false;
        loop {
            let token = match authorizer {
                Some(a) => a.token().await.map_err(|e| {
                    ToolError::new("REMOTE_UNAUTHORIZED", format!("`{}`: {e}", self.label()))
                })?,
                None => self.credentials.bearer.clone(),
            };
            let mut request = self
                .http
                .request(op.method.clone(), built.url.clone())
                .header("Accept", "application/json, */*;q=0.5");
            for (name, value) in self.credentials.headers.iter().chain(&built.headers) {
                request = request.header(name.as_str(), value.as_str());
            }
            if let Some(token) = &token {
                request = request.bearer_auth(token);
            }
            if let Some(body) = &built.body {
                request = request
                    .header("Content-Type", "application/json")
                    .body(serde_json::to_vec(body).unwrap_or_default());
            }
            // Sent from a task of its own: outside the call's scope, the HTTP client's own
            // log events (URLs, a query's key among them) never reach the calling client.
            let task = Abort(tokio::spawn(read_bounded(request, MAX_ANSWER)));
            let sent = tokio::select! {
                read = task.finish() => read,
                () = ctx.cancellation().cancelled() => {
                    return Err(ToolError::new("CANCELLED", "the call was cancelled; the request to the service was dropped"));
                }
            };
            let (status, headers, body) = sent.map_err(|why| {
                ToolError::new(
                    "REMOTE_UNAVAILABLE",
                    format!("the `{}` service: {why}", self.label()),
                )
                .retryable(!why.contains("larger than"))
            })?;
            if status == 401
                && let Some(authorizer) = authorizer
                && !refused_once
            {
                refused_once = true;
                let challenge = headers.get(WWW_AUTHENTICATE).and_then(|v| v.to_str().ok());
                authorizer
                    .unauthorized(challenge, token.as_deref())
                    .await
                    .map_err(|e| {
                        ToolError::new("REMOTE_UNAUTHORIZED", format!("`{}`: {e}", self.label()))
                    })?;
                continue;
            }
            return Ok(self.answer(op, &built.url, status, &headers, &body));
        }
    }

    /// The service's answer as the tool's result.
    fn answer(
        &self,
        op: &Operation,
        url: &reqwest::Url,
        status: u16,
        headers: &HeaderMap,
        body: &[u8],
    ) -> ToolResult {
        let reason = reqwest::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .map(|r| format!(" {r}"))
            .unwrap_or_default();
        let media = headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        if (300..400).contains(&status) {
            let to = headers
                .get("location")
                .and_then(|v| v.to_str().ok())
                .and_then(|l| url.join(l).ok())
                .map(|l| l.origin().ascii_serialization())
                .unwrap_or_else(|| "elsewhere".into());
            return ToolResult::error(format!(
                "the `{}` service answered HTTP {status}{reason}, a redirect to {to}: not followed (redirects are followed within {} only)",
                self.label(),
                url.origin().ascii_serialization()
            ));
        }
        let text = String::from_utf8_lossy(body);
        if status >= 400 {
            let mut result = ToolResult::error(format!(
                "the `{}` service answered HTTP {status}{reason}: {}",
                self.label(),
                cut(text.trim(), ERROR_BODY)
            ));
            let mut meta = Map::new();
            meta.insert("status".into(), Value::from(status));
            result.meta = Some(Map::from_iter([(
                "io.github.mcp-tool/http".to_owned(),
                Value::Object(meta),
            )]));
            return result;
        }
        if is_json(&media) || (media.is_empty() && op.output_schema.is_some()) {
            return match serde_json::from_slice::<Value>(body) {
                Ok(value) => {
                    // Without an output schema, an answer that is no object is wrapped as the
                    // project wraps any such structured content.
                    let value = match (&op.output_schema, value) {
                        (None, v @ Value::Object(_)) | (Some(_), v) => v,
                        (None, v) => Value::Object(Map::from_iter([("result".to_owned(), v)])),
                    };
                    ToolResult {
                        structured_content: Some(value.into()),
                        ..ToolResult::default()
                    }
                }
                Err(e) if body.is_empty() => ToolResult::error(format!(
                    "the `{}` service answered HTTP {status}{reason} with no body, where JSON was expected ({e})",
                    self.label()
                )),
                Err(e) => ToolResult::error(format!(
                    "the `{}` service answered HTTP {status}{reason} with a body that is not the JSON it said: {e}",
                    self.label()
                )),
            };
        }
        if body.is_empty() {
            return ToolResult::text(format!("HTTP {status}{reason}"));
        }
        let essence = media
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        if essence.starts_with("text/") || (essence.is_empty() && std::str::from_utf8(body).is_ok())
        {
            return ToolResult::text(text.into_owned());
        }
        let mut plain = url.clone();
        plain.set_query(None);
        let block = if essence.starts_with("image/") {
            Content::image(body, essence)
        } else {
            let kind = if essence.is_empty() {
                "application/octet-stream".to_owned()
            } else {
                essence
            };
            Content::resource(ResourceContents::blob(plain.as_str(), kind, body))
        };
        ToolResult {
            content: vec![block],
            ..ToolResult::default()
        }
    }

    /// Asks the user whether `name` may be called with `arguments`: an error unless they
    /// approve (or when they cannot be asked).
    async fn approve(
        &self,
        ctx: &Ctx,
        name: &str,
        arguments: &Map<String, Value>,
    ) -> Result<(), ToolError> {
        let cannot = |why: &str| {
            ToolError::new(
                "APPROVAL_UNAVAILABLE",
                format!(
                    "`{name}` needs the user's approval, and it could not be asked: {why}; nothing was sent to `{}`",
                    self.label()
                ),
            )
        };
        if !ctx.client().has_capability("elicitation") {
            return Err(cannot(
                "the client did not declare the `elicitation` capability",
            ));
        }
        let question = format!(
            "Allow the `{}` service to run `{name}` with {}?",
            self.label(),
            crate::protocol::jsonrpc::json_string(&Value::Object(arguments.clone()))
        );
        let answer = ctx
            .elicit::<super::super::Approve>(question)
            .await
            .map_err(|e| cannot(e.message()))?;
        if matches!(
            answer,
            Elicitation::Accept(super::super::Approve { approve: true })
        ) {
            Ok(())
        } else {
            Err(ToolError::new(
                "NOT_APPROVED",
                format!(
                    "the user did not approve `{name}`; nothing was sent to `{}`",
                    self.label()
                ),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn an_error_body_is_cut_at_a_character() {
        assert_eq!(cut("short", 10), "short");
        let long = "é".repeat(10);
        assert_eq!(cut(&long, 5), "éé… (20 bytes in all)");
    }
}
