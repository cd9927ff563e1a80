"""The one place answers leave the relay: every operation's answer and error passes through redaction.

At the service's gate (``_gate``), placeholders in what the agent sends (expressions, conditions,
logpoint messages, values, program input) are put back, the operation runs, and every string of its
answer (or of its error) is redacted against the session's table, all through the relay's
:class:`RedactionSeam` (``manager.redaction``).
"""

from __future__ import annotations

import inspect
from typing import Any

from debugrelay.errors import RelayError, SessionNotFound
from debugrelay.models import SessionList
from debugrelay.redaction import RedactionSeam

from ._wrapping import F

UNREDACTED = frozenset({"close", "redactions", "evidence"})  # evidence: redacted as its session's


async def redacted(seam: RedactionSeam, name: str, session_id: Any, bound: inspect.BoundArguments, fn: F) -> Any:
    """``fn`` called with ``bound``: placeholders in the arguments put back first, the answer or the error
    redacted against the session's table (the relay's, without a session)."""
    table = await seam.table(session_id) if isinstance(session_id, str) else seam.relay_table
    seam.inputs(bound.arguments, table)
    try:
        answer = await fn(*bound.args, **bound.kwargs)
    except RelayError as exc:
        if not isinstance(exc, SessionNotFound):
            seam.error(exc, table, name, bound.arguments)
            await seam.persist(session_id, table)
        raise
    if isinstance(answer, SessionList):
        return await _session_list(seam, answer, name)
    answer = await seam.answer(answer, table, name, bound.arguments)
    if name == "delete_session" and isinstance(session_id, str):
        seam.forget(session_id)  # the store forgot its table with the session
    else:
        await seam.persist(session_id, table)
    return answer


async def _session_list(seam: RedactionSeam, found: SessionList, where: str) -> SessionList:
    assert seam.redactor is not None
    sessions = []
    for summary in found.sessions:
        table = await seam.table(summary.session_id)
        sessions.append(seam.redactor.walk(summary, table, where))
        await seam.persist(summary.session_id, table)
    return SessionList(sessions=sessions, total=found.total)
