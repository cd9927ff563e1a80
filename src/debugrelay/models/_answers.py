"""What the relay answers: one Struct per kind of answer, shared by the HTTP API, MCP and the client.

Answers are compact: a field left at its default is not sent. Flags that carry news when false
(``source_available``, ``is_current``) default to ``None`` so that ``false`` is sent when it is set.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from ._base import Answer, Model
from ._http import HttpCallView
from ._inspection import Autopsy
from ._launch import LaunchView, PublishedPort
from ._session import (
    AttachView,
    BreakpointSuggestion,
    ErrorBody,
    ExceptionInfo,
    Location,
    ProcessInfo,
    SessionStatus,
    TargetView,
)

CUT = "<cut:"  # how every cut value says so: never "...", which reads as Python (Ellipsis, a cycle)


def cut_text(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how many more there were; never inside a cut mark the text
    holds (cut before it, and counted)."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    mark = head.rfind(CUT)
    if mark >= 0 and ">" not in head[mark:]:
        head = head[:mark]
    return f"{head}{CUT} {len(text) - len(head)} more chars>"


def joined_output(lines: list[OutputLine]) -> str:
    """Output lines as one text, where each stderr line is marked ``[stderr]``."""
    return "".join(f"[stderr] {e.text}" if e.type == "stderr" else e.text for e in lines)


def last_lines(text: str, limit: int) -> tuple[str, bool]:
    """The last whole lines of ``text`` within ``limit`` characters, and whether any were left out. Never a
    piece of a line: redaction reads a line from its start (``token=`` and all that follows it), and a
    line's tail alone would hide less of a secret than the line does."""
    if len(text) <= limit:
        return text, False
    cut = len(text) - limit  # the first character that may be kept
    if text[cut - 1] == "\n":
        return text[cut:], True
    newline = text.find("\n", cut)
    if newline == -1 or newline == len(text) - 1:
        return "", True  # the last line alone is longer than the limit
    return text[newline + 1 :], True


def is_cut(text: str) -> bool:
    """Whether a value was cut by the target's repr or the relay (an agent expands it by its reference)."""
    return CUT in text


# -- sessions and stops -----------------------------------------------------------------------------


class ThreadState(Model, kw_only=True):
    thread_id: int
    name: str | None = None
    status: Literal["paused", "running"]


class BreakpointRuns(Model, kw_only=True):
    """A conditional or counted breakpoint whose line ran while the program runs: hits, runs and their rate
    (null: not known yet), and what slows the program."""

    breakpoint_id: str
    hit_count: int
    runs: int
    runs_per_second: float | None
    slow: str | None = None


class SkipReason(Model, kw_only=True):
    """Why a saved breakpoint was skipped: a relay error (with details and hint) or data that does not decode."""

    code: str
    message: str
    details: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET  # open: the error's own facts
    hint: str | msgspec.UnsetType = msgspec.UNSET


class SkippedBreakpoint(Model, kw_only=True):
    """A saved breakpoint that could not be set: its place in the saved list (none: it conflicts with one
    the session has) and why."""

    index: int | None
    error: SkipReason


class Status(Answer, kw_only=True):
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
    # a program with child processes: which one stopped, how many others wait at a stop of their own, and
    # the Python processes the debugger does not follow (no breakpoint stops in them)
    process: int | None = None
    processes_waiting: int | None = None
    undebugged: list[ProcessInfo] = msgspec.field(default_factory=list)
    undebugged_note: str | None = None
    exit_code: int | msgspec.UnsetType | None = msgspec.UNSET  # null is news: ended, code unknown
    error: ErrorBody | None = None
    recovered: bool = False
    warning: str | None = None
    timed_out: bool = False
    message: str | None = None
    autopsy: Autopsy | None = None
    # an exception stop in a session with traces: the traced calls it stopped in, newest first (each one's run
    # so far is a read away: traces/calls/{call_id})
    traced_calls: list[str] = msgspec.field(default_factory=list)
    stops_on: str | None = None  # in a launch answer: what will pause the program
    restarted: str | None = None  # in a launch answer: the session's program that was ended first
    ready: Literal["listening", "paused", "ended", "timeout"] | None = None  # a launch with ``ready``
    python: str | None = None  # in a launch answer: the target's Python (major.minor), when known
    starting: str | None = None  # launching: what the start waits for (the target's debugger is starting)
    interpreter: str | None = None  # in a launch answer: the interpreter the relay chose (no `python` given), and why
    published: list[PublishedPort] = msgspec.field(default_factory=list)  # a service's ports, at these URLs
    # a stop's details, when asked for (locals=true): the source line, the top frame's locals (values cut
    # at 120 characters, "..." says how many more), and each watch expression's value
    code: str | None = None
    locals: dict[str, str] | None = None
    locals_error: str | None = None
    watches: dict[str, str] | None = None
    # still running: the conditional/counted breakpoints' line runs and hits so far, and what slows it
    breakpoint_runs: list[BreakpointRuns] = msgspec.field(default_factory=list)
    # a request sent to the program (POST .../request): the one this answer is about, and the earlier
    # ones whose response came since the last answer (a handler that was paused answered)
    request: HttpCallView | None = None
    requests: list[HttpCallView] = msgspec.field(default_factory=list)
    # an answer that says the program ended: what it printed that no answer carried yet (the tail, marked
    # when cut) and where to go next
    output: str | None = None
    output_truncated: str | None = None
    hint: str | None = None


class SessionSummary(Status, kw_only=True):
    """A session in a listing: its status and name, and on a relay with credentials, whose it is."""

    name: str | None = None
    created_by: str | None = None  # the credential that created it


class SessionDetail(SessionSummary, kw_only=True):
    """One session in full: status, configuration, target, notes."""

    mode: Literal["launch", "attach"]
    created_at: float
    timeout_minutes: float
    breakpoints: int
    expires_in_seconds: float | None = None
    launch: LaunchView | None = None
    attach: AttachView | None = None
    target: TargetView | None = None
    # whether a paused program stays paused (and events are kept) while no relay runs: a keeper holds it
    survives_relay_restart: bool | None = None
    notes: list[str] = msgspec.field(default_factory=list)
    shared_with: list[str] = msgspec.field(default_factory=list)  # credential names, or role:<role>
    # set by clone and import
    cloned_from: str | None = None
    breakpoints_set: int | None = None
    skipped: list[SkippedBreakpoint] = msgspec.field(default_factory=list)
    start_error: ErrorBody | None = None


class ExportedBreakpoint(Model, kw_only=True):
    """A breakpoint of an export: as it was asked for (a line breakpoint, enabled, unless it says otherwise)."""

    kind: Literal["line", "function"] | None = None
    file: str | None = None
    line: int | None = None
    function: str | None = None
    condition: str | None = None
    hit_condition: str | None = None
    log_message: str | None = None
    enabled: bool | None = None


class ExportedFilters(Model, kw_only=True):
    filters: list[str] | None = None
    exception_types: list[str] | None = None


class SessionExport(Model, kw_only=True):
    """``GET /sessions/{id}/export``: a session's configuration, what was set (``POST /sessions/import`` takes
    it back as a ``SessionDocument``); environment values masked unless asked for."""

    format: Literal["debugrelay.session/1"]
    name: str | None = None
    timeout_minutes: float
    mode: Literal["launch", "attach"]
    launch: LaunchView | None = None
    attach: AttachView | None = None
    breakpoints: list[ExportedBreakpoint]
    exception_filters: ExportedFilters | None = None
    source_session_id: str
    exported_at: str


class SessionList(Model, kw_only=True):
    sessions: list[SessionSummary]
    total: int


class AuditEntry(Model, kw_only=True):
    """One call that changed or evaluated something: who, on which session, what, and how it ended."""

    at: float
    who: str | None = None  # the credential's name (none on a relay without credentials)
    role: str | None = None
    session_id: str | None = None
    call: str  # what was sent: HTTP method and path, or the MCP tool
    operation: str
    detail: str = ""  # the main arguments, redacted like every answer
    result: str = ""
    ok: bool = True
    replica: str = ""
    # more than 1: a credential's refused or failed calls of one minute past the first few, summed up
    # (``at`` the first of them, ``until`` the last; ``detail`` counts the operations, ``result`` the errors)
    count: int = 1
    until: float | None = None


class CredentialView(Model, kw_only=True):
    """A credential in force, without its token."""

    name: str
    role: str
    expires: float | None = None
    expired: bool = False
    max_sessions: int = 0  # 0: no limit of its own
    requests_per_minute: int = 0
    live_sessions: int = 0


class CredentialsInForce(Model, kw_only=True):
    """The credentials the relay accepts now, and whether its file says otherwise."""

    credentials: list[CredentialView]
    file: str | None = None
    problem: str | None = None  # why the file in place is not what is in force (the last good one is)


class AuditPage(Model, kw_only=True):
    """The audit trail, newest first."""

    entries: list[AuditEntry]
    total: int  # matching entries kept
    has_more: bool
    kept: int  # entries the relay keeps at most (the oldest are dropped)


class Ping(Answer, kw_only=True):
    ok: bool
    status: SessionStatus
    expires_in_seconds: float


class Deleted(Answer, kw_only=True):
    deleted: bool
    session_id: str | None = None
    breakpoint_id: str | None = None
    watch_id: str | None = None


class BreakpointsCleared(Answer, kw_only=True):
    """Every breakpoint of a session removed (capture points stay): which ones."""

    session_id: str
    removed: list[str]  # breakpoint ids, in the order they were set


# -- output ------------------------------------------------------------------------------------------


class OutputLine(Model, kw_only=True):
    type: str
    text: str
    timestamp: str


class OutputPage(Answer, kw_only=True):
    outputs: list[OutputLine]
    cursor: str | None
    has_more: bool
    dropped: int | bool | None = None
    message: str | None = None
    skipped: int | bool | None = None  # with newest: entries after the cursor left out (true: some)
    left_out: str | None = None  # an answer's new output: what was kept out of it (the pages have it)


class Cleared(Answer, kw_only=True):
    cleared: bool


class InputSent(Answer, kw_only=True):
    sent: int


# -- breakpoints -------------------------------------------------------------------------------------


class BreakpointView(Answer, kw_only=True):
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
    suggestion: BreakpointSuggestion | None = None
    never_hit: bool = False
    runs: int = 0
    runs_per_second: float | None = None
    slow: str | None = None
    unsealed: bool = False  # read back from the store without the relay's seal: never sent to the target


class BreakpointList(Answer, kw_only=True):
    breakpoints: list[BreakpointView]


class ExceptionFiltersView(Answer, kw_only=True):
    filters: list[str]
    exception_types: list[str]
    # set on the session (not by a launch): each launch that gives no stop_on_exception runs with them
    carries_over: bool = False


class ProfileApplied(Answer, kw_only=True):
    profile: str
    breakpoints: list[BreakpointView]
    skipped: list[SkippedBreakpoint] = msgspec.field(default_factory=list)
    warning: str | None = None


class SavedBreakpoint(Model, kw_only=True):
    """A breakpoint of a profile: as it was asked for (and the line it was moved to, the runs it counted)."""

    kind: Literal["line", "function"] = "line"
    file: str | None = None
    line: int | None = None
    function: str | None = None
    condition: str | None = None
    hit_condition: str | None = None
    log_message: str | None = None
    enabled: bool = True
    actual_line: int | None = None
    runs: int = 0
    runs_per_second: float | None = None


class Profile(Model, kw_only=True):
    name: str
    breakpoints: list[SavedBreakpoint]
    saved_by: str | None = None  # the credential that saved it: only it (or an admin) may replace it
    unsealed: bool = False  # read from the store without the relay's seal: it cannot be applied


class ProfileList(Model, kw_only=True):
    profiles: list[Profile]


class ProfileSaved(Answer, kw_only=True):
    name: str
    breakpoints: int
    replaced: bool


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


class Liveness(Model, kw_only=True):
    """The relay's event loop answers; the state store is not asked (a stalled store must not restart it)."""

    status: Literal["ok"]


class Readiness(Model, kw_only=True):
    """Whether the relay can take sessions now: its state store answered within ``within`` seconds."""

    status: Literal["ready", "unready"]
    store: str
    store_ok: bool
    within: float
    unpersisted_writes: int = 0


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


class WarmKey(Model, kw_only=True):
    """The containers kept warm for one image and working folder (nulls kept: the image's own)."""

    image: str | None
    cwd: str | None
    ready: int


class PoolStats(Model, kw_only=True):
    """One launcher's warm pool."""

    size: int
    ready: int
    starting: int
    handed_out: int
    started: int
    failed: int
    cold_starts: dict[str, int]  # launches that started cold, by reason
    python: str | None = None  # the local pool's interpreter from the start (the relay's own)
    interpreters: dict[str, int] | None = None  # the local pool's: targets ready per interpreter kept warm
    keys: list[WarmKey] | None = None  # the container pool's warm images


class Pools(Model, kw_only=True):
    """Warm pools per launcher: ready, starting, handed out, cold starts by reason."""

    pools: dict[str, PoolStats]


class Replica(Model, kw_only=True):
    """A relay sharing the store, as it last announced itself."""

    instance_id: str
    url: str | None
    pid: int
    sessions: int
    started_at: float


class Recovery(Model, kw_only=True):
    """This relay's taking over of the stored sessions as it started: pending, running, or done (when,
    how long, how many sessions adopted, and in which state they ended up)."""

    state: Literal["pending", "running", "done"]
    began_at: float | None = None
    finished_at: float | None = None
    seconds: float | None = None
    seconds_since_process_start: float | None = None
    adopted: int | None = None
    reattached: int | None = None
    created: int | None = None
    launching: int | None = None
    running: int | None = None
    paused: int | None = None
    terminated: int | None = None
    failed: int | None = None


class Cluster(Model, kw_only=True):
    """This relay among the replicas sharing its store: ownership, recovery, peers."""

    store: str
    durable: bool
    replicas: list[Replica]
    note: str | None = None
    instance_id: str | None = None
    advertise_url: str | None = None
    lease_ttl: float | None = None
    keep_targets_on_shutdown: bool | None = None
    store_ok: bool | None = None
    sessions_owned: int | None = None
    recovery: Recovery | None = None


class PeerProof(Model, kw_only=True):
    """A replica's answer to a challenge: an HMAC of the nonce and its own URL under the replicas' shared key."""

    url: str
    proof: str


# -- errors ------------------------------------------------------------------------------------------


class ErrorEnvelope(Model, kw_only=True):
    """Every error the relay answers, whatever the operation: ``{"error": {code, message, details, hint}}``."""

    error: ErrorBody
