#!/usr/bin/env bash
# Clean-build leg of the benchmark (see BENCHMARKS.md): what a new user waits for and ships.
# Generates three crates outside the workspace doing the same job — the `calc` example's two
# tools (`multiply`, and `divide` with a division-by-zero error) over stdio:
#   calc-stdio   mcp-tool with `default-features = false` (stdio only, the validator's own rules)
#   calc-default mcp-tool with its default features (stdio and Streamable HTTP)
#   calc-rmcp    rmcp (`server`, `macros`, `transport-io`), written as its docs show
# and, one after the other, each in a fresh target directory: a clean release build, then
# incremental release and debug builds after touching the source (median of REPEAT); the
# stripped release binary's size; the crates in its dependency tree.
# Prints a markdown table on stdout; progress goes to stderr.
#
#   bash bench/clean-build.sh        # REPEAT=3 WORK=target/clean-build CRATES="calc-stdio …"
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${WORK:-$ROOT/target/clean-build}"
mkdir -p "$WORK" && WORK="$(cd "$WORK" && pwd)"
# The generated crates build as a user's would: cargo runs outside the workspace, so the
# workspace's .cargo/config.toml (the debug-info settings of its test builds) does not apply.
cd "${TMPDIR:-/tmp}"
REPEAT="${REPEAT:-3}"
CRATES="${CRATES:-calc-stdio calc-default calc-rmcp}"
RMCP_VERSION="${RMCP_VERSION:-3.11}"

log() { echo "clean-build: $*" >&2; }

# The example itself, so the three crates do the same job.
calc_source() { cat "$ROOT/examples/src/bin/calc.rs"; }

rmcp_source() {
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

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let service = Calc.serve(stdio()).await?;
    service.waiting().await?;
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

echo "| crate | crates in tree | clean release build s | incremental release s | incremental debug s | stripped binary MiB |"
echo "|---|---:|---:|---:|---:|---:|"
for crate in $CRATES; do
  dir="$WORK/$crate"
  export CARGO_TARGET_DIR="$dir/target"
  log "$crate: crates"
  crates=$(cargo tree --manifest-path "$dir/Cargo.toml" -e normal --prefix none 2>/dev/null | sed 's/ (\*)$//' | sort -u | wc -l)
  log "$crate: fetch"
  cargo fetch --quiet --manifest-path "$dir/Cargo.toml" >&2
  log "$crate: clean release build"
  clean=$(seconds "$dir" --release)
  log "$crate: incremental release builds"
  release=$(incremental "$dir" --release)
  log "$crate: first debug build"
  cargo build --quiet --manifest-path "$dir/Cargo.toml" >&2
  log "$crate: incremental debug builds"
  debug=$(incremental "$dir")
  strip -o "$dir/stripped" "$CARGO_TARGET_DIR/release/$crate"
  size=$(echo "scale=2; $(stat -c %s "$dir/stripped") / 1048576" | bc)
  printf '| %s | %s | %.1f | %s | %s | %s |\n' "$crate" "$crates" "$clean" "$release" "$debug" "$size"
done
