"""What the relay answers about a paused program: threads, processes, frames, scopes, variables,
evaluations, sources, watches, the exception autopsy, object inspection and what changed since a stop."""

from __future__ import annotations

from typing import Literal

import msgspec

from ._base import Answer, Model
from ._session import Location, ProcessInfo
from .limits import cut_message

# -- inspection --------------------------------------------------------------------------------------


class ThreadView(Model, kw_only=True):
    id: int
    name: str | None = None
    state: Literal["stopped", "running"]
    is_current: bool | None = None


class Threads(Model, kw_only=True):
    threads: list[ThreadView]


class ProcessList(Model, kw_only=True):
    """The program's processes: its own (``root``) first, then the Python processes it started."""

    processes: list[ProcessInfo]
    undebugged_note: str | None = None  # when some run without the debugger


class FrameView(Model, kw_only=True):
    id: int
    name: str | None = None
    file: str | None = None
    line: int | None = None
    source_available: bool | None = None
    is_external: bool | None = None
    collapsed: int | None = None  # library frames folded into this entry (it is the first of them)
    through: str | None = None  # the last folded frame: "ID function file:line"
    repeated: int | None = None  # a recursion: this many calls of one function folded into this entry
    arguments: str | None = None  # of a recursion's innermost call (this entry): "n=3, node='a'"
    last_arguments: str | None = None  # of its outermost call (the `through` frame)


class StackTrace(Model, kw_only=True):
    thread_id: int
    total_frames: int
    frames: list[FrameView]
    # frames between the window and the outermost ones (which are always shown): which, and how to read them
    left_out: str | None = None
    post_mortem: str | None = None  # the snapshot this answer comes from, after the program ended


class ScopeView(Model, kw_only=True):
    name: str | None = None
    reference: int


class Scopes(Model, kw_only=True):
    scopes: list[ScopeView]


class Variable(Model, kw_only=True):
    """One value: its repr (cut with ``truncated``), type, and a reference when it has children."""

    name: str
    value: str = ""
    type: str | None = None
    variable_reference: int | None = None
    expandable: bool = False
    index: int | None = None
    scope: str | None = None
    length: int | None = None
    truncated: bool = False
    repr_error: bool = False
    circular: bool = False
    children: list[Variable] | None = None
    children_total: int | None = None
    children_truncated: bool = False
    children_error: str | None = None


class VariablesPage(Model, kw_only=True):
    variables: list[Variable]
    total: int
    has_more: bool
    # pytest's assertion temporaries (@py_assert*, @py_format*) left out: evaluate locals()['@py_assert1']
    hidden: int | None = None


class ChildrenPage(Model, kw_only=True):
    items: list[Variable]
    total: int
    has_more: bool
    start: int | None = None
    offset: int | None = None


class ScopedVariables(Model, kw_only=True):
    """A frame's variables by scope, or the children of a path (``expand``)."""

    frame_id: int
    variables: list[Variable]
    total: int
    has_more: bool
    scope: str | None = None
    parent: str | None = None
    type: str | None = None
    value: str | None = None
    variable_reference: int | None = None
    arguments_known: bool | None = None
    hidden: int | None = None  # pytest's assertion temporaries left out (see VariablesPage)
    post_mortem: str | None = None  # the snapshot this answer comes from, after the program ended


class EvaluateResult(Model, kw_only=True):
    result: str
    type: str | None = None
    variable_reference: int | None = None
    expandable: bool = False
    truncated: bool = False


class SetVariableResult(Answer, kw_only=True):
    name: str
    value: str | None = None
    type: str | None = None


class Completion(Model, kw_only=True):
    label: str | None = None
    type: str | None = None


class Completions(Model, kw_only=True):
    targets: list[Completion]


class SourceText(Model, kw_only=True):
    path: str
    start: int
    end: int
    total_lines: int
    content: str


class WatchValue(Answer, kw_only=True):
    watch_id: str
    expression: str
    unsealed: bool = False  # read back from the store without the relay's seal: never evaluated
    available: bool | None = None
    error: str | None = None
    result: str | None = None
    type: str | None = None
    variable_reference: int | None = None
    expandable: bool = False
    truncated: bool = False


class Watches(Model, kw_only=True):
    watches: list[WatchValue]


class ExceptionSummary(Model, kw_only=True):
    """An exception as the target's probe reads it: qualified type, text (no user ``__str__`` run), where it
    was raised, an ExceptionGroup's members; in a chain, how it relates to the one before it."""

    type: str
    message: str
    location: Location | None = None
    members_total: int | None = None
    members: list[ExceptionSummary] | None = None
    members_truncated: bool = False
    relation: str | None = None  # in an inner chain: "direct cause" or "during handling"

    def __post_init__(self) -> None:
        self.message = cut_message(self.message)


class AutopsyException(Model, kw_only=True):
    """The exception of an autopsy: what the stop said, refined by the probe (``details_available: false``
    when it could not read the exception object)."""

    type: str
    message: str
    unhandled: bool
    break_mode: str | None
    location: Location | None = None
    details_available: bool | None = None
    members: list[ExceptionSummary] | None = None
    members_total: int | None = None
    members_truncated: bool = False

    def __post_init__(self) -> None:
        self.message = cut_message(self.message)


class FrameSource(Model, kw_only=True):
    """A frame's line of source, and the lines around it (from ``start``) for the frames with variables."""

    text: str
    start: int | None = None
    lines: list[str] | None = None


class FrameVariable(Model, kw_only=True):
    """A variable of an autopsy frame, expanded one level (its children: type and a short repr); its value
    is always said, an empty one too. Fields as in :class:`Variable`."""

    name: str
    value: str
    type: str | None = None
    variable_reference: int | None = None
    index: int | None = None
    length: int | None = None
    truncated: bool = False
    repr_error: bool = False
    circular: bool = False
    children: list[FrameVariable] | None = None
    children_total: int | None = None
    children_truncated: bool = False
    children_error: str | None = None


class AutopsyFrame(Model, kw_only=True):
    """One frame of an autopsy: where, its source, and for the innermost frames arguments and locals."""

    index: int
    function: str | None
    file: str | None
    line: int | None
    source_available: bool | None = None  # false: no readable source (exec'd or generated code)
    source: FrameSource | None = None
    is_external: bool | None = None
    arguments_known: bool | None = None  # false: the probe could not tell arguments from locals
    arguments: list[FrameVariable] | None = None
    locals: list[FrameVariable] | None = None
    locals_total: int | None = None
    locals_truncated: bool = False
    variables_error: str | None = None


class Autopsy(Model, kw_only=True):
    """The exception a session is stopped at, with its stack, sources, locals and inner chain."""

    thread_id: int
    exception: AutopsyException
    frames: list[AutopsyFrame]
    total_frames: int
    frames_truncated: bool = False
    inner_exceptions: list[ExceptionSummary] = msgspec.field(default_factory=list)
    inner_exceptions_more: int | None = None
    inner_exceptions_truncated: bool = False
    partial: bool = False
    warnings: list[str] = msgspec.field(default_factory=list)
    post_mortem: str | None = None  # the snapshot this answer comes from, after the program ended


class ObjectNode(Model, kw_only=True):
    """An object inside an inspection: its type and value (by type and address for non-builtins), its size
    and length, and its fields (an object's) or items (a container's) to the depth asked for."""

    name: str | None = None  # a field's name or a mapping's key (as its repr)
    index: int | None = None  # a sequence's or set's position
    type: str
    value: str
    truncated: bool = False
    circular: bool = False  # an ancestor of itself: its value names the path it is at
    length: int | None = None
    size: int | None = None
    expandable: bool = False  # has fields or items below the depth asked for
    fields: list[ObjectNode] | None = None
    items: list[ObjectNode] | None = None
    total: int | None = None  # fields or items in all, when more than shown
    has_more: bool = False


class ObjectInspection(ObjectNode, kw_only=True):
    """``object_inspect``: one object walked to a depth, read-only (no user ``__repr__`` or property runs)."""

    id: str
    is_none: bool
    has_circular_ref: bool
    truncated: bool  # anything cut: a value, a collection, or the walk (too many objects)


class ChangesFrame(Model, kw_only=True):
    """The frame whose locals are compared (its file null when debugpy gives none)."""

    function: str | None
    file: str | None
    line: int | None


class EarlierStop(Model, kw_only=True):
    """The stop compared against: its number and the line it was at."""

    stop: int
    line: int | None


class ChangedLocal(Model, kw_only=True):
    """A local whose value (or type: ``old_type``) differs from the earlier stop's."""

    name: str
    type: str | None
    old: str
    new: str
    old_type: str | msgspec.UnsetType | None = msgspec.UNSET


class AddedLocal(Model, kw_only=True):
    name: str
    type: str | None
    value: str


class Changes(Model, kw_only=True):
    """Locals of the top frame that moved since the previous stop in the same frame."""

    changed: list[ChangedLocal]
    frame: ChangesFrame | None = None
    stop: int | None = None
    since: EarlierStop | None = None
    first_stop_in_frame: bool = False
    locals: int | None = None
    added: list[AddedLocal] = msgspec.field(default_factory=list)
    removed: list[str] = msgspec.field(default_factory=list)
    unchanged: int | None = None
    note: str | None = None
