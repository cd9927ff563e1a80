"""Shared by the breakpoint modules: notes, limits, the per-session state, the live connection."""

from __future__ import annotations

import builtins
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from debugrelay.errors import InvalidState
from debugrelay.models import BreakpointRecord

if TYPE_CHECKING:
    from debugrelay.dap import DapClient

    from .._session import Session


NEVER_HIT = "Verified, but never hit during the run."
# A conditional or counted breakpoint's line runs are counted in the target, which reports them about
# once a second as a debugger console message starting with RUNS_MARKER (the relay keeps it out of the
# program's output). Measured with debugpy 1.8.22 on CPython 3.11: a counted breakpoint costs some 60 us
# per run in the debugger, a loop of ~19M iterations/s runs ~17k/s; from HOT_RUNS_PER_SECOND it is said.
RUNS_MARKER = "\x1edebugrelay-runs "
HOT_RUNS_PER_SECOND = 1000.0
PENDING_FILE = "Source file not found. Breakpoint pending: it is verified and set as soon as the file appears."
UNCHECKED_FILE = (
    "Not checked by the relay: the file is outside the folders it reads sources from "
    "(DEBUGRELAY_WORKSPACE, DEBUGRELAY_ALLOWED_ROOTS); debugpy checks the line in the program."
)
PENDING_FUNCTION = (
    "Resolved when the program is launched: the relay looks the name up in the launched script, "
    "its folder, the working directory and PYTHONPATH."
)
CONDITION_RAISED = "The condition raised"
PENDING_POLL = 0.25  # seconds between looks for a pending breakpoint's file while a target runs
MAX_LINE = 2**31 - 1  # DAP line numbers are 32-bit
LISTING_LOCK_WAIT = 5.0  # seconds a listing waits for a busy session before answering as it is
EXCEPTION_FILTERS = ("raised", "uncaught", "userUnhandled")
BREAK_MODES = {"raised": "always", "uncaught": "unhandled", "userUnhandled": "userUnhandled"}
BUILTIN_EXCEPTIONS = frozenset(
    name for name, obj in vars(builtins).items() if isinstance(obj, type) and issubclass(obj, BaseException)
)
# debugpy's warning when a condition raises (pydevd.py, handle_breakpoint_condition)
CONDITION_ERROR = "pydevd: Error while evaluating expression in conditional breakpoint: "
RUNTIME_NOTES = (NEVER_HIT, CONDITION_RAISED)
SYNC_NOTES = ("Shares line", "debugpy moved")


class BreakpointExists(InvalidState):
    code = "breakpoint_exists"
    default_hint = "Change the existing breakpoint, or remove it first."


@dataclass
class BreakpointState:
    """What a session's breakpoints are in debugpy while this relay holds the connection (never stored)."""

    client: DapClient | None = None  # the connection our event listener is on
    sent_conditions: dict[str, str] = field(default_factory=dict)  # condition sent to debugpy → bp id
    watcher: bool = False
    filter_types: tuple[str, ...] = ()  # exception types the relay filters itself (debugpy cannot)
    condition_stops: bool = False  # debugpy agreed to stop when a condition raises


def state_of(session: Session) -> BreakpointState:
    return session.breakpoint_state


def live_client(session: Session) -> DapClient | None:
    client = session.client
    return client if client is not None and not client.closed.is_set() else None


def settings_of(bp: BreakpointRecord) -> tuple[Any, ...]:
    return (bp.condition, bp.hit_condition, bp.log_message, bp.enabled)


def is_runtime_note(message: str | None) -> bool:
    return bool(message) and any((message or "").startswith(n) for n in RUNTIME_NOTES)


def file_exists(path: str | None) -> bool:
    return bool(path) and os.path.exists(path or "")


def is_pending_file(bp: BreakpointRecord) -> bool:
    return bp.pending and bp.kind == "line" and bp.file is not None
