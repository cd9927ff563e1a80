"""Sessions: the manager, the session state machine, breakpoints and output."""

from debugrelay.models import SessionDocument

from . import _seals as seals
from . import _watches as watches
from . import breakpoints
from ._audit import AUDIT_KEPT, Audit
from ._feed import ChangeFeed
from ._files import SourceRoots, read_session_file, roots_for
from ._http import service_address, wait_listening
from ._leases import OwnerUnavailable
from ._manager import SessionManager
from ._runner_output import LEFT_OUT, without_runner_noise
from ._session import ACTIVE, CAPTURE_MARK, STEP_COMMANDS, RefMeta, Session, StopHook
from ._source import MAX_SOURCE_BYTES, read_source
from ._testruns import stops_on, test_runner
from ._trail import TRAIL_LENGTH, Trail, TrailEntry
from ._transfer import clone, export, import_session
from ._views import process_table, session_view, status_view
from .breakpoints import BreakpointRequest, BreakpointUpdate

__all__ = [
    "ACTIVE",
    "AUDIT_KEPT",
    "CAPTURE_MARK",
    "LEFT_OUT",
    "MAX_SOURCE_BYTES",
    "STEP_COMMANDS",
    "TRAIL_LENGTH",
    "Audit",
    "BreakpointRequest",
    "BreakpointUpdate",
    "ChangeFeed",
    "OwnerUnavailable",
    "RefMeta",
    "Session",
    "SessionDocument",
    "SessionManager",
    "SourceRoots",
    "StopHook",
    "Trail",
    "TrailEntry",
    "breakpoints",
    "clone",
    "export",
    "import_session",
    "process_table",
    "read_session_file",
    "read_source",
    "roots_for",
    "seals",
    "service_address",
    "session_view",
    "status_view",
    "stops_on",
    "test_runner",
    "wait_listening",
    "watches",
    "without_runner_noise",
]
