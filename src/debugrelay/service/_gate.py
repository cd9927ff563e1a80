"""The one gate every operation of the relay's own service passes, its arguments bound once.

In order: the arguments are checked against the operation's declaration (the bounds the HTTP API also
enforces, so a call in process is refused as one over HTTP is); placeholders in them are put back, the
operation runs, and its answer or error is redacted (``_redaction``); an answer to a change the state
store has not taken yet says ``persisted: false``; the call is recorded in the agent's trail when an
adapter named it (``_trail``). Operations added later pass it without a line of their own; nested ones
(``wait`` asking ``autopsy``) pass it once, as the outermost.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
from typing import Any

import msgspec

from debugrelay import access
from debugrelay.errors import Forbidden, RelayError, SessionNotFound
from debugrelay.models import Answer

from . import _redaction, _trail
from ._base import DebugService
from ._operations import CURRENT, Current, Operation, declared
from ._wrapping import C, F, wrap_operations

_INSIDE: contextvars.ContextVar[bool] = contextvars.ContextVar("debugrelay_gated", default=False)


def _gate(name: str, fn: F, op: Operation | None) -> F:
    signature = inspect.signature(fn)
    by_session = "session_id" in signature.parameters
    check = op.check if op is not None else None
    redacted = name not in _redaction.UNREDACTED
    marks = op is not None and op.changes
    # an operation no interface declares is reached only through one that is (and judged there)
    kind: access.Access | None = op.access if op is not None else None
    owner_when = op.owner_when if op is not None else None
    what = name.replace("_", " ")
    current = op.current if op is not None else "latest"

    @functools.wraps(fn)
    async def gated(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _INSIDE.get():
            return await fn(self, *args, **kwargs)
        bound = signature.bind(self, *args, **kwargs)
        arguments = bound.arguments
        if by_session and arguments.get("session_id") == CURRENT:
            arguments["session_id"] = await _current(self, current)
        if check is not None:
            check(arguments)
        manager = self.manager
        session_id = arguments.get("session_id") if by_session else None
        entry = _trail.begin(name, arguments, by_session, audited=kind in ("drive", "owner", "create"))
        caller = access.current()
        if caller is not None and kind is not None:
            runs_code = owner_when is not None and owner_when(arguments)
            try:
                _authorize(manager, caller, "owner" if runs_code else kind, what, session_id)
            except Forbidden as exc:
                if entry is not None:  # a refusal is kept in the audit trail, whatever was asked
                    entry.audited = True
                    await _trail.failed(manager, entry, session_id, exc)
                raise
        token = _INSIDE.set(redacted)  # one left unredacted (evidence) lets the operation it asks be redacted
        try:
            if redacted and manager.redaction.enabled:
                answer = await _redaction.redacted(manager.redaction, name, session_id, bound, fn)
            else:
                answer = await fn(*bound.args, **bound.kwargs)
        except RelayError as exc:  # redacted by then
            if entry is not None:
                await _trail.failed(manager, entry, session_id, exc)
            raise
        finally:
            _INSIDE.reset(token)
        sid = session_id if isinstance(session_id, str) else getattr(answer, "session_id", None)
        if marks and isinstance(answer, Answer) and isinstance(sid, str) and self.unpersisted(sid):
            answer = msgspec.structs.replace(answer, persisted=False)
        if entry is not None:
            await _trail.done(manager, entry, sid, answer)
        return answer

    return gated  # type: ignore[return-value]


async def _current(service: Any, mode: Current) -> str:
    """The session ``current`` names for this caller: the newest one they made (on a relay without
    credentials, the newest one), else, for ``mode`` ``new``, one made now; else :class:`SessionNotFound`.
    One rule for every interface, decided here: a client never lists sessions to find it."""
    caller = access.current()
    mine = [s for s in await service.manager.list_all() if caller is None or s.record.created_by == caller.name]
    if mine:
        newest: str = max(mine, key=lambda s: s.record.created_at).id
        return newest
    if mode == "new":
        made: str = (await service.create_session()).session_id  # through the gate: a create, judged as one
        return made
    raise SessionNotFound("there is no debug session yet", details={"session_id": CURRENT})


def _authorize(manager: Any, caller: access.Caller, kind: access.Access, what: str, session_id: Any) -> None:
    """The caller's role and the session's owner allow the operation (``access._rules``), or it is refused
    before anything runs. A session this relay does not hold is left to the operation to report; one not
    about a session is judged by the role alone."""
    if session_id is None or kind == "admin":
        access.authorize(caller, kind, what, created_by=caller.name)
        return
    session = manager.sessions.get(session_id) if isinstance(session_id, str) else None
    if session is not None:
        record = session.record
        access.authorize(caller, kind, what, created_by=record.created_by, shares=record.shared_with)


def gated(cls: C) -> C:
    """Every public ``async def`` of ``cls`` passes the gate (see the module's docstring)."""
    ops = declared(DebugService)
    # an action is not gated itself: each operation it asks passes the gate as the caller's own request
    return wrap_operations(cls, lambda name, fn: _gate(name, fn, ops.get(name)), frozenset({"close", "act"}))
