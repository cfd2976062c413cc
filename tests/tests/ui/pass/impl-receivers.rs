use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mcp_tool::prelude::*;
use serde_json::json;

#[derive(Default)]
struct Counter {
    count: AtomicU64,
}

#[tools]
impl Counter {
    /// Add to the counter.
    #[tool]
    fn add(&self, n: u64) -> u64 {
        self.count.fetch_add(n, Ordering::SeqCst) + n
    }

    /// The counter's value.
    #[mcp_tool::tool(read_only)]
    async fn get(self: Arc<Self>) -> u64 {
        self.count.load(Ordering::SeqCst)
    }

    /// Reset the counter.
    #[tool(destructive)]
    async fn reset(self: std::sync::Arc<Self>) {
        self.count.store(0, Ordering::SeqCst);
    }

    /// Whether a number is even: needs no counter.
    #[tool(name = "is-even")]
    fn is_even(n: u64) -> bool {
        n % 2 == 0
    }

    /// Not a tool: left alone.
    fn helper(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }
}

#[tokio::main]
async fn main() {
    let core = Server::new("counter", "1")
        .without_registry()
        .tools(Counter::mcp_tools())
        .service(Counter::default())
        .build()
        .unwrap();
    let names: Vec<String> = core
        .tools()
        .iter()
        .map(|t| t.to_json()["name"].to_string())
        .collect();
    assert_eq!(names, ["\"add\"", "\"get\"", "\"is-even\"", "\"reset\""]);

    assert_eq!(
        core.call("add", json!({ "n": 2 }))
            .await
            .unwrap()
            .text_content(),
        "2"
    );
    assert_eq!(
        core.call("add", json!({ "n": 3 }))
            .await
            .unwrap()
            .text_content(),
        "5"
    );
    assert_eq!(
        core.call("get", json!({})).await.unwrap().text_content(),
        "5"
    );
    assert!(!core.call("reset", json!({})).await.unwrap().is_error);
    assert_eq!(
        core.call("get", json!({})).await.unwrap().text_content(),
        "0"
    );
    assert_eq!(
        core.call("is-even", json!({ "n": 4 }))
            .await
            .unwrap()
            .text_content(),
        "true"
    );

    // The registry has them too (the impl is not `manual`).
    let core = Server::new("counter", "1")
        .only(["add", "get", "is-even", "reset"])
        .service(Counter::default())
        .build()
        .unwrap();
    assert_eq!(core.tools().len(), 4);
    assert_eq!(Counter::default().helper(), 0);

    // The records point at the methods' lines.
    let set = Counter::mcp_tools();
    let lines: Vec<u32> = set.records().iter().map(|r| r.line).collect();
    assert_eq!(lines, [16, 22, 28, 34]);
    assert!(set.records()[0].file.ends_with("impl-receivers.rs"));
}
