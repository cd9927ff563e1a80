"""The relay's operations through its HTTP API: the same typed answers as in process.

Every declared operation (``service/_operations.py``) is derived: its arguments bound to its signature and
checked against it, sent as its declaration says, its answer decoded into its answer type. Only what HTTP
words differently is written here.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import msgspec

from debugrelay.errors import ApiError
from debugrelay.models import (
    BreakpointList,
    BreakpointRequest,
    BreakpointView,
    SessionDetail,
    SourceText,
)
from debugrelay.service import DebugService
from debugrelay.service._operations import Operation, declared

from ._client import AsyncRelayClient, request_for, wire

T = TypeVar("T")


class RemoteService(DebugService):
    """A running relay (``debugrelay mcp --url URL``, the CLI); errors arrive as :class:`ApiError`."""

    def __init__(self, client: AsyncRelayClient) -> None:
        self.client = client
        self.waiting: set[str] = set()  # sessions whose last change was answered "persisted": false

    def unpersisted(self, session_id: str) -> bool:
        """What the relay's last answer to a change of the session said: made, not yet in the state store."""
        return session_id in self.waiting

    def noted(self, op: Operation, session_id: Any, answer: T) -> T:
        """``answer`` to ``op``, its word on persistence remembered for the session."""
        sid = session_id if isinstance(session_id, str) else getattr(answer, "session_id", None)
        if op.changes and isinstance(sid, str):
            if getattr(answer, "persisted", None) is False:
                self.waiting.add(sid)
            else:
                self.waiting.discard(sid)
        return answer

    async def create_session(self, **arguments: Any) -> SessionDetail:
        """As declared; the API takes an attach spec's fields at the top of the body, with ``mode``."""
        op = _OPS["create_session"]
        op.check(arguments)
        path, _, body = request_for(op, arguments)
        attach = body.pop("attach", None)
        if attach is not None:
            body.update(mode="attach", **{k: v for k, v in attach.items() if v is not None})
        found = msgspec.convert(await self.client._call("POST", path, json=body), SessionDetail)
        return self.noted(op, None, found)

    async def add_breakpoints(self, session_id: str, requests: list[BreakpointRequest]) -> list[BreakpointView]:
        body = {"breakpoints": [wire(r) for r in requests]}  # the list form answers a list
        found = msgspec.convert(
            await self.client._call("POST", f"/sessions/{session_id}/breakpoints", json=body), BreakpointList
        )
        self.noted(_OPS["add_breakpoints"], session_id, found)
        return found.breakpoints

    async def source_line(self, session_id: str, path: str, line: int) -> str | None:
        try:
            found: SourceText = await self.source(session_id, path, line, line)
        except ApiError:  # the line is a courtesy: never fail a stop report for it
            return None
        return found.content.rstrip("\n") if found.content else None

    async def close(self) -> None:
        await self.client.aclose()


def _remote(op: Operation) -> Callable[..., Awaitable[Any]]:
    """``op`` through the relay's HTTP API."""
    assert op.fn is not None
    signature = inspect.signature(op.fn)

    async def call(self: RemoteService, *args: Any, **kwargs: Any) -> Any:
        arguments = signature.bind(self, *args, **kwargs).arguments
        op.check(arguments)  # refused here as the relay would refuse it
        answer = msgspec.convert(await self.client.call(op, arguments), op.answer)
        return self.noted(op, arguments.get("session_id"), answer)

    call.__name__ = call.__qualname__ = op.name
    call.__doc__ = op.fn.__doc__
    return call


_OPS = declared(DebugService)
for _name, _op in _OPS.items():
    if _name not in vars(RemoteService):
        setattr(RemoteService, _name, _remote(_op))
RemoteService.__abstractmethods__ = frozenset()
