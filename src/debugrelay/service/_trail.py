"""Recording the agent's trail: the last calls made on each session, for a person watching (``/ui``).

An adapter names the call it is serving (``POST /sessions/…/step``, ``tool debug_step_over``) with
:func:`calling`; the first session operation that call runs is recorded with its main arguments and a
one-line result, after redaction (at the service's gate, ``_gate``), in the manager's
:class:`Trail` (``manager.trail``). Calls nobody named (the view's own reads, in-process use) are not
recorded.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

import msgspec

from debugrelay import access
from debugrelay.errors import RelayError
from debugrelay.models import (
    AuditEntry,
    BreakpointList,
    ChildrenPage,
    Deleted,
    EvaluateResult,
    OutputPage,
    ScopedVariables,
    SourceText,
    StackTrace,
    Status,
    VariablesPage,
    WatchValue,
)
from debugrelay.sessions import TRAIL_LENGTH, SessionManager, Trail, TrailEntry

from ._calling import _CALL, calling

__all__ = ["TRAIL_LENGTH", "Trail", "TrailEntry", "begin", "calling", "clip", "done", "failed", "summary"]

CLIP = 80  # characters of an argument or a result; longer ones end in '…'


def clip(text: str, limit: int = CLIP) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _where(status: Status) -> str:
    loc = status.location
    if loc is None or loc.file is None:
        return ""
    return f" at {loc.file.rsplit('/', 1)[-1]}:{loc.line}"


def summary(answer: Any) -> str:
    """One line a person reads at a glance."""
    if isinstance(answer, Status):
        if answer.timed_out:
            return answer.message or "still running"
        text = answer.status + _where(answer)
        if answer.status == "paused" and answer.reason:
            text += f" ({answer.reason})"
        if answer.status == "terminated" and isinstance(answer.exit_code, int):
            text += f" (exit {answer.exit_code})"
        return text
    if isinstance(answer, EvaluateResult):
        return "= " + answer.result
    if isinstance(answer, WatchValue):
        return "= " + (answer.result if answer.result is not None else answer.error or "unavailable")
    if isinstance(answer, VariablesPage | ScopedVariables):
        return f"{answer.total} variables"
    if isinstance(answer, ChildrenPage):
        return f"{answer.total} items"
    if isinstance(answer, StackTrace):
        return f"{answer.total_frames} frames"
    if isinstance(answer, OutputPage):
        return f"{len(answer.outputs)} output lines"
    if isinstance(answer, BreakpointList):
        return f"{len(answer.breakpoints)} breakpoints"
    if isinstance(answer, SourceText):
        return f"lines {answer.start}-{answer.end}"
    if isinstance(answer, Deleted):
        return "deleted"
    if isinstance(answer, list):
        return f"{len(answer)} set"
    return "ok"


def _detail(arguments: dict[str, Any]) -> str:
    parts = []
    for name in ("command", "expression", "object_ref", "path", "line", "name", "value", "text", "reference"):
        value = arguments.get(name)
        if value is not None and value != "":
            parts.append(f"{value}" if name in ("command", "expression", "object_ref") else f"{name}={value}")
    requests = arguments.get("requests")
    if isinstance(requests, list):
        parts.extend(_breakpoint(r) for r in requests)
    return " ".join(parts)


def _breakpoint(request: Any) -> str:
    source = getattr(request, "source", None)
    path = getattr(request, "file", None) or getattr(request, "path", None) or getattr(source, "path", None)
    if path:
        where = f"{str(path).rsplit('/', 1)[-1]}:{getattr(request, 'line', '')}"
    else:
        where = str(getattr(request, "function", None) or "?")
    condition = getattr(request, "condition", None)
    return f"{where} if {condition}" if condition else where


def begin(name: str, arguments: dict[str, Any], by_session: bool, *, audited: bool = False) -> TrailEntry | None:
    """The trail's entry for this call, when an adapter named it and it is the first operation that call
    runs on a session, or one it changes or evaluates something in (None otherwise)."""
    call = _CALL.get()
    if call is None or call.recorded or not (by_session or name == "create_session" or audited):
        return None
    call.recorded = True
    caller = access.current()
    return TrailEntry(
        at=time.time(),
        call=call.label,
        operation=name,
        detail=_detail(arguments),
        who=caller.name if caller is not None else None,
        role=caller.role if caller is not None else None,
        audited=audited,
    )


async def failed(manager: SessionManager, entry: TrailEntry, session_id: Any, exc: RelayError) -> None:
    entry.ok, entry.result = False, f"{exc.code}: {exc.message}"  # already redacted by the service
    await _record(manager, session_id if isinstance(session_id, str) else None, entry)


async def done(manager: SessionManager, entry: TrailEntry, session_id: Any, answer: Any) -> None:
    entry.result = summary(answer)
    await _record(manager, session_id if isinstance(session_id, str) else None, entry)


async def _record(manager: SessionManager, session_id: str | None, entry: TrailEntry) -> None:
    seam = manager.redaction
    if seam.redactor is not None and session_id in manager.sessions:
        # what the agent sent may hold a literal secret: shown to people, it is redacted like an answer
        assert session_id is not None
        table = await seam.table(session_id)
        entry.detail = seam.redactor.text(entry.detail, table, "trail")
        with contextlib.suppress(RelayError):
            await seam.persist(session_id, table)
    entry.detail, entry.result = clip(entry.detail), clip(entry.result)
    if session_id is not None:
        manager.trail.add(session_id, entry)
    if entry.audited:
        fields = msgspec.structs.asdict(entry)
        del fields["audited"]
        await manager.audit.record(AuditEntry(session_id=session_id, **fields))
