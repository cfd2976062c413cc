#!/usr/bin/env bash
# Edit-compile leg of the benchmark (see BENCHMARKS.md): the loop a user lives in, on the
# project a user starts from.
#   template-mcp-tool  what `cargo mcp-tool new` writes (its `greet` tool; mcp-tool with its
#                      default features, from this checkout by path)
#   template-rmcp      the same tool and serving (stdio, `--http ADDR`) written with rmcp
#                      (bench/template-rmcp)
# Both are built outside the workspace, each in its own target directory, debug profile with
# cargo's defaults (incremental), as `cargo build` in a new project is. After one untimed
# first build of each, ROUNDS rounds: in each, for each project in turn, `greet`'s body is
# edited (the greeting's text changed with sed) and `cargo build` timed; the two of a round
# meet the same machine, so their ratio is taken round by round.
# Prints markdown tables on stdout; progress goes to stderr.
#
#   bash bench/edit-loop.sh        # ROUNDS=5 WORK=target/edit-loop
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${WORK:-$ROOT/target/edit-loop}"
ROUNDS="${ROUNDS:-5}"
mkdir -p "$WORK" && WORK="$(cd "$WORK" && pwd)"
# A user's `cargo build`: incremental debug builds, whatever the caller's shell says.
unset CARGO_INCREMENTAL CARGO_PROFILE_DEV_DEBUG CARGO_BUILD_RUSTFLAGS RUSTFLAGS

log() { echo "edit-loop: $*" >&2; }

PROJECTS="template-mcp-tool template-rmcp"
rm -rf "$WORK/template-mcp-tool" "$WORK/template-rmcp"
log "writing the projects"
# The CLI, built in the workspace as a user would install it; its `new` writes the project.
cargo build --quiet --manifest-path "$ROOT/Cargo.toml" -p cargo-mcp-tool >&2
cli="$(cargo metadata --format-version 1 --no-deps --manifest-path "$ROOT/Cargo.toml" |
  sed 's/.*"target_directory":"\([^"]*\)".*/\1/')/debug/cargo-mcp-tool"
"$cli" mcp-tool new "$WORK/template-mcp-tool" --mcp-tool-path "$ROOT" >&2
mkdir -p "$WORK/template-rmcp"
cp -r "$ROOT/bench/template-rmcp/Cargo.toml" "$ROOT/bench/template-rmcp/src" "$WORK/template-rmcp/"
# The crates' versions the workspace is tested with, on both sides.
for p in $PROJECTS; do cp "$ROOT/Cargo.lock" "$WORK/$p/Cargo.lock"; done
# Outside the workspace: its .cargo/config.toml (test builds' debug-info settings) not applying.
cd "${TMPDIR:-/tmp}"

# build PROJECT: the wall time of one `cargo build` of PROJECT, in its own target directory
build() {
  local start end
  start=$(date +%s.%N)
  CARGO_TARGET_DIR="$WORK/$1/target" cargo build --quiet --manifest-path "$WORK/$1/Cargo.toml" >&2
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}

declare -A first runs
for p in $PROJECTS; do
  grep -q 'format!("Hello, {name}!")' "$WORK/$p/src/main.rs" ||
    { log "$p: no greeting to edit in src/main.rs"; exit 1; }
  cargo fetch --quiet --manifest-path "$WORK/$p/Cargo.toml" >&2
  log "$p: first build"
  first[$p]=$(build "$p")
done
for ((k = 1; k <= ROUNDS; k++)); do
  for p in $PROJECTS; do
    # One tool's body changed: the text of its answer.
    sed -i -E "s/format!\(\"Hello[^\"]*\{name\}!\"\)/format!(\"Hello (edit $k), {name}!\")/" \
      "$WORK/$p/src/main.rs"
    grep -q "Hello (edit $k)" "$WORK/$p/src/main.rs" || { log "$p: edit $k not made"; exit 1; }
    log "$p: build after edit $k"
    runs[$p]+="$(printf '%.2f' "$(build "$p")") "
  done
done

median() { sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]}'; }
echo "| project | first debug build s | edit + \`cargo build\` s (round by round) | median s |"
echo "|---|---:|---|---:|"
for p in $PROJECTS; do
  printf '| %s | %.1f | %s | %s |\n' "$p" "${first[$p]}" "${runs[$p]% }" \
    "$(printf '%s\n' ${runs[$p]} | median)"
done
a=(${runs[template-mcp-tool]}) b=(${runs[template-rmcp]}) ratios=()
for ((k = 0; k < ${#a[@]}; k++)); do ratios+=("$(echo "scale=3; ${a[$k]} / ${b[$k]}" | bc)"); done
echo
echo "| pair | ratio round by round | median |"
echo "|---|---|---:|"
printf '| template-mcp-tool ÷ template-rmcp | %s | %s |\n' "$(printf '%.2f ' "${ratios[@]}")" \
  "$(printf '%s\n' "${ratios[@]}" | median)"
