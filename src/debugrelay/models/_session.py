"""Session, breakpoint and stop records: what the state store keeps and the API shows."""

from __future__ import annotations

from typing import Any, Literal, TypeVar

import msgspec

from ._base import Input, Model
from ._launch import LaunchRequest, Mappings, PathMapping, PublishedPort
from ._traces import TraceRecord
from .limits import Host, NamespaceName, Pid, PodName, Port, cut_message

SessionStatus = Literal["created", "launching", "running", "paused", "terminated", "failed"]


class Location(Model):
    file: str | None = None
    line: int | None = None
    function: str | None = None
    column: int | None = None


class ErrorBody(Model, kw_only=True):
    """An error as an agent hears it: a stable code, the message, the facts it concerns, what to do."""

    code: str
    message: str
    details: dict[str, Any]  # open: each error names the facts of its own case (a path, a line, a limit)
    hint: str


class BreakpointSuggestion(Model):
    """A line that runs, offered for a breakpoint set on one that does not (a blank line, a comment)."""

    line: int
    content: str
    text: str


class ExceptionInfo(Model):
    type: str
    message: str = ""
    unhandled: bool = False
    break_mode: str | None = None
    location: Location | None = None

    def __post_init__(self) -> None:
        self.message = cut_message(self.message)  # a message of megabytes is said in its first 1000 chars


class StoppedThread(Model):
    thread_id: int
    name: str | None = None
    breakpoint_id: str | None = None
    location: Location | None = None


class Stop(Model):
    """One stop of the target: why, where, and which breakpoints caused it."""

    reason: str
    thread_id: int
    location: Location | None = None
    description: str | None = None
    breakpoint_ids: list[str] = msgspec.field(default_factory=list)
    exception: ExceptionInfo | None = None
    all_threads_stopped: bool = True
    threads: list[StoppedThread] = msgspec.field(default_factory=list)  # kept when there are several
    threads_changed: bool = True  # the set of threads differs from the previous stop's
    left_by: ExceptionInfo | None = None  # a step that left its frame by an exception: which one
    at: float = 0.0
    seq: int = 0
    process: int | None = None  # the pid of the process that stopped (a child's, or the program's own)


class ProcessInfo(Model):
    """A process of the session: the program's own (``root``) or one of the Python processes it started."""

    pid: int
    ppid: int | None = None
    command: str | None = None
    root: bool = False
    debugged: bool = True  # False: it runs without the debugger (child debugging was off)
    state: Literal["running", "paused", "exited"] = "running"
    exit_code: int | None = None
    shown: bool = False  # its stop is the one shown: reads and steps apply to it


class BreakpointRecord(Model):
    """A breakpoint as the user asked for it plus what the debugger and the relay verified."""

    id: str
    kind: Literal["line", "function"] = "line"
    file: str | None = None
    line: int | None = None
    function: str | None = None
    condition: str | None = None
    hit_condition: str | None = None
    log_message: str | None = None
    enabled: bool = True
    verified: bool = False
    pending: bool = False
    message: str | None = None
    actual_line: int | None = None
    suggestion: BreakpointSuggestion | None = None
    hit_count: int = 0
    dap_id: int | None = None
    internal: bool = False
    capture: str | None = None  # the capture point this logpoint records for: not shown as a breakpoint
    # read back from the store without this relay's seal over the code it runs: shown, never sent to a target
    unsealed: bool = False

    @property
    def shown(self) -> bool:
        """A breakpoint the agent set (not the entry stop's, not a capture point's logpoint), or one read back
        unsealed (whatever it claims to be)."""
        return self.unsealed or (not self.internal and self.capture is None)

    # a conditional or counted breakpoint's line runs, as the target reports them while it runs (each run
    # evaluates the condition in the debugger), and their rate over the last report
    runs: int = 0
    runs_per_second: float | None = None


def runs_code(bp: object) -> bool:
    """A breakpoint (asked for, changed or kept) whose condition or log message the program evaluates: its
    author's code runs there."""
    return bool(getattr(bp, "condition", None) or getattr(bp, "log_message", None))


class StoredProfile(Model, kw_only=True):
    """A named breakpoint set as the store keeps it: its breakpoints and who saved it (None: no credentials)."""

    breakpoints: list[BreakpointRecord]
    saved_by: str | None = None
    seal: str | None = None  # HMAC of the above under a key the store does not hold (debugrelay.trust)


class ExceptionFilters(Model):
    filters: list[str] = msgspec.field(default_factory=list)
    exception_types: list[str] = msgspec.field(default_factory=list)


class Watch(Model):
    """A watch expression: evaluated in the top frame whenever the agent asks, stop after stop."""

    id: str
    expression: str
    unsealed: bool = False  # read back from the store without this relay's seal: shown, never evaluated


class AttachSpec(Input):
    host: Host = "127.0.0.1"
    port: Port | None = None
    pid: Pid | None = None
    pod: PodName | None = None  # a Kubernetes pod running debugpy (the kubernetes launcher finds its IP)
    namespace: NamespaceName | None = None
    path_mappings: Mappings = msgspec.field(default_factory=list)


class AttachView(Model):
    """A session's attach as shown to clients: what was set. Fields as in :class:`AttachSpec`."""

    host: str | None = None
    port: int | None = None
    pid: int | None = None
    pod: str | None = None
    namespace: str | None = None
    path_mappings: list[PathMapping] | None = None


class TargetView(Model):
    """What a relay keeps about a live target to find it again, as shown to clients (what is set)."""

    kind: str  # local | docker | kubernetes | remote
    host: str | None = None
    port: int | None = None
    pid: int | None = None
    container_id: str | None = None
    keeper: bool | None = None  # a keeper process holds the paused program while no relay runs
    image: str | None = None  # docker, kubernetes
    pod: str | None = None  # kubernetes
    namespace: str | None = None
    path_mappings: list[tuple[str, str]] | None = None  # kubernetes, remote: (local root, remote root)
    name: str | None = None  # remote: the host as the client named it
    adapter_pid: int | None = None  # local: debugpy's adapter process
    log: str | None = None
    started: float | None = None  # local: the process's start time and user, checked before acting on its pid
    uid: int | None = None
    debugpy_port: int | None = None  # local, kept: the port debugpy listens on behind the keeper
    status_file: str | None = None
    pooled: bool | None = None  # taken from a warm pool


class _Described(msgspec.Struct, kw_only=True, omit_defaults=True, tag_field="kind"):
    """What a relay keeps about a live target to find it again (``Target.describe()``), by kind.

    Stored sealed (debugrelay.trust): a record must decode to the very mapping that was sealed, so a field
    absent stays absent (UNSET) and a null stays null."""

    host: str | msgspec.UnsetType | None = msgspec.UNSET
    port: int | msgspec.UnsetType | None = msgspec.UNSET
    pid: int | msgspec.UnsetType | None = msgspec.UNSET
    container_id: str | msgspec.UnsetType | None = msgspec.UNSET
    keeper: bool | msgspec.UnsetType | None = msgspec.UNSET  # a keeper holds the paused program between relays
    pooled: bool | msgspec.UnsetType | None = msgspec.UNSET  # taken from a warm pool

    @property
    def kind(self) -> str:
        """The target's kind (its tag): the launcher that finds it again."""
        return str(self.__struct_config__.tag)


class LocalTargetRecord(_Described, tag="local"):
    adapter_pid: int | msgspec.UnsetType | None = msgspec.UNSET
    log: str | msgspec.UnsetType | None = msgspec.UNSET
    # the process's start time and user, checked before a later relay acts on its pid (a reused pid)
    started: int | float | msgspec.UnsetType | None = msgspec.UNSET
    uid: int | msgspec.UnsetType | None = msgspec.UNSET
    debugpy_port: int | msgspec.UnsetType | None = msgspec.UNSET  # kept: debugpy's own port behind the keeper
    status_file: str | msgspec.UnsetType | None = msgspec.UNSET
    # a keeper holding an attached program: where that program's debugpy listens (the keeper's is host:port)
    attached_host: str | msgspec.UnsetType | None = msgspec.UNSET
    attached_port: int | msgspec.UnsetType | None = msgspec.UNSET


class DockerTargetRecord(_Described, tag="docker"):
    image: str | msgspec.UnsetType | None = msgspec.UNSET
    # a keeper container holding an attached program: where that program's debugpy listens, its mappings
    attached_host: str | msgspec.UnsetType | None = msgspec.UNSET
    attached_port: int | msgspec.UnsetType | None = msgspec.UNSET
    path_mappings: list[list[str]] | msgspec.UnsetType = msgspec.UNSET  # (local root, remote root)


class KubernetesTargetRecord(_Described, tag="kubernetes"):
    pod: str | msgspec.UnsetType | None = msgspec.UNSET
    namespace: str | msgspec.UnsetType | None = msgspec.UNSET
    image: str | msgspec.UnsetType | None = msgspec.UNSET
    path_mappings: list[list[str]] | msgspec.UnsetType = msgspec.UNSET  # (local root, remote root)


class RemoteTargetRecord(_Described, tag="remote"):
    path_mappings: list[list[str]] | msgspec.UnsetType = msgspec.UNSET
    name: str | msgspec.UnsetType | None = msgspec.UNSET  # the host as the client named it


TargetRecord = LocalTargetRecord | DockerTargetRecord | KubernetesTargetRecord | RemoteTargetRecord


TARGET_RECORDS: dict[str, type[TargetRecord]] = {
    "local": LocalTargetRecord,
    "docker": DockerTargetRecord,
    "kubernetes": KubernetesTargetRecord,
    "remote": RemoteTargetRecord,
}

_T = TypeVar("_T")


def given(value: _T | msgspec.UnsetType | None) -> _T | None:
    """A target record's field as its value or None: a reader treats absent (UNSET) and null alike."""
    return None if isinstance(value, msgspec.UnsetType) else value


class SessionRecord(Model):
    """Everything a relay needs to carry a session on (kept in the state store)."""

    id: str
    name: str | None = None
    status: SessionStatus = "created"
    mode: Literal["launch", "attach"] = "launch"
    created_at: float = 0.0
    last_activity: float = 0.0
    timeout_minutes: float = 60.0
    launch: LaunchRequest | None = None
    attach: AttachSpec | None = None
    target: TargetRecord | None = None
    # proves the relay to the target's keeper, encrypted under a key the store does not hold; never shown
    keeper_secret: str | None = None
    # field -> HMAC of ``target``, ``launch``, each watch (``watch:<id>``), trace (``trace:<id>``) and breakpoint
    # that runs code (``breakpoint:<id>``) under a key the store does not hold (debugrelay.trust): a relay acts
    # on those only when their seal holds; never shown
    seals: dict[str, str] = msgspec.field(default_factory=dict)
    exit_code: int | None = None
    python: str | None = None  # the major.minor of the program's interpreter, when known
    starting: str | None = None  # a launch answered while its target's debugger still starts: what it waits for
    interpreter: str | None = None  # the interpreter the relay chose for a launch naming none, and why
    reason: str | None = None
    ended: str | None = None  # why the target's platform ended it (an eviction, a lost node), as it said
    error: ErrorBody | None = None
    breakpoints: list[BreakpointRecord] = msgspec.field(default_factory=list)
    exception_filters: ExceptionFilters | None = None  # in force for this run
    # the exception breakpoints an agent set on the session itself: each launch that gives no
    # stop_on_exception runs with them (a launch's own stop_on_exception is for its run only)
    exception_setting: ExceptionFilters | None = None
    stop: Stop | None = None
    stop_history: list[Stop] = msgspec.field(default_factory=list)
    stop_count: int = 0
    next_breakpoint: int = 1
    watches: list[Watch] = msgspec.field(default_factory=list)
    next_watch: int = 1
    traces: list[TraceRecord] = msgspec.field(default_factory=list)  # functions traced, applied at each launch
    next_trace: int = 1
    owner: str | None = None  # the relay replica that holds it
    created_by: str | None = None  # the credential that created it or was handed it: its owner (None: no credentials)
    # the credential that created it, through hand-overs: the session counts against it too until it ends
    made_by: str | None = None
    shared_with: list[str] = msgspec.field(default_factory=list)  # credential names, or ``role:<role>``
    recovered: bool = False
    notes: list[str] = msgspec.field(default_factory=list)
    processes: list[ProcessInfo] = msgspec.field(default_factory=list)  # the root's children, newest last
    # the output cursor up to which an answer carried the program's new output (None: from the start); a
    # run starts it at the end of the previous run's output
    output_answered: str | None = None
    published: list[PublishedPort] = msgspec.field(default_factory=list)  # the launch's ports, where they are

    def counted_against(self) -> set[str]:
        """The credentials whose ``max_sessions`` this session takes a slot of: its owner and its maker,
        while it has not ended."""
        if self.status == "terminated":
            return set()
        return {n for n in (self.created_by, self.made_by) if n is not None}


class OutputEntry(Model):
    type: str
    text: str
    timestamp: str
    cursor: str = ""
