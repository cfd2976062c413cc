#!/usr/bin/env bash
# Runs the whole test suite of mcp-tool on a fresh machine: formatting, lints, every test
# (unit, UI, integration, doc tests, examples over stdio), and real MCP clients (the official
# TypeScript and Python SDKs, the Inspector CLI) against the examples, which interop/setup.sh
# installs from the npm registry and PyPI at pinned versions.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings
echo "== interop clients (npm ci and a Python venv in interop/, skipped when up to date)"
bash interop/setup.sh
echo "== cargo test"
cargo test --workspace --no-fail-fast
echo "== cargo doc"
RUSTDOCFLAGS=-Dwarnings cargo doc --workspace --no-deps --quiet
echo "== conformance"
bash conformance/run.sh
