#!/usr/bin/env bash
# Runs an mcp-tool server as several replicas on this machine: a Redis, N replicas on loopback
# ports sharing it (tasks, 2025-11-25 sessions and their SSE events, change notifications,
# rate limits, kept results, selections) and the request-state key, and nginx in front
# (deploy/nginx.conf.in), all unprivileged, in a folder of their own. nginx connects to the
# replicas from an address of its own (127.0.0.254; with NETNS, NET.0.1), which the replicas
# trust to name each request's client in X-Forwarded-For (MCP_TOOL_TRUSTED_PROXIES): a
# client that reaches a replica directly cannot name itself.
#
#   deploy/replicas.sh up [N]       start Redis, N replicas (default 3) and nginx; print the URL
#   deploy/replicas.sh down         stop them all
#   deploy/replicas.sh kill I       kill replica I (1..N) at once (SIGKILL: a crash)
#   deploy/replicas.sh start I      start replica I again
#   deploy/replicas.sh status       what runs
#   deploy/replicas.sh stop-redis   stop Redis (SIGTERM: it saves what its settings keep)
#   deploy/replicas.sh start-redis  start it again, on the same port and settings
#
# Environment:
#   MCP_SERVER        the server binary (required for up and start), e.g. target/release/calc
#   MCP_SERVER_ARGS   more arguments for it (word-split)
#   RUN_DIR           the folder of logs, pids and nginx's prefix (default $TMPDIR/mcp-tool-replicas)
#   PORT              nginx's port (default 8080); the endpoint is http://127.0.0.1:PORT/mcp
#   REPLICA_PORTS     the replicas' ports (default PORT+1 … PORT+N)
#   REDIS_PORT        Redis's port (default PORT+100); REDIS_URL instead uses a Redis running already
#   MCP_TOOL_STATE_KEY  the shared request-state key (default: made once, kept in RUN_DIR)
#   REDIS_ARGS        more settings for redis-server (word-split), e.g. `--appendonly yes`
#   NETNS             a name prefix: run each replica in a network namespace of its own (needs
#                     root and iproute2; see below)
#
# With NETNS=P, `up` makes the namespaces P-hub (Redis and nginx) and P-r1 … P-rN (one replica
# each), joined by veth pairs with addresses in NETNS_NET.0.0/16 (default 10.213), which exist
# only inside these namespaces: replica I has a link to nginx (`web`: hub side NET.I.1, replica
# NET.I.2) and one to Redis (`store`: NET.(100+I).1 and .2), so a fault on one of them leaves
# the other alone. nginx reaches every replica from one address, NET.0.1 (proxy_bind), and
# listens on 127.0.0.1:PORT inside P-hub (reach it with `ip netns exec
# P-hub …`); `down` deletes the namespaces and stops what still runs in them.
#
# nginx and redis-server are Debian packages (`apt-get install nginx redis-server`).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
run="${RUN_DIR:-${TMPDIR:-/tmp}/mcp-tool-replicas}"
port="${PORT:-8080}"
redis_port="${REDIS_PORT:-$((port + 100))}"
netns="${NETNS:-}"
net="${NETNS_NET:-10.213}"

die() {
    echo "replicas.sh: $*" >&2
    exit 1
}

need() {
    command -v "$1" >/dev/null || die "$1 is not installed (apt-get install $2)"
}

# The words that run a command where Redis and nginx run (the hub namespace): nothing without
# NETNS. Put before a command started in the background, they
# keep $! the command's own pid (`ip netns exec` execs it).
hub=()
[ -z "$netns" ] || hub=(ip netns exec "$netns-hub")

in_hub() {
    "${hub[@]}" "$@"
}

# The address replica $1 listens on.
replica_host() {
    if [ -n "$netns" ]; then echo "$net.$1.2"; else echo 127.0.0.1; fi
}

# The Redis URL replica $1 is given.
redis_url_of() {
    if [ -n "$netns" ]; then
        echo "redis://$net.$((100 + $1)).1:$redis_port"
    else
        cat "$run/redis-url"
    fi
}

# The address nginx connects to the replicas from, which they trust to name clients.
proxy_address() {
    if [ -n "$netns" ]; then echo "$net.0.1"; else echo 127.0.0.254; fi
}

# Whether something accepts connections on $1:$2, seen from the hub.
listening() {
    in_hub bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$1" "$2" 2>/dev/null
}

# Waits (at most $3 seconds) until $1:$2 accepts connections.
wait_port() {
    local deadline=$((SECONDS + $3))
    until listening "$1" "$2"; do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.05
    done
}

# The namespaces of this deployment that exist.
namespaces() {
    ip netns list | awk -v p="$netns" '$1 == p "-hub" || index($1, p "-r") == 1 { print $1 }'
}

# Makes the hub's and N replicas' namespaces and their links.
net_up() {
    local n="$1" i
    [ "$(id -u)" -eq 0 ] || die "NETNS needs root (network namespaces)"
    need ip iproute2
    [ -z "$(namespaces)" ] || die "namespaces of $netns exist already (deploy/replicas.sh down first)"
    ip netns add "$netns-hub"
    ip -n "$netns-hub" link set lo up
    # nginx's one address towards every replica (as a balancer on a machine of its own has):
    # a client's tasks and kept results stay its own whichever replica it reaches.
    ip -n "$netns-hub" addr add "$net.0.1/32" dev lo
    for ((i = 1; i <= n; i++)); do
        ip netns add "$netns-r$i"
        ip -n "$netns-r$i" link set lo up
        ip -n "$netns-hub" link add "web$i" type veth peer name web netns "$netns-r$i"
        ip -n "$netns-hub" link add "store$i" type veth peer name store netns "$netns-r$i"
        ip -n "$netns-hub" addr add "$net.$i.1/24" dev "web$i"
        ip -n "$netns-hub" addr add "$net.$((100 + i)).1/24" dev "store$i"
        ip -n "$netns-r$i" addr add "$net.$i.2/24" dev web
        ip -n "$netns-r$i" addr add "$net.$((100 + i)).2/24" dev store
        ip -n "$netns-hub" link set "web$i" up
        ip -n "$netns-hub" link set "store$i" up
        ip -n "$netns-r$i" link set web up
        ip -n "$netns-r$i" link set store up
        ip -n "$netns-r$i" route add "$net.0.1/32" via "$net.$i.1" dev web
    done
}

# Stops whatever still runs in this deployment's namespaces, and deletes them.
net_down() {
    local ns pid
    for ns in $(namespaces); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do
            kill -KILL "$pid" 2>/dev/null || true
        done
        ip netns del "$ns" 2>/dev/null || true
    done
}

# Whether the process of pid file $1 runs (a zombie, dead but not yet reaped, does not).
alive() {
    [ -f "$1" ] || return 1
    local pid
    pid="$(cat "$1")"
    kill -0 "$pid" 2>/dev/null && ! grep -qs '^[0-9]* (.*) Z' "/proc/$pid/stat"
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
    local redis_url host inside=()
    redis_url="$(redis_url_of "$i")"
    host="$(replica_host "$i")"
    [ -z "$netns" ] || inside=(ip netns exec "$netns-r$i")
    # shellcheck disable=SC2086 # MCP_SERVER_ARGS is a list of words
    MCP_TOOL_STATE_KEY="$(cat "$run/state-key")" \
        MCP_TOOL_TASK_STORE="$redis_url" \
        MCP_TOOL_SHARED_STATE="$redis_url" \
        MCP_TOOL_EVENT_STORE="$redis_url" \
        MCP_TOOL_CONNECTIONS_PER_ADDRESS=1024 \
        MCP_TOOL_TRUSTED_PROXIES="$(proxy_address)" \
        "${inside[@]}" setsid "$MCP_SERVER" ${MCP_SERVER_ARGS:-} --http "$host:$p" \
        </dev/null >>"$run/logs/replica-$i.log" 2>&1 &
    echo $! >"$run/replica-$i.pid"
    wait_port "$host" "$p" 20 ||
        die "replica $i did not listen on $host:$p (see $run/logs/replica-$i.log)"
}

start_redis() {
    alive "$run/redis.pid" && die "Redis runs already"
    need redis-server redis-server
    local bind="127.0.0.1" i n ports
    if [ -n "$netns" ]; then
        read -r -a ports <<<"$(cat "$run/replica-ports")"
        n="${#ports[@]}"
        for ((i = 1; i <= n; i++)); do bind="$bind $net.$((100 + i)).1"; done
        # The replicas come from addresses other than loopback, which protected mode refuses;
        # these addresses exist only inside this deployment's namespaces.
        bind="$bind --protected-mode no"
    fi
    # shellcheck disable=SC2086 # REDIS_ARGS is a list of words
    "${hub[@]}" redis-server --port "$redis_port" --bind $bind --save "" --appendonly no \
        --dir "$run" ${REDIS_ARGS:-} </dev/null >>"$run/logs/redis.log" 2>&1 &
    echo $! >"$run/redis.pid"
    wait_port 127.0.0.1 "$redis_port" 10 || die "Redis did not start (see $run/logs/redis.log)"
}

stop_pid() {
    local file="$1"
    if alive "$file"; then
        local pid
        pid="$(cat "$file")"
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 100); do
            alive "$file" || break
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
    local i upstreams=""
    local ports
    read -r -a ports <<<"$(cat "$run/replica-ports")"
    [ -z "$netns" ] || net_up "${#ports[@]}"
    if [ -n "${REDIS_URL:-}" ]; then
        [ -z "$netns" ] || die "NETNS runs a Redis of its own: REDIS_URL goes without it"
        echo "$REDIS_URL" >"$run/redis-url"
    else
        : >"$run/logs/redis.log"
        start_redis
        echo "redis://127.0.0.1:$redis_port" >"$run/redis-url"
    fi
    for ((i = 1; i <= ${#ports[@]}; i++)); do
        start_replica "$i"
        upstreams="$upstreams        server $(replica_host "$i"):${ports[$((i - 1))]} max_fails=1 fail_timeout=1s;\n"
    done
    local bind
    bind="proxy_bind $(proxy_address);"
    sed -e "s/@PORT@/$port/" -e "s|@UPSTREAMS@|${upstreams%\\n}|" -e "s/@PROXY_BIND@/$bind/" \
        "$here/nginx.conf.in" >"$run/nginx.conf"
    "${hub[@]}" "$nginx" -p "$run" -c "$run/nginx.conf" -e "$run/logs/error.log" -g "daemon off;" \
        </dev/null >>"$run/logs/nginx.log" 2>&1 &
    echo $! >"$run/nginx.pid"
    wait_port 127.0.0.1 "$port" 10 || die "nginx did not start (see $run/logs/error.log)"
    echo "http://127.0.0.1:$port/mcp"
}

down() {
    if [ -d "$run" ]; then
        stop_pid "$run/nginx.pid"
        for f in "$run"/replica-*.pid; do
            [ -e "$f" ] && stop_pid "$f"
        done
        stop_pid "$run/redis.pid"
        rm -f "$run/replica-ports"
    fi
    [ -z "$netns" ] || net_down
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
        listening "$(replica_host "$2")" "${ports[$(($2 - 1))]}" || break
        sleep 0.02
    done
    rm -f "$f"
    ;;
start)
    [ -n "${2:-}" ] || die "start needs a replica number"
    start_replica "$2"
    ;;
stop-redis)
    alive "$run/redis.pid" || die "Redis does not run (or is not this script's)"
    stop_pid "$run/redis.pid"
    ;;
start-redis) start_redis ;;
status) status ;;
*)
    sed -n '2,/^set /p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
