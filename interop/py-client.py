"""Drives an MCP server with the official Python SDK client (PyPI `mcp`).

Usage: python py-client.py auto|2026-07-28|legacy stdio <command> [args...]
       python py-client.py auto|2026-07-28|legacy http <url>

`auto` is the client's default mode: it probes `server/discover` (protocol 2026-07-28) first and
speaks 2026-07-28 when the server answers it (falling back to `initialize` otherwise).
`2026-07-28` pins that version: no probe and no handshake, every request stands alone. `legacy`
sends `initialize` straight away.

Checks, against the `users` example server:
  - in auto mode the probe was sent and answered, so the version is 2026-07-28; in the pinned
    mode no probe was sent and the version is 2026-07-28; in legacy mode no probe was sent and
    `initialize` settled on 2025-11-25;
  - tools/list names the five tools, and create_user declares an outputSchema;
  - create_user succeeds, and the client itself validates structuredContent against the
    outputSchema (call_tool raises RuntimeError when they disagree); the same validator refuses
    a tampered copy, so the schema has teeth;
  - get_user returns the created user; an unknown id is an isError result;
  - create_user with email "x" is an isError result naming the email field;
  - seed_users {count: 5} with a progress callback sees all 5 notifications, in order.
Prints one JSON line summarizing what it saw; exits 1 if any check failed.
"""

from __future__ import annotations

import sys
from typing import Any

import mcp.types as types
from mcp import Client, ClientSession, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult

from py_report import MODES, checker, new_summary, report


# Records what the server/discover probe got back (the client's own negotiation code calls it).
PROBES: list[dict[str, Any]] = []
_send_discover = ClientSession.send_discover


async def _spy_discover(self: ClientSession, *args: Any, **kwargs: Any) -> Any:
    try:
        result = await _send_discover(self, *args, **kwargs)
    except MCPError as e:
        PROBES.append({"error": e.code, "message": e.error.message})
        raise
    PROBES.append({"result": result if isinstance(result, dict) else str(result)})
    return result


ClientSession.send_discover = _spy_discover  # type: ignore[method-assign]


def text_of(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


async def run(mode: str, transport: str, target: str, rest: list[str], summary: dict[str, Any]) -> None:
    check = checker(summary)

    server: Any = StdioServerParameters(command=target, args=rest) if transport == "stdio" else target
    async with Client(server, mode=mode, read_timeout_seconds=30) as client:  # type: ignore[arg-type]
        summary["protocolVersion"] = client.protocol_version
        info = client.server_info
        expected = "2025-11-25" if mode == "legacy" else "2026-07-28"
        check("protocol version", client.protocol_version == expected, client.protocol_version)
        summary["discoverProbe"] = PROBES
        if mode == "auto":
            check("server/discover was probed and answered", len(PROBES) == 1 and "result" in PROBES[0], PROBES)
        else:
            check(f"no server/discover probe in {mode} mode", PROBES == [], PROBES)

        listed = await client.list_tools()
        if mode == "2026-07-28":
            # Pinned, the client knows nothing of the server before its first request (it
            # synthesizes the discover result): the server names itself in every result's _meta.
            check("no server info before any request", info is None, info)
            stamp = (listed.meta or {}).get("io.modelcontextprotocol/serverInfo")
            info = types.Implementation.model_validate(stamp) if stamp else None
        summary["server"] = info.model_dump(exclude_none=True) if info else None
        check("server name", info is not None and info.name == "users", summary["server"])

        tools = listed.tools
        summary["tools"] = sorted(t.name for t in tools)
        for name in ["create_user", "delete_user", "get_user", "seed_users", "send_email"]:
            check(f"tool {name} listed", name in summary["tools"], summary["tools"])
        create = next((t for t in tools if t.name == "create_user"), None)
        check(
            "create_user has an outputSchema",
            create is not None and (create.output_schema or {}).get("type") == "object",
            create.output_schema if create else None,
        )

        # A good call: call_tool validates structured_content against the outputSchema.
        created = await client.call_tool(
            "create_user", {"email": "jane.doe@example.com", "name": "Jane Doe", "role": "admin"}
        )
        user = created.structured_content or {}
        summary["created"] = user
        check("create_user is not an error", not created.is_error, created.model_dump())
        check(
            "create_user structuredContent",
            user.get("email") == "jane.doe@example.com"
            and user.get("name") == "Jane Doe"
            and user.get("role") == "admin"
            and str(user.get("id", "")).startswith("usr_"),
            user,
        )
        check("create_user text copy", "jane.doe@example.com" in text_of(created), text_of(created))
        # The client's validator has teeth: it refuses the same result with a numeric id.
        tampered = created.model_copy(update={"structured_content": {**user, "id": 7}})
        try:
            await client.session.validate_tool_result("create_user", tampered)
            summary["validatorRejectsTampered"] = False
        except RuntimeError as e:
            summary["validatorRejectsTampered"] = True
            summary["tamperedError"] = str(e).splitlines()[0]
        check("output validator rejects a wrong type", summary["validatorRejectsTampered"])

        fetched = await client.call_tool("get_user", {"userId": user.get("id")})
        check(
            "get_user returns the created user",
            not fetched.is_error and (fetched.structured_content or {}).get("id") == user.get("id"),
            fetched.model_dump(),
        )
        missing = await client.call_tool("get_user", {"userId": "usr_nope"})
        summary["missingUser"] = {"isError": bool(missing.is_error), "text": text_of(missing)}
        check("get_user of an unknown id is an isError result", bool(missing.is_error), missing.model_dump())

        # A bad call: a validation failure is a result with isError, not an exception.
        bad = await client.call_tool("create_user", {"email": "x", "name": "Jane Doe"})
        summary["badCall"] = {"isError": bool(bad.is_error), "text": text_of(bad)}
        check("bad email is an isError result", bool(bad.is_error), bad.model_dump())
        check("bad email error names the field", "email" in text_of(bad), text_of(bad))

        # Progress: every notification reaches the callback.
        progress: list[dict[str, Any]] = []

        async def on_progress(p: float, total: float | None, message: str | None) -> None:
            progress.append({"progress": p, "total": total, "message": message})

        seeded = await client.call_tool("seed_users", {"count": 5}, progress_callback=on_progress)
        summary["progress"] = progress
        summary["seedResult"] = text_of(seeded)
        check("seed_users is not an error", not seeded.is_error, seeded.model_dump())
        check("5 progress notifications", len(progress) == 5, progress)
        check(
            "progress 1..5 of 5",
            all(p["progress"] == i + 1 and p["total"] == 5 for i, p in enumerate(progress)),
            progress,
        )


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[1] not in MODES or sys.argv[2] not in ("stdio", "http"):
        print(
            "usage: python py-client.py auto|2026-07-28|legacy stdio <command> [args...] | ... http <url>",
            file=sys.stderr,
        )
        return 2
    mode, transport, target, *rest = sys.argv[1:]
    summary = new_summary(mode, transport)
    return report(summary, lambda: run(mode, transport, target, rest, summary))


if __name__ == "__main__":
    sys.exit(main())
