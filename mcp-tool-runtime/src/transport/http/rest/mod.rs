//! The server's tools as a REST API, beside the MCP endpoint ([`HttpConfig::openapi`]): each
//! tool at `POST {base}/tools/{name}` with its arguments as the JSON body, and an OpenAPI 3.1
//! document at `GET {base}/openapi.json` made from the same schemas, where `{base}` is the
//! endpoint's path without its last segment (`/mcp` → ``, `/api/mcp` → `/api`).
//!
//! A REST call is a `tools/call` of the stateless version (2026-07-28) made by the endpoint
//! for the caller: it passes the same checks (Host and Origin, credentials, scopes with the same
//! challenge), the same middleware (rate limits, audit, masking) and the same validation as one
//! a client sends, and is answered from its result:
//!
//! | the call's outcome                                   | status                      |
//! |------------------------------------------------------|-----------------------------|
//! | a result                                             | 200: `structuredContent` for a tool with an output schema, else `content` |
//! | arguments that do not fit the input schema           | 422, the fields named       |
//! | a body that is not JSON, or not an object            | 400                         |
//! | no such tool, or one not served over REST            | 404                         |
//! | a tool that runs only as a task, or one that asks its caller for input (elicitation, sampling, roots) | 501 |
//! | an error result: its code (`ToolError::new(code, …)`) | see [`status_of_code`]     |
//! | an error result without a code                       | 500                         |
//!
//! Every refusal is an RFC 9457 problem (`application/problem+json`) whose `detail` is the
//! message an MCP client gets for the same call.
//!
//! Inside: `document` writes the OpenAPI document, `call` answers a call, `answer` turns the
//! call's JSON-RPC response into the HTTP answer (and words the refusals).

mod answer;
mod call;
mod document;

pub(super) use call::handle_call;
pub(super) use document::{document, handle_document};

pub use answer::status_of_code;

/// The REST routes' base: the endpoint's path without its last segment (`/mcp` → ``).
pub(super) fn base_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(base, _)| base)
}
