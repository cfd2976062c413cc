//! MCP Apps in a real browser: the `moon` example's view rendered by a host built on the
//! official SDKs (ext-apps' `AppBridge` and the TypeScript SDK client) in headless Chromium,
//! once in each protocol version. `apps/moon-browser.mjs` does the work and prints one JSON line;
//! this test starts it, bounds it, and reads the verdict. What it checks is listed at the top
//! of that script: the extension declared, the app-only tool listed with its visibility and
//! kept from the model, the view's `_meta.ui`, the phase drawn, a click in the view calling
//! `moon_refresh` through the host, the CSP blocking a fetch, no stray request, no error.
//!
//! `bash apps/setup.sh` installs what it needs (`.ci/run` does it): the npm packages, pinned
//! in `apps/package-lock.json`, and Debian's `chromium` when missing. The test fails (it does
//! not skip) when they are absent.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use mcp_tool_tests::{TempDir, example_bin, wait_bounded};
use serde_json::Value;

#[test]
fn the_moon_view_draws_and_steps_in_a_real_host_in_both_versions() {
    let apps = Path::new(env!("CARGO_MANIFEST_DIR")).join("../apps");
    assert!(
        apps.join("node_modules/@modelcontextprotocol/ext-apps")
            .is_dir(),
        "apps/node_modules is missing: run `bash apps/setup.sh` (.ci/run does it)"
    );
    let moon = example_bin("moon");
    let shots = TempDir::new("apps-browser");
    let mut child = Command::new("node")
        .args(["moon-browser.mjs", "--server", moon, "--out", shots.arg()])
        .current_dir(&apps)
        .env_remove("MCP_TOOL_BEARER_TOKENS")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run node: {e}"));
    let (status, out, err) = wait_bounded(&mut child, Duration::from_secs(180))
        .expect("the browser test ends within 3 minutes");
    let summary: Value = out
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no summary from moon-browser.mjs ({status}):\n{out}\n{err}"));
    assert!(
        status.success() && summary["ok"] == true,
        "the browser test failed ({status}): {:#}\n{err}",
        summary["failures"]
    );
    let runs = summary["runs"].as_array().expect("runs");
    let versions: Vec<&str> = runs.iter().filter_map(|r| r["era"].as_str()).collect();
    assert_eq!(versions, ["2025-11-25", "2026-07-28"], "{summary}");
    for run in runs {
        assert_eq!(run["afterClick"]["date"], "2024-04-16", "{run}");
        assert_eq!(run["blockedFetch"], "connect-src", "{run}");
        let shot = run["screenshot"].as_str().expect("a screenshot");
        let bytes = std::fs::metadata(shot).map(|m| m.len()).unwrap_or(0);
        assert!(bytes > 10_000, "the screenshot {shot} is {bytes} bytes");
    }
}
