#!/usr/bin/env bash
# Runs the whole test suite of mcp-tool on a fresh machine: formatting, lints, every test
# (unit, UI, integration, doc tests, examples over stdio).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings
echo "== cargo test"
cargo test --workspace --no-fail-fast
echo "== cargo doc"
RUSTDOCFLAGS=-Dwarnings cargo doc --workspace --no-deps --quiet
