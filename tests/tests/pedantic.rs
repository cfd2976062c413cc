//! A crate as strict as users make theirs: what the macros generate must not trip
//! `missing_docs`, `unreachable_pub` or clippy's pedantic lints (`cargo clippy --all-targets
//! -- -D warnings` checks this file).
#![deny(missing_docs, unreachable_pub, clippy::pedantic, unused_qualifications)]

use mcp_tool::prelude::*;

/// Arguments of `shout`.
#[derive(Deserialize, JsonSchema)]
pub struct Shout {
    /// What to shout.
    pub text: String,
}

/// Shout some text.
#[tool(read_only)]
#[must_use]
pub fn shout(Args(s): Args<Shout>) -> String {
    s.text.to_uppercase()
}

/// Repeat a word.
#[tool]
pub async fn repeat(
    #[arg(description = "The word")] word: String,
    #[arg(default)] times: u8,
) -> String {
    tokio::task::yield_now().await;
    word.repeat(usize::from(times))
}

/// A service.
#[derive(Default)]
pub struct Service;

#[tools]
impl Service {
    /// Say hello.
    #[tool(idempotent)]
    #[must_use]
    pub fn hello(&self, name: Option<String>) -> String {
        format!("hello {}", name.unwrap_or_default())
    }

    /// Fail politely.
    ///
    /// # Errors
    ///
    /// Always.
    #[tool]
    pub async fn fail(&self) -> Result<(), ToolError> {
        tokio::task::yield_now().await;
        Err(ToolError::msg("no"))
    }
}

#[test]
fn strict_crates_build_and_serve() {
    let core = Server::new("strict", "0")
        .service(Service)
        .build()
        .expect("starts");
    assert_eq!(core.tools().len(), 4);
}
