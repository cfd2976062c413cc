//! What a server checks when it starts: duplicate names (with both definition sites), missing
//! service instances, explicit registration without the inventory, and `only`.

use mcp_tool::prelude::*;
use mcp_tool::testing::Client;
use serde_json::json;

mod first {
    use mcp_tool::prelude::*;

    /// One `same`.
    #[tool]
    pub(crate) fn same() -> &'static str {
        "first"
    }
}

mod second {
    use mcp_tool::prelude::*;

    /// Another `same`.
    #[tool(name = "same")]
    pub(crate) fn also_same() -> &'static str {
        "second"
    }
}

/// A tool whose name is unique.
#[tool]
fn unique() -> &'static str {
    "unique"
}

struct Store;

#[tools]
impl Store {
    /// Needs a `Store` instance.
    #[tool]
    fn fetch(&self) -> &'static str {
        "fetched"
    }
}

struct Manual<T>(T);

#[tools(manual)]
impl<T: Send + Sync + 'static + std::fmt::Display> Manual<T> {
    /// Shows the value.
    #[tool]
    fn show(&self) -> String {
        self.0.to_string()
    }
}

#[test]
fn every_problem_is_reported_together_with_both_sites() {
    let err = Server::new("t", "0").build().unwrap_err();
    let text = err.to_string();
    let dup = err
        .problems()
        .iter()
        .find(|p| p.contains("two tools are named `same`"))
        .unwrap_or_else(|| panic!("no duplicate report in {text}"));
    assert_eq!(dup.matches("tests/tests/start.rs:").count(), 2, "{dup}");
    let missing = err
        .problems()
        .iter()
        .find(|p| p.contains("`fetch`"))
        .unwrap_or_else(|| panic!("no missing-service report in {text}"));
    assert!(
        missing.contains("Store") && missing.contains(".service("),
        "{missing}"
    );
    assert_eq!(err.problems().len(), 2, "{text}");
}

#[test]
fn only_selects_tools_and_refuses_unknown_names() {
    let core = Server::new("t", "0").only(["unique"]).build().unwrap();
    let names: Vec<String> = core.tools().iter().map(|t| t.name().to_owned()).collect();
    assert_eq!(names, ["unique"]);
    let err = Server::new("t", "0").only(["nope"]).build().unwrap_err();
    assert!(err.to_string().contains("`nope`"), "{err}");
}

#[tokio::test]
async fn explicit_tool_sets_work_without_the_registry() {
    let server = Server::new("t", "0")
        .without_registry()
        .tools(Store::mcp_tools())
        .tools(Manual::<u32>::mcp_tools())
        .service(Store)
        .service(Manual(7_u32));
    let c = Client::start(server).await.unwrap();
    let names: Vec<String> = c
        .list_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["fetch", "show"]);
    assert_eq!(c.call("fetch", json!({})).await.unwrap().text(), "fetched");
    assert_eq!(c.call("show", json!({})).await.unwrap().text(), "7");
    assert_eq!(c.call("unique", json!({})).await.unwrap_err().code, -32602);
}

#[test]
fn an_explicit_set_still_needs_its_service() {
    let err = Server::new("t", "0")
        .without_registry()
        .tools(Store::mcp_tools())
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("Store"), "{err}");
}

#[test]
fn the_registry_holds_every_tool_of_this_binary() {
    let core = Server::new("t", "0")
        .service(Store)
        .only(["unique", "fetch"])
        .build()
        .unwrap();
    assert_eq!(core.tools().len(), 2);
}
