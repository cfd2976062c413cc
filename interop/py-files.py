"""Drives the `files` example server with the official Python SDK client (PyPI `mcp`), through the
requests a tool makes of the client: elicitation (the user) and sampling (the model).

Usage: python py-files.py <mode> <root> <password> stdio <command> [args...]
       python py-files.py <mode> <root> <password> http <url> <bearer token>

<mode> is the client's `mode`: `auto` (probes `server/discover`, so 2026-07-28), `2026-07-28`
(pinned: no probe, no handshake) or `legacy` (`initialize`, so 2025-11-25). <root> is the
server's root folder, which must hold `gone.txt`, `keep.txt` and `notes.txt`; the script checks
the files themselves too. Over HTTP every request carries `Authorization: Bearer <token>`: in
2026-07-28 there is no session, so what `login` enables belongs to the authenticated subject.

Checks:
  - the version the mode settles on;
  - tools/list hides `write_file` and `delete_file`; `login {password}` reveals them in a fresh
    tools/list (the client's response cache bypassed);
  - `delete_file {path: "gone.txt"}` asks the user (elicitation, a form with a boolean `confirm`);
    the callback accepts with confirm: true, so the result is `deleted gone.txt` and the file is
    gone;
  - `delete_file {path: "keep.txt"}`: the callback declines, so the result is
    `keep.txt was not deleted` and the file is still there;
  - `summarize_file {path: "notes.txt"}` asks the client's model (sampling); the callback answers
    a fixed text, which is the tool's result, and the request it saw quotes the file.
In 2026-07-28 the questions come back as an InputRequiredResult and the client retries the call
with the answers by itself; in 2025-11-25 they are requests from the server to the client.
Prints one JSON line summarizing what it saw; exits 1 if any check failed.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import AsyncExitStack
from typing import Any

import mcp.client.client as client_module
import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from py_report import MODES, checker, new_summary, report

SUMMARY = "A short note about the moon."

# Records every InputRequiredResult the client's own retry loop drives (2026-07-28 only): what it
# asked for, whether it carried a requestState, and how many retries it took.
ROUNDS: list[dict[str, Any]] = []
_driver = client_module.run_input_required_driver


async def _spy_driver(first: types.InputRequiredResult, *, retry: Any, **kwargs: Any) -> Any:
    record: dict[str, Any] = {
        "asked": sorted(r.method for r in (first.input_requests or {}).values()),
        "requestState": bool(first.request_state),
        "retries": 0,
    }
    ROUNDS.append(record)

    async def counted(*args: Any) -> Any:
        record["retries"] += 1
        return await retry(*args)

    return await _driver(first, retry=counted, **kwargs)


client_module.run_input_required_driver = _spy_driver  # type: ignore[assignment]


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


async def run(mode: str, root: str, password: str, transport: str, target: list[str], summary: dict[str, Any]) -> None:
    check = checker(summary)

    elicitations: list[dict[str, Any]] = summary["elicitations"]
    samplings: list[dict[str, Any]] = summary["samplings"]

    async def on_elicit(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        dumped = params.model_dump(by_alias=True, exclude_none=True)
        elicitations.append(dumped)
        if "gone.txt" in dumped.get("message", ""):
            return types.ElicitResult(action="accept", content={"confirm": True})
        return types.ElicitResult(action="decline")

    async def on_sample(_context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        samplings.append(params.model_dump(by_alias=True, exclude_none=True))
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=SUMMARY),
            model="fixed-test-model",
            stop_reason="endTurn",
        )

    async with AsyncExitStack() as stack:
        server: Any
        if transport == "stdio":
            server = StdioServerParameters(command=target[0], args=target[1:])
        else:
            url, token = target
            http = await stack.enter_async_context(
                create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
            )
            server = streamable_http_client(url, http_client=http)
        client = await stack.enter_async_context(
            Client(
                server,
                mode=mode,  # type: ignore[arg-type]
                read_timeout_seconds=30,
                elicitation_callback=on_elicit,
                sampling_callback=on_sample,
            )
        )
        summary["protocolVersion"] = client.protocol_version
        expected = "2025-11-25" if mode == "legacy" else "2026-07-28"
        check("protocol version", client.protocol_version == expected, client.protocol_version)

        async def tool_names() -> list[str]:
            listed = await client.list_tools(cache_mode="bypass")
            return sorted(t.name for t in listed.tools)

        summary["toolsBefore"] = await tool_names()
        check("delete_file hidden before login", "delete_file" not in summary["toolsBefore"], summary["toolsBefore"])
        check("summarize_file listed", "summarize_file" in summary["toolsBefore"], summary["toolsBefore"])

        login = await client.call_tool("login", {"password": password})
        summary["login"] = text_of(login)
        check("login succeeds", not login.is_error, login.model_dump())
        summary["toolsAfter"] = await tool_names()
        for name in ("delete_file", "write_file"):
            check(f"{name} listed after login", name in summary["toolsAfter"], summary["toolsAfter"])

        # Elicitation, accepted: the file goes.
        gone = await client.call_tool("delete_file", {"path": "gone.txt"})
        summary["deleteAccepted"] = {"isError": bool(gone.is_error), "text": text_of(gone)}
        check("accepted delete", not gone.is_error and text_of(gone) == "deleted gone.txt", gone.model_dump())
        check("gone.txt is gone", not os.path.exists(os.path.join(root, "gone.txt")))

        # Elicitation, declined: the file stays.
        kept = await client.call_tool("delete_file", {"path": "keep.txt"})
        summary["deleteDeclined"] = {"isError": bool(kept.is_error), "text": text_of(kept)}
        check(
            "declined delete", not kept.is_error and text_of(kept) == "keep.txt was not deleted", kept.model_dump()
        )
        check("keep.txt is still there", os.path.exists(os.path.join(root, "keep.txt")))

        check("two elicitations", len(elicitations) == 2, elicitations)
        for e in elicitations:
            props = e.get("requestedSchema", {}).get("properties", {})
            check("the form asks for a boolean confirm", props.get("confirm", {}).get("type") == "boolean", e)
        check(
            "the questions name the files",
            [e.get("message") for e in elicitations] == ["Delete `gone.txt`?", "Delete `keep.txt`?"],
            elicitations,
        )

        # Sampling: the model's answer is the tool's result.
        with open(os.path.join(root, "notes.txt"), encoding="utf-8") as f:
            notes = f.read()
        summarized = await client.call_tool("summarize_file", {"path": "notes.txt"})
        summary["summary"] = {"isError": bool(summarized.is_error), "text": text_of(summarized)}
        check("summarize_file returns the model's text", text_of(summarized) == SUMMARY, summarized.model_dump())
        check("one sampling request", len(samplings) == 1, samplings)
        prompt = json.dumps(samplings, default=str)
        summary["samplingQuotesFile"] = notes.strip() in "".join(
            c.get("text", "") for s in samplings for m in s.get("messages", []) for c in _blocks(m)
        )
        check("the sampling request quotes the file", summary["samplingQuotesFile"], prompt)

        # How the questions travelled: InputRequiredResult and a retry each in 2026-07-28 (the
        # answers replayed with the sealed requestState), server-to-client requests in 2025-11-25.
        summary["inputRequired"] = ROUNDS
        if mode == "legacy":
            check("no InputRequiredResult in 2025-11-25", ROUNDS == [], ROUNDS)
        else:
            asked = [["elicitation/create"], ["elicitation/create"], ["sampling/createMessage"]]
            check("an InputRequiredResult per question", [r["asked"] for r in ROUNDS] == asked, ROUNDS)
            check("each carried a requestState", all(r["requestState"] for r in ROUNDS), ROUNDS)
            check("each settled in one retry", all(r["retries"] == 1 for r in ROUNDS), ROUNDS)


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return content if isinstance(content, list) else [content] if isinstance(content, dict) else []


def main() -> int:
    args = sys.argv[1:]
    ok = len(args) >= 5 and args[0] in MODES and (
        (args[3] == "stdio") or (args[3] == "http" and len(args) == 6)
    )
    if not ok:
        print(
            "usage: python py-files.py auto|2026-07-28|legacy <root> <password> stdio <command> [args...]"
            " | ... http <url> <token>",
            file=sys.stderr,
        )
        return 2
    mode, root, password, transport, *target = args
    summary = new_summary(mode, transport, elicitations=[], samplings=[])
    return report(summary, lambda: run(mode, root, password, transport, target, summary))


if __name__ == "__main__":
    sys.exit(main())
