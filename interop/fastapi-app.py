"""A small real FastAPI application (PyPI `fastapi`, OpenAPI 3.1), mounted by the gateway's
OpenAPI mounts in tests/tests/openapi_mount.rs.

Usage: python fastapi-app.py PORT [OTHER_ORIGIN]

It has path and query parameters (one a list, one an enum), a JSON body, an error answer
(404 for an item it does not have, 409 for a name taken), a redirect within its
origin and one to OTHER_ORIGIN (another origin, which the gateway must not follow).
"""

from __future__ import annotations

import sys
from enum import Enum

import uvicorn
from fastapi import FastAPI, HTTPException, Query
from fastapi.responses import PlainTextResponse, RedirectResponse
from pydantic import BaseModel, Field

app = FastAPI(title="Shop", version="1.0.0")


class Color(str, Enum):
    red = "red"
    green = "green"
    blue = "blue"


class ItemIn(BaseModel):
    name: str = Field(min_length=1, description="What it is called")
    color: Color
    price: float = Field(ge=0)
    note: str | None = None


class Item(ItemIn):
    id: int


ITEMS: dict[int, Item] = {1: Item(id=1, name="kettle", color=Color.red, price=20.0)}

OTHER_ORIGIN = sys.argv[2] if len(sys.argv) > 2 else "http://localhost:9"


@app.get("/items/{item_id}", operation_id="get_item", summary="One item", response_model=Item,
         responses={404: {"description": "No such item"}})
def get_item(item_id: int, detail: bool = False) -> Item:
    item = ITEMS.get(item_id)
    if item is None:
        raise HTTPException(status_code=404, detail=f"no item {item_id}")
    return item


@app.get("/items", operation_id="list_items", summary="Items of some colors",
         description="Every item whose color is one of `color`, at most `limit`.")
def list_items(color: list[Color] = Query(default=[]), limit: int = Query(default=10, ge=1)) -> list[Item]:
    found = [i for i in ITEMS.values() if not color or i.color in color]
    return found[:limit]


@app.post("/items", operation_id="create_item", status_code=201, summary="Adds an item",
          responses={409: {"description": "An item of that name exists"}})
def create_item(item: ItemIn) -> Item:
    if any(i.name == item.name for i in ITEMS.values()):
        raise HTTPException(status_code=409, detail=f"an item named {item.name} exists")
    new = Item(id=max(ITEMS) + 1, **item.model_dump())
    ITEMS[new.id] = new
    return new


@app.get("/moved/{item_id}", operation_id="moved_item", summary="Redirects to the item, here")
def moved_item(item_id: int) -> RedirectResponse:
    return RedirectResponse(f"/items/{item_id}", status_code=307)


@app.get("/elsewhere", operation_id="elsewhere", summary="Redirects to another origin")
def elsewhere() -> RedirectResponse:
    return RedirectResponse(f"{OTHER_ORIGIN}/stolen", status_code=302)


@app.get("/hello", operation_id="hello", response_class=PlainTextResponse, summary="Plain text")
def hello(name: str = "world") -> str:
    return f"hello, {name}"


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
