use std::rc::Rc;

use mcp_tool::prelude::*;

async fn tick() {}

/// Greet someone, holding an `Rc` across an await.
#[prompt]
async fn greet(name: String) -> String {
    let shared = Rc::new(name);
    tick().await;
    format!("Hello, {shared}!")
}

fn main() {}
