"""The plain reads of a paused target: threads, stack, scopes, variables, evaluate, set, completions.

Each reads through the session (one DAP request per stop for what does not change) and answers
with the typed model the API, MCP and the CLI show.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from debugrelay.dap import CompletionsBody, EvaluateBody, ScopesBody, SetVariableBody, Source, ThreadsBody, as_body
from debugrelay.errors import DebugpyError, EvaluationError, InvalidReference
from debugrelay.models import (
    Completion,
    EvaluateResult,
    FrameView,
    Scopes,
    ScopeView,
    SetVariableResult,
    StackTrace,
    Threads,
    ThreadView,
    VariablesPage,
)
from debugrelay.sessions import RefMeta

from ._probe import last_line
from ._render import render_variables

if TYPE_CHECKING:
    from debugrelay.sessions import Session


async def threads(session: Session) -> Threads:
    """The target's threads; while paused, which are stopped and which one is current."""
    body = as_body(await session.require_client().request("threads"), ThreadsBody)
    stop = session.record.stop
    paused = session.status == "paused"
    found = []
    for thread in body.threads:
        tid = thread.id
        view = ThreadView(id=tid, name=thread.name or None, state="running")
        if paused and stop is not None:
            view.state = "stopped" if stop.all_threads_stopped or stop.thread_id == tid else "running"
            view.is_current = stop.thread_id == tid
        found.append(view)
    session.remember_threads({t.id: t.name or "" for t in found})
    return Threads(threads=found)


async def stacktrace(session: Session, thread_id: int | None, start: int, count: int) -> StackTrace:
    """Frames ``start .. start+count`` of a paused thread; ids are indexes (0 = top)."""
    tid, frames, total = await session.frames(thread_id, start + count)
    views = []
    for index, frame in enumerate(frames[start : start + count], start=start):
        source = frame.source or Source()
        path = source.path
        view = FrameView(id=index, name=frame.name, file=session.to_local(path) or source.name, line=frame.line)
        if not path or source.source_reference:
            view.source_available = False
        if frame.presentation_hint == "subtle" or is_library(path):
            view.is_external = True
        views.append(view)
    return StackTrace(thread_id=tid, total_frames=total, frames=views)


async def scopes(session: Session, index: int, thread_id: int | None = None) -> Scopes:
    session.require_paused()
    fid = await session.frame_id(index, thread_id)
    body = as_body(await session.read("scopes", {"frameId": fid}), ScopesBody)
    found = []
    for scope in body.scopes:
        ref = scope.variables_reference
        session.remember_ref(ref, RefMeta(frame_id=fid, evaluate_name=None, chain=()))
        found.append(ScopeView(name=scope.name or None, reference=ref))
    return Scopes(scopes=found)


async def variables(session: Session, ref: int, start: int = 0, count: int | None = None) -> VariablesPage:
    """Children of ``ref``, rendered compactly, paged by ``start``/``count``."""
    return msgspec.convert(await variables_raw(session, ref, start, count), VariablesPage)


async def variables_raw(session: Session, ref: int, start: int = 0, count: int | None = None) -> dict[str, Any]:
    """:func:`variables` as plain data, for the inspections that add to each variable."""
    session.require_paused()
    if ref <= 0:
        raise InvalidReference(f"variable reference {ref} is not valid", details={"reference": ref})
    try:
        body = await session.read("variables", {"variablesReference": ref})
    except DebugpyError as exc:
        raise InvalidReference(
            f"variable reference {ref} is not valid at this stop", details={"reference": ref}
        ) from exc
    return await render_variables(session, ref, body.get("variables", []), start, count)


async def evaluate(
    session: Session, expression: str, frame_index: int | None = 0, context: str = "repl", thread_id: int | None = None
) -> EvaluateResult:
    """An expression's value in a frame; a long repr is cut (``truncated``), an object gets a reference."""
    client = session.require_paused()
    fid = await session.frame_id(frame_index or 0, thread_id)
    session.invalidate_reads()  # an expression may change what the stop's variables show
    try:
        answer = await client.request("evaluate", {"expression": expression, "frameId": fid, "context": context})
    except DebugpyError as exc:
        raise EvaluationError(
            last_line(exc.message), details={"expression": expression, "frame_id": frame_index or 0}
        ) from exc
    body = as_body(answer, EvaluateBody)
    result = EvaluateResult(result=body.result, type=body.type or None)
    ref = body.variables_reference
    if ref:
        session.remember_ref(ref, RefMeta(frame_id=fid, evaluate_name=expression, chain=()))
        result.variable_reference, result.expandable = ref, True
    limit = session.settings.value_max_chars * 10
    if len(result.result) > limit:
        result.result, result.truncated = result.result[:limit] + "...", True
    return result


async def set_variable(session: Session, ref: int, name: str, value: str) -> SetVariableResult:
    client = session.require_paused()
    session.invalidate_reads()
    try:
        answer = await client.request("setVariable", {"variablesReference": ref, "name": name, "value": value})
    except DebugpyError as exc:
        raise EvaluationError(exc.message, details={"reference": ref, "name": name, "value": value}) from exc
    body = as_body(answer, SetVariableBody)
    return SetVariableResult(name=name, value=body.value, type=body.type)


async def completions(session: Session, text: str, column: int | None, frame_index: int | None) -> list[Completion]:
    client = session.require_paused()
    fid = await session.frame_id(frame_index or 0)
    answer = await client.request("completions", {"text": text, "column": column or len(text) + 1, "frameId": fid})
    return [Completion(label=t.label or None, type=t.type or None) for t in as_body(answer, CompletionsBody).targets]


def is_library(path: str | None) -> bool:
    return bool(path) and ("site-packages" in str(path) or "/lib/python3" in str(path) or "<frozen" in str(path))
