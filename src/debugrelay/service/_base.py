"""The operations an agent-facing adapter drives, whether the relay runs in this process or elsewhere,
each declared once here: its parameters (with their bounds), its answer, and how HTTP reaches it.

:class:`RelayService` answers them in this process; ``debugrelay.client.RemoteService`` answers the
same ones through a running relay's HTTP API, derived from these declarations like the API's routes.
Both return the same typed answers, so an MCP tool or a CLI command behaves the same whichever it is given.
"""

from __future__ import annotations

from debugrelay.models import CallRun

from .declared import (
    ActionOperations,
    BreakpointOperations,
    EvidenceOperations,
    InspectionOperations,
    SessionOperations,
    TraceOperations,
)


class DebugService(
    SessionOperations,
    BreakpointOperations,
    InspectionOperations,
    EvidenceOperations,
    TraceOperations,
    ActionOperations,
):
    """What the MCP tools, the CLI and the HTTP API ask for; every answer is a typed model."""

    def recall(self, session_id: str, key: str, value: str) -> str | None:
        """What answers about the session said last as ``key`` (None: nothing), ``value`` remembered now
        (by the relay that runs the actions; elsewhere nothing is)."""
        return None

    def first_said(self, session_id: str, key: str, value: str) -> bool:
        """Whether an answer about the session says ``key`` as ``value`` for the first time."""
        return self.recall(session_id, key, value) != value

    async def finished_calls(self, session_id: str, newest: int) -> tuple[list[CallRun], int, int]:
        """The ``newest`` finished calls of the session's traces with their runs, how many finished in all,
        and in which run of the session (see the relay's own service; elsewhere none are known)."""
        return [], 0, 0

    def unpersisted(self, session_id: str) -> bool:
        """Whether changes to the session wait for the state store (it was unreachable when made)."""
        return False

    async def close(self) -> None:
        """Release what the service holds."""
