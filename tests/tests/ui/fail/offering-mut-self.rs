use mcp_tool::prelude::*;

struct Docs {
    reads: u32,
}

#[tools]
impl Docs {
    /// The README.
    #[resource("docs://readme")]
    fn readme(&mut self) -> String {
        self.reads += 1;
        String::new()
    }
}

fn main() {}
