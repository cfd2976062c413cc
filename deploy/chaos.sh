#!/usr/bin/env bash
# The chaos run: three replicas of a server with every feature on, Redis and nginx, each
# replica in a network namespace of its own (deploy/replicas.sh with NETNS), under a load that
# checks every answer (tests/src/bin/chaos), while faults are injected in turn:
#
#   netem          5 % loss and 50 ms delay on every replica's link to Redis (tc netem)
#   redis-restart  Redis stopped and started again (append-only file on: its data survives)
#   kill           replica 2 killed (SIGKILL) and started again
#   cut            replica 1 cut off from Redis (both ways), then joined again
#
# It reports per fault the errors the clients saw by kind, what was lost or doubled, and the
# time until every operation succeeded again; it exits 1 when anything was lost or doubled.
#
#   deploy/chaos.sh              the full run (about 4 minutes; BENCHMARKS.md has its figures)
#   deploy/chaos.sh --short      about 45 s, what .ci/run runs
#   deploy/chaos.sh clean        stop and delete what a run left (a run does it first, too)
#   deploy/chaos.sh inject|heal FAULT   what the driver runs to inject and end a fault
#
# Options: --no-build (use the binaries built already). Environment: CARGO_TARGET_DIR,
# CHAOS_DIR (logs, the report and a trace of every failed operation; default
# $TMPDIR/mcp-tool-chaos), CHAOS_REDIS_ARGS (Redis's persistence, default the append-only file).
#
# Needs root (network namespaces), iproute2 (ip, tc), nginx and redis-server. Everything runs
# in the namespaces mcpchaos-hub and mcpchaos-r1..3, on addresses in 10.213.0.0/16 that exist
# only inside them: nothing is reachable from outside, and nothing outside is touched. Without
# the kernel's sch_netem the netem fault is skipped, and the report says so.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
run="${CHAOS_DIR:-${TMPDIR:-/tmp}/mcp-tool-chaos}"
prefix="mcpchaos"
net="10.213"
# Inside the namespaces nothing else listens: fixed ports.
export RUN_DIR="$run/deploy" NETNS="$prefix" NETNS_NET="$net" PORT=8080 REDIS_PORT=6379
export REPLICA_PORTS="8000 8000 8000"
replicas="$here/replicas.sh"
rate_limit=20

die() {
    echo "chaos.sh: $*" >&2
    exit 1
}

# Stops and deletes what a run left: the processes (pid files, then whatever still runs in
# the namespaces) and the namespaces.
clean() {
    bash "$replicas" down >/dev/null 2>&1 || true
    # Namespaces whose pid files are gone (a run killed mid-way) are deleted by name.
    local ns pid
    for ns in $(ip netns list 2>/dev/null | awk -v p="$prefix" 'index($1, p "-") == 1 { print $1 }'); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do
            kill -KILL "$pid" 2>/dev/null || true
        done
        ip netns del "$ns" 2>/dev/null || true
    done
}

fault() {
    local action="$1" name="$2" i
    case "$action:$name" in
    inject:netem)
        for i in 1 2 3; do
            tc -n "$prefix-r$i" qdisc add dev store root netem delay 50ms loss 5%
        done
        ;;
    heal:netem)
        for i in 1 2 3; do
            tc -n "$prefix-r$i" qdisc del dev store root
        done
        ;;
    inject:redis-restart) bash "$replicas" stop-redis ;;
    heal:redis-restart) bash "$replicas" start-redis ;;
    inject:kill) bash "$replicas" kill 2 ;;
    heal:kill) bash "$replicas" start 2 ;;
    # Packets between replica 1 and Redis are dropped both ways: its connections stall, new
    # ones fail.
    inject:cut)
        ip -n "$prefix-r1" rule add to "$net.101.1/32" blackhole priority 100
        ip -n "$prefix-hub" rule add from "$net.101.1/32" to "$net.101.2/32" blackhole priority 100
        ;;
    heal:cut)
        ip -n "$prefix-r1" rule del priority 100
        ip -n "$prefix-hub" rule del priority 100
        ;;
    *) die "no fault `$name` to $action" ;;
    esac
}

# Whether the kernel has sch_netem (tried on a replica's link to Redis, then removed).
has_netem() {
    tc -n "$prefix-r1" qdisc add dev store root netem delay 1ms 2>/dev/null &&
        tc -n "$prefix-r1" qdisc del dev store root
}

main() {
    local short=0 build=1
    for arg in "$@"; do
        case "$arg" in
        --short) short=1 ;;
        --no-build) build=0 ;;
        *) die "unknown option $arg (see the head of $0)" ;;
        esac
    done
    [ "$(id -u)" -eq 0 ] || die "needs root (network namespaces): sudo $0 $*"
    command -v ip >/dev/null && command -v tc >/dev/null ||
        die "iproute2 is not installed (apt-get install iproute2)"
    command -v redis-server >/dev/null || die "redis-server is not installed (apt-get install redis-server)"
    command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || die "nginx is not installed (apt-get install nginx)"
    mkdir -p "$run"
    # One run at a time: the namespaces' names are this tool's.
    exec 9>"$run/lock"
    flock -n 9 || die "another chaos run holds $run/lock"
    clean
    rm -rf "$RUN_DIR"
    mkdir -p "$RUN_DIR"

    local profile=debug
    [ "$short" -eq 1 ] || profile=release
    local bin="${CARGO_TARGET_DIR:-$root/target}/$profile"
    if [ "$build" -eq 1 ]; then
        local flag=()
        [ "$profile" = debug ] || flag=(--release)
        (cd "$root" && cargo build "${flag[@]}" -p mcp-tool-tests --bin chaos --bin chaos-server)
    fi
    [ -x "$bin/chaos" ] && [ -x "$bin/chaos-server" ] ||
        die "no $bin/chaos or $bin/chaos-server (cargo build -p mcp-tool-tests --bin chaos --bin chaos-server)"

    # The replicas mount the same server over stdio as `remote` (its tasks in its own memory):
    # `remote__confirm` is a gateway call with an input round.
    printf '[{"type": "mcp", "server_label": "remote", "command": ["%s", "--task-store", "memory"], "allowed_tools": ["confirm"]}]\n' \
        "$bin/chaos-server" >"$run/mount.json"
    export MCP_SERVER="$bin/chaos-server" MCP_SERVER_ARGS="--mount $run/mount.json"
    export MCP_TOOL_RATE_LIMIT="limited=$rate_limit/1s" MCP_TOOL_RESULT_BUDGET=1KiB
    # A task whose replica died is failed once its lease runs out: 10 s, not 30, in this run.
    export MCP_TOOL_TASK_LEASE=10s
    # Redis keeps its data across the restart (CHAOS_REDIS_ARGS="--appendonly no" shows what a
    # Redis that does not costs: every task and session gone, the run failed).
    export REDIS_ARGS="${CHAOS_REDIS_ARGS:---appendonly yes --appendfsync everysec}"

    trap clean EXIT
    trap 'exit 130' INT TERM
    bash "$replicas" up 3 >/dev/null

    local faults=() skip=()
    if has_netem; then
        faults+=(--fault "netem:$([ "$short" -eq 1 ] && echo 4 || echo 20)")
    else
        echo "chaos.sh: the kernel has no sch_netem (tc qdisc … netem refused): the netem fault is SKIPPED" >&2
        skip=(--skip "netem:this kernel has no sch_netem")
    fi
    faults+=(--fault redis-restart:0)
    faults+=(--fault "kill:$([ "$short" -eq 1 ] && echo 1 || echo 2)")
    faults+=(--fault "cut:$([ "$short" -eq 1 ] && echo 5 || echo 10)")
    local timing
    if [ "$short" -eq 1 ]; then
        timing=(--baseline 3 --settle 5 --window 0.5 --timeout 3 --task-deadline 20)
    else
        timing=(--baseline 20 --settle 30 --window 1 --timeout 10 --task-deadline 30)
    fi
    local status=0
    ip netns exec "$prefix-hub" "$bin/chaos" --url "http://127.0.0.1:$PORT/mcp" --control "$here/chaos.sh" \
        --rate-limit "$rate_limit" "${timing[@]}" "${faults[@]}" "${skip[@]}" \
        --trace "$run/trace.tsv" >"$run/report.md" || status=$?
    cat "$run/report.md"
    echo "(logs: $RUN_DIR/logs)"
    return "$status"
}

case "${1:-}" in
inject | heal)
    [ -n "${2:-}" ] || die "$1 needs a fault name"
    fault "$1" "$2"
    ;;
clean) clean ;;
*) main "$@" ;;
esac
