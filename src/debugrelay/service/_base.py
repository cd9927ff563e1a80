"""The operations an agent-facing adapter drives, whether the relay runs in this process or elsewhere.

:class:`RelayService` answers them in this process; ``debugrelay.client.RemoteService`` answers the
same ones through a running relay's HTTP API. Both return the same typed answers, so an MCP tool or
a CLI command behaves the same whichever it is given.
"""

from __future__ import annotations

import abc

from debugrelay.models import (
    Analysis,
    AttachSpec,
    Autopsy,
    BreakpointList,
    BreakpointRequest,
    BreakpointView,
    CaptureList,
    CapturePoint,
    CaptureRequest,
    CaptureTable,
    Changes,
    Deleted,
    EvaluateResult,
    EvidencePage,
    ExceptionFiltersView,
    HttpCall,
    HttpCallView,
    LaunchRequest,
    ObjectInspection,
    OutputPage,
    ProcessList,
    Redactions,
    ScopedVariables,
    Scopes,
    SessionDetail,
    SessionList,
    Snapshot,
    SnapshotBounds,
    SnapshotList,
    SnapshotSummary,
    StackTrace,
    Status,
    Threads,
    VariablesPage,
    Watches,
    WatchValue,
)


class DebugService(abc.ABC):
    """What the MCP tools and the CLI ask for; every answer is a typed model."""

    @abc.abstractmethod
    async def list_sessions(self) -> SessionList:
        """Sessions, oldest first."""

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

    @abc.abstractmethod
    async def session(self, session_id: str) -> SessionDetail:
        """Session detail, read from the record only (the debugger is not asked)."""

    @abc.abstractmethod
    async def delete_session(self, session_id: str) -> Deleted:
        """End the target and forget the session."""

    @abc.abstractmethod
    async def status(self, session_id: str) -> Status:
        """Compact status, read from the record only."""

    @abc.abstractmethod
    async def launch(self, session_id: str, spec: LaunchRequest) -> Status:
        """Start the program; answers as soon as it runs."""

    @abc.abstractmethod
    async def resume(
        self,
        session_id: str,
        command: str,
        thread_id: int | None = None,
        wait: float = 0.0,
        details: bool = False,
        *,
        every: bool = False,
    ) -> Status:
        """continue/step-*; waits up to ``wait`` s for the next stop (``timed_out`` when none came).

        ``details``: a stop comes with its source line, locals and watch values (see ``Status``); ``every``:
        a continue resumes every paused process of the program, not only the one whose stop is shown."""

    @abc.abstractmethod
    async def pause(self, session_id: str) -> Status:
        """Pause the running target."""

    @abc.abstractmethod
    async def wait(
        self, session_id: str, timeout: float = 30.0, include_autopsy: bool = False, details: bool = False
    ) -> Status:
        """Long-poll until paused or ended (the current stop when already paused); ``details`` as resume."""

    @abc.abstractmethod
    async def restart(self, session_id: str) -> Status:
        """Run the program again with the same launch and breakpoints."""

    @abc.abstractmethod
    async def terminate(self, session_id: str) -> Status:
        """Kill the target; the session stays."""

    @abc.abstractmethod
    async def detach(self, session_id: str) -> Status:
        """Disconnect and leave the target running."""

    @abc.abstractmethod
    async def output(
        self,
        session_id: str,
        since: str | None = None,
        limit: int = 200,
        stream: str | None = None,
        *,
        newest: bool = False,
    ) -> OutputPage:
        """Output entries after a cursor: the first ``limit`` of them, or with ``newest`` the last."""

    @abc.abstractmethod
    async def new_output(self, session_id: str) -> OutputPage:
        """The run's output that no answer of this session carried yet (the newest of it when there is much),
        marked as carried: an answer made by any client, through any process, never repeats it."""

    @abc.abstractmethod
    async def breakpoints(self, session_id: str) -> BreakpointList:
        """The session's breakpoints with verification and hit counts."""

    @abc.abstractmethod
    async def add_breakpoints(self, session_id: str, requests: list[BreakpointRequest]) -> list[BreakpointView]:
        """Set breakpoints, validated against the source first; all or none."""

    @abc.abstractmethod
    async def remove_breakpoint(self, session_id: str, breakpoint_id: str) -> Deleted:
        """Remove one breakpoint."""

    @abc.abstractmethod
    async def set_exception_breakpoints(
        self, session_id: str, filters: list[str], exception_types: list[str]
    ) -> ExceptionFiltersView:
        """Which exceptions pause the target."""

    @abc.abstractmethod
    async def threads(self, session_id: str) -> Threads:
        """Threads of the target."""

    @abc.abstractmethod
    async def processes(self, session_id: str) -> ProcessList:
        """The program's processes: its own and the Python processes it started, debugged or not."""

    @abc.abstractmethod
    async def request(self, session_id: str, call: HttpCall) -> Status:
        """Send an HTTP request to the program (a service) from where the relay reaches it; answered with
        the response, or with the stop the request caused, whichever comes first."""

    @abc.abstractmethod
    async def request_result(self, session_id: str, request_id: str) -> HttpCallView:
        """A request sent earlier: pending (its handler is paused, say), answered or failed."""

    @abc.abstractmethod
    async def show_process(self, session_id: str, pid: int) -> Status:
        """Show the stop of another paused process: reads and steps apply to it from then on."""

    @abc.abstractmethod
    async def stacktrace(
        self, session_id: str, thread_id: int | None = None, start: int = 0, count: int = 20, *, library: bool = False
    ) -> StackTrace:
        """Frames of a paused thread (frame ids are indexes, 0 = top); runs of library frames folded
        into one entry unless ``library``."""

    @abc.abstractmethod
    async def scopes(self, session_id: str, frame_index: int = 0, thread_id: int | None = None) -> Scopes:
        """Scopes (Locals, Globals) of a frame."""

    @abc.abstractmethod
    async def variables(
        self, session_id: str, reference: int, start: int = 0, count: int | None = None
    ) -> VariablesPage:
        """Children of a scope or an expandable value."""

    @abc.abstractmethod
    async def scoped_variables(
        self,
        session_id: str,
        *,
        scope: str = "all",
        frame_index: int = 0,
        thread_id: int | None = None,
        expand: str | None = None,
        start: int = 0,
        count: int | None = None,
    ) -> ScopedVariables:
        """A frame's variables by scope (locals, arguments, globals, all), or the children of a path."""

    @abc.abstractmethod
    async def evaluate(
        self,
        session_id: str,
        expression: str,
        *,
        frame_index: int | None = 0,
        thread_id: int | None = None,
        context: str = "repl",
        format: str | None = None,
    ) -> EvaluateResult:
        """Evaluate in a paused frame; ``format`` hex/binary applies to integers."""

    @abc.abstractmethod
    async def source_line(self, session_id: str, path: str, line: int) -> str | None:
        """One line of a source file, or None when it cannot be read."""

    @abc.abstractmethod
    async def autopsy(
        self,
        session_id: str,
        *,
        max_frames: int = 10,
        include_variables_for_frames: int = 1,
        max_inner_depth: int = 5,
    ) -> Autopsy:
        """The whole exception context in one answer."""

    @abc.abstractmethod
    async def object_inspect(
        self,
        session_id: str,
        object_ref: str,
        *,
        depth: int = 1,
        frame_index: int = 0,
        thread_id: int | None = None,
    ) -> ObjectInspection:
        """An object's fields, expanded to a depth."""

    @abc.abstractmethod
    async def redactions(self, session_id: str) -> Redactions:
        """What the session's answers have had redacted (rule, placeholder, where, when; never the value)."""

    def unpersisted(self, session_id: str) -> bool:
        """Whether changes to the session wait for the state store (it was unreachable when made)."""
        return False

    @abc.abstractmethod
    async def add_watch(self, session_id: str, expression: str) -> WatchValue:
        """A watch expression: its value comes with every stop answered with details."""

    @abc.abstractmethod
    async def watches(self, session_id: str) -> Watches:
        """The watch expressions with their values at the current stop."""

    @abc.abstractmethod
    async def remove_watch(self, session_id: str, watch_id: str) -> Deleted:
        """Remove a watch expression."""

    @abc.abstractmethod
    async def changes(self, session_id: str) -> Changes:
        """Locals of the top frame that changed since the previous stop in that frame."""

    # -- evidence (seed 002) -----------------------------------------------------------------

    @abc.abstractmethod
    async def take_snapshot(self, session_id: str, bounds: SnapshotBounds | None = None) -> SnapshotSummary:
        """Every thread's stack with locals, tasks, locks, process facts; a running program is paused briefly."""

    @abc.abstractmethod
    async def snapshots(self, session_id: str) -> SnapshotList:
        """The session's snapshots (post-mortem included), in brief."""

    @abc.abstractmethod
    async def snapshot(self, session_id: str, snapshot_id: str) -> Snapshot:
        """A whole snapshot; ``post_mortem`` names the session's latest post-mortem."""

    @abc.abstractmethod
    async def add_capture(self, session_id: str, request: CaptureRequest) -> CapturePoint:
        """A capture point: values recorded at a line on each hit, without pausing."""

    @abc.abstractmethod
    async def captures(self, session_id: str) -> CaptureList:
        """The session's capture points."""

    @abc.abstractmethod
    async def capture_table(self, session_id: str, capture_id: str, start: int = 0, count: int = 100) -> CaptureTable:
        """A capture point's rows, one per hit."""

    @abc.abstractmethod
    async def remove_capture(self, session_id: str, capture_id: str) -> CapturePoint:
        """Remove a capture point (its rows are answered with it one last time)."""

    @abc.abstractmethod
    async def evidence(
        self, evidence_id: str, *, offset: int = 0, limit: int = 200, grep: str | None = None
    ) -> EvidencePage:
        """An evidence item's lines, paged or searched."""

    @abc.abstractmethod
    async def analyze(
        self, session_id: str, snapshot_ids: list[str] | None = None, *, take: int = 0, interval: float = 1.0
    ) -> Analysis:
        """Known patterns over one or two snapshots, with their evidence ids."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release what the service holds."""
