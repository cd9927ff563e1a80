"""The plain reads of a paused target: threads, stack, scopes, variables, evaluate, set, completions.

Each reads through the session (one DAP request per stop for what does not change) and answers
with the typed model the API, MCP and the CLI show.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from debugrelay.dap import CompletionsBody, EvaluateBody, ScopesBody, SetVariableBody, Source, ThreadsBody, as_body
from debugrelay.errors import DebugpyError, EvaluationError, InvalidReference, RelayError
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
    cut_text,
    is_cut,
)
from debugrelay.sessions import RefMeta

from ._probe import NOT_PYTHON, is_syntax_error, last_line, raised_at
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


async def stacktrace(
    session: Session, thread_id: int | None, start: int, count: int, *, library: bool = False
) -> StackTrace:
    """Frames ``start .. start+count`` of a paused thread; ids are indexes (0 = top). Runs of library
    frames are folded into their first one (``collapsed``, ``through``) unless ``library``; so are runs
    of one function calling itself (``repeated``, with the first and last call's ``arguments``), read to
    the run's end even past ``count``. From the top, the outermost frames come too (``left_out`` says
    which frames between are not shown)."""
    tid, frames, total = await session.frames(thread_id, start + count)
    end = min(len(frames), start + count)
    if not library:
        while 0 < end < len(frames) and _same_call(frames[end - 1], frames[end]):
            end += 1  # a recursion is shown whole: its first and last calls tell it apart
            if end == len(frames) < total:
                tid, frames, total = await session.frames(tid, min(total, MAX_FRAMES))
    views = [_frame_view(session, index, frame) for index, frame in enumerate(frames[start:end], start=start)]
    if library:
        return StackTrace(thread_id=tid, total_frames=total, frames=views)
    shown = await fold_recursion(session, tid, fold_library(views))
    if end >= total or start > 0:  # the whole stack, or a page asked for from further down
        return StackTrace(thread_id=tid, total_frames=total, frames=shown)
    # the innermost frames end with the ones that started it all (the test, the module), the gap said
    if len(frames) < total:
        tid, frames, total = await session.frames(tid, min(total, MAX_FRAMES))
    outer_from = max(end, len(frames) - OUTERMOST)
    outer = [_frame_view(session, i, frames[i]) for i in range(outer_from, len(frames))]
    answer = StackTrace(thread_id=tid, total_frames=total, frames=shown)
    if outer_from > end:
        answer.left_out = (
            f"frames {end}-{outer_from - 1} ({outer_from - end}) left out between these and the outermost: "
            f"read them from start={end}"
        )
    answer.frames += await fold_recursion(session, tid, fold_library(outer))
    return answer


def _frame_view(session: Session, index: int, frame: Any) -> FrameView:
    source = frame.source or Source()
    path = source.path
    view = FrameView(id=index, name=frame.name, file=session.to_local(path) or source.name, line=frame.line)
    if not path or source.source_reference:
        view.source_available = False
    if frame.presentation_hint == "subtle" or is_library(path):
        view.is_external = True
    return view


def _same_call(a: Any, b: Any) -> bool:
    return bool(a.name == b.name and a.source and b.source and a.source.path == b.source.path)


MAX_FRAMES = 10000  # a recursion is read to its end up to this depth
OUTERMOST = 3  # the outermost frames a stack answer always shows: what called the code it stopped in
RECURSION_RUN = 3  # at least this many consecutive calls of one function are folded into one entry
ARGUMENT_CHARS = 40


async def fold_recursion(session: Session, tid: int, views: list[FrameView]) -> list[FrameView]:
    """Runs of one function calling itself as one entry: ``repeated`` calls from this one ``through`` the
    last, each end with its ``arguments`` (what tells the calls apart)."""
    out: list[FrameView] = []
    i = 0
    while i < len(views):
        j = i
        while j + 1 < len(views) and views[j + 1].name == views[i].name and views[j + 1].file == views[i].file:
            j += 1
        if j - i + 1 < RECURSION_RUN or views[i].collapsed:
            out.append(views[i])
            i += 1
            continue
        first, last = views[i], views[j]
        folded = msgspec.structs.replace(first, repeated=j - i + 1)
        folded.through = f"{last.id} {last.name} {Path(last.file or '?').name}:{last.line}"
        folded.arguments = await _arguments(session, first.id, tid)
        folded.last_arguments = await _arguments(session, last.id, tid)
        out.append(folded)
        i = j + 1
    return out


async def _arguments(session: Session, index: int, tid: int) -> str | None:
    """``n=3, node='a'``: a frame's arguments with short values; None when they cannot be read."""
    from ._variables import argument_names, children, scope_refs

    try:
        fid = await session.frame_id(index, tid)
        names = await argument_names(session, fid)
        local = (await scope_refs(session, fid)).get("Locals")
        if names is None or not local:
            return None
        values = {v["name"]: str(v.get("value", "")) for v in (await children(session, local))["variables"]}
    except RelayError:
        return None
    parts = []
    for name in names:
        value = values.get(name, "?")
        parts.append(f"{name}={cut_text(value, ARGUMENT_CHARS)}")
    return ", ".join(parts)


def fold_library(views: list[FrameView]) -> list[FrameView]:
    """Runs of two or more library frames as one entry: a failing test's stack is the test over ~40
    pytest, pluggy and runpy frames."""
    out: list[FrameView] = []
    run: list[FrameView] = []
    for view in [*views, None]:
        if view is not None and view.is_external:
            run.append(view)
            continue
        if len(run) > 1:  # one library frame is shown as it is
            last = run[-1]
            first = msgspec.structs.replace(run[0], collapsed=len(run))
            first.through = f"{last.id} {last.name} {Path(last.file or '?').name}:{last.line}"
            out.append(first)
        else:
            out.extend(run)
        run = []
        if view is not None:
            out.append(view)
    return out


async def scopes(session: Session, index: int, thread_id: int | None = None) -> Scopes:
    session.require_paused()
    fid = await session.frame_id(index, thread_id)
    body = as_body(await session.read("scopes", {"frameId": fid}, stable=True), ScopesBody)
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
        details: dict[str, Any] = {"expression": expression, "frame_index": frame_index or 0}
        if is_syntax_error(exc.message):
            raise EvaluationError(last_line(exc.message), details=details, hint=NOT_PYTHON) from exc
        message, where = last_line(exc.message), raised_at(exc.message)
        if where is not None:  # a call the expression made raised in the program's code: say where
            where["file"] = session.to_local(where["file"]) or where["file"]
            details["raised_at"] = where
            message += f" (raised at {where['file']}:{where['line']}" + (
                f" in {where['function']})" if "function" in where else ")"
            )
        raise EvaluationError(message, details=details) from exc
    body = as_body(answer, EvaluateBody)
    result = EvaluateResult(result=body.result, type=body.type or None)
    if not body.result and not body.type and _is_expression(expression):
        # in the "repl" context debugpy answers an expression whose value is None with nothing at all,
        # as a console prints nothing; a statement (exec'd) answers the same and stays empty
        result.result, result.type = "None", "NoneType"
    ref = body.variables_reference
    if ref:
        session.remember_ref(ref, RefMeta(frame_id=fid, evaluate_name=expression, chain=()))
        result.variable_reference, result.expandable = ref, True
    limit = session.settings.value_max_chars * 10
    if len(result.result) > limit:
        result.result, result.truncated = cut_text(result.result, limit), True
    elif is_cut(result.result):
        result.truncated = True
    return result


def _is_expression(source: str) -> bool:
    try:
        compile(source, "<expression>", "eval")
    except (SyntaxError, ValueError):
        return False
    return True


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
