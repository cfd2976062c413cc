//! The OAuth verifier's reading of a bearer token (`http::OAuthVerifier::check`): whatever the bytes,
//! it must neither panic nor hang, refuse everything but a token really signed with its
//! secret, and never say the token back in its refusal. The verifier's issuer is a closed
//! loopback port, so a token that needs the issuer's keys is refused as unavailable at once
//! (and that refusal is remembered for the refresh interval: no fetch per input).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcp_tool::http::OAuthVerifier;

static OAUTH: OnceLock<(tokio::runtime::Runtime, OAuthVerifier)> = OnceLock::new();

/// The secret of the seeds' HS256 tokens.
pub const SECRET: &[u8] = b"fuzz-secret-fuzz-secret-fuzz-sec";

fuzz_target!(|data: &[u8]| {
    let (runtime, oauth) = OAUTH.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let oauth = OAuthVerifier::new("http://127.0.0.1:9", "https://mcp.example.com/mcp")
            .shared_secret(SECRET)
            .refresh_interval(std::time::Duration::from_secs(3600));
        (runtime, oauth)
    });
    let token = String::from_utf8_lossy(data);
    let outcome = runtime.block_on(oauth.check(&token));
    if let Err(refusal) = outcome {
        if token.len() >= 40 {
            assert!(
                !refusal.description.contains(&*token),
                "the refusal says the token back"
            );
        }
    }
});
