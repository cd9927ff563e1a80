"""The operations an agent-facing adapter drives, whether the relay runs in this process or elsewhere,
each declared once here: its parameters (with their bounds), its answer, and how HTTP reaches it.

:class:`RelayService` answers them in this process; ``debugrelay.client.RemoteService`` answers the
same ones through a running relay's HTTP API, derived from these declarations like the API's routes.
Both return the same typed answers, so an MCP tool or a CLI command behaves the same whichever it is given.
"""

from __future__ import annotations

from .declared import (
    BreakpointOperations,
    EvidenceOperations,
    InspectionOperations,
    SessionOperations,
    TraceOperations,
)


class DebugService(SessionOperations, BreakpointOperations, InspectionOperations, EvidenceOperations, TraceOperations):
    """What the MCP tools, the CLI and the HTTP API ask for; every answer is a typed model."""

    def unpersisted(self, session_id: str) -> bool:
        """Whether changes to the session wait for the state store (it was unreachable when made)."""
        return False

    async def close(self) -> None:
        """Release what the service holds."""
