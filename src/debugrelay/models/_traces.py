"""Wire models of function traces: every call of a traced function, and each call's whole run."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from ._base import Answer, Input, Model
from .limits import MAX_FUNCTION, MAX_PATH

MAX_TRACES_PER_SESSION = 20
MAX_KEEP = 100_000

# "file path:qualified name" or "package.module:qualified name" (a bare qualified name when one file is known)
TracedFunction = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_PATH + 1 + MAX_FUNCTION)]
CallId = Annotated[str, msgspec.Meta(min_length=1, max_length=40, pattern=r"^[0-9]+\.[0-9]+$")]
TraceId = Annotated[str, msgspec.Meta(min_length=1, max_length=40)]
CallMatch = Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
CallOutcome = Literal["returned", "raised", "running"]
# a name whose writes are looked for: a local, ``obj.attr``, ``d['key']``, ``items[3]``
WrittenName = Annotated[str, msgspec.Meta(min_length=1, max_length=200, pattern=r"^[A-Za-z_][A-Za-z_0-9]*[^\n]*$")]


class TraceRequest(Input):
    """Trace ``function``: each call's arguments, what each line changed, and its result, without pausing."""

    function: TracedFunction
    keep: Annotated[int, msgspec.Meta(ge=1, le=MAX_KEEP)] = 1000  # calls kept (the newest); the rest counted
    callees: bool = False  # record the direct callees in the program's own code as calls too
    # values of the program's own types written by their own __repr__ (at most once per value, on a thread of
    # the recorder's, waited for at most 0.25 s); off: type, address and attributes, no code of the program runs
    reprs: bool = False


class TraceRecord(Model, kw_only=True):
    """A trace as the session keeps it (in the state store): applied at each launch and kept across relaunches."""

    id: str
    file: str
    qualname: str
    line: int
    keep: int = 1000
    callees: bool = False
    reprs: bool = False
    unsealed: bool = False  # read back from the store without the relay's seal: never given to a target


class Trace(Answer, kw_only=True):
    trace_id: str
    function: str  # "file:qualified name"
    file: str
    qualname: str
    line: int  # where the function is defined
    keep: int = 1000
    callees: bool = False
    reprs: bool = False
    found: bool = False  # the running program has loaded the function (false before a launch, or until it loads)
    calls: int = 0  # calls kept
    total: int = 0  # calls made in all
    dropped: int = 0  # calls made but not kept (older than the newest ``keep``)
    unsealed: bool = False  # read back from the store without the relay's seal: never given to the program
    message: str | None = None


class TraceList(Model, kw_only=True):
    traces: list[Trace]


class TracedCall(Model, kw_only=True):
    """One call in brief: what it was given and what it gave back."""

    call_id: str  # "<pid>.<n>"
    trace_id: str
    function: str
    args: dict[str, str] = msgspec.field(default_factory=dict)  # name -> short repr
    returned: str | None = None  # repr of the return value
    raised: str | None = None  # "Type: message" of the exception that left the call
    raised_line: int | None = None
    lines: list[int] = msgspec.field(default_factory=list)  # the lines it ran
    parent: str | None = None  # the traced call it was made from (recursion, callees)
    thread: str | None = None
    pid: int | None = None
    running: bool = False  # not finished yet (a paused program's call, read so far)


class CallList(Model, kw_only=True):
    calls: list[TracedCall]
    total: int  # calls matching, in all
    has_more: bool = False
    offset: int = 0
    dropped: int = 0  # calls of these traces not kept (over ``keep``): not searched
    message: str | None = None


class CallRun(TracedCall, kw_only=True):
    """One call's whole run: the lines in order with what each changed, loops folded."""

    file: str = ""
    line: int = 0  # where the function is defined
    # open: ``{"line": n, "changed": {name: repr}}`` per line run, or a folded loop
    # ``{"loop": [first, last], "iterations": n, "lines": [{"line", "count", "first", "last"}], "usual": [...],
    # "other": [{"lines": [...], "iterations": [...], "count": k}]}``
    events: list[dict[str, Any]] = msgspec.field(default_factory=list)
    callees: list[str] = msgspec.field(default_factory=list)
    cut: dict[str, int] | None = None  # what was left out to keep the call bounded (events, values)
    # a run read in part (a line, a text, a page): the events that passed, in all; the page's start; more
    events_total: int | None = None
    offset: int | None = None
    has_more: bool | None = None


class ValueWrite(Model, kw_only=True):
    """One recorded write of a name: which call, which line, what it wrote (``old -> new`` for an attribute or
    item that held a number or a string)."""

    call_id: str
    function: str
    line: int
    name: str  # as the call wrote it: ``self.total`` for ``basket.total`` asked
    value: str
    iteration: int | None = None  # of a loop: the iteration kept whole that wrote it
    times: int | None = None  # of a loop: how often that line ran; the value is its last write


class Origin(Model, kw_only=True):
    """Where a value came from: the traced calls' writes of ``name``, newest first."""

    name: str
    writes: list[ValueWrite]
    total: int  # writes found in all
    trace: list[str] = msgspec.field(default_factory=list)  # none found: functions that assign it, to trace
    message: str | None = None


class TraceRemoved(Answer, kw_only=True):
    trace: Trace
