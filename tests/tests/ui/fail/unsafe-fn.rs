use mcp_tool::prelude::*;

/// Read a byte at an address.
#[tool]
unsafe fn peek(address: usize) -> u8 {
    let _ = address;
    0
}

fn main() {}
