//! `users`: seed 001's user service: `create_user`, `get_user`, `delete_user` and `send_email`
//! over an in-memory store and an in-memory outbox (no network).
//!
//! Over HTTP behind OAuth (or scoped static tokens), reading needs the scope `users:read` and
//! every change `users:write`: a caller without a tool's scopes does not see it, and calling it
//! anyway gets the step-up challenge naming what is missing. Over stdio every scope is granted.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use mcp_tool::extract::Progress;
use mcp_tool::prelude::*;

use mcp_tool_examples::now_rfc3339;

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
    metadata: Option<HashMap<String, String>>,
}

/// A user account.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct User {
    /// Generated user ID
    id: String,
    email: String,
    name: String,
    role: String,
    created_at: String,
    #[serde(skip)]
    #[allow(dead_code)]
    metadata: HashMap<String, String>,
}

/// An email to send.
#[derive(Deserialize, JsonSchema)]
struct Email {
    #[schemars(email)]
    to: String,
    subject: String,
    body: String,
}

/// The user service: an in-memory store and outbox.
#[derive(Default)]
struct Users {
    next_id: AtomicU64,
    users: Mutex<BTreeMap<String, User>>,
    outbox: Mutex<Vec<(String, String, String)>>,
}

#[tools]
impl Users {
    /// Create a new user account with the provided details. Returns the created user object with generated ID.
    #[tool(
        title = "Create User Account",
        scopes = ["users:write"],
        destructive = false,
        idempotent = false,
        read_only = false,
        open_world = false
    )]
    async fn create_user(&self, Args(input): Args<CreateUser>) -> Json<User> {
        let n = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let user = User {
            id: format!("usr_{n:06x}"),
            email: input.email,
            name: input.name,
            role: input.role.as_str().to_owned(),
            created_at: now_rfc3339(),
            metadata: input.metadata.unwrap_or_default(),
        };
        self.users
            .lock()
            .expect("store lock")
            .insert(user.id.clone(), user.clone());
        Json(user)
    }

    /// Retrieve user profile by ID
    #[tool(
        title = "Get User Profile",
        scopes = ["users:read"],
        read_only,
        idempotent,
        destructive = false,
        open_world = false
    )]
    async fn get_user(
        &self,
        #[arg(rename = "userId", description = "User ID")] user_id: String,
    ) -> Result<Json<User>, ToolError> {
        let users = self.users.lock().expect("store lock");
        match users.get(&user_id) {
            Some(user) => Ok(Json(user.clone())),
            None => Err(
                ToolError::new("NOT_FOUND", format!("no user has the id `{user_id}`"))
                    .suggestion("create the user with `create_user`, or check the id"),
            ),
        }
    }

    /// Permanently delete a user account and all associated data
    #[tool(
        title = "Delete User Account",
        scopes = ["users:write"],
        destructive,
        idempotent,
        read_only = false,
        open_world = false
    )]
    async fn delete_user(
        &self,
        #[arg(rename = "userId", description = "User ID to delete")] user_id: String,
    ) -> String {
        match self.users.lock().expect("store lock").remove(&user_id) {
            Some(user) => format!("Deleted user {} ({})", user.id, user.email),
            None => format!("No user has the id {user_id}; nothing to delete"),
        }
    }

    /// Create `count` demo users, one every 50 ms, reporting progress after each.
    #[tool(
        title = "Seed Demo Users",
        scopes = ["users:write"],
        read_only = false,
        destructive = false,
        idempotent = false,
        open_world = false
    )]
    async fn seed_users(
        &self,
        #[arg(description = "How many demo users to create (1-20)")] count: u8,
        progress: Progress,
    ) -> Result<String, ToolError> {
        if !(1..=20).contains(&count) {
            return Err(
                ToolError::new("OUT_OF_RANGE", format!("count must be 1-20, not {count}"))
                    .suggestion("ask for between 1 and 20 users"),
            );
        }
        for i in 1..=count {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            let Json(user) = self
                .create_user(Args(CreateUser {
                    email: format!("demo{i}@example.com"),
                    name: format!("Demo User {i}"),
                    role: Role::User,
                    metadata: None,
                }))
                .await;
            progress.report(
                f64::from(i),
                f64::from(count),
                &format!("created {}", user.id),
            );
        }
        Ok(format!("created {count} demo users"))
    }

    /// Send an email via external email service
    #[tool(
        title = "Send Email",
        scopes = ["users:write"],
        destructive = false,
        idempotent = false,
        read_only = false,
        open_world
    )]
    async fn send_email(&self, Args(email): Args<Email>) -> String {
        let mut outbox = self.outbox.lock().expect("outbox lock");
        outbox.push((email.to.clone(), email.subject, email.body));
        format!("Email #{} to {} queued", outbox.len(), email.to)
    }
}

fn main() -> mcp_tool::Result<()> {
    Server::new("users", env!("CARGO_PKG_VERSION"))
        .title("User accounts")
        .service(Users::default())
        .run()
}
