//! A generic impl's prompts and resources are given explicitly, per instantiation.

use mcp_tool::prelude::*;

struct Store<T> {
    items: Vec<T>,
}

#[tools(manual)]
impl<T: ToString + Send + Sync + 'static> Store<T> {
    /// How many items there are.
    #[resource("store://count")]
    fn count(&self) -> String {
        self.items.len().to_string()
    }

    /// List the items.
    #[prompt]
    fn list_items(&self) -> String {
        self.items.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
    }
}

fn main() {
    let server = Server::new("t", "1")
        .without_registry()
        .service(Store { items: vec![1, 2] })
        .offerings(Store::<i32>::mcp_offerings())
        .build()
        .unwrap();
    let _ = server;
}
