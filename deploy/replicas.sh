#!/usr/bin/env bash
# Runs an mcp-tool server as several replicas on this machine: a Redis, N replicas on loopback
# ports sharing it (tasks, 2025-11-25 sessions and their SSE events, change notifications) and
# the request-state key, and nginx in front (deploy/nginx.conf.in), all unprivileged, in a
# folder of their own.
#
#   deploy/replicas.sh up [N]       start Redis, N replicas (default 3) and nginx; print the URL
#   deploy/replicas.sh down         stop them all
#   deploy/replicas.sh kill I       kill replica I (1..N) at once (SIGKILL: a crash)
#   deploy/replicas.sh start I      start replica I again
#   deploy/replicas.sh status       what runs
#
# Environment:
#   MCP_SERVER        the server binary (required for up and start), e.g. target/release/calc
#   MCP_SERVER_ARGS   more arguments for it (word-split)
#   RUN_DIR           the folder of logs, pids and nginx's prefix (default $TMPDIR/mcp-tool-replicas)
#   PORT              nginx's port (default 8080); the endpoint is http://127.0.0.1:PORT/mcp
#   REPLICA_PORTS     the replicas' ports (default PORT+1 … PORT+N)
#   REDIS_PORT        Redis's port (default PORT+100); REDIS_URL instead uses a Redis running already
#   MCP_TOOL_STATE_KEY  the shared request-state key (default: made once, kept in RUN_DIR)
#
# nginx and redis-server are Debian packages (`apt-get install nginx redis-server`).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
run="${RUN_DIR:-${TMPDIR:-/tmp}/mcp-tool-replicas}"
port="${PORT:-8080}"
redis_port="${REDIS_PORT:-$((port + 100))}"

die() {
    echo "replicas.sh: $*" >&2
    exit 1
}

need() {
    command -v "$1" >/dev/null || die "$1 is not installed (apt-get install $2)"
}

# Whether something accepts connections on 127.0.0.1:$1.
listening() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Waits (at most $2 seconds) until port $1 accepts connections.
wait_port() {
    local deadline=$((SECONDS + $2))
    until listening "$1"; do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.05
    done
}

alive() {
    [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

replica_ports() {
    if [ -f "$run/replica-ports" ]; then
        cat "$run/replica-ports"
    elif [ -n "${REPLICA_PORTS:-}" ]; then
        echo "$REPLICA_PORTS"
    else
        local n="$1" i out=""
        for ((i = 1; i <= n; i++)); do out="$out $((port + i))"; done
        echo "$out"
    fi
}

start_replica() {
    local i="$1"
    local ports p
    read -r -a ports <<<"$(cat "$run/replica-ports")"
    [ "$i" -ge 1 ] && [ "$i" -le "${#ports[@]}" ] || die "no replica $i (1..${#ports[@]})"
    p="${ports[$((i - 1))]}"
    alive "$run/replica-$i.pid" && die "replica $i runs already"
    [ -n "${MCP_SERVER:-}" ] || die "MCP_SERVER names no server binary"
    local redis_url
    redis_url="$(cat "$run/redis-url")"
    # shellcheck disable=SC2086 # MCP_SERVER_ARGS is a list of words
    MCP_TOOL_STATE_KEY="$(cat "$run/state-key")" \
        MCP_TOOL_TASK_STORE="$redis_url" \
        MCP_TOOL_SHARED_STATE="$redis_url" \
        MCP_TOOL_EVENT_STORE="$redis_url" \
        MCP_TOOL_CONNECTIONS_PER_ADDRESS=1024 \
        setsid "$MCP_SERVER" ${MCP_SERVER_ARGS:-} --http "127.0.0.1:$p" \
        </dev/null >>"$run/logs/replica-$i.log" 2>&1 &
    echo $! >"$run/replica-$i.pid"
    wait_port "$p" 20 || die "replica $i did not listen on port $p (see $run/logs/replica-$i.log)"
}

stop_pid() {
    local file="$1"
    if alive "$file"; then
        local pid
        pid="$(cat "$file")"
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.05
        done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$file"
}

up() {
    local n="${1:-3}"
    # Debian puts nginx in /usr/sbin, which may not be on an unprivileged PATH.
    local nginx
    nginx="$(command -v nginx || echo /usr/sbin/nginx)"
    [ -x "$nginx" ] || die "nginx is not installed (apt-get install nginx)"
    [ -n "${MCP_SERVER:-}" ] || die "MCP_SERVER names no server binary"
    [ -x "$MCP_SERVER" ] || die "MCP_SERVER=$MCP_SERVER is not an executable"
    if [ -f "$run/nginx.pid" ] && alive "$run/nginx.pid"; then
        die "already up in $run (deploy/replicas.sh down first)"
    fi
    mkdir -p "$run/logs" "$run/tmp"
    rm -f "$run/replica-ports"
    local chosen
    chosen="$(replica_ports "$n" | xargs)"
    echo "$chosen" >"$run/replica-ports"
    # The key every replica seals 2026-07-28 request state with.
    if [ -n "${MCP_TOOL_STATE_KEY:-}" ]; then
        echo "$MCP_TOOL_STATE_KEY" >"$run/state-key"
    elif [ ! -s "$run/state-key" ]; then
        od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$run/state-key"
    fi
    chmod 600 "$run/state-key"
    if [ -n "${REDIS_URL:-}" ]; then
        echo "$REDIS_URL" >"$run/redis-url"
    else
        need redis-server redis-server
        redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no \
            --dir "$run" </dev/null >"$run/logs/redis.log" 2>&1 &
        echo $! >"$run/redis.pid"
        wait_port "$redis_port" 10 || die "Redis did not start (see $run/logs/redis.log)"
        echo "redis://127.0.0.1:$redis_port" >"$run/redis-url"
    fi
    local i upstreams=""
    local ports
    read -r -a ports <<<"$(cat "$run/replica-ports")"
    for ((i = 1; i <= ${#ports[@]}; i++)); do
        start_replica "$i"
        upstreams="$upstreams        server 127.0.0.1:${ports[$((i - 1))]} max_fails=1 fail_timeout=1s;\n"
    done
    sed -e "s/@PORT@/$port/" -e "s|@UPSTREAMS@|${upstreams%\\n}|" \
        "$here/nginx.conf.in" >"$run/nginx.conf"
    "$nginx" -p "$run" -c "$run/nginx.conf" -e "$run/logs/error.log" -g "daemon off;" \
        </dev/null >>"$run/logs/nginx.log" 2>&1 &
    echo $! >"$run/nginx.pid"
    wait_port "$port" 10 || die "nginx did not start (see $run/logs/error.log)"
    echo "http://127.0.0.1:$port/mcp"
}

down() {
    [ -d "$run" ] || return 0
    stop_pid "$run/nginx.pid"
    for f in "$run"/replica-*.pid; do
        [ -e "$f" ] && stop_pid "$f"
    done
    stop_pid "$run/redis.pid"
    rm -f "$run/replica-ports"
}

status() {
    local f
    for f in "$run"/nginx.pid "$run"/redis.pid "$run"/replica-*.pid; do
        [ -e "$f" ] || continue
        if alive "$f"; then
            echo "$(basename "$f" .pid): running (pid $(cat "$f"))"
        else
            echo "$(basename "$f" .pid): stopped"
        fi
    done
}

case "${1:-}" in
up) up "${2:-3}" ;;
down) down ;;
kill)
    [ -n "${2:-}" ] || die "kill needs a replica number"
    f="$run/replica-$2.pid"
    alive "$f" || die "replica $2 does not run"
    kill -KILL "$(cat "$f")"
    # Its port closes with it (a zombie still answers kill -0 until it is reaped).
    read -r -a ports <<<"$(cat "$run/replica-ports")"
    for _ in $(seq 1 100); do
        listening "${ports[$(($2 - 1))]}" || break
        sleep 0.02
    done
    rm -f "$f"
    ;;
start)
    [ -n "${2:-}" ] || die "start needs a replica number"
    start_replica "$2"
    ;;
status) status ;;
*)
    sed -n '2,/^set /p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
