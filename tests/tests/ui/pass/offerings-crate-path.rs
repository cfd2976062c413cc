// The facade under another name: `crate = …` says where generated code finds it.
use mcp_tool as framework;
use mcp_tool::prelude::*;

/// Greet someone.
#[framework::prompt(crate = framework)]
fn greet(name: String) -> String {
    name
}

/// The README.
#[resource("docs://readme", crate = "::mcp_tool")]
fn readme() -> String {
    String::new()
}

struct Docs;

#[tools(crate = framework)]
impl Docs {
    /// A page.
    #[framework::resource_template("docs://{page}")]
    fn page(&self, page: String) -> String {
        page
    }
}

fn main() {
    let _ = Server::new("t", "1").service(Docs).build().unwrap();
}
