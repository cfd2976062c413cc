//! The arguments and results of the rmcp servers (`rmcp-doc` and `rmcp-fast` share them), and
//! `confirm_add`, the tool that asks the user once.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::OnceLock;
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, ElicitRequest, ElicitRequestParams,
    ElicitationSchema, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    ProtocolVersion, RequestStateCodec, SealOptions,
};
use rmcp::schemars;
use rmcp::service::{ElicitationError, RequestContext, RoleServer};
use serde::{Deserialize, Serialize};

/// The two numbers to add.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct AddRequest {
    /// The first number
    pub(crate) a: i64,
    /// The second number
    pub(crate) b: i64,
}

/// How long to wait.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct WaitRequest {
    /// Milliseconds
    pub(crate) ms: u64,
}

/// Waits `ms` milliseconds and answers them (the driver's `memory` leg: calls in flight).
pub(crate) async fn wait(WaitRequest { ms }: WaitRequest) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    ms.to_string()
}

/// User role determining access permissions.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Role {
    #[default]
    User,
    Admin,
    Moderator,
}

impl Role {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Admin => "admin",
            Role::Moderator => "moderator",
        }
    }
}

/// The details of a new account.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct CreateUserRequest {
    /// Valid email address for the account
    #[schemars(email)]
    pub(crate) email: String,
    /// Full name of the user
    #[schemars(length(min = 2, max = 100))]
    pub(crate) name: String,
    /// User role determining access permissions
    #[serde(default)]
    pub(crate) role: Role,
    /// Additional key-value pairs for custom attributes
    #[allow(dead_code)]
    pub(crate) metadata: Option<HashMap<String, String>>,
}

/// A user account.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct User {
    /// Generated user ID
    pub(crate) id: String,
    pub(crate) email: String,
    pub(crate) name: String,
    pub(crate) role: String,
    pub(crate) created_at: String,
}

/// The user's answer to `confirm_add`'s question.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct Confirm {
    /// Add them?
    pub(crate) confirm: bool,
}

rmcp::elicit_safe!(Confirm);

/// The schema of the question, as rmcp's own `Peer::elicit` builds it.
pub(crate) fn confirm_schema() -> ElicitationSchema {
    ElicitationSchema::from_type::<Confirm>().expect("Confirm is a flat struct")
}

/// The key of the one input request.
const KEY: &str = "confirm";

/// The codec that seals `requestState` (HMAC-SHA256), with a key drawn per process as
/// mcp-tool does without a configured key.
fn codec() -> &'static RequestStateCodec {
    static CODEC: OnceLock<RequestStateCodec> = OnceLock::new();
    CODEC.get_or_init(|| {
        let key: Vec<u8> = (0..4u64)
            .flat_map(|i| RandomState::new().hash_one(i).to_le_bytes())
            .collect();
        RequestStateCodec::try_new(key).expect("a key of 32 bytes")
    })
}

fn text(result: impl Into<String>, ok: bool) -> CallToolResponse {
    let content = vec![ContentBlock::text(result.into())];
    if ok {
        CallToolResult::success(content).into()
    } else {
        CallToolResult::error(content).into()
    }
}

/// `confirm_add(a, b)`: asks "Add them?" and answers `a + b` if the user confirms. In 2025-11-25
/// the question is a request to the client (`Peer::elicit`); in 2026-07-28 it is an
/// `InputRequiredResult` whose `requestState` is sealed and bound to the call (tool and
/// arguments) for 10 minutes, as in rmcp's MRTR example, and the retry's answer is deserialized
/// into `Confirm`.
pub(crate) async fn confirm_add(
    AddRequest { a, b }: AddRequest,
    state: Option<String>,
    responses: Option<InputResponses>,
    ctx: RequestContext<RoleServer>,
    schema: ElicitationSchema,
) -> Result<CallToolResponse, ErrorData> {
    if ctx
        .protocol_version()
        .is_none_or(|v| v < ProtocolVersion::V_2026_07_28)
    {
        return match ctx.peer.elicit::<Confirm>("Add them?").await {
            Ok(Some(Confirm { confirm: true })) => Ok(text((a + b).to_string(), true)),
            Ok(_) | Err(ElicitationError::UserDeclined | ElicitationError::UserCancelled) => {
                Ok(text("the user did not confirm", false))
            }
            Err(e) => Err(ErrorData::internal_error(e.to_string(), None)),
        };
    }
    let bound = format!("tools/call confirm_add {a} {b}");
    let options = SealOptions::new()
        .associated_data(bound.as_bytes())
        .ttl(Duration::from_secs(600));
    let Some(state) = state else {
        let mut requests = InputRequests::new();
        requests.insert(
            KEY.into(),
            InputRequest::Elicitation(ElicitRequest::new(
                ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: "Add them?".into(),
                    requested_schema: schema,
                },
            )),
        );
        let sealed = codec().seal_with(b"", &options);
        return Ok(InputRequiredResult::new(Some(requests), Some(sealed)).into());
    };
    codec()
        .open_with(&state, bound.as_bytes())
        .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
    let answer = responses
        .as_ref()
        .and_then(|r| r.get(KEY))
        .ok_or_else(|| ErrorData::invalid_params("no answer to `confirm`", None))?;
    if answer["action"] != "accept" {
        return Ok(text("the user did not confirm", false));
    }
    let confirm: Confirm = serde_json::from_value(answer["content"].clone())
        .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
    Ok(if confirm.confirm {
        text((a + b).to_string(), true)
    } else {
        text("the user did not confirm", false)
    })
}
