"""Sessions: the manager, the session state machine, breakpoints and output."""

from . import _breakpoints as breakpoints
from . import _watches as watches
from ._breakpoints import BreakpointRequest, BreakpointUpdate
from ._manager import SessionManager
from ._session import ACTIVE, STEP_COMMANDS, Session
from ._views import session_view, status_view

__all__ = [
    "ACTIVE",
    "STEP_COMMANDS",
    "BreakpointRequest",
    "BreakpointUpdate",
    "Session",
    "SessionManager",
    "breakpoints",
    "session_view",
    "status_view",
    "watches",
]
