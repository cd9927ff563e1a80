"""Frames as the relay shows them: location, source around the line, status markers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from debugrelay.dap import StackFrame
from debugrelay.errors import RelayError
from debugrelay.sessions import read_session_file

if TYPE_CHECKING:
    from debugrelay.sessions import Session

CHAINED_PREFIX = "[Chained Exc:"  # debugpy appends the frames of __cause__/__context__ tracebacks


def is_chained(frame: StackFrame) -> bool:
    return frame.name.startswith(CHAINED_PREFIX)


def is_external(frame: StackFrame) -> bool:
    path = (frame.source.path if frame.source else None) or ""
    return frame.presentation_hint == "subtle" or any(
        mark in path for mark in ("site-packages", "/lib/python3", "<frozen")
    )


class SourceCache:
    """Files read once per call, under the session's rules (its target's files, or the relay's disk
    inside the session's folders only): loaded first, then looked up."""

    def __init__(self) -> None:
        self._lines: dict[str, list[str] | None] = {}

    async def load(self, session: Session, frames: list[StackFrame]) -> None:
        for frame in frames:
            path = frame_path(session, frame)
            generated = frame.source is not None and bool(frame.source.source_reference)
            if not path or path.startswith("<") or path in self._lines or generated:
                continue
            try:
                text = await read_session_file(session, path)
            except RelayError:
                text = None
            self._lines[path] = text.splitlines() if text is not None else None

    def lines(self, path: str | None) -> list[str] | None:
        return self._lines.get(path) if path else None


def frame_path(session: Session, frame: StackFrame) -> str | None:
    """A frame's file as the user sees it (its name when it has no path)."""
    source = frame.source
    return (session.to_local(source.path) or source.name) if source else None


def frame_view(
    session: Session, index: int, frame: StackFrame, sources: SourceCache, around: int = 0
) -> dict[str, Any]:
    """``{index, function, file, line, source}``; ``source_available: false`` / ``is_external: true``
    when the frame has no readable source (exec'd code) or is library code."""
    source = frame.source
    path = frame_path(session, frame)
    line = frame.line
    out: dict[str, Any] = {"index": index, "function": frame.name, "file": path, "line": line}
    lines = sources.lines(path) if not (source and source.source_reference) else None
    if lines is None or not line or line > len(lines):
        out["source_available"] = False
    else:
        src: dict[str, Any] = {"text": lines[line - 1].strip()}
        if around:
            first = max(1, line - around)
            last = min(len(lines), line + around)
            window = lines[first - 1 : last]
            while len(window) > 1 and not window[-1].strip():
                window.pop()
            src["start"] = first
            src["lines"] = window
        out["source"] = src
    if is_external(frame):
        out["is_external"] = True
    return out
