"""Drives the prompt and the resource template of the `files` example server, both defined with
`#[prompt]` and `#[resource_template]`, with the official Python SDK client (PyPI `mcp`).

Usage: python py-offerings.py <mode> <root> stdio <command> [args...]
       python py-offerings.py <mode> <root> http <url>

<mode> is the client's `mode`: `auto` (probes `server/discover`, so 2026-07-28), `2026-07-28`
(pinned: no probe, no handshake) or `legacy` (`initialize`, so 2025-11-25). <root> is the
server's root folder, which must hold `notes.txt`; the script reads it to check what it is
served.

Checks:
  - the version the mode settles on;
  - prompts/list names `review_file`, titled, with its arguments `path` (required) and `focus`
    (optional), each described;
  - prompts/get `review_file {path: "notes.txt", focus: "tone"}` gives two user messages: what to
    look at, and the file's text;
  - prompts/get without `path` is refused with a JSON-RPC error naming it, and so is an argument
    the prompt does not have;
  - resources/templates/list names `files://{name}` (text/plain);
  - resources/read `files://notes.txt` gives the file's text, as text/plain, under the URI read;
  - completion/complete of the template's `name` from "no" gives `notes.txt`.
Prints one JSON line summarizing what it saw; exits 1 if any check failed.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from py_report import MODES, checker, new_summary, report



def texts(result: types.GetPromptResult) -> list[str]:
    return [m.content.text for m in result.messages if m.content.type == "text"]


async def run(mode: str, root: str, transport: str, target: list[str], summary: dict[str, Any]) -> None:
    check = checker(summary)

    with open(os.path.join(root, "notes.txt"), encoding="utf-8") as f:
        notes = f.read()

    server: Any = StdioServerParameters(command=target[0], args=target[1:]) if transport == "stdio" else target[0]
    async with Client(server, mode=mode, read_timeout_seconds=30) as client:  # type: ignore[arg-type]
        summary["protocolVersion"] = client.protocol_version
        expected = "2025-11-25" if mode == "legacy" else "2026-07-28"
        check("protocol version", client.protocol_version == expected, client.protocol_version)

        # The prompt, listed with its arguments.
        listed = await client.list_prompts()
        prompts = {p.name: p for p in listed.prompts}
        summary["prompts"] = sorted(prompts)
        review = prompts.get("review_file")
        if check("review_file listed", review is not None, summary["prompts"]):
            assert review is not None
            summary["reviewFile"] = review.model_dump(by_alias=True, exclude_none=True)
            check("review_file title", review.title == "Review a file", summary["reviewFile"])
            check(
                "review_file description",
                (review.description or "").startswith("Review a text file"),
                summary["reviewFile"],
            )
            arguments = [(a.name, bool(a.required), bool(a.description)) for a in review.arguments or []]
            check(
                "review_file arguments: path required, focus optional, both described",
                arguments == [("path", True, True), ("focus", False, True)],
                arguments,
            )

        # Got with arguments.
        got = await client.get_prompt("review_file", {"path": "notes.txt", "focus": "tone"})
        summary["review"] = texts(got)
        check(
            "the prompt's messages",
            summary["review"] == ["Review `notes.txt`, looking at tone.", notes]
            and all(m.role == "user" for m in got.messages),
            got.model_dump(by_alias=True, exclude_none=True),
        )

        # Bad arguments: JSON-RPC errors naming the argument.
        refusals: dict[str, Any] = {}
        for label, arguments, named in (
            ("missing", {"focus": "tone"}, "`path`"),
            ("unknown", {"path": "notes.txt", "pth": "x"}, "`pth`"),
        ):
            try:
                await client.get_prompt("review_file", arguments)
                refusals[label] = None
            except MCPError as e:
                refusals[label] = {"code": e.code, "message": e.error.message}
            refused = refusals[label]
            check(
                f"a {label} argument is invalid params naming it",
                refused is not None and refused["code"] == -32602 and named in refused["message"],
                refused,
            )
        summary["refusals"] = refusals

        # The template, listed, and a resource read through it.
        templates = await client.list_resource_templates()
        listed_templates = [t.model_dump(by_alias=True, exclude_none=True) for t in templates.resource_templates]
        summary["templates"] = listed_templates
        files = next((t for t in listed_templates if t.get("uriTemplate") == "files://{name}"), None)
        check(
            "files://{name} listed as text/plain",
            files is not None and files.get("mimeType") == "text/plain" and files.get("name") == "file",
            listed_templates,
        )
        read = await client.read_resource("files://notes.txt")
        contents = [c.model_dump(by_alias=True, exclude_none=True) for c in read.contents]
        summary["read"] = contents
        check(
            "files://notes.txt is the file's text",
            len(contents) == 1
            and contents[0].get("uri") == "files://notes.txt"
            and contents[0].get("mimeType") == "text/plain"
            and contents[0].get("text") == notes,
            contents,
        )

        # The template's variable, completed from the root's entries.
        completed = await client.complete(
            types.ResourceTemplateReference(type="ref/resource", uri="files://{name}"),
            {"name": "name", "value": "no"},
        )
        summary["completion"] = completed.completion.values
        check("name completes to notes.txt", completed.completion.values == ["notes.txt"], summary["completion"])


def main() -> int:
    args = sys.argv[1:]
    ok = len(args) >= 4 and args[0] in MODES and (
        (args[2] == "stdio") or (args[2] == "http" and len(args) == 4)
    )
    if not ok:
        print(
            "usage: python py-offerings.py auto|2026-07-28|legacy <root> stdio <command> [args...]"
            " | ... http <url>",
            file=sys.stderr,
        )
        return 2
    mode, root, transport, *target = args
    summary = new_summary(mode, transport)
    return report(summary, lambda: run(mode, root, transport, target, summary))


if __name__ == "__main__":
    sys.exit(main())
