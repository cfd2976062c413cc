use mcp_tool::prelude::*;
use serde_json::json;

/// A raw identifier: the tool is `type`, its argument `match`.
#[tool]
fn r#type(r#match: String) -> String {
    r#match
}

struct Kinds;

#[tools]
impl Kinds {
    /// Raw method name.
    #[tool]
    fn r#loop(&self) -> &'static str {
        "loop"
    }

    /// Differs from the next one only in case.
    #[tool]
    #[allow(non_snake_case)]
    fn Case(&self) -> &'static str {
        "upper"
    }

    /// Differs from the previous one only in case.
    #[tool(name = "case-lower")]
    fn case(&self) -> &'static str {
        "lower"
    }
}

#[tokio::main]
async fn main() {
    let core = Server::new("t", "1")
        .only(["type", "loop", "Case", "case-lower"])
        .service(Kinds)
        .build()
        .unwrap();
    let result = core.call("type", json!({ "match": "m" })).await.unwrap();
    assert_eq!(result.text_content(), "m");
    assert_eq!(
        core.call("loop", json!({})).await.unwrap().text_content(),
        "loop"
    );
    assert_eq!(
        core.call("Case", json!({})).await.unwrap().text_content(),
        "upper"
    );
    assert_eq!(
        core.call("case-lower", json!({}))
            .await
            .unwrap()
            .text_content(),
        "lower"
    );
}
