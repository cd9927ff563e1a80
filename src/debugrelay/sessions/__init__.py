"""Sessions: the manager, the session state machine, breakpoints and output."""

from . import _watches as watches
from . import breakpoints
from ._leases import OwnerUnavailable
from ._manager import SessionManager
from ._session import ACTIVE, STEP_COMMANDS, RefMeta, Session, StopHook
from ._source import read_source
from ._transfer import SessionDocument, clone, export, import_session
from ._views import session_view, status_view
from .breakpoints import BreakpointRequest, BreakpointUpdate

__all__ = [
    "ACTIVE",
    "STEP_COMMANDS",
    "BreakpointRequest",
    "BreakpointUpdate",
    "OwnerUnavailable",
    "RefMeta",
    "Session",
    "SessionDocument",
    "SessionManager",
    "StopHook",
    "breakpoints",
    "clone",
    "export",
    "import_session",
    "read_source",
    "session_view",
    "status_view",
    "watches",
]
