use std::cell::Cell;

use mcp_tool::prelude::*;

#[derive(Default)]
struct Counter {
    count: Cell<u64>,
}

#[tools]
impl Counter {
    /// Increment the counter.
    #[tool]
    fn increment(&self) -> u64 {
        self.count.set(self.count.get() + 1);
        self.count.get()
    }
}

fn main() {}
