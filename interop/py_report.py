"""What the Python SDK client scripts here (`py-client.py`, `py-files.py`, `py-offerings.py`)
share: their modes, their checks, and the run under a time limit that ends in one JSON line
summarizing what the script saw.

The scripts import it by name: Python puts the folder of the script it runs first on its path.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from importlib.metadata import version
from typing import Any

MODES = ("auto", "2026-07-28", "legacy")


def new_summary(mode: str, transport: str, **extra: Any) -> dict[str, Any]:
    """The summary a run fills in: no failure yet, not `ok` until the run ends."""
    return {
        "client": "python-sdk",
        "sdkVersion": version("mcp"),
        "mode": mode,
        "transport": transport,
        "ok": False,
        "failures": [],
        **extra,
    }


def checker(summary: dict[str, Any]) -> Callable[..., bool]:
    """`check(name, ok, detail=None)`: records a failed check (with its detail) in `summary`."""
    failures: list[str] = summary["failures"]

    def check(name: str, ok: bool, detail: Any = None) -> bool:
        if not ok:
            failures.append(name if detail is None else f"{name}: {json.dumps(detail, default=str)}")
        return ok

    return check


def report(summary: dict[str, Any], run: Callable[[], Awaitable[None]]) -> int:
    """Runs `run()`, prints `summary` as one JSON line and returns the exit code: 0 if no check
    failed and nothing was raised."""
    try:
        # Never hang: the whole run gets 60 s.
        asyncio.run(asyncio.wait_for(run(), 60))
    except BaseException as e:  # noqa: BLE001 - report anything, then fail
        while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
            e = e.exceptions[0]
        summary["failures"].append(f"exception: {type(e).__name__}: {e}")
    summary["ok"] = not summary["failures"]
    print(json.dumps(summary, default=str), flush=True)
    return 0 if summary["ok"] else 1
