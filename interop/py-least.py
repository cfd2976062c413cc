"""Drives the `users` example over HTTP behind OAuth with the official Python SDK client (PyPI
`mcp`) obtaining its own tokens: the SDK's client-credentials provider
(`ClientCredentialsOAuthProvider`), configured for a scope, finds the authorization server
through the server's 401 and its metadata, and steps up when a call's 403 names more.

Usage: python py-least.py <mode> <url> <issuer> <client> <scope>

<mode> is the client's `mode`: `2026-07-28` (pinned: no handshake) or `legacy` (`initialize`,
so 2025-11-25). The client's secret is `<client>-secret` (as interop/oidc-provider.mjs has
it). The script lists the tools, calls `get_user` (reading), then `create_user` (writing).
Prints one JSON line: the scope of every token the provider obtained, in order, the tools
listed, each call's result (`isError`, structured content), JSON-RPC error or exception, and
the exception that ended the client, if one did (a refused step-up does). The test
(tests/tests/oauth.rs) decides what is right. Exits 1 only when the script itself could not
run, or the client could not connect and list.
"""

from __future__ import annotations

import asyncio
import json
import sys
from contextlib import AsyncExitStack
from importlib.metadata import version
from typing import Any

from mcp import Client
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from mcp.shared.exceptions import MCPError

MODES = ("2026-07-28", "legacy")


class Memory:
    """Tokens and client information in memory; the scope of every token obtained, in order."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None
        self.scopes: list[str | None] = []

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        self.scopes.append(tokens.scope)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    try:
        result = await asyncio.wait_for(client.call_tool(name, arguments), 20)
    except MCPError as e:
        return {"error": {"code": e.error.code, "message": e.error.message, "data": e.error.data}}
    except BaseException as e:  # noqa: BLE001 - an auth failure surfaces as an exception
        while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
            e = e.exceptions[0]
        # The provider's messages never quote the secret (it goes in a Basic header).
        return {"exception": f"{type(e).__name__}: {e}"}
    return {"isError": bool(result.is_error), "structured": result.structured_content}


async def run(mode: str, url: str, issuer: str, client_id: str, scope: str, summary: dict[str, Any]) -> None:
    storage = Memory()
    summary["tokenScopes"] = storage.scopes
    provider = ClientCredentialsOAuthProvider(
        server_url=url,
        storage=storage,
        client_id=client_id,
        client_secret=f"{client_id}-secret",
        scope=scope,
        issuer=issuer,
    )
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(create_mcp_http_client(auth=provider))
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
        summary["get_user"] = await call(client, "get_user", {"userId": "usr_000000"})
        summary["create_user"] = await call(client, "create_user", {"email": "ada@example.com", "name": "Ada Lovelace"})


def main() -> int:
    args = sys.argv[1:]
    if len(args) != 5 or args[0] not in MODES:
        print("usage: python py-least.py 2026-07-28|legacy <url> <issuer> <client> <scope>", file=sys.stderr)
        return 2
    mode, url, issuer, client_id, scope = args
    summary: dict[str, Any] = {"client": "python-sdk", "sdkVersion": version("mcp"), "mode": mode}
    try:
        # Never hang: the whole run gets 60 s.
        asyncio.run(asyncio.wait_for(run(mode, url, issuer, client_id, scope, summary), 60))
    except BaseException as e:  # noqa: BLE001 - report anything, then fail
        while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
            e = e.exceptions[0]
        summary["exception"] = f"{type(e).__name__}: {e}"
        print(json.dumps(summary, default=str), flush=True)
        print(json.dumps(summary, default=str), file=sys.stderr, flush=True)
        # A refused step-up ends the client (the provider's error is raised out of it): that is
        # an outcome to report once the client had connected and listed.
        return 0 if "tools" in summary else 1
    print(json.dumps(summary, default=str), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
