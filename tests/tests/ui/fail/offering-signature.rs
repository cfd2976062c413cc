use mcp_tool::prelude::*;

/// Generic.
#[prompt]
fn generic<T: std::str::FromStr>(value: String) -> String {
    value
}

/// Unsafe.
#[resource("docs://unsafe")]
unsafe fn dangerous() -> String {
    String::new()
}

/// Another ABI.
#[resource_template("docs://{page}")]
extern "C" fn foreign(page: String) -> String {
    page
}

fn main() {}
