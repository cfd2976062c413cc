//! The benchmark's tools written with mcp-tool the way a user writes them (the `bench-server`
//! binary and the in-process `dispatch` bench share them).

use std::collections::HashMap;

use mcp_tool::extract::Elicitation;
use mcp_tool::prelude::*;
use mcp_tool_bench::{UserIds, now_rfc3339};

/// Add two integers.
#[tool(read_only, idempotent)]
pub(crate) fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Add two integers (the same tool as an `async fn`, for the driver's `diag` leg: it runs on
/// the runtime's worker instead of the blocking pool).
#[tool(read_only, idempotent)]
pub(crate) async fn add_async(a: i64, b: i64) -> i64 {
    a + b
}

/// Double a number, as a job that may run as a task (the driver's `tasks` leg). It yields to
/// the runtime once before it answers: in 2026-07-28 a call becomes a task only when it waits.
#[tool(read_only, idempotent, task = "optional")]
pub(crate) async fn quick_job(n: i64) -> i64 {
    tokio::task::yield_now().await;
    2 * n
}

/// Wait `ms` milliseconds, then answer them (the driver's `memory` leg: calls in flight).
#[tool(read_only, idempotent)]
pub(crate) async fn wait(ms: u64) -> u64 {
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    ms
}

/// The user's answer to `confirm_add`'s question.
#[derive(Deserialize, JsonSchema)]
struct Confirm {
    /// Add them?
    confirm: bool,
}

/// Add two integers once the user confirms (one elicitation: in 2025-11-25 a request to the
/// client, in 2026-07-28 an input-required round; the driver's `versions` leg).
#[tool(read_only, idempotent)]
pub(crate) async fn confirm_add(ctx: Ctx, a: i64, b: i64) -> Result<i64, ToolError> {
    match ctx.elicit::<Confirm>("Add them?").await? {
        Elicitation::Accept(Confirm { confirm: true }) => Ok(a + b),
        _ => Err(ToolError::new("NOT_CONFIRMED", "the user did not confirm")),
    }
}

/// User role determining access permissions.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Role {
    #[default]
    User,
    Admin,
    Moderator,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Admin => "admin",
            Role::Moderator => "moderator",
        }
    }
}

/// The details of a new account.
#[derive(Deserialize, JsonSchema)]
struct CreateUser {
    /// Valid email address for the account
    #[schemars(email)]
    email: String,
    /// Full name of the user
    #[schemars(length(min = 2, max = 100))]
    name: String,
    /// User role determining access permissions
    #[serde(default)]
    role: Role,
    /// Additional key-value pairs for custom attributes
    #[allow(dead_code)]
    metadata: Option<HashMap<String, String>>,
}

/// A user account.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct User {
    /// Generated user ID
    id: String,
    email: String,
    name: String,
    role: String,
    created_at: String,
}

/// The user service.
#[derive(Default)]
pub(crate) struct Users {
    ids: UserIds,
}

#[tools]
impl Users {
    /// Create a new user account with the provided details. Returns the created user object with generated ID.
    #[tool(
        title = "Create User Account",
        destructive = false,
        idempotent = false,
        read_only = false,
        open_world = false
    )]
    async fn create_user(&self, Args(input): Args<CreateUser>) -> Json<User> {
        Json(User {
            id: self.ids.next(),
            email: input.email,
            name: input.name,
            role: input.role.as_str().to_owned(),
            created_at: now_rfc3339(),
        })
    }
}
