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


async def frames(session: Session, thread_id: int | None = None, levels: int = 0) -> tuple[int, list[StackFrame], int]:
    """(thread_id, DAP frames, total) for a paused thread, fetched once per stop."""
    client = session.require_paused()
    stop = session.record.stop
    assert stop is not None
    tid = thread_id or stop.thread_id
    cached = session._frames.get(tid)
    if cached is not None and levels and len(cached) >= min(levels, session._totals.get(tid, levels)):
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
    frames = trace.stack_frames
    session._frames[tid] = frames
    session._totals[tid] = trace.total_frames or len(frames)
    return tid, frames, session._totals[tid]


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
