"""How an agent action is declared: a method of an :class:`ActionGroup` marked with :func:`action`, its
arguments (with their descriptions and bounds) the method's signature, its answer one JSON object.

The relay runs every action in one call (``DebugService.act``: ``POST /agent/{action}``); the MCP tools
and the CLI's commands are derived from these declarations, so each interface says the same thing and
an agent's action is one request to the relay.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from pydantic import Field

from .. import policy
from .._base import DebugService
from ._events import Stops

# The tool list is read by a model in every conversation (bench/tool_list.py measures it): a
# description says what the name does not, once. The arguments every action shares are described
# once, in the MCP server's instructions (SHARED names them), and carry no description of their own.
SHARED = ("session_id", "thread_id", "frame_index", "timeout", "locals", "library")
SessionId = Annotated[str | None, Field()]
ThreadId = Annotated[int | None, Field()]
FrameIndex = Annotated[int, Field(ge=0)]
WithLocals = bool
ContinueTimeout = Annotated[float, Field(ge=0, le=300)]
StepTimeout = ContinueTimeout
LibraryFrames = bool
ActionFn = Callable[..., Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class ActionSpec:
    """What the tool list says of an action besides its signature and docstring."""

    name: str
    read_only: bool  # annotated readOnlyHint: it changes nothing in the program or the session
    core: bool  # one of the debugger's tools (the evidence tools are not)
    marks_unpersisted: bool  # its answer says "persisted": false while the state store lags the session


_SPEC = "__debugrelay_action__"
F = TypeVar("F", bound=ActionFn)


def action(*, read_only: bool = False, core: bool = True, marks_unpersisted: bool | None = None) -> Callable[[F], F]:
    """Declare an :class:`ActionGroup` method an action named after it. ``marks_unpersisted`` defaults to
    whether it changes anything (not ``read_only``)."""

    def mark(fn: F) -> F:
        marks = not read_only if marks_unpersisted is None else marks_unpersisted
        setattr(fn, _SPEC, ActionSpec(fn.__name__, read_only, core, marks))
        return fn

    return mark


class ActionGroup:
    """Actions over one service, each a method marked with :func:`action`, in the order they are defined."""

    def __init__(self, backend: DebugService, stops: Stops) -> None:
        self.backend = backend
        self.stops = stops

    async def _sid(self, session_id: str | None) -> str:
        return await policy.session_or_latest(self.backend, session_id)

    async def _sid_or_new(self, session_id: str | None) -> str:
        return await policy.session_or_new(self.backend, session_id)

    @classmethod
    def specs(cls) -> list[tuple[ActionSpec, ActionFn]]:
        """Each action's metadata and its (unbound) body."""
        found = []
        for member in vars(cls).values():
            spec = getattr(member, _SPEC, None)
            if isinstance(spec, ActionSpec):
                found.append((spec, member))
        return found
