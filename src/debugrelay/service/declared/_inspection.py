"""The reads of a paused (or ended) program: threads, processes, stack, variables, evaluation, source,
autopsy, object inspection, changes, redactions and watches."""

from __future__ import annotations

import abc
from typing import Annotated, Literal

import msgspec

from debugrelay.models import (
    Autopsy,
    Changes,
    ChildrenPage,
    Completions,
    Deleted,
    EvaluateResult,
    ObjectInspection,
    ProcessList,
    Redactions,
    ScopedVariables,
    Scopes,
    SetVariableResult,
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
    Expression,
    FrameIndex,
    Frames,
    FramesWithVariables,
    InnerDepth,
    Line,
    ProcessId,
    ScopeName,
    SourcePath,
    Start,
    VariablePath,
)

from .._operations import declare

SESSION = "/sessions/{session_id}"


class InspectionOperations(abc.ABC):
    """What a paused program holds, read (and set)."""

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
        access="owner",
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
        access="owner",
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
        access="owner",
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

    # -- watches -------------------------------------------------------------------------------------

    @declare(
        "POST",
        SESSION + "/watch",
        "Add a watch expression; answers with its value when paused",
        tag="inspection",
        named="WatchBody",
        access="owner",
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
