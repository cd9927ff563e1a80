"""Reads of the current stop: its threads, frames and read-only probe evaluations (the inspection part of
:class:`Session`). Kept once per stop in the session, so every read of a stop answers from the same frames."""

from __future__ import annotations

import ast
import contextlib
from typing import TYPE_CHECKING

from debugrelay.dap import StackFrame, StackTraceBody, as_body
from debugrelay.errors import DebugpyError, InvalidReference, InvalidRequest, ThreadNotFound

if TYPE_CHECKING:
    from ._session import Session

# how `python -m debugpy` started the program: the standard library's runpy under its first frame (on 3.11+
# frozen, and so unseen, until frozen modules were turned off for the debugger's sake)
_LAUNCH_FRAMES = frozenset({"_run_module_as_main", "_run_code"})
_CHAINED = "[Chained Exc:"  # debugpy's pseudo-frames of chained tracebacks: after the stack's last frame


def _launching(frame: StackFrame) -> bool:
    path = (frame.source.path if frame.source else None) or ""
    return frame.name in _LAUNCH_FRAMES and path.endswith("/runpy.py") and "-packages" not in path


def without_launch_frames(frames: list[StackFrame], total: int) -> tuple[list[StackFrame], int]:
    """``frames`` (and the stack's ``total``) without the runpy frames that started the program under the
    debugger, when the bottom of the stack is among them."""
    end = next((i for i, f in enumerate(frames) if f.name.startswith(_CHAINED)), len(frames))
    if end == len(frames) and len(frames) < total:
        return frames, total  # the bottom was not read
    start = end
    while start > 1 and _launching(frames[start - 1]):
        start -= 1
    return [*frames[:start], *frames[end:]], total - (end - start)


async def frames(session: Session, thread_id: int | None = None, levels: int = 0) -> tuple[int, list[StackFrame], int]:
    """(thread_id, DAP frames, total) for a paused thread, fetched once per stop."""
    client = session.require_paused()
    stop = session.record.stop
    assert stop is not None
    tid = thread_id or stop.thread_id
    cached = session._frames.get(tid)
    whole = cached is not None and len(cached) >= session._totals.get(tid, len(cached))
    # a stack read in part leaves its total uncertain (the runpy frames at its bottom were not seen): read it
    if cached is not None and levels and whole:
        return tid, cached, max(len(cached), session._totals.get(tid, len(cached)))
    try:
        body = await client.request("stackTrace", {"threadId": tid, "startFrame": 0, "levels": max(levels, 1000)})
    except DebugpyError as exc:
        raise ThreadNotFound(
            f"no stack for thread {tid}: {exc.message}",
            details={"thread_id": tid},
            hint="List the target's threads.",
        ) from exc
    trace = as_body(body, StackTraceBody)
    frames, total = without_launch_frames(trace.stack_frames, trace.total_frames or len(trace.stack_frames))
    session._frames[tid] = frames
    session._totals[tid] = total
    return tid, frames, total


async def frame_id(session: Session, index: int, thread_id: int | None = None) -> int:
    """DAP frame id of frame ``index`` (0 = top) of a paused thread."""
    if index < 0:
        raise InvalidRequest("frame_index must be >= 0", details={"frame_index": index})
    _, frames, total = await session.frames(thread_id, index + 1)
    if index >= len(frames):
        raise InvalidReference(
            f"no frame {index}: the stack has {total} frames",
            details={"frame_index": index, "total_frames": total},
            hint="A frame_index is a position in the stack trace (0 = top).",
        )
    return frames[index].id


def stop_files(session: Session) -> set[str]:
    """The files of the frames read at the current stop, as the user sees them."""
    files = set()
    for frames in session._frames.values():
        for frame in frames:
            path = session.to_local(frame.source.path) if frame.source else None
            if path:
                files.add(path)
    return files


async def probe(session: Session, frame_id: int, expression: str) -> str | None:
    """Evaluate a read-only helper in the target; None when the helper is not there."""
    if not session.probe_available or session.client is None:
        return None
    try:
        body = await session.read("evaluate", {"expression": expression, "frameId": frame_id, "context": "clipboard"})
    except DebugpyError as exc:
        if "No module named" in exc.message and "_debugrelay_probe" in exc.message:
            session.probe_available = False
        return None
    return unquote_result(body.get("result", ""))


def unquote_result(result: str) -> str:
    """debugpy answers a str evaluation with its repr, even in the 'clipboard' context."""
    if result[:1] in ("'", '"'):
        with contextlib.suppress(ValueError, SyntaxError):
            result = str(ast.literal_eval(result))
    return result
