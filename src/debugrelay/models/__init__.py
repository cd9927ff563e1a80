"""msgspec Structs of the public API and of the records the state store keeps."""

from ._base import Input, Model
from ._launch import LaunchRequest, PathMapping, ResourceLimits, StopOnException
from ._session import (
    AttachSpec,
    BreakpointRecord,
    ExceptionFilters,
    ExceptionInfo,
    Location,
    OutputEntry,
    SessionRecord,
    SessionStatus,
    Stop,
    StoppedThread,
    Watch,
)

__all__ = [
    "AttachSpec",
    "BreakpointRecord",
    "ExceptionFilters",
    "ExceptionInfo",
    "Input",
    "LaunchRequest",
    "Location",
    "Model",
    "OutputEntry",
    "PathMapping",
    "ResourceLimits",
    "SessionRecord",
    "SessionStatus",
    "Stop",
    "StopOnException",
    "StoppedThread",
    "Watch",
]
