"""Session, breakpoint and stop records: what the state store keeps and the API shows."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from ._base import Input, Model
from ._launch import LaunchRequest, PathMapping
from .limits import Host, NamespaceName, Pid, PodName, Port

SessionStatus = Literal["created", "launching", "running", "paused", "terminated", "failed"]


class Location(Model):
    file: str | None = None
    line: int | None = None
    function: str | None = None
    column: int | None = None


class ExceptionInfo(Model):
    type: str
    message: str = ""
    unhandled: bool = False
    break_mode: str | None = None
    location: Location | None = None


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
    suggestion: dict[str, Any] | None = None
    hit_count: int = 0
    dap_id: int | None = None
    internal: bool = False
    # a conditional or counted breakpoint's line runs, as the target reports them while it runs (each run
    # evaluates the condition in the debugger), and their rate over the last report
    runs: int = 0
    runs_per_second: float | None = None


class ExceptionFilters(Model):
    filters: list[str] = msgspec.field(default_factory=list)
    exception_types: list[str] = msgspec.field(default_factory=list)


class Watch(Model):
    """A watch expression: evaluated in the top frame whenever the agent asks, stop after stop."""

    id: str
    expression: str


class AttachSpec(Input):
    host: Host = "127.0.0.1"
    port: Port | None = None
    pid: Pid | None = None
    pod: PodName | None = None  # a Kubernetes pod running debugpy (the kubernetes launcher finds its IP)
    namespace: NamespaceName | None = None
    path_mappings: list[PathMapping] = msgspec.field(default_factory=list)


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
    target: dict[str, Any] | None = None
    keeper_secret: str | None = None  # proves the relay to the target's keeper; never shown
    exit_code: int | None = None
    reason: str | None = None
    error: dict[str, Any] | None = None
    breakpoints: list[BreakpointRecord] = msgspec.field(default_factory=list)
    exception_filters: ExceptionFilters | None = None
    stop: Stop | None = None
    stop_history: list[Stop] = msgspec.field(default_factory=list)
    stop_count: int = 0
    next_breakpoint: int = 1
    watches: list[Watch] = msgspec.field(default_factory=list)
    next_watch: int = 1
    owner: str | None = None
    recovered: bool = False
    notes: list[str] = msgspec.field(default_factory=list)


class OutputEntry(Model):
    type: str
    text: str
    timestamp: str
    cursor: str = ""
