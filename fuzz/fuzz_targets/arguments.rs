//! Argument validation and extraction: arbitrary JSON arguments (the input's first byte picks
//! the tool, the rest is the arguments' JSON text) to tools whose parameters are enums,
//! options, nested structs, numbers of every width and strings with formats, called through
//! `ServerHandle::call` (validation, then deserialization, then the tool).
//!
//! The oracle: arguments that validation refuses never reach the tool, and arguments it
//! accepts always do — a call that passed validation must not fail to deserialize — and the
//! tool receives values that keep the schema's rules (its own assertions).
#![no_main]

use std::sync::OnceLock;
use std::sync::atomic::Ordering;

use libfuzzer_sys::fuzz_target;
use mcp_tool::server::ServerHandle;
use mcp_tool_fuzz::{RAN, RICH_TOOLS, rich_server, runtime};
use serde_json::Value;

static SERVER: OnceLock<ServerHandle> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let Some((&pick, json)) = data.split_first() else {
        return;
    };
    let Ok(arguments) = serde_json::from_slice::<Value>(json) else {
        return;
    };
    let name = RICH_TOOLS[usize::from(pick) % RICH_TOOLS.len()];
    let server = SERVER.get_or_init(rich_server).clone();
    RAN.store(false, Ordering::SeqCst);
    let shown = arguments.to_string();
    let result = runtime().block_on(async move { server.call(name, arguments).await });
    let ran = RAN.load(Ordering::SeqCst);
    let Ok(result) = result else {
        // Only arguments that are not an object are refused as a protocol error.
        assert!(!ran, "`{name}` ran, yet the call failed: {shown}");
        return;
    };
    let text = result.text_content();
    if result.is_error {
        assert!(!ran, "`{name}` ran and failed on {shown}: {text}");
        assert!(
            text.starts_with("Invalid arguments for tool"),
            "`{name}`: validation accepted {shown}, then the arguments did not deserialize: {text}"
        );
    } else {
        assert!(ran, "`{name}` answered without running: {shown}: {text}");
    }
});
