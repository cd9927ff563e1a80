"""The relay's operations, written once: the API, MCP and the CLI are adapters over them."""

from . import policy
from ._base import DebugService
from ._relay import MAX_WAIT, STEP_WAIT, RelayService, check_page, format_number, wait_seconds

__all__ = [
    "MAX_WAIT",
    "STEP_WAIT",
    "DebugService",
    "RelayService",
    "check_page",
    "format_number",
    "policy",
    "wait_seconds",
]
