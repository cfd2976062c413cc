//! The `oauth` leg: what checking OAuth access tokens costs a server. A real authorization
//! server, `oidc-provider` (`interop/oidc-provider.mjs`, installed by `bash interop/setup.sh`),
//! issues RS256 JWT access tokens for the benchmark's resource by the client-credentials grant.
//!
//! - **Verification in process**: `http::OAuthVerifier::check` on a current-thread runtime, its keys
//!   fetched once before the clock starts (a warm key cache): each of a few hundred tokens the
//!   provider issued is verified once (signature, issuer, audience, lifetime, scopes), then
//!   one token again and again (the server keeps what it verified, keyed by the token's hash).
//!   Each check is timed alone; the median is shown.
//! - **HTTP `create_user`, auth off vs on, same run**: `bench-server` without authentication,
//!   with a static bearer token (`MCP_TOOL_BEARER_TOKENS`) and with OAuth
//!   (`MCP_TOOL_OAUTH_ISSUER`), every request carrying its token; sessionless (JSON answers)
//!   and sessions (JSON answers), the servers' order rotated each repetition.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use mcp_tool::http::OAuthVerifier;

use super::http::{HttpMode, http_run};
use super::process::{ServerCmd, percentile};
use super::tables::{ratio_rows_of, table_header, table_row};
use super::wire::{Tool, Version};
use super::{Options, Result, Run, server_cmd};

/// The benchmark server's resource URL: the audience its tokens are issued for (the server
/// compares it with the tokens' `aud`, wherever it listens).
const RESOURCE: &str = "http://127.0.0.1/mcp";

/// Tokens verified once each in process.
const FRESH_TOKENS: usize = 300;

/// Checks of one token already verified.
const CACHED_CHECKS: usize = 20_000;

const OFF: &str = "auth off";
const STATIC: &str = "static token";
const OAUTH: &str = "OAuth (RS256 JWT)";

fn interop() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../interop"))
}

/// `node interop/oidc-provider.mjs args…`, run to its end: what it printed.
fn script(args: &[&str]) -> Result<String> {
    let out = Command::new("node")
        .arg("oidc-provider.mjs")
        .args(args)
        .current_dir(interop())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("node does not run ({e}): run `bash interop/setup.sh` first"))?;
    if !out.status.success() {
        return Err(format!("oidc-provider.mjs {}: {}", args[0], out.status).into());
    }
    Ok(String::from_utf8(out.stdout)?.trim().to_owned())
}

/// The authorization server, killed when dropped.
struct Provider {
    child: Child,
    issuer: String,
    keys: PathBuf,
}

impl Provider {
    fn start() -> Result<Provider> {
        if !interop().join("node_modules/oidc-provider").exists() {
            return Err("oidc-provider is missing: run `bash interop/setup.sh` first".into());
        }
        let keys = std::env::temp_dir().join(format!(
            "mcp-tool-bench-oauth-keys-{}.json",
            std::process::id()
        ));
        std::fs::write(&keys, script(&["keys", "RS256"])?)?;
        let keys_arg = keys.to_string_lossy().into_owned();
        let mut child = Command::new("node")
            .args(["oidc-provider.mjs", "serve", "--keys", &keys_arg])
            .args(["--resource", RESOURCE, "--port", "0"])
            .current_dir(interop())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line)?;
        let Some(issuer) = line.trim().strip_prefix("ready ") else {
            let _ = child.kill();
            return Err(
                format!("the provider said `{}`, not `ready <issuer>`", line.trim()).into(),
            );
        };
        Ok(Provider {
            issuer: issuer.to_owned(),
            child,
            keys,
        })
    }

    /// `count` access tokens of the client `writer` (both scopes) for [`RESOURCE`].
    fn tokens(&self, count: usize) -> Result<Vec<String>> {
        let out = script(&[
            "token",
            &self.issuer,
            "writer",
            RESOURCE,
            "users:read users:write",
            &count.to_string(),
        ])?;
        Ok(out.lines().map(str::to_owned).collect())
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.keys);
    }
}

/// Median µs of `OAuthVerifier::check`: each of `fresh` once (after one check that fetched the keys),
/// and `fresh[0]` again `CACHED_CHECKS` times.
fn verify_in_process(issuer: &str, fresh: &[String]) -> Result<(f64, f64)> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let oauth = OAuthVerifier::new(issuer, RESOURCE);
        let (first, rest) = fresh.split_first().ok_or("no tokens")?;
        oauth
            .check(first)
            .await
            .map_err(|e| format!("the provider's token is refused: {e:?}"))?;
        let timed = |times: &mut Vec<u64>, t: Instant| {
            times.push(u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX));
        };
        let mut once = Vec::with_capacity(rest.len());
        for token in rest {
            let t = Instant::now();
            let identity = oauth.check(token).await;
            timed(&mut once, t);
            identity.map_err(|e| format!("the provider's token is refused: {e:?}"))?;
        }
        let mut again = Vec::with_capacity(CACHED_CHECKS);
        for _ in 0..CACHED_CHECKS {
            let t = Instant::now();
            let identity = oauth.check(first).await;
            timed(&mut again, t);
            identity.map_err(|e| format!("a verified token is refused: {e:?}"))?;
        }
        once.sort_unstable();
        again.sort_unstable();
        Ok((percentile(&once, 0.5), percentile(&again, 0.5)))
    })
}

const MODES: [HttpMode; 2] = [HttpMode::Sessionless, HttpMode::SessionJson];

pub(crate) fn oauth_leg(opts: &Options, ticks: f64, out: &mut String) -> Result<()> {
    let provider = Provider::start()?;
    eprint!("\r\x1b[Koauth: {FRESH_TOKENS} tokens from the provider …");
    let fresh = provider.tokens(FRESH_TOKENS)?;
    let token = fresh.first().ok_or("no token")?.clone();
    let (verify_us, cached_us) = verify_in_process(&provider.issuer, &fresh)?;
    let _ = writeln!(
        out,
        "### OAuth: checking RS256 JWT access tokens from oidc-provider\n\n\
         | check (in process, one thread, keys fetched before) | median µs |\n|---|---:|\n\
         | a token not seen before: signature and claims ({} tokens) | {verify_us:.1} |\n\
         | a token verified already ({CACHED_CHECKS} checks) | {cached_us:.2} |\n",
        fresh.len() - 1
    );

    let base = server_cmd(&opts.dir, "mcp-tool");
    let static_token = format!("bench-{}-{}", std::process::id(), token.len());
    let servers = [
        ServerCmd {
            label: OFF.to_owned(),
            ..base.clone()
        },
        ServerCmd {
            label: STATIC.to_owned(),
            env: vec![(
                mcp_tool::env::BEARER_TOKENS.to_owned(),
                format!("bench:{static_token}"),
            )],
            bearer: Some(static_token),
            ..base.clone()
        },
        ServerCmd {
            label: OAUTH.to_owned(),
            env: vec![
                (
                    mcp_tool::env::OAUTH_ISSUER.to_owned(),
                    provider.issuer.clone(),
                ),
                (mcp_tool::env::RESOURCE.to_owned(), RESOURCE.to_owned()),
            ],
            bearer: Some(token),
            ..base
        },
    ];
    let mut cells: BTreeMap<HttpMode, BTreeMap<String, Vec<Run>>> = BTreeMap::new();
    for rep in 0..opts.repeat {
        for mode in MODES {
            for k in 0..servers.len() {
                let server = &servers[(k + rep) % servers.len()];
                eprint!(
                    "\r\x1b[Koauth run {}/{}: {} {} …",
                    rep + 1,
                    opts.repeat,
                    server.label,
                    mode.name()
                );
                let run = http_run(
                    server,
                    mode,
                    Tool::CreateUser,
                    Version::V2025_11_25,
                    opts.n,
                    opts.clients,
                    ticks,
                )
                .map_err(|e| format!("{} HTTP {}: {e}", server.label, mode.name()))?;
                cells
                    .entry(mode)
                    .or_default()
                    .entry(server.label.clone())
                    .or_default()
                    .push(run);
            }
        }
    }
    eprintln!("\r\x1b[Koauth: done");
    let _ = writeln!(
        out,
        "**HTTP `create_user`, N = {} calls, M = {} keep-alive clients, median of {} runs**\n",
        opts.n, opts.clients, opts.repeat
    );
    for (mode, by_server) in &cells {
        let _ = writeln!(out, "*{}*\n", mode.name());
        table_header(out, "authentication");
        for s in &servers {
            if let Some(runs) = by_server.get(&s.label) {
                table_row(out, &s.label, runs);
            }
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "**Ratios** (calls/s: with auth ÷ off, in brackets the lowest and highest of one repetition's pair; p50 and CPU/call: off ÷ with auth; 1 = free)\n"
    );
    let _ = writeln!(out, "| scenario | pair | calls/s | p50 | CPU/call |");
    let _ = writeln!(out, "|---|---|---:|---:|---:|");
    let off = [OFF.to_owned()];
    for (mode, by_server) in &cells {
        for ours in [STATIC, OAUTH] {
            ratio_rows_of(out, mode.name(), by_server, ours, &off);
        }
    }
    out.push('\n');
    Ok(())
}
