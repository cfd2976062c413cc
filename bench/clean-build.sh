#!/usr/bin/env bash
# Clean-build leg of the benchmark (see BENCHMARKS.md): what a new user waits for and ships.
# Generates four crates outside the workspace doing the same job — the `calc` example's two
# tools (`multiply`, and `divide` with a division-by-zero error) — in two pairs of matching
# features:
#   calc-default   mcp-tool with its default features: stdio, and Streamable HTTP with `--http ADDR`
#   calc-rmcp-http rmcp (`server`, `macros`, `transport-io`, `transport-streamable-http-server`)
#                  and axum serving its service at /mcp with `--http ADDR`, stdio otherwise
#   calc-stdio     mcp-tool with `default-features = false` (stdio only, the validator's own rules)
#   calc-rmcp      rmcp (`server`, `macros`, `transport-io`): stdio only
# each written as its docs show. Clean release builds, each in a fresh target directory, run in
# turns (all the crates once, then all again, REPEAT rounds) so that the crates of a pair meet
# the same machine, and the ratio of each pair is taken round by round. Then, crate by crate,
# incremental release and debug builds after touching the source (median of REPEAT; skipped
# with INCREMENTAL=0); the stripped release binary's size; the crates in its dependency tree.
# TIMINGS=1 passes `--timings` to the clean builds (cargo's HTML report of where the time went
# is kept as WORK/CRATE-timings-ROUND.html).
# Prints markdown tables on stdout; progress goes to stderr.
#
#   bash bench/clean-build.sh        # REPEAT=3 WORK=target/clean-build CRATES="calc-default …"
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${WORK:-$ROOT/target/clean-build}"
mkdir -p "$WORK" && WORK="$(cd "$WORK" && pwd)"
# The generated crates build as a user's would: cargo runs outside the workspace, so the
# workspace's .cargo/config.toml (the debug-info settings of its test builds) does not apply.
cd "${TMPDIR:-/tmp}"
REPEAT="${REPEAT:-3}"
CRATES="${CRATES:-calc-default calc-rmcp-http calc-stdio calc-rmcp}"
INCREMENTAL="${INCREMENTAL:-1}"
TIMINGS="${TIMINGS:-0}"
RMCP_VERSION="${RMCP_VERSION:-3.11}"

log() { echo "clean-build: $*" >&2; }

# The example itself, so the three crates do the same job.
calc_source() { cat "$ROOT/examples/src/bin/calc.rs"; }

# The tools, the same in both rmcp crates; each adds its `main`.
rmcp_tools() {
  cat <<'EOF'
//! The `calc` example's tools, written with rmcp.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::transport::stdio;
use rmcp::{ErrorData, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;

/// Two factors.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct MultiplyRequest {
    /// First factor
    a: f64,
    /// Second factor
    b: f64,
}

/// A dividend and a divisor.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct DivideRequest {
    /// Dividend
    a: f64,
    /// Divisor (must not be zero)
    b: f64,
}

#[derive(Debug, Clone, Default)]
struct Calc;

#[tool_router]
impl Calc {
    /// Multiply two numbers.
    #[tool(annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false))]
    fn multiply(&self, Parameters(MultiplyRequest { a, b }): Parameters<MultiplyRequest>) -> String {
        (a * b).to_string()
    }

    /// Divide `a` by `b`.
    #[tool(annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false))]
    fn divide(
        &self,
        Parameters(DivideRequest { a, b }): Parameters<DivideRequest>,
    ) -> Result<CallToolResult, ErrorData> {
        if b == 0.0 {
            return Ok(CallToolResult::error(vec![ContentBlock::text(
                "[DIVISION_BY_ZERO] cannot divide by zero",
            )]));
        }
        Ok(CallToolResult::success(vec![ContentBlock::text((a / b).to_string())]))
    }
}

#[tool_handler]
impl ServerHandler for Calc {}
EOF
}

rmcp_source() {
  rmcp_tools
  cat <<'EOF'

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let service = Calc.serve(stdio()).await?;
    service.waiting().await?;
    Ok(())
}
EOF
}

# stdio, or Streamable HTTP at /mcp with `--http ADDR`: what `Server::run` of calc-default does.
rmcp_http_source() {
  rmcp_tools
  cat <<'EOF'

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
    let mut args = std::env::args().skip(1);
    if let (Some("--http"), Some(addr)) = (args.next().as_deref(), args.next()) {
        let service = StreamableHttpService::new(
            || Ok(Calc),
            LocalSessionManager::default().into(),
            StreamableHttpServerConfig::default(),
        );
        let router = axum::Router::new().nest_service("/mcp", service);
        let listener = tokio::net::TcpListener::bind(addr).await?;
        axum::serve(listener, router).await?;
    } else {
        let service = Calc.serve(stdio()).await?;
        service.waiting().await?;
    }
    Ok(())
}
EOF
}

# gen NAME DEPENDENCIES SOURCE-FUNCTION
gen() {
  local dir="$WORK/$1"
  mkdir -p "$dir/src"
  cat >"$dir/Cargo.toml" <<EOF
[package]
name = "$1"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
$2

[profile.release]
debug = false

[workspace]
EOF
  "$3" >"$dir/src/main.rs"
  cp "$ROOT/Cargo.lock" "$dir/Cargo.lock"
}

median() { sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]}'; }

# seconds DIR ARGS...: the wall time of one `cargo build` in DIR
seconds() {
  local dir="$1"
  shift
  local start end
  start=$(date +%s.%N)
  cargo build --quiet --manifest-path "$dir/Cargo.toml" "$@" >&2
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}

incremental() {
  local dir="$1"
  shift
  local samples=()
  for ((k = 0; k < REPEAT; k++)); do
    touch "$dir/src/main.rs"
    samples+=("$(seconds "$dir" "$@")")
  done
  printf '%s\n' "${samples[@]}" | median
}

mkdir -p "$WORK"
rm -rf "$WORK"/calc-*
gen calc-stdio "mcp-tool = { path = \"$ROOT/mcp-tool\", default-features = false }
serde = { version = \"1\", features = [\"derive\"] }
schemars = \"1\"" calc_source
gen calc-default "mcp-tool = { path = \"$ROOT/mcp-tool\" }
serde = { version = \"1\", features = [\"derive\"] }
schemars = \"1\"" calc_source
gen calc-rmcp "rmcp = { version = \"$RMCP_VERSION\", features = [\"server\", \"macros\", \"transport-io\"] }
serde = { version = \"1\", features = [\"derive\"] }
tokio = { version = \"1\", features = [\"macros\", \"rt-multi-thread\"] }" rmcp_source
# axum as mcp-tool's `http` feature has it: HTTP/1.1 on tokio, no other default feature.
gen calc-rmcp-http "rmcp = { version = \"$RMCP_VERSION\", features = [\"server\", \"macros\", \"transport-io\", \"transport-streamable-http-server\"] }
axum = { version = \"0.8\", default-features = false, features = [\"http1\", \"tokio\"] }
serde = { version = \"1\", features = [\"derive\"] }
tokio = { version = \"1\", features = [\"macros\", \"rt-multi-thread\", \"net\"] }" rmcp_http_source

for crate in $CRATES; do
  dir="$WORK/$crate"
  log "$crate: fetch"
  cargo fetch --quiet --manifest-path "$dir/Cargo.toml" >&2
done

# Clean release builds in turns: round k builds every crate once, each in a fresh target dir.
declare -A clean_runs
for ((k = 1; k <= REPEAT; k++)); do
  for crate in $CRATES; do
    dir="$WORK/$crate"
    export CARGO_TARGET_DIR="$dir/target"
    rm -rf "$CARGO_TARGET_DIR"
    log "$crate: clean release build, round $k"
    if [ "$TIMINGS" = 1 ]; then
      clean_runs[$crate]+="$(seconds "$dir" --release --timings) "
      cp "$CARGO_TARGET_DIR/cargo-timings/cargo-timing.html" "$WORK/$crate-timings-$k.html"
    else
      clean_runs[$crate]+="$(seconds "$dir" --release) "
    fi
  done
done

echo "| crate | clean release builds s (round by round) | median s |"
echo "|---|---|---:|"
for crate in $CRATES; do
  printf '| %s | %s | %s |\n' "$crate" "${clean_runs[$crate]:-}" \
    "$(printf '%s\n' ${clean_runs[$crate]:-} | median)"
done
# The pairs of matching features, where both were built: the ratio round by round.
pair() {
  [ -n "${clean_runs[$1]:-}" ] && [ -n "${clean_runs[$2]:-}" ] || return 0
  local a=(${clean_runs[$1]}) b=(${clean_runs[$2]}) ratios=()
  for ((k = 0; k < ${#a[@]}; k++)); do
    ratios+=("$(echo "scale=3; ${a[$k]} / ${b[$k]}" | bc)")
  done
  printf '| %s ÷ %s | %s | %s |\n' "$1" "$2" "${ratios[*]}" \
    "$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]}')"
}
echo
echo "| pair | ratio round by round | median |"
echo "|---|---|---:|"
pair calc-default calc-rmcp-http
pair calc-stdio calc-rmcp
[ "$INCREMENTAL" = 1 ] || exit 0

echo
echo "| crate | crates in tree | incremental release s | incremental debug s | stripped binary MiB |"
echo "|---|---:|---:|---:|---:|"
for crate in $CRATES; do
  dir="$WORK/$crate"
  export CARGO_TARGET_DIR="$dir/target"
  log "$crate: crates"
  crates=$(cargo tree --manifest-path "$dir/Cargo.toml" -e normal --prefix none 2>/dev/null | sed 's/ (\*)$//' | sort -u | wc -l)
  log "$crate: incremental release builds"
  release=$(incremental "$dir" --release)
  log "$crate: first debug build"
  cargo build --quiet --manifest-path "$dir/Cargo.toml" >&2
  log "$crate: incremental debug builds"
  debug=$(incremental "$dir")
  strip -o "$dir/stripped" "$CARGO_TARGET_DIR/release/$crate"
  size=$(echo "scale=2; $(stat -c %s "$dir/stripped") / 1048576" | bc)
  printf '| %s | %s | %s | %s | %s |\n' "$crate" "$crates" "$release" "$debug" "$size"
done
