"""Frames as the relay shows them: location, source around the line, status markers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from debugrelay.dap import StackFrame
from debugrelay.sessions import read_source

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
    """Files read once per call."""

    def __init__(self) -> None:
        self._lines: dict[str, list[str] | None] = {}

    def lines(self, path: str | None) -> list[str] | None:
        if not path or path.startswith("<"):
            return None
        if path not in self._lines:
            text = read_source(path)
            self._lines[path] = text.splitlines() if text is not None else None
        return self._lines[path]


def frame_view(
    session: Session, index: int, frame: StackFrame, sources: SourceCache, around: int = 0
) -> dict[str, Any]:
    """``{index, function, file, line, source}``; ``source_available: false`` / ``is_external: true``
    when the frame has no readable source (exec'd code) or is library code."""
    source = frame.source
    path = (session.to_local(source.path) or source.name) if source else None
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
