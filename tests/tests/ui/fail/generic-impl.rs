use mcp_tool::prelude::*;

struct Store<T>(Vec<T>);

#[tools]
impl<T: Send + Sync + 'static> Store<T> {
    /// How many items there are.
    #[tool]
    fn len(&self) -> usize {
        self.0.len()
    }
}

struct Borrowed<'a>(&'a str);

#[tools]
impl Borrowed<'_> {
    /// The text's length.
    #[tool]
    fn length(&self) -> usize {
        self.0.len()
    }
}

fn main() {}
