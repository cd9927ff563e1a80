"""What the relay answers: one Struct per kind of answer, shared by the HTTP API, MCP and the client.

Answers are compact: a field left at its default is not sent. Flags that carry news when false
(``source_available``, ``is_current``) default to ``None`` so that ``false`` is sent when it is set.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from ._base import Model
from ._session import ExceptionInfo, Location, SessionStatus

CUT = "<cut:"  # how every cut value says so: never "...", which reads as Python (Ellipsis, a cycle)


def cut_text(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how many more there were."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}{CUT} {len(text) - limit} more chars>"


def is_cut(text: str) -> bool:
    """Whether a value was cut by the target's repr or the relay (an agent expands it by its reference)."""
    return CUT in text


# -- sessions and stops -----------------------------------------------------------------------------


class ThreadState(Model, kw_only=True):
    thread_id: int
    name: str | None = None
    status: Literal["paused", "running"]


class Status(Model, kw_only=True):
    """Where a session stands: paused where and why, or how it ended."""

    session_id: str
    status: SessionStatus
    reason: str | None = None
    thread_id: int | None = None
    location: Location | None = None
    breakpoint_ids: list[str] = msgspec.field(default_factory=list)
    exception: ExceptionInfo | None = None
    left_by_exception: ExceptionInfo | None = None  # a step left its function by this exception
    description: str | None = None
    thread_name: str | None = None  # of the stopped thread, when the program has several
    thread_count: int | None = None  # threads of the program, when it has several
    all_threads: list[ThreadState] = msgspec.field(default_factory=list)  # when they changed since the last stop
    exit_code: int | msgspec.UnsetType | None = msgspec.UNSET  # null is news: ended, code unknown
    error: dict[str, Any] | None = None
    recovered: bool = False
    warning: str | None = None
    timed_out: bool = False
    message: str | None = None
    autopsy: Autopsy | None = None
    stops_on: str | None = None  # in a launch answer: what will pause the program
    # a stop's details, when asked for (locals=true): the source line, the top frame's locals (values cut
    # at 120 characters, "..." says how many more), and each watch expression's value
    code: str | None = None
    locals: dict[str, str] | None = None
    locals_error: str | None = None
    watches: dict[str, str] | None = None
    # still running: the conditional/counted breakpoints' line runs and hits so far, and what slows it
    breakpoint_runs: list[dict[str, Any]] = msgspec.field(default_factory=list)


class SessionSummary(Status, kw_only=True):
    """A session in a listing: its status and name."""

    name: str | None = None


class SessionDetail(SessionSummary, kw_only=True):
    """One session in full: status, configuration, target, notes."""

    mode: Literal["launch", "attach"]
    created_at: float
    timeout_minutes: float
    breakpoints: int
    expires_in_seconds: float | None = None
    launch: dict[str, Any] | None = None
    attach: dict[str, Any] | None = None
    target: dict[str, Any] | None = None
    # whether a paused program stays paused (and events are kept) while no relay runs: a keeper holds it
    survives_relay_restart: bool | None = None
    notes: list[str] = msgspec.field(default_factory=list)
    # set by clone and import
    cloned_from: str | None = None
    breakpoints_set: int | None = None
    skipped: list[dict[str, Any]] = msgspec.field(default_factory=list)
    start_error: dict[str, Any] | None = None


class SessionList(Model, kw_only=True):
    sessions: list[SessionSummary]
    total: int


class Ping(Model, kw_only=True):
    ok: bool
    status: SessionStatus
    expires_in_seconds: float


class Deleted(Model, kw_only=True):
    deleted: bool
    session_id: str | None = None
    breakpoint_id: str | None = None
    watch_id: str | None = None


# -- output ------------------------------------------------------------------------------------------


class OutputLine(Model, kw_only=True):
    type: str
    text: str
    timestamp: str


class OutputPage(Model, kw_only=True):
    outputs: list[OutputLine]
    cursor: str | None
    has_more: bool
    dropped: int | bool | None = None
    message: str | None = None


class Cleared(Model, kw_only=True):
    cleared: bool


class InputSent(Model, kw_only=True):
    sent: int


# -- breakpoints -------------------------------------------------------------------------------------


class BreakpointView(Model, kw_only=True):
    """A breakpoint as asked for, and what the relay and debugpy verified."""

    breakpoint_id: str
    kind: Literal["line", "function"]
    verified: bool
    enabled: bool
    hit_count: int
    file: str | None = None
    line: int | None = None
    function: str | None = None
    condition: str | None = None
    hit_condition: str | None = None
    log_message: str | None = None
    pending: bool = False
    message: str | None = None
    actual_line: int | None = None
    suggestion: dict[str, Any] | None = None
    never_hit: bool = False
    runs: int = 0
    runs_per_second: float | None = None
    slow: str | None = None


class BreakpointList(Model, kw_only=True):
    breakpoints: list[BreakpointView]


class ExceptionFiltersView(Model, kw_only=True):
    filters: list[str]
    exception_types: list[str]


class ProfileApplied(Model, kw_only=True):
    profile: str
    breakpoints: list[BreakpointView]
    skipped: list[dict[str, Any]] = msgspec.field(default_factory=list)
    warning: str | None = None


class Profile(Model, kw_only=True):
    name: str
    breakpoints: list[dict[str, Any]]


class ProfileList(Model, kw_only=True):
    profiles: list[Profile]


class ProfileSaved(Model, kw_only=True):
    name: str
    breakpoints: int
    replaced: bool


# -- inspection --------------------------------------------------------------------------------------


class ThreadView(Model, kw_only=True):
    id: int
    name: str | None = None
    state: Literal["stopped", "running"]
    is_current: bool | None = None


class Threads(Model, kw_only=True):
    threads: list[ThreadView]


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


class SetVariableResult(Model, kw_only=True):
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


class WatchValue(Model, kw_only=True):
    watch_id: str
    expression: str
    available: bool | None = None
    error: str | None = None
    result: str | None = None
    type: str | None = None
    variable_reference: int | None = None
    expandable: bool = False
    truncated: bool = False


class Watches(Model, kw_only=True):
    watches: list[WatchValue]


class Autopsy(Model, kw_only=True):
    """The exception a session is stopped at, with its stack, sources, locals and inner chain."""

    thread_id: int
    exception: dict[str, Any]
    frames: list[dict[str, Any]]
    total_frames: int
    frames_truncated: bool = False
    inner_exceptions: list[dict[str, Any]] = msgspec.field(default_factory=list)
    inner_exceptions_more: int | None = None
    inner_exceptions_truncated: bool = False
    partial: bool = False
    warnings: list[str] = msgspec.field(default_factory=list)
    post_mortem: str | None = None  # the snapshot this answer comes from, after the program ended


class Changes(Model, kw_only=True):
    """Locals of the top frame that moved since the previous stop in the same frame."""

    changed: list[dict[str, Any]]
    frame: dict[str, Any] | None = None
    stop: int | None = None
    since: dict[str, Any] | None = None
    first_stop_in_frame: bool = False
    locals: int | None = None
    added: list[dict[str, Any]] = msgspec.field(default_factory=list)
    removed: list[str] = msgspec.field(default_factory=list)
    unchanged: int | None = None
    note: str | None = None


# -- redaction ---------------------------------------------------------------------------------------


class RedactionView(Model, kw_only=True):
    """One secret hidden from the agent: its placeholder, the rule that found it, where and when it was
    first seen (never the value)."""

    placeholder: str
    rule: str
    where: str
    at: str


class Redactions(Model, kw_only=True):
    """What a session's answers have had redacted, in the order first seen."""

    session_id: str
    enabled: bool
    redactions: list[RedactionView]
    total: int
    note: str | None = None


# -- the relay itself --------------------------------------------------------------------------------


class Health(Model, kw_only=True):
    status: Literal["ok", "degraded"]
    store: str
    store_ok: bool
    sessions: int
    active: int
    unpersisted_writes: int = 0  # changes made while the store was down, written through when it is back


class Info(Model, kw_only=True):
    name: str
    version: str
    debugpy: str
    python: str
    launchers: list[str]
    store: str
    durable: bool
    capabilities: list[str]
    redaction: Literal["on", "off"]  # off only when the operator said so (DEBUGRELAY_REDACTION=off)


class ProcessView(Model, kw_only=True):
    pid: int
    command: str
    debugpy_port: int | None = None


class Processes(Model, kw_only=True):
    processes: list[ProcessView]


class ShuttingDown(Model, kw_only=True):
    shutting_down: bool
    sessions: int
    targets_kept: bool


class Pools(Model, kw_only=True):
    """Warm pools per launcher: ready, starting, handed out, cold starts by reason."""

    pools: dict[str, dict[str, Any]]


class Cluster(Model, kw_only=True):
    """This relay among the replicas sharing its store: ownership, recovery, peers."""

    store: str
    durable: bool
    replicas: list[dict[str, Any]]
    note: str | None = None
    instance_id: str | None = None
    advertise_url: str | None = None
    lease_ttl: float | None = None
    keep_targets_on_shutdown: bool | None = None
    store_ok: bool | None = None
    sessions_owned: int | None = None
    recovery: dict[str, Any] | None = None


# -- errors ------------------------------------------------------------------------------------------


class ErrorBody(Model, kw_only=True):
    code: str
    message: str
    details: dict[str, Any]
    hint: str


class ErrorEnvelope(Model, kw_only=True):
    """Every error the relay answers, whatever the operation: ``{"error": {code, message, details, hint}}``."""

    error: ErrorBody
