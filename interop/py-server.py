"""A small MCP server on the official Python SDK (PyPI `mcp`, its `MCPServer`, formerly FastMCP),
for tests/tests/client_interop.rs: our client (`mcp_tool::client`) against a server nobody here
wrote.

Usage: python py-server.py stdio
       python py-server.py http <port>      (Streamable HTTP on 127.0.0.1:<port>/mcp)

Tools:
  - `add {a, b}`: a + b;
  - `count {steps}`: reports progress 1..steps (with a message), then says how many;
  - `ask_name`: asks the user for a name (elicitation) and greets it, or says it was declined;
  - `tool_1` … `tool_5`: say their number.
`tools/list` is paged two tools a page (the cursor is the index of the next tool), so a client
must follow `nextCursor` to see them all.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from pydantic import BaseModel

import mcp_types
from mcp.server.mcpserver import Context, MCPServer

PAGE = 2


class Paged(MCPServer):
    """An MCPServer whose tools/list comes in pages of PAGE tools."""

    async def _handle_list_tools(self, ctx: Any, params: Any) -> Any:
        tools = await self.list_tools()
        cursor = getattr(params, "cursor", None) if params is not None else None
        start = int(cursor) if cursor else 0
        end = start + PAGE
        return mcp_types.ListToolsResult(
            tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None
        )


server = Paged("py-server", version="1.0.0")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Count to `steps`, reporting progress at each step."""
    for i in range(1, steps + 1):
        await asyncio.sleep(0.02)
        await ctx.report_progress(i, steps, f"step {i}")
    return f"counted to {steps}"


class Name(BaseModel):
    name: str


@server.tool()
async def ask_name(ctx: Context) -> str:
    """Ask the user for their name and greet them."""
    answer = await ctx.elicit("What is your name?", Name)
    if answer.action == "accept" and answer.data is not None:
        return f"hello {answer.data.name}"
    return f"no name ({answer.action})"


def numbered(n: int) -> None:
    def tool() -> str:
        return f"tool {n}"

    tool.__name__ = f"tool_{n}"
    tool.__doc__ = f"Say {n}."
    server.tool()(tool)


for n in range(1, 6):
    numbered(n)


if __name__ == "__main__":
    if sys.argv[1:2] == ["stdio"]:
        server.run("stdio")
    elif sys.argv[1:2] == ["http"] and len(sys.argv) == 3:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        sys.exit("usage: py-server.py stdio | http <port>")
