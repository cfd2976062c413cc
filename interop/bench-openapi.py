"""What a REST call through an OpenAPI mount costs against the same call made directly.

Usage: python bench-openapi.py <service base URL> <gateway MCP URL> [calls]

With the FastAPI application of `fastapi-app.py` at the base URL and a gateway mounting it as
`shop` (`calc --http … --mount FILE`), times, one call at a time on one kept-alive connection
each: `GET /items/1` sent to the service directly; `tools/call shop__get_item` sent to the
gateway (one 2025-11-25 session), which sends that same GET; and `tools/call multiply` (the
gateway's own local tool), the MCP floor. Prints the median and 90th percentile of each, in
microseconds, as one JSON line. Not a test: BENCHMARKS-style figures for a report.
"""

from __future__ import annotations

import json
import statistics
import sys
import time

import httpx2 as httpx


def timed(send, calls: int) -> dict[str, float]:
    for _ in range(min(50, calls)):
        send()
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        send()
        samples.append((time.perf_counter() - start) * 1e6)
    samples.sort()
    return {"median_us": round(statistics.median(samples)), "p90_us": round(samples[int(len(samples) * 0.9)])}


def main() -> int:
    base, gateway = sys.argv[1], sys.argv[2]
    calls = int(sys.argv[3]) if len(sys.argv) > 3 else 500
    direct = httpx.Client()
    mcp = httpx.Client(headers={"Accept": "application/json, text/event-stream"})
    init = mcp.post(gateway, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
    session = init.headers["mcp-session-id"]
    headers = {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    mcp.post(gateway, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})

    def get_direct() -> None:
        r = direct.get(f"{base}/items/1")
        assert r.status_code == 200, r.text

    def call(name: str, arguments: dict) -> None:
        r = mcp.post(gateway, headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                                     "params": {"name": name, "arguments": arguments}})
        body = r.json() if r.headers.get("content-type", "").startswith("application/json") else None
        assert body is not None and not body["result"].get("isError"), r.text

    out = {
        "direct_get": timed(get_direct, calls),
        "through_mount": timed(lambda: call("shop__get_item", {"item_id": 1}), calls),
        "local_tool": timed(lambda: call("multiply", {"a": 2, "b": 3}), calls),
        "calls": calls,
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
