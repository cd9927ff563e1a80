"""The operations an agent-facing adapter drives, whether the relay runs in this process or elsewhere,
each declared once here: its parameters (with their bounds), its answer, and how HTTP reaches it.

:class:`RelayService` answers them in this process; ``debugrelay.client.RemoteService`` answers the
same ones through a running relay's HTTP API, derived from these declarations like the API's routes.
Both return the same typed answers, so an MCP tool or a CLI command behaves the same whichever it is given.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Annotated, Literal

import msgspec

from debugrelay.models import (
    Analysis,
    AttachSpec,
    Autopsy,
    BreakpointList,
    BreakpointRequest,
    BreakpointUpdate,
    BreakpointView,
    CaptureList,
    CapturePoint,
    CaptureRequest,
    CaptureTable,
    Changes,
    ChildrenPage,
    Cleared,
    Completions,
    Deleted,
    EvaluateResult,
    EvidencePage,
    ExceptionFiltersView,
    HttpCall,
    HttpCallView,
    InputSent,
    LaunchRequest,
    ObjectInspection,
    OutputPage,
    Ping,
    ProcessList,
    Profile,
    ProfileApplied,
    ProfileList,
    ProfileSaved,
    Redactions,
    ScopedVariables,
    Scopes,
    SessionDetail,
    SessionDocument,
    SessionExport,
    SessionList,
    SetVariableResult,
    Snapshot,
    SnapshotBounds,
    SnapshotList,
    SnapshotSummary,
    SourceText,
    StackTrace,
    Status,
    Threads,
    VariablesPage,
    Watches,
    WatchValue,
)
from debugrelay.models.limits import (
    Count,
    Details,
    EvidenceId,
    ExceptionFilter,
    ExceptionType,
    Expression,
    FrameIndex,
    Frames,
    FramesWithVariables,
    Grep,
    InnerDepth,
    InputText,
    Line,
    Name,
    OutputLimit,
    ProcessId,
    ScopeName,
    Seconds,
    SourcePath,
    Start,
    TimeoutMinutes,
    VariablePath,
)

from ._operations import declare

SESSION = "/sessions/{session_id}"


class DebugService(abc.ABC):
    """What the MCP tools, the CLI and the HTTP API ask for; every answer is a typed model."""

    # -- sessions ------------------------------------------------------------------------------------

    @declare("GET", "/sessions", "List sessions with their status", tag="sessions")
    @abc.abstractmethod
    async def list_sessions(self) -> SessionList:
        """Sessions, oldest first."""

    @declare(
        "POST",
        "/sessions",
        "Create a debug session (launch mode, or attach to a debugpy)",
        tag="sessions",
        status=201,
        routed=False,
    )
    @abc.abstractmethod
    async def create_session(
        self,
        *,
        name: str | None = None,
        timeout_minutes: float | None = None,
        attach: AttachSpec | None = None,
        launch: LaunchRequest | None = None,
    ) -> SessionDetail:
        """A new session: ``created``, attached when ``attach`` is given, launched when ``launch`` is."""

    @declare("GET", SESSION, "Session detail", tag="sessions")
    @abc.abstractmethod
    async def session(self, session_id: str) -> SessionDetail:
        """Session detail, read from the record only (the debugger is not asked)."""

    @declare("PATCH", SESSION, "Rename a session or change its idle timeout", tag="sessions", named="SessionPatch")
    @abc.abstractmethod
    async def update_session(
        self, session_id: str, *, name: Name | None = None, timeout_minutes: TimeoutMinutes | None = None
    ) -> SessionDetail:
        """A new name or idle timeout (what is not given stays)."""

    @declare("DELETE", SESSION, "End the target and forget the session", tag="sessions")
    @abc.abstractmethod
    async def delete_session(self, session_id: str) -> Deleted:
        """End the target and forget the session."""

    @declare("GET", SESSION + "/status", "Compact status: paused where and why, or exit code", tag="sessions")
    @abc.abstractmethod
    async def status(self, session_id: str) -> Status:
        """Compact status, read from the record only."""

    @declare("GET", SESSION + "/ping", "Heartbeat: resets the idle timeout", tag="sessions", changes=True)
    @abc.abstractmethod
    async def ping(self, session_id: str) -> Ping:
        """Keep the session from expiring; says when it would."""

    @declare(
        "GET", SESSION + "/export", "Session configuration: launch spec, breakpoints, filters, name", tag="sessions"
    )
    @abc.abstractmethod
    async def export(self, session_id: str, *, reveal_env: bool = False) -> SessionExport:
        """The session's configuration document; environment values masked unless ``reveal_env``."""

    @declare(
        "POST",
        "/sessions/import",
        "Create a session from an export (start it with start: true)",
        tag="sessions",
        status=201,
        body="document",
    )
    @abc.abstractmethod
    async def import_session(self, document: SessionDocument) -> SessionDetail:
        """A new session made from an export."""

    @declare(
        "POST",
        SESSION + "/clone",
        "A new session: same spec and breakpoints",
        tag="sessions",
        status=201,
        named="CloneBody",
    )
    @abc.abstractmethod
    async def clone(self, session_id: str, *, name: Name | None = None, start: bool = False) -> SessionDetail:
        """A new session with the same launch and breakpoints; ``start`` runs it right away."""

    # -- running the program -------------------------------------------------------------------------

    @declare("POST", SESSION + "/launch", "Launch a script or module under debugpy", tag="sessions", body="spec")
    @abc.abstractmethod
    async def launch(self, session_id: str, spec: LaunchRequest) -> Status:
        """Start the program; answers as soon as it runs."""

    @declare(
        "POST",
        SESSION + "/attach",
        "Attach to a debugpy listening at host:port or in a pid",
        tag="sessions",
        body="spec",
    )
    @abc.abstractmethod
    async def attach(self, session_id: str, spec: AttachSpec) -> Status:
        """Attach to a debugpy that listens (host and port) or into a running process (pid)."""

    @declare(
        "POST",
        SESSION + "/{command}",
        "continue, step-over, step-into or step-out",
        tag="sessions",
        wire={"wait": "timeout", "details": "locals", "every": "all"},
        in_query=("details",),
        routed=False,
    )
    @abc.abstractmethod
    async def resume(
        self,
        session_id: str,
        command: str,
        thread_id: int | None = None,
        wait: Seconds = 0.0,
        details: bool = False,
        *,
        every: bool = False,
    ) -> Status:
        """continue/step-*; waits up to ``wait`` s for the next stop (``timed_out`` when none came).

        ``details``: a stop comes with its source line, locals and watch values (see ``Status``); ``every``:
        a continue resumes every paused process of the program, not only the one whose stop is shown."""

    @declare("POST", SESSION + "/pause", "Pause the running target", tag="sessions")
    @abc.abstractmethod
    async def pause(self, session_id: str) -> Status:
        """Pause the running target."""

    @declare(
        "POST",
        SESSION + "/wait",
        "Long-poll until the target pauses or ends",
        tag="sessions",
        wire={"details": "locals"},
        in_query=("details",),
        named="WaitBody",
    )
    @abc.abstractmethod
    async def wait(
        self, session_id: str, timeout: Seconds = 30.0, include_autopsy: bool = False, details: Details = False
    ) -> Status:
        """Long-poll until paused or ended (the current stop when already paused); ``details`` as resume."""

    @declare("POST", SESSION + "/restart", "Restart the program with the same launch and breakpoints", tag="sessions")
    @abc.abstractmethod
    async def restart(self, session_id: str) -> Status:
        """Run the program again with the same launch and breakpoints."""

    @declare("POST", SESSION + "/terminate", "Kill the target; the session stays", tag="sessions")
    @abc.abstractmethod
    async def terminate(self, session_id: str) -> Status:
        """Kill the target; the session stays."""

    @declare("POST", SESSION + "/detach", "Disconnect and leave the target running", tag="sessions")
    @abc.abstractmethod
    async def detach(self, session_id: str) -> Status:
        """Disconnect and leave the target running."""

    @declare(
        "POST",
        SESSION + "/request",
        "Send an HTTP request to the program (a service): answers with its response or the stop it caused",
        tag="sessions",
        body="call",
    )
    @abc.abstractmethod
    async def request(self, session_id: str, call: HttpCall) -> Status:
        """Send an HTTP request to the program (a service) from where the relay reaches it; answered with
        the response, or with the stop the request caused, whichever comes first."""

    @declare(
        "GET", SESSION + "/requests/{request_id}", "A request sent to the program, and its response", tag="sessions"
    )
    @abc.abstractmethod
    async def request_result(self, session_id: str, request_id: str) -> HttpCallView:
        """A request sent earlier: pending (its handler is paused, say), answered or failed."""

    # -- output and input ----------------------------------------------------------------------------

    @declare("GET", SESSION + "/output", "stdout/stderr since a cursor, paginated", tag="sessions")
    @abc.abstractmethod
    async def output(
        self,
        session_id: str,
        since: str | None = None,
        limit: OutputLimit = 200,
        stream: str | None = None,
        *,
        newest: bool = False,
    ) -> OutputPage:
        """Output entries after a cursor: the first ``limit`` of them, or with ``newest`` the last (``skipped``
        says that earlier ones were left out; the cursor ends the output)."""

    @declare("POST", SESSION + "/output/new", "Output no answer carried yet, marked carried", tag="sessions")
    @abc.abstractmethod
    async def new_output(self, session_id: str) -> OutputPage:
        """The run's output that no answer of this session carried yet (the newest of it when there is much),
        marked as carried: an answer made by any client, through any process, never repeats it."""

    @declare("DELETE", SESSION + "/output", "Clear the output buffer", tag="sessions")
    @abc.abstractmethod
    async def clear_output(self, session_id: str) -> Cleared:
        """Forget the output kept so far."""

    @declare(
        "POST",
        SESSION + "/input",
        "Send text to the target's stdin",
        tag="sessions",
        named="InputBody",
        wire={"text": "input"},
        aliases={"text": ("text", "data")},
    )
    @abc.abstractmethod
    async def send_input(self, session_id: str, text: InputText, newline: bool = False) -> InputSent:
        """Text for the program's stdin (``newline`` ends it with one)."""

    # -- breakpoints ---------------------------------------------------------------------------------

    @declare(
        "GET",
        SESSION + "/breakpoints",
        "All breakpoints with verification, hit counts and never-hit marks",
        tag="breakpoints",
    )
    @abc.abstractmethod
    async def breakpoints(self, session_id: str) -> BreakpointList:
        """The session's breakpoints with verification and hit counts."""

    @declare(
        "POST",
        SESSION + "/breakpoints",
        "Set one breakpoint, or several with a list (all or none)",
        tag="breakpoints",
        wire={"requests": "breakpoints"},
        routed=False,
    )
    @abc.abstractmethod
    async def add_breakpoints(self, session_id: str, requests: list[BreakpointRequest]) -> list[BreakpointView]:
        """Set breakpoints, validated against the source first; all or none."""

    @declare(
        "GET", SESSION + "/breakpoints/{bp_id}", "One breakpoint", tag="breakpoints", wire={"breakpoint_id": "bp_id"}
    )
    @abc.abstractmethod
    async def breakpoint(self, session_id: str, breakpoint_id: str) -> BreakpointView:
        """One breakpoint with its verification and hit count."""

    @declare(
        "PATCH",
        SESSION + "/breakpoints/{bp_id}",
        "Change condition, hit condition, log message, enabled, line",
        tag="breakpoints",
        wire={"breakpoint_id": "bp_id"},
        body="change",
    )
    @abc.abstractmethod
    async def update_breakpoint(self, session_id: str, breakpoint_id: str, change: BreakpointUpdate) -> BreakpointView:
        """Change a breakpoint in place (what is not given stays)."""

    @declare(
        "DELETE",
        SESSION + "/breakpoints/{bp_id}",
        "Remove a breakpoint",
        tag="breakpoints",
        wire={"breakpoint_id": "bp_id"},
    )
    @abc.abstractmethod
    async def remove_breakpoint(self, session_id: str, breakpoint_id: str) -> Deleted:
        """Remove one breakpoint."""

    @declare(
        "POST",
        SESSION + "/exception-breakpoints",
        "Pause on raised/uncaught exceptions, optionally only of given types (and subclasses)",
        tag="breakpoints",
        named="ExceptionBreakpointsBody",
    )
    @abc.abstractmethod
    async def set_exception_breakpoints(
        self, session_id: str, filters: Sequence[ExceptionFilter] = (), exception_types: Sequence[ExceptionType] = ()
    ) -> ExceptionFiltersView:
        """Which exceptions pause the target."""

    @declare("GET", SESSION + "/exception-breakpoints", "Exception breakpoint filters in force", tag="breakpoints")
    @abc.abstractmethod
    async def exception_breakpoints(self, session_id: str) -> ExceptionFiltersView:
        """The exception filters in force."""

    @declare("GET", "/breakpoint-profiles", "Named breakpoint sets", tag="breakpoints")
    @abc.abstractmethod
    async def list_profiles(self) -> ProfileList:
        """The saved breakpoint profiles."""

    @declare("GET", "/breakpoint-profiles/{name}", "One named breakpoint set", tag="breakpoints")
    @abc.abstractmethod
    async def profile(self, name: str) -> Profile:
        """One saved breakpoint profile."""

    @declare(
        "POST",
        "/breakpoint-profiles",
        "Save a named breakpoint set (from a session, or given)",
        tag="breakpoints",
        status=201,
        wire={"requests": "breakpoints"},
        routed=False,
    )
    @abc.abstractmethod
    async def save_profile(
        self, name: str, *, session_id: str | None = None, requests: list[BreakpointRequest] | None = None
    ) -> ProfileSaved:
        """Save a session's breakpoints (or the given ones) under a name."""

    @declare("POST", SESSION + "/breakpoint-profiles/{name}/apply", "Set a profile's breakpoints", tag="breakpoints")
    @abc.abstractmethod
    async def apply_profile(self, session_id: str, name: str) -> ProfileApplied:
        """Set a saved profile's breakpoints in the session."""

    # -- threads, processes, stack, variables --------------------------------------------------------

    @declare("GET", SESSION + "/threads", "Threads of the target", tag="inspection")
    @abc.abstractmethod
    async def threads(self, session_id: str) -> Threads:
        """Threads of the target."""

    @declare(
        "GET",
        SESSION + "/processes",
        "The program's processes: its own, then the Python processes it started",
        tag="inspection",
    )
    @abc.abstractmethod
    async def processes(self, session_id: str) -> ProcessList:
        """The program's processes: its own and the Python processes it started, debugged or not; each with
        pid, parent pid, command line, state (running, paused, exited), exit code, and whether the debugger
        follows it (debug_subprocesses)."""

    @declare(
        "POST",
        SESSION + "/processes/{pid}/show",
        "Show the stop of another paused process: stack, variables, evaluate and steps apply to it",
        tag="sessions",
    )
    @abc.abstractmethod
    async def show_process(self, session_id: str, pid: ProcessId) -> Status:
        """Show the stop of another paused process: reads and steps apply to it from then on. The stop shown
        until now waits its turn, as ``processes_waiting`` says, and is shown again when this process goes on."""

    @declare(
        "GET",
        SESSION + "/stacktrace",
        "Call stack of a paused thread (frame ids are indexes, 0 = top)",
        tag="inspection",
        wire={"start": "start_frame", "count": "max_frames"},
    )
    @abc.abstractmethod
    async def stacktrace(
        self,
        session_id: str,
        thread_id: int | None = None,
        start: Start = 0,
        count: Count = 20,
        *,
        library: bool = False,
    ) -> StackTrace:
        """Frames of a paused thread (frame ids are indexes, 0 = top); runs of library frames (stdlib,
        site-packages, pytest) folded into one entry with their count and last frame unless ``library``."""

    @declare(
        "GET",
        SESSION + "/frames/{frame_id}/scopes",
        "Scopes (Locals, Globals) of a frame",
        tag="inspection",
        wire={"frame_index": "frame_id"},
    )
    @abc.abstractmethod
    async def scopes(self, session_id: str, frame_index: int = 0, thread_id: int | None = None) -> Scopes:
        """Scopes (Locals, Globals) of a frame."""

    @declare("GET", SESSION + "/scopes/{reference}/variables", "Variables of a scope", tag="inspection")
    @abc.abstractmethod
    async def variables(
        self, session_id: str, reference: int, start: Start = 0, count: Count | None = None
    ) -> VariablesPage:
        """Children of a scope or an expandable value."""

    @declare(
        "GET",
        SESSION + "/frames/{frame_id}/variables",
        "Variables of a frame's first scope (Locals)",
        tag="inspection",
        wire={"frame_index": "frame_id"},
    )
    @abc.abstractmethod
    async def frame_locals(
        self,
        session_id: str,
        frame_index: int = 0,
        *,
        thread_id: int | None = None,
        start: Start = 0,
        count: Count | None = None,
        summary: bool = False,
    ) -> VariablesPage:
        """The frame's first scope (Locals); ``summary``: names, types and sizes only."""

    @declare(
        "GET",
        SESSION + "/variables/{reference}",
        "Children of an expandable variable, paged by start/count",
        tag="inspection",
        routed=False,
    )
    @abc.abstractmethod
    async def children(
        self, session_id: str, reference: int, start: Start = 0, count: Count | None = 100, *, by_offset: bool = False
    ) -> ChildrenPage:
        """Children of an expandable value, paged."""

    @declare(
        "GET",
        SESSION + "/variables",
        "A frame's variables by scope, or the children of a path",
        tag="inspection",
        wire={"frame_index": "frame_id"},
    )
    @abc.abstractmethod
    async def scoped_variables(
        self,
        session_id: str,
        *,
        scope: ScopeName = "all",
        frame_index: FrameIndex = 0,
        thread_id: int | None = None,
        expand: VariablePath | None = None,
        start: Start = 0,
        count: Count | None = None,
    ) -> ScopedVariables:
        """A frame's variables by scope (locals, arguments, globals, all), or the children of a path."""

    @declare(
        "POST",
        SESSION + "/evaluate",
        "Evaluate an expression in a frame (default: top frame)",
        tag="inspection",
        changes=False,
        named="EvaluateBody",
        aliases={"frame_index": ("frame_id",)},
    )
    @abc.abstractmethod
    async def evaluate(
        self,
        session_id: str,
        expression: Expression,
        *,
        frame_index: FrameIndex | None = 0,
        thread_id: int | None = None,
        context: Literal["watch", "repl", "hover", "clipboard", "variables"] = "repl",
        format: Literal["default", "hex", "binary"] | None = None,
    ) -> EvaluateResult:
        """Evaluate in a paused frame; ``format`` hex/binary applies to integers."""

    @declare(
        "POST",
        SESSION + "/variables/{reference}/set",
        "Set a variable's value (a Python expression)",
        tag="inspection",
        named="SetVariableBody",
    )
    @abc.abstractmethod
    async def set_variable(
        self, session_id: str, reference: int, name: Expression, value: Expression
    ) -> SetVariableResult:
        """Set a variable of a scope or a value to what a Python expression gives."""

    @declare(
        "POST",
        SESSION + "/completions",
        "Completions in the paused frame's context",
        tag="inspection",
        changes=False,
        named="CompletionsBody",
        wire={"frame_index": "frame_id"},
    )
    @abc.abstractmethod
    async def completions(
        self, session_id: str, text: Expression, column: int | None = None, frame_index: FrameIndex | None = None
    ) -> Completions:
        """What could complete ``text`` in the paused frame."""

    @declare(
        "GET", SESSION + "/source", "Source of a file (any frame's file), optionally a line range", tag="inspection"
    )
    @abc.abstractmethod
    async def source(self, session_id: str, path: SourcePath, start: Line = 1, end: int | None = None) -> SourceText:
        """A source file's text, or lines of it."""

    @abc.abstractmethod
    async def source_line(self, session_id: str, path: str, line: int) -> str | None:
        """One line of a source file, or None when it cannot be read."""

    @declare(
        "GET",
        SESSION + "/autopsy",
        "Everything about the exception the session is stopped at, in one call",
        tag="inspection",
    )
    @abc.abstractmethod
    async def autopsy(
        self,
        session_id: str,
        *,
        max_frames: Frames = 10,
        include_variables_for_frames: FramesWithVariables = 1,
        max_inner_depth: InnerDepth = 5,
    ) -> Autopsy:
        """The whole exception context in one answer."""

    @declare(
        "POST",
        SESSION + "/object-inspect",
        "Walk one object: fields, sizes, cycles",
        tag="inspection",
        changes=False,
        named="ObjectInspectBody",
        aliases={"frame_index": ("frame_id",)},
    )
    @abc.abstractmethod
    async def object_inspect(
        self,
        session_id: str,
        object_ref: Expression,
        *,
        # 1..10; outside that the answer is DEPTH_EXCEEDED (the service's own check), not a schema refusal
        depth: Annotated[int, msgspec.Meta(description="Levels to expand, 1 to 10 (else DEPTH_EXCEEDED).")] = 1,
        frame_index: FrameIndex = 0,
        thread_id: int | None = None,
    ) -> ObjectInspection:
        """An object's fields, expanded to a depth (1 to 10, else DEPTH_EXCEEDED)."""

    @declare(
        "GET",
        SESSION + "/changes",
        "Locals of the top frame that changed since the previous stop in that frame",
        tag="inspection",
    )
    @abc.abstractmethod
    async def changes(self, session_id: str) -> Changes:
        """Locals of the top frame that changed since the previous stop in that frame."""

    @declare(
        "GET",
        SESSION + "/redactions",
        "What was redacted from this session's answers: rule, placeholder, where, when",
        tag="redaction",
    )
    @abc.abstractmethod
    async def redactions(self, session_id: str) -> Redactions:
        """What the session's answers have had redacted (rule, placeholder, where, when; never the value)."""

    def unpersisted(self, session_id: str) -> bool:
        """Whether changes to the session wait for the state store (it was unreachable when made)."""
        return False

    # -- watches -------------------------------------------------------------------------------------

    @declare(
        "POST",
        SESSION + "/watch",
        "Add a watch expression; answers with its value when paused",
        tag="inspection",
        named="WatchBody",
    )
    @abc.abstractmethod
    async def add_watch(self, session_id: str, expression: Expression) -> WatchValue:
        """A watch expression: its value comes with every stop answered with details."""

    @declare("GET", SESSION + "/watch", "Watch expressions with their values in the top frame", tag="inspection")
    @abc.abstractmethod
    async def watches(self, session_id: str) -> Watches:
        """The watch expressions with their values at the current stop."""

    @declare("DELETE", SESSION + "/watch/{watch_id}", "Remove a watch expression", tag="inspection")
    @abc.abstractmethod
    async def remove_watch(self, session_id: str, watch_id: str) -> Deleted:
        """Remove a watch expression."""

    # -- evidence (seed 002) -------------------------------------------------------------------------

    @declare(
        "POST",
        SESSION + "/snapshots",
        "Snapshot the whole program (a running one is paused briefly)",
        tag="evidence",
        status=201,
        body="bounds",
    )
    @abc.abstractmethod
    async def take_snapshot(self, session_id: str, bounds: SnapshotBounds | None = None) -> SnapshotSummary:
        """Every thread's stack with locals, tasks, locks, process facts; a running program is paused briefly."""

    @declare("GET", SESSION + "/snapshots", "The session's snapshots, in brief", tag="evidence")
    @abc.abstractmethod
    async def snapshots(self, session_id: str) -> SnapshotList:
        """The session's snapshots (post-mortem included), in brief."""

    @declare(
        "GET", SESSION + "/snapshots/{snapshot_id}", "A whole snapshot ('post_mortem': the crash's)", tag="evidence"
    )
    @abc.abstractmethod
    async def snapshot(self, session_id: str, snapshot_id: str) -> Snapshot:
        """A whole snapshot; ``post_mortem`` names the session's latest post-mortem."""

    @declare(
        "POST",
        SESSION + "/captures",
        "A capture point: values at a line on each hit, without pausing",
        tag="evidence",
        status=201,
        body="request",
    )
    @abc.abstractmethod
    async def add_capture(self, session_id: str, request: CaptureRequest) -> CapturePoint:
        """A capture point: values recorded at a line on each hit, without pausing."""

    @declare("GET", SESSION + "/captures", "The session's capture points", tag="evidence")
    @abc.abstractmethod
    async def captures(self, session_id: str) -> CaptureList:
        """The session's capture points."""

    @declare("GET", SESSION + "/captures/{capture_id}", "A capture point's rows, one per hit", tag="evidence")
    @abc.abstractmethod
    async def capture_table(
        self, session_id: str, capture_id: str, start: Start = 0, count: Count = 100
    ) -> CaptureTable:
        """A capture point's rows, one per hit."""

    @declare("DELETE", SESSION + "/captures/{capture_id}", "Remove a capture point", tag="evidence")
    @abc.abstractmethod
    async def remove_capture(self, session_id: str, capture_id: str) -> CapturePoint:
        """Remove a capture point (its rows are answered with it one last time)."""

    @declare(
        "GET",
        "/evidence/{evidence_id}",
        "An evidence item's lines, paged (offset, limit) or searched (grep)",
        tag="evidence",
    )
    @abc.abstractmethod
    async def evidence(
        self, evidence_id: str, *, offset: Start = 0, limit: Count = 200, grep: Grep | None = None
    ) -> EvidencePage:
        """An evidence item's lines, paged or searched."""

    @declare(
        "POST",
        SESSION + "/analyze",
        "Known patterns (deadlock, starvation, leak...) with their evidence",
        tag="evidence",
        named="AnalyzeBody",
    )
    @abc.abstractmethod
    async def analyze(
        self,
        session_id: str,
        snapshot_ids: Annotated[list[EvidenceId], msgspec.Meta(max_length=2)] | None = None,
        *,
        take: Annotated[int, msgspec.Meta(ge=0, le=2)] = 0,
        interval: Annotated[float, msgspec.Meta(ge=0, le=30)] = 1.0,
    ) -> Analysis:
        """Known patterns over one or two snapshots (oldest first), or ``take`` new ones ``interval`` s apart,
        with their evidence ids."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release what the service holds."""
