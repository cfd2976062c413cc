use mcp_tool::prelude::*;

trait Greet {
    fn greet(&self, name: String) -> String;
}

struct Greeter;

#[tools]
impl Greet for Greeter {
    /// Greet someone.
    #[tool]
    fn greet(&self, name: String) -> String {
        format!("hello {name}")
    }
}

fn main() {}
