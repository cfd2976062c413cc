#!/usr/bin/env bash
# Build-time leg of the benchmark (see BENCHMARKS.md):
#   1. generates two crates outside the workspace, each with 100 tools: one written with
#      mcp-tool's #[tool], one with rmcp's #[tool_router]/#[tool], each the way its docs show;
#   2. builds each once, then times incremental `cargo build` (debug and release) after
#      touching the file with the tools (median of REPEAT builds);
#   3. counts the normal dependencies of the `users` example (and of the rmcp crate);
#   4. reports the release binary size of the `users` example (as built and stripped).
# Prints a markdown report on stdout; progress goes to stderr.
#
#   bash bench/build-time.sh            # REPEAT=3 TOOLS=100 WORK=target/build-time
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${WORK:-$ROOT/target/build-time}"
mkdir -p "$WORK" && WORK="$(cd "$WORK" && pwd)"
# The generated crates build as a user's would: cargo runs outside the workspace, so the
# workspace's .cargo/config.toml (the debug-info settings of its test builds) does not apply.
cd "${TMPDIR:-/tmp}"
TOOLS="${TOOLS:-100}"
REPEAT="${REPEAT:-3}"
RMCP_VERSION="${RMCP_VERSION:-3.11}"
# The generated crates share one target directory, away from the workspace's.
export CARGO_TARGET_DIR="$WORK/target"

log() { echo "build-time: $*" >&2; }

gen_mcp() {
  local dir="$WORK/bt-mcp-tool"
  mkdir -p "$dir/src"
  cat >"$dir/Cargo.toml" <<EOF
[package]
name = "bt-mcp-tool"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
mcp-tool = { path = "$ROOT/mcp-tool" }

[workspace]
EOF
  {
    echo "//! $TOOLS generated tools written with mcp-tool."
    echo
    echo "use mcp_tool::prelude::*;"
    for ((i = 0; i < TOOLS; i++)); do
      printf '\n/// Generated tool %03d: adds `a`, `b` and %d.\n' "$i" "$i"
      echo "#[tool(read_only, idempotent)]"
      printf 'fn tool_%03d(\n' "$i"
      echo '    #[arg(description = "The first number")] a: i64,'
      echo '    #[arg(description = "The second number")] b: i64,'
      printf ') -> i64 {\n    a + b + %d\n}\n' "$i"
    done
    echo
    echo 'fn main() -> mcp_tool::Result<()> {'
    echo '    Server::new("bt-mcp-tool", "0.1.0").run()'
    echo '}'
  } >"$dir/src/main.rs"
  cp "$ROOT/Cargo.lock" "$dir/Cargo.lock"
}

gen_rmcp() {
  local dir="$WORK/bt-rmcp"
  mkdir -p "$dir/src"
  cat >"$dir/Cargo.toml" <<EOF
[package]
name = "bt-rmcp"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
rmcp = { version = "$RMCP_VERSION", features = ["server", "macros", "transport-io"] }
serde = { version = "1", features = ["derive"] }
tokio = { version = "1", features = ["macros", "rt-multi-thread"] }

[workspace]
EOF
  {
    echo "//! $TOOLS generated tools written with rmcp."
    echo
    echo "use rmcp::handler::server::wrapper::Parameters;"
    echo "use rmcp::transport::stdio;"
    echo "use rmcp::{ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};"
    echo "use serde::Deserialize;"
    echo
    echo "/// The two numbers."
    echo "#[derive(Debug, Deserialize, schemars::JsonSchema)]"
    echo "struct AddRequest {"
    echo "    /// The first number"
    echo "    a: i64,"
    echo "    /// The second number"
    echo "    b: i64,"
    echo "}"
    echo
    echo "#[derive(Debug, Clone, Default)]"
    echo "struct Tools;"
    echo
    echo "#[tool_router]"
    echo "impl Tools {"
    for ((i = 0; i < TOOLS; i++)); do
      printf '    /// Generated tool %03d: adds `a`, `b` and %d.\n' "$i" "$i"
      echo '    #[tool(annotations(read_only_hint = true, idempotent_hint = true))]'
      printf '    fn tool_%03d(&self, Parameters(AddRequest { a, b }): Parameters<AddRequest>) -> String {\n' "$i"
      printf '        (a + b + %d).to_string()\n    }\n\n' "$i"
    done
    echo "}"
    echo
    echo "#[tool_handler]"
    echo "impl ServerHandler for Tools {}"
    echo
    echo "#[tokio::main]"
    echo "async fn main() -> Result<(), Box<dyn std::error::Error>> {"
    echo "    let service = Tools.serve(stdio()).await?;"
    echo "    service.waiting().await?;"
    echo "    Ok(())"
    echo "}"
  } >"$dir/src/main.rs"
  cp "$ROOT/Cargo.lock" "$dir/Cargo.lock"
}

# median of the numbers on stdin
median() { sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]}'; }

# time_build DIR PROFILE-ARGS...: prints seconds of one incremental build after a touch
time_build() {
  local dir="$1"
  shift
  touch "$dir/src/main.rs"
  local start end
  start=$(date +%s.%N)
  cargo build --quiet --manifest-path "$dir/Cargo.toml" "$@" >&2
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}

mkdir -p "$WORK"
gen_mcp
gen_rmcp

declare -A RESULT
for crate in bt-mcp-tool bt-rmcp; do
  dir="$WORK/$crate"
  for profile in debug release; do
    args=()
    [[ $profile == release ]] && args=(--release)
    log "$crate $profile: first build"
    cargo build --quiet --manifest-path "$dir/Cargo.toml" "${args[@]}" >&2
    samples=()
    for ((k = 0; k < REPEAT; k++)); do
      log "$crate $profile: incremental build $((k + 1))/$REPEAT"
      samples+=("$(time_build "$dir" "${args[@]}")")
    done
    RESULT[$crate.$profile]=$(printf '%s\n' "${samples[@]}" | median)
    RESULT[$crate.$profile.all]=$(printf '%.2f ' "${samples[@]}")
  done
  RESULT[$crate.size]=$(stat -c %s "$CARGO_TARGET_DIR/release/$crate")
done

log "dependency counts"
count_deps() { cargo tree "$@" -e normal --prefix none 2>/dev/null | sed 's/ (\*)$//' | sort -u | wc -l; }
DEPS_USERS=$(cd "$ROOT" && count_deps -p mcp-tool-examples)
DEPS_MCP=$(count_deps --manifest-path "$WORK/bt-mcp-tool/Cargo.toml")
DEPS_RMCP=$(count_deps --manifest-path "$WORK/bt-rmcp/Cargo.toml")

log "users example, release"
(cd "$ROOT" && env -u CARGO_TARGET_DIR cargo build --quiet --release -p mcp-tool-examples --bin users >&2)
USERS_BIN="$ROOT/target/release/users"
USERS_SIZE=$(stat -c %s "$USERS_BIN")
strip -o "$WORK/users.stripped" "$USERS_BIN"
USERS_STRIPPED=$(stat -c %s "$WORK/users.stripped")

mib() { echo "scale=2; $1 / 1048576" | bc; }

cat <<EOF
### Build time: a crate with $TOOLS generated tools (incremental, after touching the file)

| crate | debug build s (median; runs) | release build s (median; runs) | release binary MiB |
|---|---:|---:|---:|
| mcp-tool \`#[tool]\` | ${RESULT[bt-mcp-tool.debug]} (${RESULT[bt-mcp-tool.debug.all]% }) | ${RESULT[bt-mcp-tool.release]} (${RESULT[bt-mcp-tool.release.all]% }) | $(mib "${RESULT[bt-mcp-tool.size]}") |
| rmcp \`#[tool_router]\` | ${RESULT[bt-rmcp.debug]} (${RESULT[bt-rmcp.debug.all]% }) | ${RESULT[bt-rmcp.release]} (${RESULT[bt-rmcp.release.all]% }) | $(mib "${RESULT[bt-rmcp.size]}") |

### Dependencies and size

- \`cargo tree -p mcp-tool-examples -e normal\`: **$DEPS_USERS** distinct crates (the 100-tool mcp-tool crate: $DEPS_MCP; the 100-tool rmcp crate with \`transport-io\`: $DEPS_RMCP)
- release binary of the \`users\` example: **$(mib "$USERS_SIZE") MiB** as built, $(mib "$USERS_STRIPPED") MiB stripped
EOF
