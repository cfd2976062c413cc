use mcp_tool::prelude::*;

#[derive(Default)]
struct Counter {
    count: u64,
}

#[tools]
impl Counter {
    /// The count.
    #[tool]
    fn count(self) -> u64 {
        self.count
    }

    /// The count, doubled.
    #[tool]
    fn double(mut self) -> u64 {
        self.count *= 2;
        self.count
    }

    /// The count, boxed.
    #[tool]
    fn boxed(self: Box<Self>) -> u64 {
        self.count
    }
}

fn main() {}
