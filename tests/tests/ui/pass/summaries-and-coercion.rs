//! Every form of `summary` and `coerce` compiles, and does what it says.

use mcp_tool::prelude::*;

#[derive(Serialize, JsonSchema)]
struct Report {
    count: u32,
}

fn describe(r: &Report) -> String {
    format!("{} users", r.count)
}

/// A template.
#[tool(summary = "{count} users", coerce)]
fn templated(n: u32) -> Json<Report> {
    Json(Report { count: n })
}

/// A function, on a fallible result.
#[tool(summary = describe)]
async fn by_function(#[arg(coerce)] n: u32) -> Result<Json<Report>, ToolError> {
    Ok(Json(Report { count: n }))
}

/// A closure, on an optional result.
#[tool(summary = |r: &Report| format!("{} users", r.count), coerce = false)]
fn by_closure(n: u32) -> Option<Json<Report>> {
    Some(Json(Report { count: n }))
}

struct Reports;

#[tools]
impl Reports {
    /// An associated function of the service's type.
    #[tool(summary = Self::line)]
    fn method(&self, #[arg(coerce = true)] n: u32) -> Json<Report> {
        Json(Report { count: n })
    }

    fn line(r: &Report) -> String {
        format!("{} users", r.count)
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let server = Server::new("t", "1")
        .only(["templated", "by_function", "by_closure", "method"])
        .service(Reports)
        .build()
        .unwrap();
    for name in ["templated", "by_function", "by_closure", "method"] {
        let r = server.call(name, serde_json::json!({"n": "2"})).await.unwrap();
        if name == "by_closure" {
            assert!(r.is_error, "{name}: strict");
            continue;
        }
        assert_eq!(r.text_content(), "2 users", "{name}");
        assert_eq!(r.structured().unwrap(), serde_json::json!({"count": 2}), "{name}");
    }
    let r = server.call("by_closure", serde_json::json!({"n": 2})).await.unwrap();
    assert_eq!(r.text_content(), "2 users");
}
