"""The relay's operations, written once: the API, MCP and the CLI are adapters over them."""

from . import policy
from ._base import DebugService
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
from ._trail import TRAIL_LENGTH, Trail, TrailEntry, calling, trail_for

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
    "trail_for",
    "wait_seconds",
]
