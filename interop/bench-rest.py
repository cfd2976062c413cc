"""What a REST call costs in each direction, against the direct call, on one machine.

Usage: python bench-rest.py <users base URL> <users pid> <gateway MCP URL> <gateway pid> [calls]

With `users --http … --openapi` at the base URL and a gateway (`calc --http … --mount FILE`)
mounting its `/openapi.json` as `users`, times one call at a time on one kept-alive connection
each, `get_user` of one user:

  - serving: `POST /tools/get_user` (REST) and `tools/call get_user` (MCP, a 2026-07-28
    stateless request) to the same `users` server;
  - mounting: `tools/call users__get_user` to the gateway, which sends that same
    `POST /tools/get_user` to `users`, against the REST call made directly.

For each: the median and 90th percentile of the round trip seen by this client, in
microseconds, and the CPU time each server process spent per call (the sum over its threads
of `/proc/<pid>/task/*/schedstat`, in nanoseconds, over all the calls). Prints one JSON line.
Not a test: BENCHMARKS.md figures.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time

import httpx2 as httpx

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
}


def cpu_ns(pid: int) -> int:
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except FileNotFoundError:
            pass
    return total


def timed(send, calls: int, pids: dict[str, int]) -> dict[str, object]:
    for _ in range(min(200, calls)):
        send()
    before = {name: cpu_ns(pid) for name, pid in pids.items()}
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        send()
        samples.append((time.perf_counter() - start) * 1e6)
    after = {name: cpu_ns(pid) for name, pid in pids.items()}
    samples.sort()
    return {
        "median_us": round(statistics.median(samples)),
        "p90_us": round(samples[int(len(samples) * 0.9)]),
        "cpu_us_per_call": {name: round((after[name] - before[name]) / calls / 1000, 1) for name in pids},
    }


def main() -> int:
    base, users_pid, gateway, gateway_pid = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    calls = int(sys.argv[5]) if len(sys.argv) > 5 else 2000
    pids = {"users": users_pid, "gateway": gateway_pid}
    rest = httpx.Client()
    made = rest.post(f"{base}/tools/create_user", json={"email": "ada@example.com", "name": "Ada"})
    assert made.status_code == 200, made.text
    user = made.json()["id"]

    def rest_call() -> None:
        r = rest.post(f"{base}/tools/get_user", json={"userId": user})
        assert r.status_code == 200, r.text

    def mcp_call(client: httpx.Client, url: str, name: str) -> None:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": name, "arguments": {"userId": user}, "_meta": META}}
        r = client.post(url, json=body, headers={"mcp-method": "tools/call", "mcp-name": name})
        assert r.status_code == 200 and '"isError":true' not in r.text, r.text

    def mcp_client() -> httpx.Client:
        return httpx.Client(headers={"Accept": "application/json, text/event-stream",
                                     "MCP-Protocol-Version": "2026-07-28"})

    direct, through = mcp_client(), mcp_client()
    out = {
        "rest_direct": timed(rest_call, calls, pids),
        "mcp_direct": timed(lambda: mcp_call(direct, f"{base}/mcp", "get_user"), calls, pids),
        "mcp_through_mount": timed(lambda: mcp_call(through, gateway, "users__get_user"), calls, pids),
        "calls": calls,
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
