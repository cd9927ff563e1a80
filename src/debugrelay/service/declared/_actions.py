"""An agent's action in one call: the MCP tools and the CLI's commands, run by the relay."""

from __future__ import annotations

import abc
from typing import Annotated, Any

import msgspec

from .._operations import declare

ActionName = Annotated[str, msgspec.Meta(pattern="^[a-z][a-z_]{0,39}$", description="An MCP tool's name")]


class ActionOperations(abc.ABC):
    """What an agent does in one step, as one request (``service/actions``)."""

    @declare(
        "POST",
        "/agent/{action}",
        "An agent's action in one call: an MCP tool by name (debug_launch, debug_step_over, debug_evaluate, ...),"
        " its arguments the body; answers what the tool answers",
        tag="agent",
        body="arguments",
        access="read",
        named="ActionArguments",
    )
    @abc.abstractmethod
    async def act(self, action: ActionName, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run ``action`` with ``arguments`` (a session id of ``current`` or none: the caller's newest
        session). Each operation it asks passes the gate on its own: access, redaction, the trail."""
