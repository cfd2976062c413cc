#!/usr/bin/env bash
# Instructions per HTTP `create_user` call of a server, counted with callgrind (noise-free on a
# shared machine): the server runs under callgrind; `load http --addr` drives it twice, 2 000 and
# 10 000 measured calls (each run after its own warm-up of a tenth, over 16 keep-alive
# connections), the counters zeroed before each run and dumped after it; per call =
# (count of the second − count of the first) ÷ (11 000 − 2 200), so the connections' and
# sessions' opening cancel out.
#
#   bench/http-instr.sh MODE PORT -- SERVER [ARGS]
#
# MODE is the driver's: json or sse (sessions; start the server with `--sse` for sse) or
# sessionless. The server must listen on 127.0.0.1:PORT (loopback only). Needs valgrind and
# release builds of the server and of `load` (`cargo build --release -p mcp-tool-bench --bin
# load`). Examples:
#   bench/http-instr.sh json 18701 -- target/release/bench-server --http 127.0.0.1:18701
#   bench/http-instr.sh sessionless 18702 -- floor-http --port 18702
set -euo pipefail

if [ $# -lt 4 ] || [ "$3" != "--" ]; then
    echo "usage: $0 json|sse|sessionless PORT -- SERVER [ARGS]" >&2
    exit 2
fi
mode=$1
port=$2
shift 3
case "$port" in
    '' | *[!0-9]*) echo "not a port: $port" >&2; exit 2 ;;
esac
load="${CARGO_TARGET_DIR:-$(dirname "$0")/../target}/release/load"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

valgrind --tool=callgrind --max-threads=2000 --callgrind-out-file="$out/cg.%p" "$@" \
    >/dev/null 2>"$out/valgrind.log" &
vg=$!
for _ in $(seq 1 600); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        break
    fi
    sleep 0.2
done

# The instructions the server ran while the driver made `$1` measured calls (its dump number `$2`).
count() {
    callgrind_control -z "$vg" >/dev/null 2>&1
    "$load" http --no-build --addr "127.0.0.1:$port" --mode "$mode" --tool create_user \
        --n "$1" --repeat 1 >"$out/load.$1" 2>&1 || { cat "$out/load.$1" >&2; exit 1; }
    callgrind_control --dump="n$1" "$vg" >/dev/null 2>&1
    local file
    file=$(ls "$out"/cg.*."$2")
    grep -E '^summary:' "$file" | awk '{print $2}'
}

first=$(count 2000 1)
second=$(count 10000 2)
kill "$vg"
wait "$vg" 2>/dev/null || true
echo "instructions: $first at 2 000 calls, $second at 10 000; per call $(((second - first) / 8800))"
