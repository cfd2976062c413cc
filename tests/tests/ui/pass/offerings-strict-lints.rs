//! A crate as strict as users make theirs: the expansion of `#[prompt]`, `#[resource]` and
//! `#[resource_template]` must not trip any of these.
#![deny(missing_docs, warnings, unreachable_pub, unused_qualifications)]
#![deny(clippy::pedantic)]

use std::sync::Arc;

use mcp_tool::prelude::*;

/// Greet someone.
#[prompt]
#[must_use]
pub fn greet(#[arg(complete = names)] name: String, times: Option<u8>) -> String {
    format!("{name} {}", times.unwrap_or(1))
}

fn names(typed: &str) -> Vec<String> {
    vec![typed.to_owned()]
}

/// The README.
#[resource("docs://readme")]
pub async fn readme(ctx: Ctx) -> String {
    format!("{:?}", ctx.id())
}

// No description, no argument: nothing changes the builder after it is made.
#[prompt]
fn bare() -> &'static str {
    "bare"
}

/// A page.
#[resource_template("docs://{page}", scopes = ["docs:read"], meta = r#"{"example.com/k": 1}"#)]
fn page(page: u32) -> Result<Json<u32>, ToolError> {
    Ok(Json(page))
}

/// A service.
#[derive(Default)]
pub struct Service {
    greeting: String,
}

#[tools]
impl Service {
    /// A tool beside them.
    #[tool]
    pub fn hello(&self) -> String {
        self.greeting.clone()
    }

    /// Say hello.
    #[prompt(scopes = ["hello"], icons = r#"[{"src": "data:,"}]"#)]
    pub fn hello_prompt(&self, #[arg(complete = Self::who)] name: Option<String>) -> String {
        format!("{} {}", self.greeting, name.unwrap_or_default())
    }

    /// Shared.
    #[resource_template("greetings://{name}")]
    pub async fn shared(self: Arc<Self>, name: String) -> String {
        format!("{} {name}", self.greeting)
    }

    fn who(&self, typed: &str) -> Vec<String> {
        vec![format!("{}{typed}", self.greeting)]
    }
}

/// A private service type with only offerings.
struct Private;

#[tools]
impl Private {
    /// Private.
    #[resource("private://x")]
    fn private(&self) -> Vec<u8> {
        let _ = self;
        Vec::new()
    }
}

fn main() {
    let _ = Server::new("strict", "1")
        .service(Service::default())
        .service(Private)
        .offerings(Service::mcp_offerings());
}
