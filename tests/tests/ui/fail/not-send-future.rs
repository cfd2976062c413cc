use std::rc::Rc;

use mcp_tool::prelude::*;

async fn tick() {}

/// Count to three.
#[tool]
async fn count() -> u32 {
    let counter = Rc::new(3);
    tick().await;
    *counter
}

fn main() {}
