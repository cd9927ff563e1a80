"""The one place answers leave the relay: every operation's answer and error passes through redaction.

``redacting`` wraps each public operation of a service class: placeholders in what the agent sends
(expressions, conditions, logpoint messages, values, program input) are put back, the operation runs,
and every string of its answer (or of its error) is redacted against the session's table, all through
the relay's :class:`RedactionSeam` (``manager.redaction``). Operations added later are covered without
a line of their own. Nested calls (``wait`` asking ``autopsy``) are redacted once, by the outermost.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
from typing import Any

from debugrelay.errors import RelayError, SessionNotFound
from debugrelay.models import SessionList
from debugrelay.redaction import RedactionSeam

from ._wrapping import C, F, wrap_operations

_INSIDE: contextvars.ContextVar[bool] = contextvars.ContextVar("debugrelay_redacting", default=False)
_UNWRAPPED = frozenset({"close", "redactions", "evidence"})  # evidence: redacted as its session's


def _wrap(name: str, fn: F) -> F:
    signature = inspect.signature(fn)
    by_session = "session_id" in signature.parameters

    @functools.wraps(fn)
    async def redacted(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _INSIDE.get():
            return await fn(self, *args, **kwargs)
        seam: RedactionSeam = self.manager.redaction
        if not seam.enabled:
            return await fn(self, *args, **kwargs)
        bound = signature.bind(self, *args, **kwargs)
        session_id = bound.arguments.get("session_id") if by_session else None
        table = await seam.table(session_id) if isinstance(session_id, str) else seam.relay_table
        seam.inputs(bound.arguments, table)
        token = _INSIDE.set(True)
        try:
            answer = await fn(*bound.args, **bound.kwargs)
        except RelayError as exc:
            if not isinstance(exc, SessionNotFound):
                seam.error(exc, table, name, bound.arguments)
                await seam.persist(session_id, table)
            raise
        finally:
            _INSIDE.reset(token)
        if isinstance(answer, SessionList):
            return await _session_list(seam, answer, name)
        answer = await seam.answer(answer, table, name, bound.arguments)
        if name == "delete_session" and isinstance(session_id, str):
            seam.forget(session_id)  # the store forgot its table with the session
        else:
            await seam.persist(session_id, table)
        return answer

    return redacted  # type: ignore[return-value]


async def _session_list(seam: RedactionSeam, found: SessionList, where: str) -> SessionList:
    assert seam.redactor is not None
    sessions = []
    for summary in found.sessions:
        table = await seam.table(summary.session_id)
        sessions.append(seam.redactor.walk(summary, table, where))
        await seam.persist(summary.session_id, table)
    return SessionList(sessions=sessions, total=found.total)


def redacting(cls: C) -> C:
    """Every public ``async def`` of ``cls`` answers through redaction (see the module's docstring)."""
    return wrap_operations(cls, _wrap, _UNWRAPPED)
