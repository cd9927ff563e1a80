"""Typed bodies of the DAP answers and events the relay reads from debugpy.

Field names are DAP's (camelCase on the wire); fields the relay does not read are ignored, and every
field has a default, so a body debugpy shortens still decodes. Decoders are built once per type.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

import msgspec

# debugpy decorates names for a human in an IDE: the frame an exception stop is paused in gets
# " (Current frame)", and the exception's type "       (note: full exception trace is shown but
# execution is paused at: f)". Answers carry the plain Python names.
_CURRENT_FRAME = " (Current frame)"
_PAUSED_NOTE = re.compile(r"\s*\(note: full exception trace is shown but execution is paused at: .*\)\s*$", re.S)


def plain_frame_name(name: str) -> str:
    """A frame's function name without debugpy's " (Current frame)" mark."""
    return name.removesuffix(_CURRENT_FRAME)


def plain_exception_type(name: str) -> str:
    """An exception's type name without debugpy's "(note: full exception trace is shown ...)"."""
    return _PAUSED_NOTE.sub("", name)


class Body(msgspec.Struct, rename="camel", kw_only=True):
    """Base of the bodies: camelCase on the wire, unknown fields accepted."""


class Source(Body):
    path: str | None = None
    name: str | None = None
    source_reference: int = 0


class StackFrame(Body):
    id: int
    name: str = ""
    line: int = 0
    column: int = 0
    source: Source | None = None
    presentation_hint: str | None = None

    def __post_init__(self) -> None:
        self.name = plain_frame_name(self.name)


class StackTraceBody(Body):
    stack_frames: list[StackFrame] = msgspec.field(default_factory=list)
    total_frames: int | None = None


class Thread(Body):
    id: int
    name: str = ""


class ThreadsBody(Body):
    threads: list[Thread] = msgspec.field(default_factory=list)


class Scope(Body):
    name: str = ""
    variables_reference: int = 0


class ScopesBody(Body):
    scopes: list[Scope] = msgspec.field(default_factory=list)


class EvaluateBody(Body):
    result: str = ""
    type: str | None = None
    variables_reference: int = 0


class SetVariableBody(Body):
    value: str | None = None
    type: str | None = None


class CompletionItem(Body):
    label: str = ""
    type: str | None = None


class CompletionsBody(Body):
    targets: list[CompletionItem] = msgspec.field(default_factory=list)


class Breakpoint(Body):
    id: int | None = None
    verified: bool = False
    line: int | None = None
    message: str | None = None


class BreakpointsBody(Body):
    breakpoints: list[Breakpoint] = msgspec.field(default_factory=list)


class StoppedEvent(Body):
    reason: str = "pause"
    thread_id: int = 0
    description: str | None = None
    text: str | None = None
    all_threads_stopped: bool = True
    hit_breakpoint_ids: list[int] = msgspec.field(default_factory=list)


class OutputEvent(Body):
    category: str = "console"
    output: str = ""
    time: float | None = None  # when the keeper read it from the program's pipe (a keeper's own field)
    n: int | None = None  # the keeper's number of the event (its own field): never stored twice


class ExitedEvent(Body):
    exit_code: int | None = None


class ThreadEvent(Body):
    reason: str = ""
    thread_id: int | None = None


B = TypeVar("B", bound=Body)


def as_body(data: Any, kind: type[B]) -> B:
    """A decoded body as ``kind``; a malformed one is an empty body (every field of a body has a default)."""
    try:
        return msgspec.convert(data if isinstance(data, dict) else {}, kind)
    except msgspec.ValidationError:
        return kind()
