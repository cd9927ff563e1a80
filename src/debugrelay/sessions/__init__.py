"""Sessions: the manager, the session state machine, breakpoints and output."""

from . import _watches as watches
from . import breakpoints
from ._feed import ChangeFeed
from ._leases import OwnerUnavailable
from ._manager import SessionManager
from ._session import ACTIVE, CAPTURE_MARK, STEP_COMMANDS, RefMeta, Session, StopHook
from ._source import MAX_SOURCE_BYTES, read_source
from ._testruns import stops_on, test_runner
from ._transfer import SessionDocument, clone, export, import_session
from ._views import session_view, status_view
from .breakpoints import BreakpointRequest, BreakpointUpdate

__all__ = [
    "ACTIVE",
    "CAPTURE_MARK",
    "MAX_SOURCE_BYTES",
    "STEP_COMMANDS",
    "BreakpointRequest",
    "BreakpointUpdate",
    "ChangeFeed",
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
    "stops_on",
    "test_runner",
    "watches",
]
