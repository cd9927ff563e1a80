"""The relay's operations, written once: the API, MCP and the CLI are adapters over them.

The relay's own implementation (:class:`RelayService`, with the sessions, launchers and evidence behind
it) is imported on first use: a client (the CLI, ``debugrelay mcp --url``) needs only the interface
and :mod:`.policy`, and starts without the rest."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import policy
from ._base import DebugService

if TYPE_CHECKING:
    from ._calling import calling
    from ._relay import (
        LOCALS_MAX,
        MAX_PAGE,
        MAX_WAIT,
        OUTPUT_PAGE_MAX,
        STEP_WAIT,
        VALUE_MAX,
        RelayService,
        check_page,
        format_number,
        wait_seconds,
    )
    from ._trail import TRAIL_LENGTH, Trail, TrailEntry

_LAZY = {
    **dict.fromkeys(
        (
            "LOCALS_MAX",
            "MAX_PAGE",
            "MAX_WAIT",
            "OUTPUT_PAGE_MAX",
            "STEP_WAIT",
            "VALUE_MAX",
            "RelayService",
            "check_page",
            "format_number",
            "wait_seconds",
        ),
        "._relay",
    ),
    **dict.fromkeys(("TRAIL_LENGTH", "Trail", "TrailEntry"), "._trail"),
    "calling": "._calling",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "LOCALS_MAX",
    "MAX_PAGE",
    "MAX_WAIT",
    "OUTPUT_PAGE_MAX",
    "STEP_WAIT",
    "TRAIL_LENGTH",
    "VALUE_MAX",
    "DebugService",
    "RelayService",
    "Trail",
    "TrailEntry",
    "calling",
    "check_page",
    "format_number",
    "policy",
    "wait_seconds",
]
