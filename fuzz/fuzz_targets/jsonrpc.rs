//! JSON-RPC framing and dispatch: the input, as lines, is one client's side of a stdio
//! connection to an in-process server (`testing::serve_io`, the stdio code path). Whatever
//! the lines are, the server must neither panic nor hang, every line it writes must be one
//! well-formed JSON-RPC message, and no id may be answered more often than it was sent.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcp_tool::server::ServerHandle;
use mcp_tool_fuzz::{check_output, plain_server, runtime};
use tokio::io::AsyncReadExt;

static SERVER: OnceLock<ServerHandle> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let server = SERVER.get_or_init(plain_server).clone();
    let output = runtime().block_on(async move {
        let (mut client, server_end) = tokio::io::duplex(1 << 16);
        let serve = mcp_tool::testing::serve_io(server, data, server_end);
        let read = async move {
            let mut output = Vec::new();
            client
                .read_to_end(&mut output)
                .await
                .expect("read the output");
            output
        };
        let (served, output) = tokio::join!(serve, read);
        served.expect("serve_io ends well");
        output
    });
    let text = String::from_utf8(output).expect("the server writes UTF-8");
    let input = String::from_utf8_lossy(data);
    let lines: Vec<&str> = input.lines().collect();
    check_output(&lines, &text);
});
