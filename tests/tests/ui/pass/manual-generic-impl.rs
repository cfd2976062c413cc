use std::sync::Mutex;

use mcp_tool::prelude::*;
use serde_json::json;

#[derive(Default)]
struct Store<T> {
    items: Mutex<Vec<T>>,
}

#[tools(manual)]
impl<T> Store<T>
where
    T: for<'de> Deserialize<'de> + JsonSchema + Send + Sync + 'static,
{
    /// Add an item.
    #[tool]
    fn push(&self, item: T) -> usize {
        let mut items = self.items.lock().unwrap();
        items.push(item);
        items.len()
    }
}

#[tokio::main]
async fn main() {
    let core = Server::new("store", "1")
        .without_registry()
        .tools(Store::<u32>::mcp_tools())
        .service(Store::<u32>::default())
        .build()
        .unwrap();
    let tool = &core.tools()[0].to_json();
    assert_eq!(tool["inputSchema"]["properties"]["item"]["type"], "integer");
    assert_eq!(
        core.call("push", json!({ "item": 7 }))
            .await
            .unwrap()
            .text_content(),
        "1"
    );

    // `manual`: nothing was registered.
    assert!(Server::new("store", "1").only(["push"]).build().is_err());
}
