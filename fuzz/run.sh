#!/usr/bin/env bash
# Runs one fuzz target for a bounded time on stable Rust (cargo-fuzz, libFuzzer, no sanitizer):
#   bash fuzz/run.sh <target> <seconds> [extra libFuzzer flags]
# The corpus grows in fuzz/corpus/<target> from the seeds in fuzz/seeds/<target>; a crash is
# written to fuzz/artifacts/<target>/ and makes this exit non-zero. One process, one core.
set -euo pipefail
cd "$(dirname "$0")"
target=$1
seconds=$2
shift 2
mkdir -p "corpus/$target"
# syn parses by recursive descent: a type of ~4,000 nested `&` overflows an 8 MiB main stack
# (seeds/macro_attr/regress-deep-ref). rustc gives a proc macro no more, so this is a limit of
# every syn-based macro, not one of ours to fix: a larger stack lets the run look past it.
ulimit -s 65536 2>/dev/null || ulimit -s unlimited 2>/dev/null || true
exec cargo fuzz run --sanitizer none "$target" "corpus/$target" "seeds/$target" -- \
    -dict="dicts/$target.dict" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 \
    -print_final_stats=1 "$@"
