"""Drives a gateway that mounts two HTTP services by their OpenAPI documents with the official
Python SDK client (PyPI `mcp`): the FastAPI application of `fastapi-app.py` as `shop`
(OpenAPI 3.1) and the Swagger Petstore (OpenAPI 3.0) served by Prism's mock server as `pets`.

Usage: python py-openapi.py auto|2026-07-28|legacy <gateway url>

Checks:
  - the operations are listed as `shop__<operationId>` / `pets__<operationId>`, with input
    schemas from their parameters and JSON bodies, output schemas from their 2xx answers, and
    hints from their methods; Petstore's `uploadFile` (an octet-stream body) is not listed;
  - shop: get_item answers the item as structured content (validated by the client against
    the output schema); an unknown item is an isError result carrying the 404 and FastAPI's
    body; list_items with an array of enum values in the query; create_item with a JSON body
    (201); a redirect within the service's origin is followed; a redirect to another origin is
    an isError result saying it was not followed; a text/plain answer is text;
  - pets: getPetById (the API key from the connection store is sent: Prism refuses the call
    without it), findPetsByStatus (the connection's bearer token sent; an array answer,
    wrapped as {"result": …}), addPet (a JSON body whose schema holds `$ref`s).
Prints one JSON line summarizing what it saw; exits 1 if any check failed.
"""

from __future__ import annotations

import sys
from typing import Any

from mcp import Client
from mcp.types import CallToolResult

from py_report import MODES, checker, new_summary, report


def text_of(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


async def run(mode: str, url: str, summary: dict[str, Any]) -> None:
    check = checker(summary)
    async with Client(url, mode=mode, read_timeout_seconds=30) as client:  # type: ignore[arg-type]
        summary["protocolVersion"] = client.protocol_version
        listed = await client.list_tools()
        tools = {t.name: t for t in listed.tools}
        summary["tools"] = sorted(tools)
        for name in ["shop__get_item", "shop__list_items", "shop__create_item", "shop__elsewhere",
                     "pets__getPetById", "pets__findPetsByStatus", "pets__addPet", "pets__deletePet"]:
            check(f"{name} is listed", name in tools, sorted(tools))
        check("uploadFile (an octet-stream body) is refused", "pets__uploadFile" not in tools)
        get_item = tools.get("shop__get_item")
        if get_item is not None:
            schema = get_item.input_schema
            check("get_item's path and query parameters", set(schema.get("properties", {})) == {"item_id", "detail"}
                  and schema.get("required") == ["item_id"], schema)
            check("get_item has an output schema", (get_item.output_schema or {}).get("type") == "object",
                  get_item.output_schema)
            hints = get_item.annotations
            check("GET is read-only and idempotent", hints is not None and hints.read_only_hint is True
                  and hints.idempotent_hint is True, hints)
        create = tools.get("shop__create_item")
        if create is not None:
            props = create.input_schema.get("properties", {})
            check("create_item's body fields are its arguments", set(props) == {"name", "color", "price", "note"}
                  and props["color"].get("$ref") == "#/$defs/Color", create.input_schema)
        delete = tools.get("pets__deletePet")
        if delete is not None:
            hints = delete.annotations
            check("DELETE is destructive and idempotent", hints is not None and hints.destructive_hint is True
                  and hints.idempotent_hint is True and hints.read_only_hint is False, hints)

        item = await client.call_tool("shop__get_item", {"item_id": 1, "detail": True})
        check("get_item answers the item", not item.is_error and (item.structured_content or {}).get("name") == "kettle",
              item.model_dump())
        missing = await client.call_tool("shop__get_item", {"item_id": 999})
        summary["missing"] = text_of(missing)
        check("an unknown item is an error result with its 404 and body",
              missing.is_error and "404" in text_of(missing) and "no item 999" in text_of(missing), text_of(missing))
        taken = await client.call_tool("shop__create_item", {"name": "kettle", "color": "blue", "price": 1})
        check("a 409 is an error result with its body", taken.is_error and "409" in text_of(taken)
              and "an item named kettle exists" in text_of(taken), text_of(taken))
        refused = await client.call_tool("shop__list_items", {"limit": 0})
        check("the gateway checks the arguments by the document's schema first",
              refused.is_error and "limit" in text_of(refused), text_of(refused))
        made = await client.call_tool("shop__create_item", {"name": f"cup-{mode}", "color": "green", "price": 3.5})
        made_item = made.structured_content or {}
        check("create_item sends the JSON body", not made.is_error and made_item.get("name") == f"cup-{mode}"
              and isinstance(made_item.get("id"), int), made.model_dump())
        listed_items = await client.call_tool("shop__list_items", {"color": ["red", "green"], "limit": 5})
        found = (listed_items.structured_content or {}).get("result", [])
        check("list_items takes an array of enum values in the query",
              not listed_items.is_error and {i.get("color") for i in found} == {"red", "green"}, listed_items.model_dump())
        moved = await client.call_tool("shop__moved_item", {"item_id": 1})
        check("a redirect within the origin is followed", not moved.is_error and "kettle" in text_of(moved),
              moved.model_dump())
        away = await client.call_tool("shop__elsewhere", {})
        summary["elsewhere"] = text_of(away)
        check("a redirect to another origin is refused", away.is_error and "not followed" in text_of(away),
              text_of(away))
        hello = await client.call_tool("shop__hello", {"name": "ada"})
        check("a text answer is text", not hello.is_error and text_of(hello) == "hello, ada", hello.model_dump())

        pet = await client.call_tool("pets__getPetById", {"petId": 1})
        check("getPetById answers a pet (the API key was sent)",
              not pet.is_error and isinstance((pet.structured_content or {}).get("name"), str), pet.model_dump())
        pets = await client.call_tool("pets__findPetsByStatus", {"status": "sold"})
        check("findPetsByStatus answers a list, wrapped",
              not pets.is_error and isinstance((pets.structured_content or {}).get("result"), list), pets.model_dump())
        added = await client.call_tool("pets__addPet", {"name": "rex", "photoUrls": ["http://127.0.0.1/rex.png"],
                                                         "category": {"id": 1, "name": "dogs"}, "status": "available"})
        check("addPet sends a JSON body", not added.is_error and isinstance(added.structured_content, dict),
              added.model_dump())


def main() -> int:
    if len(sys.argv) != 3 or sys.argv[1] not in MODES:
        print(__doc__, file=sys.stderr)
        return 2
    mode, url = sys.argv[1], sys.argv[2]
    summary = new_summary(mode, "http")
    return report(summary, lambda: run(mode, url, summary))


if __name__ == "__main__":
    sys.exit(main())
