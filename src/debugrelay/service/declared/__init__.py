"""The service's operations, each declared once (see ``service/_operations.py``), in six sections."""

from ._actions import ActionOperations
from ._breakpoints import BreakpointOperations
from ._evidence import EvidenceOperations
from ._inspection import InspectionOperations
from ._sessions import SessionOperations
from ._traces import TraceOperations

__all__ = [
    "ActionOperations",
    "BreakpointOperations",
    "EvidenceOperations",
    "InspectionOperations",
    "SessionOperations",
    "TraceOperations",
]
