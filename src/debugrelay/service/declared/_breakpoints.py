"""The operations on breakpoints, exception breakpoints and breakpoint profiles."""

from __future__ import annotations

import abc
from collections.abc import Sequence

from debugrelay.models import (
    BreakpointList,
    BreakpointRequest,
    BreakpointsCleared,
    BreakpointUpdate,
    BreakpointView,
    Deleted,
    ExceptionFiltersView,
    Profile,
    ProfileApplied,
    ProfileList,
    ProfileSaved,
    runs_code,
)
from debugrelay.models.limits import (
    ExceptionFilter,
    ExceptionType,
)

from .._operations import declare

SESSION = "/sessions/{session_id}"


class BreakpointOperations(abc.ABC):
    """Breakpoints, exception breakpoints and profiles."""

    # -- breakpoints ---------------------------------------------------------------------------------

    @declare(
        "GET",
        SESSION + "/breakpoints",
        "All breakpoints with verification, hit counts and never-hit marks",
        tag="breakpoints",
    )
    @abc.abstractmethod
    async def breakpoints(self, session_id: str) -> BreakpointList:
        """The session's breakpoints with verification and hit counts."""

    @declare(
        "POST",
        SESSION + "/breakpoints",
        "Set one breakpoint, or several with a list (all or none)",
        tag="breakpoints",
        wire={"requests": "breakpoints"},
        routed=False,
        owner_when=lambda a: any(runs_code(r) for r in a.get("requests") or ()),
        current="new",
    )
    @abc.abstractmethod
    async def add_breakpoints(self, session_id: str, requests: list[BreakpointRequest]) -> list[BreakpointView]:
        """Set breakpoints, validated against the source first; all or none."""

    @declare(
        "GET", SESSION + "/breakpoints/{bp_id}", "One breakpoint", tag="breakpoints", wire={"breakpoint_id": "bp_id"}
    )
    @abc.abstractmethod
    async def breakpoint(self, session_id: str, breakpoint_id: str) -> BreakpointView:
        """One breakpoint with its verification and hit count."""

    @declare(
        "PATCH",
        SESSION + "/breakpoints/{bp_id}",
        "Change condition, hit condition, log message, enabled, line",
        tag="breakpoints",
        wire={"breakpoint_id": "bp_id"},
        body="change",
        owner_when=lambda a: runs_code(a.get("change")),
    )
    @abc.abstractmethod
    async def update_breakpoint(self, session_id: str, breakpoint_id: str, change: BreakpointUpdate) -> BreakpointView:
        """Change a breakpoint in place (what is not given stays)."""

    @declare(
        "DELETE",
        SESSION + "/breakpoints/{bp_id}",
        "Remove a breakpoint",
        tag="breakpoints",
        wire={"breakpoint_id": "bp_id"},
    )
    @abc.abstractmethod
    async def remove_breakpoint(self, session_id: str, breakpoint_id: str) -> Deleted:
        """Remove one breakpoint."""

    @declare("DELETE", SESSION + "/breakpoints", "Remove every breakpoint (capture points stay)", tag="breakpoints")
    @abc.abstractmethod
    async def clear_breakpoints(self, session_id: str) -> BreakpointsCleared:
        """Remove every breakpoint of the session at once; its capture points stay."""

    @declare(
        "POST",
        SESSION + "/exception-breakpoints",
        "Pause on raised/uncaught exceptions, optionally only of given types (and subclasses)",
        tag="breakpoints",
        named="ExceptionBreakpointsBody",
        current="new",
    )
    @abc.abstractmethod
    async def set_exception_breakpoints(
        self, session_id: str, filters: Sequence[ExceptionFilter] = (), exception_types: Sequence[ExceptionType] = ()
    ) -> ExceptionFiltersView:
        """Which exceptions pause the target."""

    @declare("GET", SESSION + "/exception-breakpoints", "Exception breakpoint filters in force", tag="breakpoints")
    @abc.abstractmethod
    async def exception_breakpoints(self, session_id: str) -> ExceptionFiltersView:
        """The exception filters in force."""

    @declare("GET", "/breakpoint-profiles", "Named breakpoint sets", tag="breakpoints")
    @abc.abstractmethod
    async def list_profiles(self) -> ProfileList:
        """The saved breakpoint profiles."""

    @declare("GET", "/breakpoint-profiles/{name}", "One named breakpoint set", tag="breakpoints")
    @abc.abstractmethod
    async def profile(self, name: str) -> Profile:
        """One saved breakpoint profile."""

    @declare(
        "POST",
        "/breakpoint-profiles",
        "Save a named breakpoint set (from a session, or given)",
        tag="breakpoints",
        status=201,
        wire={"requests": "breakpoints"},
        routed=False,
        access="create",
    )
    @abc.abstractmethod
    async def save_profile(
        self, name: str, *, session_id: str | None = None, requests: list[BreakpointRequest] | None = None
    ) -> ProfileSaved:
        """Save a session's breakpoints (or the given ones) under a name."""

    @declare("POST", SESSION + "/breakpoint-profiles/{name}/apply", "Set a profile's breakpoints", tag="breakpoints")
    @abc.abstractmethod
    async def apply_profile(self, session_id: str, name: str) -> ProfileApplied:
        """Set a saved profile's breakpoints in the session."""
