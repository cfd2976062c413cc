#!/usr/bin/env bash
# The HTTP load generator measured against an independent client: the raw HTTP floor
# (`floor --sessionless --http`, hyper) is driven in turn by `load http --addr` and by h2load
# (nghttp2's HTTP load tool, `--h1`) with the same connections and the same number of
# `create_user` calls; each round prints both rates, the floor's CPU per call under each, each
# client's own CPU per call, and the ratio load ÷ h2load. `load http` is fit to compare servers
# when the ratio is ≥ 0.9.
#
#   bench/http-floor-check.sh [--n N] [--clients M] [--rounds R] [--port P] [--no-pin]
#
# Defaults: N = 100 000 calls (h2load after one warm-up run of N/10, load after its own warm-up
# of N/10, at most 2 000, in every run), M = 16 keep-alive connections,
# R = 3 rounds, port 18611 on 127.0.0.1 (loopback only). On a machine with 2 CPUs or more the
# floor runs on CPU 0 and each client on CPU 1 (`taskset`), so neither takes the other's core.
# Needs h2load: `apt-get install nghttp2-client` on Debian.
set -euo pipefail

n=100000
clients=16
rounds=3
port=18611
pin=1
while [ $# -gt 0 ]; do
    case "$1" in
        --n) n="$2"; shift 2 ;;
        --clients) clients="$2"; shift 2 ;;
        --rounds) rounds="$2"; shift 2 ;;
        --port) port="$2"; shift 2 ;;
        --no-pin) pin=0; shift ;;
        *) echo "usage: $0 [--n N] [--clients M] [--rounds R] [--port P] [--no-pin]" >&2; exit 2 ;;
    esac
done
for v in "$n" "$clients" "$rounds" "$port"; do
    case "$v" in
        '' | *[!0-9]*) echo "not a number: $v" >&2; exit 2 ;;
    esac
done
if [ "$n" -lt 1000 ] || [ "$n" -gt 10000000 ] || [ "$clients" -lt 1 ] || [ "$clients" -gt 1000 ]; then
    echo "--n from 1000 to 10000000, --clients from 1 to 1000" >&2
    exit 2
fi
if ! command -v h2load >/dev/null; then
    echo "h2load not found: apt-get install nghttp2-client" >&2
    exit 1
fi

cd "$(dirname "$0")/.."
cargo build --release --quiet -p mcp-tool-bench --bin floor --bin load
bin="${CARGO_TARGET_DIR:-target}/release"

server_cpu=()
client_cpu=()
if [ "$pin" = 1 ] && [ "$(nproc)" -ge 2 ]; then
    server_cpu=(taskset -c 0)
    client_cpu=(taskset -c 1)
fi

addr="127.0.0.1:$port"
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "port $port is taken: --port P" >&2
    exit 1
fi
body="$(mktemp)"
log="$(mktemp)"
clock="$(mktemp)"
"${server_cpu[@]}" "$bin/floor" --sessionless --http "$addr" &
floor=$!
trap 'kill "$floor" 2>/dev/null; wait "$floor" 2>/dev/null; rm -f "$body" "$log" "$clock"' EXIT
for _ in $(seq 200); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        break
    fi
    if ! kill -0 "$floor" 2>/dev/null; then
        echo "the floor did not start" >&2
        exit 1
    fi
    sleep 0.05
done

# What load http sends as call 0 (it numbers the email of every call; the floor's work is the
# same for any).
printf '%s' '{"jsonrpc":"2.0","id":1000000,"method":"tools/call","params":{"name":"create_user","arguments":{"email":"user0@example.com","name":"Bench User 0","role":"admin","metadata":{"team":"bench","seq":"0"}}}}' >"$body"

ticks="$(getconf CLK_TCK)"
cpu_ticks() {
    # utime + stime of the floor (every thread), fields 14 and 15 of /proc/PID/stat.
    awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$floor/stat"
}

# Sets `spent`: the CPU seconds (user + system) of this shell's children that have ended.
# `times` must run in this shell: a command substitution forks, and a fork's children start at
# zero.
children_cpu() {
    times >"$clock"
    spent="$(awk 'NR == 2 {
        split($1, u, /[ms]/); split($2, s, /[ms]/)
        printf "%.3f", u[1] * 60 + u[2] + s[1] * 60 + s[2]
    }' "$clock")"
}

h2load_run() {
    local count="$1" out
    out="$("${client_cpu[@]}" h2load --h1 -n "$count" -c "$clients" -t 1 -d "$body" \
        -H 'content-type: application/json' \
        -H 'accept: application/json, text/event-stream' \
        -H 'mcp-protocol-version: 2025-11-25' \
        "http://$addr/mcp")"
    if ! grep -q "succeeded, 0 failed, 0 errored" <<<"$out" || ! grep -q "status codes: $count 2xx" <<<"$out"; then
        echo "h2load: not every request succeeded:" >&2
        echo "$out" >&2
        exit 1
    fi
    sed -n 's/^finished in [^,]*, \([0-9.]*\) req\/s.*/\1/p' <<<"$out"
}

load_run() {
    local out
    if ! out="$("${client_cpu[@]}" "$bin/load" http --no-build --addr "$addr" --pid "$floor" \
        --tool create_user --n "$n" --clients "$clients" --repeat 1 2>"$log")"; then
        echo "load http failed:" >&2
        cat "$log" >&2
        exit 1
    fi
    # | median | 98 765 | p50 | p99 | cpu |: calls/s and CPU µs/call.
    awk -F'|' '$2 ~ /median/ { gsub(/[^0-9]/, "", $3); gsub(/ /, "", $6); print $3, $6 }' <<<"$out"
}

echo "floor (hyper, sessionless JSON) at $addr, pid $floor; N = $n create_user calls, M = $clients connections${server_cpu:+; floor on CPU 0, clients on CPU 1}"
h2load_run $((n / 10)) >/dev/null
# load's warm-up (N/10 calls, 100 to 2000) runs in the same process as its measured calls.
warm=$((n / 10 < 100 ? 100 : n / 10 > 2000 ? 2000 : n / 10))
per_call() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.1f", (b - a) * 1e6 / n }'; }
echo "calls/s, the floor's CPU µs per call, the client's own CPU µs per call (load's counts its"
echo "warm-up and the building of its requests too)"
printf '%-6s %14s %8s %8s %14s %8s %8s %8s\n' round "h2load calls/s" floor client "load calls/s" floor client ratio
# Each round runs both clients, which one first alternating: neither always follows the other.
h2load_measure() {
    local before after
    before="$(cpu_ticks)"
    children_cpu
    local c0="$spent"
    h2load_run "$n" >"$log"
    children_cpu
    after="$(cpu_ticks)"
    h2="$(cat "$log")"
    h2_cpu="$(awk -v d=$((after - before)) -v t="$ticks" -v n="$n" 'BEGIN { printf "%.1f", d / t * 1e6 / n }')"
    h2_own="$(per_call "$c0" "$spent" "$n")"
}
load_measure() {
    children_cpu
    local c0="$spent"
    load_run >"$log"
    children_cpu
    read -r ld ld_cpu <"$log"
    ld_own="$(per_call "$c0" "$spent" $((n + warm)))"
}
ratios=()
for r in $(seq "$rounds"); do
    if [ $((r % 2)) = 1 ]; then
        h2load_measure
        load_measure
    else
        load_measure
        h2load_measure
    fi
    ratio="$(awk -v a="$ld" -v b="$h2" 'BEGIN { printf "%.2f", a / b }')"
    ratios+=("$ratio")
    printf '%-6s %14.0f %8s %8s %14s %8s %8s %8s\n' "$r" "$h2" "$h2_cpu" "$h2_own" \
        "$ld" "$ld_cpu" "$ld_own" "$ratio"
done
mapfile -t sorted < <(printf '%s\n' "${ratios[@]}" | sort -n)
echo "load ÷ h2load: median ${sorted[$((rounds / 2))]}, range ${sorted[0]}–${sorted[$((rounds - 1))]} over $rounds rounds"
