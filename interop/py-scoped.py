"""Drives the `users` example over HTTP behind OAuth with the official Python SDK client (PyPI
`mcp`), every request carrying `Authorization: Bearer <token>`, and reports what the token's
scopes let it see and do.

Usage: python py-scoped.py <mode> <url> <token>

<mode> is the client's `mode`: `2026-07-28` (pinned: no handshake) or `legacy` (`initialize`,
so 2025-11-25). The script lists the tools (the client's response cache bypassed), then calls
`create_user` and, with the new user's id, `get_user`. Each call is reported as the result the
client returned (`isError` and the structured content) or the JSON-RPC error it raised (code,
message, data). Prints one JSON line; the test (tests/tests/oauth.rs) decides what is right.
Exits 1 only when the script itself could not run.
"""

from __future__ import annotations

import asyncio
import json
import sys
from contextlib import AsyncExitStack
from importlib.metadata import version
from typing import Any

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

MODES = ("2026-07-28", "legacy")


async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    try:
        result = await client.call_tool(name, arguments)
    except MCPError as e:
        return {"error": {"code": e.error.code, "message": e.error.message, "data": e.error.data}}
    return {"isError": bool(result.is_error), "structured": result.structured_content}


async def run(mode: str, url: str, token: str, summary: dict[str, Any]) -> None:
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}))
        client = await stack.enter_async_context(
            Client(
                streamable_http_client(url, http_client=http),
                mode=mode,  # type: ignore[arg-type]
                read_timeout_seconds=30,
            )
        )
        summary["protocolVersion"] = client.protocol_version
        listed = await client.list_tools(cache_mode="bypass")
        summary["tools"] = sorted(t.name for t in listed.tools)
        created = await call(client, "create_user", {"email": "ada@example.com", "name": "Ada Lovelace"})
        summary["create_user"] = created
        user_id = (created.get("structured") or {}).get("id", "usr_000000")
        summary["get_user"] = await call(client, "get_user", {"userId": user_id})


def main() -> int:
    args = sys.argv[1:]
    if len(args) != 3 or args[0] not in MODES:
        print("usage: python py-scoped.py 2026-07-28|legacy <url> <token>", file=sys.stderr)
        return 2
    mode, url, token = args
    summary: dict[str, Any] = {"client": "python-sdk", "sdkVersion": version("mcp"), "mode": mode}
    try:
        # Never hang: the whole run gets 60 s.
        asyncio.run(asyncio.wait_for(run(mode, url, token, summary), 60))
    except BaseException as e:  # noqa: BLE001 - report anything, then fail
        while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
            e = e.exceptions[0]
        # The message of an exception never quotes the token: it is not in any URL.
        summary["exception"] = f"{type(e).__name__}: {e}"
        print(json.dumps(summary, default=str), flush=True)
        print(json.dumps(summary, default=str), file=sys.stderr, flush=True)
        return 1
    print(json.dumps(summary, default=str), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
