use mcp_tool::prelude::*;

#[derive(Default)]
struct Counter {
    count: u64,
}

#[tools]
impl Counter {
    /// Increment the counter.
    #[tool]
    fn increment(&mut self) -> u64 {
        self.count += 1;
        self.count
    }
}

fn main() {
    let _ = Counter::default().increment();
}
