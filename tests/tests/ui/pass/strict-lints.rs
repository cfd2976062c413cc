//! A crate as strict as users make theirs: the expansion must not trip any of these.
#![deny(missing_docs, warnings, unreachable_pub, unused_qualifications)]
#![deny(clippy::pedantic)]

use std::sync::Arc;

use mcp_tool::prelude::*;

/// Multiply two numbers.
#[tool(read_only)]
#[must_use]
pub fn multiply(a: f64, b: f64) -> f64 {
    a * b
}

/// A free async tool with an extractor and no arguments.
#[tool]
pub async fn whoami(ctx: Ctx) -> String {
    format!("{:?}", ctx.id())
}

/// A service.
#[derive(Default)]
pub struct Service {
    greeting: String,
}

#[tools]
impl Service {
    /// Say hello.
    #[tool(idempotent)]
    pub fn hello(&self, #[arg(description = "Who")] name: Option<String>) -> String {
        format!("{} {}", self.greeting, name.unwrap_or_default())
    }

    /// Say hello, shared.
    #[tool]
    pub async fn shared(self: Arc<Self>) -> String {
        self.greeting.clone()
    }

    /// A tool without a service.
    #[tool]
    fn static_tool() -> &'static str {
        "static"
    }
}

/// A private service type.
struct Private;

#[tools]
impl Private {
    /// Private.
    #[tool(name = "private")]
    fn private(&self) -> Result<(), ToolError> {
        let _ = self;
        Ok(())
    }
}

fn main() {
    let _ = Server::new("strict", "1")
        .service(Service::default())
        .service(Private);
}
