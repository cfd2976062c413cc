//! The arguments and results of the rmcp servers (`rmcp-doc` and `rmcp-fast` share them).

use std::collections::HashMap;

use rmcp::schemars;
use serde::{Deserialize, Serialize};

/// The two numbers to add.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct AddRequest {
    /// The first number
    pub(crate) a: i64,
    /// The second number
    pub(crate) b: i64,
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
