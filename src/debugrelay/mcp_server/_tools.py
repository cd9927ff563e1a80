"""The MCP tools: explicit names, descriptions written for a model, compact JSON answers.

Every tool answers one JSON object (as compact text, and as structured content). Failures are
tool errors carrying ``{"error": {code, message, hint, details}}``. Execution-control tools wait
for the next event and include it; inspection tools answer ``NOT_PAUSED`` while the target runs.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, ClassVar, Literal

import msgspec
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from debugrelay import __version__
from debugrelay.client import ApiError
from debugrelay.errors import InvalidRequest, RelayError
from debugrelay.models import AttachSpec, BreakpointView, LaunchRequest, OutputLine, PathMapping, Status, Variable
from debugrelay.service import DebugService, policy
from debugrelay.sessions import BreakpointRequest

log = logging.getLogger("debugrelay.mcp")

LOCALS_MAX = 25  # variables listed with a stop; the rest are a debug_variables call away
VALUE_MAX = 120  # characters of one value in a stop's locals
OUTPUT_MAX = 2000  # characters of program output attached to an event (the tail is kept)
EXCEPTION_MODES: dict[str, list[str]] = {"uncaught": ["uncaught"], "raised": ["raised"], "none": []}

INSTRUCTIONS = """\
debugrelay debugs Python programs: breakpoints, stepping, variables and expressions in the \
running program. Typical story: debug_set_breakpoint(file, line) -> debug_launch(script) (answers \
with the first stop and its local variables) -> debug_evaluate / debug_variables / \
debug_stacktrace -> debug_step_over / debug_continue -> ... -> debug_disconnect. debug_launch \
stops on uncaught exceptions by default; then exception_autopsy gives the whole crash context in \
one call. Tools default to the most recent session, so session_id is only needed with several."""

# -- parameter types shared by the tools ----------------------------------------------------

SessionId = Annotated[
    str | None, Field(description="Session to act on (from debug_launch); default: the most recent session.")
]
ThreadId = Annotated[int | None, Field(description="Thread id from threads_list; default: the thread that stopped.")]
FrameIndex = Annotated[
    int, Field(description="Stack frame: 0 = where the program stopped, 1 = its caller, ... (debug_stacktrace).", ge=0)
]
WithLocals = Annotated[bool, Field(description="Include the stopped frame's local variables in the answer.")]


_TIMEOUT = (
    "Seconds to wait for the next stop (default {}); then the answer is status 'running' with timed_out, "
    "not an error. 0 = answer at once."
)
ContinueTimeout = Annotated[float, Field(description=_TIMEOUT.format(30), ge=0, le=300)]
StepTimeout = Annotated[float, Field(description=_TIMEOUT.format(10), ge=0, le=300)]

ToolFn = Callable[..., Awaitable[dict[str, Any]]]

EVENT = (
    " Answers with the event: status 'paused' with reason (breakpoint, step, exception, pause, entry), location, "
    "the source line ('code') and the frame's locals; or status 'terminated' with exit_code; or status "
    "'running' with timed_out. Output the program printed since the previous answer comes as 'output'."
)


def with_event(fn: ToolFn) -> ToolFn:
    """Append the description of an event answer to an execution-control tool's description."""
    fn.__doc__ = (fn.__doc__ or "").rstrip() + "\n" + EVENT.strip()
    return fn


# -- answers --------------------------------------------------------------------------------


def _text(data: dict[str, Any]) -> str:
    return msgspec.json.encode(data).decode()


def answer(data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=_text(data))], structured_content=data)


MCP_HINTS = {
    "NOT_PAUSED": "The program is running: call breakpoint_wait to wait for the next stop, or debug_pause to stop it.",
    "session_not_found": "Call debug_status to see the sessions, or debug_launch to start a program.",
    "invalid_state": "Call debug_status to see the session's state; debug_launch runs the program again.",
    "INVALID_REFERENCE": "References live only until the program resumes: list variables again (debug_variables).",
    "target_gone": "The program has ended: debug_output shows what it printed; debug_launch runs it again.",
    "NO_EXCEPTION": "Not stopped at an exception. debug_launch stops on uncaught exceptions by default; "
    "debug_set_exception_breakpoints(['raised']) stops on every raise.",
    "breakpoint_not_found": "debug_status lists the session's breakpoints.",
    "debugpy_timeout": "The program did not answer in time: retry, or debug_pause / debug_disconnect it.",
    "evaluation_error": "The expression raised in the program: fix it (debug_variables lists the names in scope).",
    "invalid_request": "Fix the arguments: the tool's input schema describes each one.",
    "unsupported": "Use variables_get or debug_evaluate instead.",
}


def failure(error: dict[str, Any]) -> CallToolResult:
    error = {k: v for k, v in error.items() if v not in (None, "", {}, [])}
    payload = {"error": error}
    return CallToolResult(
        content=[TextContent(type="text", text=_text(payload))], structured_content=payload, is_error=True
    )


def error_dict(exc: RelayError | ApiError) -> dict[str, Any]:
    """The error with a hint that names tools: the domain's default hint, or an HTTP one from a relay,
    is replaced by the tools' wording of it."""
    data = exc.to_dict()
    if exc.code in MCP_HINTS and (exc.hint_is_default or not exc.hint):
        data["hint"] = MCP_HINTS[exc.code]
    return data


def guarded(fn: ToolFn) -> Callable[..., Awaitable[CallToolResult]]:
    """Turn a tool body's dict into an answer and its domain errors into tool errors."""

    @functools.wraps(fn)
    async def run(*args: Any, **kwargs: Any) -> CallToolResult:
        try:
            return answer(await fn(*args, **kwargs))
        except (RelayError, ApiError) as exc:
            return failure(error_dict(exc))
        except Exception as exc:
            log.exception("tool %s failed", fn.__name__)
            return failure(
                {
                    "code": "internal_error",
                    "message": f"the relay failed: {exc.__class__.__name__}",
                    "hint": "This is a relay bug, not your call; the session is intact. Retry, or check debug_status.",
                }
            )

    run.__annotations__ = {**fn.__annotations__, "return": CallToolResult}
    return run


# -- helpers --------------------------------------------------------------------------------


def _clip(value: str, limit: int = VALUE_MAX) -> str:
    return value if len(value) <= limit else value[: limit - 3] + "..."


def compact_variable(var: Variable) -> dict[str, Any]:
    out: dict[str, Any] = {"name": var.name, "value": var.value}
    if var.type:
        out["type"] = var.type
    if var.variable_reference:
        out["ref"] = var.variable_reference
    extra = {"scope": var.scope, "length": var.length, "truncated": var.truncated}
    extra.update(circular=var.circular, repr_error=var.repr_error)
    out.update({k: v for k, v in extra.items() if v})
    return out


def plain(answer: msgspec.Struct) -> dict[str, Any]:
    """A typed answer as the JSON object a tool returns."""
    data: dict[str, Any] = msgspec.to_builtins(answer)
    return data


def _joined(lines: list[OutputLine]) -> str:
    """Output as one text, stderr lines marked."""
    return "".join(f"[stderr] {e.text}" if e.type == "stderr" else e.text for e in lines)


def compact_breakpoint(view: BreakpointView) -> dict[str, Any]:
    out = plain(view)
    if out.get("kind") == "line":
        out.pop("kind")
    if out.get("enabled") is True:
        out.pop("enabled")
    for key in ("pending", "hit_count"):
        if not out.get(key):
            out.pop(key, None)
    if out.get("actual_line") == out.get("line"):
        out.pop("actual_line", None)
    return out


class DebugTools:
    """The tool bodies over a :class:`DebugService`; ``tools()`` makes them MCP tools."""

    def __init__(self, backend: DebugService) -> None:
        self.backend = backend
        self._cursors: dict[str, str] = {}

    # -- sessions --------------------------------------------------------------------------

    async def _sid(self, session_id: str | None) -> str:
        return await policy.session_or_latest(self.backend, session_id)

    async def _sid_or_new(self, session_id: str | None) -> str:
        return await policy.session_or_new(self.backend, session_id)

    # -- events ----------------------------------------------------------------------------

    async def _locals(self, sid: str, frame_index: int = 0, thread_id: int | None = None) -> dict[str, str]:
        scopes = (await self.backend.scopes(sid, frame_index, thread_id)).scopes
        if not scopes:
            return {}
        page = await self.backend.variables(sid, scopes[0].reference, 0, LOCALS_MAX)
        out = {v.name: _clip(v.value) for v in page.variables}
        more = page.total - len(out)
        if more > 0:
            out["..."] = f"{more} more: debug_variables"
        return out

    async def _new_output(self, sid: str) -> dict[str, Any]:
        page = await self.backend.output(sid, self._cursors.get(sid), 1000)
        if page.cursor:
            self._cursors[sid] = page.cursor
        text = _joined(page.outputs)
        out: dict[str, Any] = {}
        if not text:
            return out
        if len(text) > OUTPUT_MAX or page.has_more:
            out["output_truncated"] = "earlier output omitted: debug_output shows all of it"
            text = text[-OUTPUT_MAX:]
        out["output"] = text
        return out

    async def event(
        self, sid: str, status: Status, *, with_locals: bool = True, waited: float | None = None
    ) -> dict[str, Any]:
        """A status made into an event report: source line, locals, new output, what to do next."""
        out = plain(status)
        out.pop("message", None)
        state = out.get("status")
        if state == "paused":
            location = out.get("location") or {}
            exception = out.get("exception")
            if exception:
                out.pop("description", None)
                if exception.get("location") == location:
                    exception.pop("location", None)
            if location.get("file") and location.get("line"):
                code = await self.backend.source_line(sid, str(location["file"]), int(location["line"]))
                if code:
                    out["code"] = code.strip()
            if with_locals:
                try:
                    out["locals"] = await self._locals(sid)
                except (RelayError, ApiError) as exc:
                    out["locals_error"] = exc.message
            if exception:
                out["hint"] = "Stopped at an exception: exception_autopsy gives the stack with every frame's locals."
        elif state in ("running", "launching"):
            waited_for = f" after {waited:g}s" if out.get("timed_out") and waited else ""
            out["hint"] = (
                f"Still running{waited_for}: breakpoint_wait waits for the next stop, debug_pause stops "
                "it now, debug_output shows what it printed."
            )
        elif state == "terminated":
            out["hint"] = (
                "The program ended. debug_output shows all it printed; debug_launch runs it again "
                "with the same breakpoints."
            )
        with contextlib.suppress(RelayError, ApiError):
            out.update(await self._new_output(sid))
        return out

    # -- launch / attach -------------------------------------------------------------------

    async def debug_launch(
        self,
        *,
        script: Annotated[
            str | None, Field(description="Path of the Python file to run (absolute, or relative to cwd).")
        ] = None,
        module: Annotated[
            str | None, Field(description="Run a module instead, like `python -m` (e.g. 'pytest').")
        ] = None,
        args: Annotated[list[str] | None, Field(description="Command-line arguments for the program.")] = None,
        env: Annotated[dict[str, str] | None, Field(description="Extra environment variables.")] = None,
        cwd: Annotated[str | None, Field(description="Working directory (default: the script's folder).")] = None,
        python: Annotated[str | None, Field(description="Interpreter to use (default: the relay's).")] = None,
        breakpoints: Annotated[
            list[str] | None,
            Field(description="Breakpoints to set first, as 'FILE:LINE' (same as debug_set_breakpoint)."),
        ] = None,
        stop_on_entry: Annotated[bool, Field(description="Pause on the program's first line.")] = False,
        stop_on_exception: Annotated[
            Literal["uncaught", "raised", "none"] | None,
            Field(
                description="'uncaught' (the default for a new session) pauses where an unhandled exception is "
                "raised, frames intact; 'raised' pauses on every raise, even caught ones; 'none' "
                "never. Omitted: keep what the session has (see debug_set_exception_breakpoints)."
            ),
        ] = None,
        session_id: Annotated[
            str | None,
            Field(
                description="Launch in this session (keeps its breakpoints). "
                "Default: the most recent session if it is new or ran "
                "the same program (a run still going is ended: this "
                "restarts it), else a new session."
            ),
        ] = None,
        timeout: ContinueTimeout = 30.0,
        locals: WithLocals = True,
    ) -> dict[str, Any]:
        """Start a Python program under the debugger and wait for its first stop.

        Use it to begin debugging (after or with breakpoints), or to restart the program (e.g. after adding
        breakpoints or fixing code).
        Breakpoints set earlier with debug_set_breakpoint apply. Answers with the first event: paused at a
        breakpoint/exception/entry (with locals), terminated (exit_code, output), or running after `timeout`.
        Next: inspect with debug_variables / debug_evaluate / debug_stacktrace, then debug_step_over or
        debug_continue; on an exception, exception_autopsy."""
        script = policy.absolute(script, cwd) if script else None
        sid = await policy.launch_session(self.backend, session_id, script, module)
        if breakpoints:
            await self.backend.add_breakpoints(sid, [policy.parse_location(b, cwd) for b in breakpoints])
        if stop_on_exception is not None:
            await self.backend.set_exception_breakpoints(sid, EXCEPTION_MODES[stop_on_exception], [])
        spec = LaunchRequest(
            script=script,
            module=module,
            args=args or [],
            env=env or {},
            cwd=cwd,
            python=python,
            stop_on_entry=stop_on_entry,
            stop_on_exception=stop_on_exception or "uncaught",
        )
        await self.backend.launch(sid, spec)
        status = await self.backend.wait(sid, timeout, False)
        return await self.event(sid, status, with_locals=locals, waited=timeout)

    async def debug_attach(
        self,
        *,
        port: Annotated[int | None, Field(description="Port where `python -m debugpy --listen PORT` waits.")] = None,
        host: Annotated[str, Field(description="Host of that debugpy.")] = "127.0.0.1",
        pid: Annotated[
            int | None, Field(description="Or: the process id of a local Python process to attach to.")
        ] = None,
        path_mappings: Annotated[
            dict[str, str] | None,
            Field(description="Local source folder -> folder in the target, when they differ (containers)."),
        ] = None,
    ) -> dict[str, Any]:
        """Attach to a Python program that is already running with debugpy listening (or by pid).

        Answers with the new session's status; the program keeps running. Next: debug_set_breakpoint, then
        make the program reach that code and call breakpoint_wait. debug_disconnect leaves it running."""
        mappings = [PathMapping(local_root=k, remote_root=v) for k, v in (path_mappings or {}).items()]
        spec = AttachSpec(host=host, port=port, pid=pid, path_mappings=mappings)
        sid = (await self.backend.create_session(attach=spec)).session_id
        return await self.event(sid, await self.backend.status(sid), with_locals=False)

    # -- breakpoints -----------------------------------------------------------------------

    async def debug_set_breakpoint(
        self,
        *,
        file: Annotated[
            str | None, Field(description="Source file (absolute, or relative to the working directory).")
        ] = None,
        line: Annotated[int | None, Field(description="1-based line number in that file.", ge=1)] = None,
        function: Annotated[
            str | None,
            Field(description="Or: break when this function is entered (e.g. 'parse' or 'mod.Class.method')."),
        ] = None,
        condition: Annotated[
            str | None, Field(description="Python expression; pause only when it is true, e.g. 'i > 100'.")
        ] = None,
        hit_condition: Annotated[
            str | None, Field(description="Pause on the Nth hit: '5', '>= 5' or '% 5' (every 5th).")
        ] = None,
        log_message: Annotated[
            str | None,
            Field(
                description="Logpoint: print this instead of pausing; {expr} is "
                "evaluated, e.g. 'i={i}'. Read it with "
                "debug_output."
            ),
        ] = None,
        session_id: SessionId = None,
    ) -> dict[str, Any]:
        """Set a breakpoint on FILE:LINE (or on a function), optionally conditional, counted or a logpoint.

        Works before debug_launch (a session is created to hold it) or while the program runs. The line is
        checked against the source: verified=false comes with a message and a suggested line. Answers with
        breakpoint_id (for debug_remove_breakpoint). Next: debug_launch, or debug_continue to reach it."""
        sid = await self._sid_or_new(session_id)
        if not function and (not file or line is None):
            raise InvalidRequest("give file and line, or function", hint="e.g. file='/app/main.py', line=42")
        request = BreakpointRequest(
            file=None if function else policy.absolute(str(file)),
            line=None if function else line,
            function=function,
            condition=condition,
            hit_condition=hit_condition,
            log_message=log_message,
        )
        created = await self.backend.add_breakpoints(sid, [request])
        return {"session_id": sid, **compact_breakpoint(created[0])}

    async def debug_remove_breakpoint(
        self,
        *,
        breakpoint_id: Annotated[
            str, Field(description="Id from debug_set_breakpoint (e.g. 'bp_1'); debug_status lists them.")
        ],
        session_id: SessionId = None,
    ) -> dict[str, Any]:
        """Remove a breakpoint so the program no longer pauses there. Answers {removed: id}."""
        sid = await self._sid(session_id)
        await self.backend.remove_breakpoint(sid, breakpoint_id)
        return {"session_id": sid, "removed": breakpoint_id}

    async def debug_set_exception_breakpoints(
        self,
        *,
        filters: Annotated[
            list[Literal["raised", "uncaught", "userUnhandled"]],
            Field(
                description="'raised': pause on every raise, even if caught; 'uncaught': only when nothing catches "
                "it; [] pauses on no exception."
            ),
        ],
        exception_types: Annotated[
            list[str] | None, Field(description="Only these classes, e.g. ['KeyError', 'myapp.errors.Invalid'].")
        ] = None,
        session_id: SessionId = None,
    ) -> dict[str, Any]:
        """Choose which exceptions pause the program (replaces debug_launch's stop_on_exception).

        Use 'raised' to catch an exception that some code swallows. When the program pauses at one, call
        exception_autopsy. Answers with the filters in force."""
        sid = await self._sid_or_new(session_id)
        result = await self.backend.set_exception_breakpoints(sid, list(filters), exception_types or [])
        return {"session_id": sid, **plain(result)}

    # -- execution control -----------------------------------------------------------------

    RESUMES: ClassVar[dict[str, tuple[str, float, str]]] = {
        "debug_continue": (
            "continue",
            30.0,
            "Resume the paused program and wait for the next breakpoint, exception or the end.",
        ),
        "debug_step_over": (
            "step-over",
            10.0,
            "Run the current line (calls included) and pause on the next line of this function.",
        ),
        "debug_step_into": (
            "step-into",
            10.0,
            "Step into the function called on the current line and pause at its first line.",
        ),
        "debug_step_out": (
            "step-out",
            10.0,
            "Finish the current function and pause in its caller (the return value shows in locals).",
        ),
    }

    def resume_tool(self, name: str) -> ToolFn:
        """One of the execution-control tools of :attr:`RESUMES`: they differ only in the command."""
        command, default, doc = self.RESUMES[name]

        async def tool(
            *,
            session_id: SessionId = None,
            thread_id: ThreadId = None,
            timeout: float = default,
            locals: WithLocals = True,
        ) -> dict[str, Any]:
            sid = await self._sid(session_id)
            status = await self.backend.resume(sid, command, thread_id, timeout)
            return await self.event(sid, status, with_locals=locals, waited=timeout)

        tool.__name__ = tool.__qualname__ = name
        tool.__doc__ = doc
        tool.__annotations__["timeout"] = Annotated[float, Field(description=_TIMEOUT.format(default), ge=0, le=300)]
        return with_event(tool)

    @with_event
    async def debug_pause(
        self,
        *,
        session_id: SessionId = None,
        timeout: StepTimeout = 10.0,
        locals: WithLocals = True,
    ) -> dict[str, Any]:
        """Pause a running program wherever it is (e.g. one that hangs or loops) and report where."""
        sid = await self._sid(session_id)
        status = await self.backend.pause(sid)
        if status.status in ("running", "launching"):
            status = await self.backend.wait(sid, timeout, False)
        return await self.event(sid, status, with_locals=locals, waited=timeout)

    @with_event
    async def breakpoint_wait(
        self,
        *,
        session_id: SessionId = None,
        timeout: ContinueTimeout = 30.0,
        include_autopsy: Annotated[
            bool, Field(description="When the stop is an exception, include exception_autopsy's answer.")
        ] = False,
        locals: WithLocals = True,
    ) -> dict[str, Any]:
        """Wait until the running program pauses (breakpoint, exception) or ends, without resuming it.

        Use after debug_attach, after a call that answered timed_out, or while something else drives the
        program (a request to a server). Answers at once if it is already paused."""
        sid = await self._sid(session_id)
        status = await self.backend.wait(sid, timeout, include_autopsy)
        return await self.event(sid, status, with_locals=locals, waited=timeout)

    async def debug_disconnect(
        self,
        *,
        session_id: SessionId = None,
        terminate: Annotated[
            bool | None,
            Field(
                description="Kill the program (default for launched programs) or "
                "leave it running (default for attached ones)."
            ),
        ] = None,
        forget: Annotated[bool, Field(description="Also delete the session and its output.")] = False,
    ) -> dict[str, Any]:
        """End debugging: stop the program (or detach from it) and report its final state and output.

        The session stays (status terminated) so debug_launch can run the program again with the same
        breakpoints, unless forget=true."""
        sid = await self._sid(session_id)
        view = await self.backend.session(sid)
        if view.status in policy.RUNNING:
            kill = terminate if terminate is not None else view.mode != "attach"
            status = await (self.backend.terminate(sid) if kill else self.backend.detach(sid))
        else:
            status = await self.backend.status(sid)
        out = await self.event(sid, status, with_locals=False)
        out.pop("hint", None)
        if forget:
            await self.backend.delete_session(sid)
            self._cursors.pop(sid, None)
            out["deleted"] = True
        return out

    async def debug_status(self, *, session_id: SessionId = None) -> dict[str, Any]:
        """Where the session is, read from the relay's records without touching the program (cheap, safe).

        Answers status (created, running, paused, terminated, failed), the pause location or exception, the
        exit code, the launch, the breakpoints with hit counts, and the other sessions. Use it when unsure
        what state the program is in."""
        sessions = (await self.backend.list_sessions()).sessions
        if not sessions and not session_id:
            return {"sessions": [], "hint": "No session yet: debug_launch starts a program."}
        sid = session_id or sessions[-1].session_id
        view = plain(await self.backend.session(sid))
        keep = (
            "session_id",
            "name",
            "status",
            "mode",
            "reason",
            "thread_id",
            "location",
            "exception",
            "description",
            "exit_code",
            "error",
            "warning",
            "recovered",
        )
        out = {k: view[k] for k in keep if k in view and (view[k] is not None or k == "exit_code")}
        launch = view.get("launch") or {}
        if launch:
            out["launch"] = {k: launch[k] for k in ("script", "module", "args", "cwd") if launch.get(k)}
        out["breakpoints"] = [compact_breakpoint(b) for b in (await self.backend.breakpoints(sid)).breakpoints]
        others = [{"session_id": s.session_id, "status": s.status} for s in sessions if s.session_id != sid]
        if others:
            out["other_sessions"] = others
        return out

    async def debug_output(
        self,
        *,
        session_id: SessionId = None,
        since: Annotated[
            str | None, Field(description="Cursor from a previous debug_output answer; default: from the start.")
        ] = None,
        limit: Annotated[int, Field(description="Most entries to return.", ge=1, le=10000)] = 500,
    ) -> dict[str, Any]:
        """What the program printed (stdout, and stderr lines marked [stderr]), including logpoint messages.

        Answers text and a cursor; pass the cursor as `since` to read only newer output."""
        sid = await self._sid(session_id)
        page = await self.backend.output(sid, since, limit)
        out: dict[str, Any] = {"session_id": sid, "text": _joined(page.outputs), "cursor": page.cursor}
        if page.has_more:
            out["has_more"] = True
        if page.dropped:
            out["dropped"] = page.dropped
        return out

    # -- inspection ------------------------------------------------------------------------

    async def debug_variables(
        self,
        *,
        session_id: SessionId = None,
        frame_index: FrameIndex = 0,
        thread_id: ThreadId = None,
    ) -> dict[str, Any]:
        """List the local variables (arguments included) of a frame of the paused program: name, value, type.

        Values with 'ref' are containers/objects: expand them with variables_get(expand='name.attr[0]') or
        object_inspect. Fails with NOT_PAUSED while the program runs."""
        sid = await self._sid(session_id)
        scopes = (await self.backend.scopes(sid, frame_index, thread_id)).scopes
        out: dict[str, Any] = {"session_id": sid, "frame_index": frame_index, "variables": []}
        if scopes:
            page = await self.backend.variables(sid, scopes[0].reference, 0, 100)
            out["variables"] = [compact_variable(v) for v in page.variables]
            if page.has_more:
                out.update(total=page.total, has_more=True)
        return out

    async def variables_get(
        self,
        *,
        session_id: SessionId = None,
        frame_index: FrameIndex = 0,
        thread_id: ThreadId = None,
        scope: Annotated[
            Literal["all", "locals", "arguments", "globals"],
            Field(
                description="'all' = arguments and locals (default), or only 'locals', 'arguments', or the module's "
                "'globals'."
            ),
        ] = "all",
        expand: Annotated[
            str | None,
            Field(
                description="List the children (attributes, items, keys) of this variable path instead, e.g. "
                "'order.items[0]' or \"config['db']\"."
            ),
        ] = None,
        start: Annotated[int, Field(description="First variable to return (paging).", ge=0)] = 0,
        count: Annotated[int, Field(description="How many to return.", ge=1, le=1000)] = 50,
    ) -> dict[str, Any]:
        """Variables of a frame by scope, or the children of one variable path (expand).

        Large collections page with start/count (total, has_more). Fails with NOT_PAUSED while running."""
        sid = await self._sid(session_id)
        result = await self.backend.scoped_variables(
            sid, scope=scope, frame_index=frame_index, thread_id=thread_id, expand=expand, start=start, count=count
        )
        out: dict[str, Any] = {"session_id": sid}
        if expand:
            parent = {"parent": result.parent, "type": result.type, "value": result.value}
            out.update({k: v for k, v in parent.items() if v is not None})
        out["variables"] = [compact_variable(v) for v in result.variables]
        if result.has_more:
            out.update(total=result.total, has_more=True)
        return out

    async def debug_evaluate(
        self,
        *,
        expression: Annotated[
            str, Field(description="Python expression, e.g. 'len(items)', 'user.name', '[x for x in data if x < 0]'.")
        ],
        frame_index: FrameIndex = 0,
        thread_id: ThreadId = None,
        session_id: SessionId = None,
    ) -> dict[str, Any]:
        """Evaluate a Python expression in a frame of the paused program and return its value (repr) and type.

        Use it to test a hypothesis about the bug. It runs in the program, so calls can have side
        effects. An exception in the expression comes back as an evaluation_error. Fails with NOT_PAUSED while
        the program runs."""
        return await self.evaluate(
            expression=expression, frame_index=frame_index, thread_id=thread_id, session_id=session_id
        )

    async def evaluate(
        self,
        *,
        expression: Annotated[str, Field(description="Python expression to evaluate in the paused frame.")],
        frame_index: FrameIndex = 0,
        thread_id: ThreadId = None,
        format: Annotated[
            Literal["default", "hex", "binary"], Field(description="Show an int result as hex or binary.")
        ] = "default",
        session_id: SessionId = None,
    ) -> dict[str, Any]:
        """Evaluate a Python expression in a stack frame, with an optional number format (hex, binary).

        Answers result, type and, for objects and containers, a 'ref' to expand with variables_get. Fails with
        NOT_PAUSED while the program runs."""
        sid = await self._sid(session_id)
        result = await self.backend.evaluate(
            sid,
            expression,
            frame_index=frame_index,
            thread_id=thread_id,
            format=None if format == "default" else format,
        )
        out: dict[str, Any] = {"result": result.result, "type": result.type}
        if result.variable_reference:
            out["ref"] = result.variable_reference
        if result.truncated:
            out["truncated"] = True
        return out

    async def debug_stacktrace(
        self,
        *,
        session_id: SessionId = None,
        thread_id: ThreadId = None,
        max_frames: Annotated[int, Field(description="Most frames to return.", ge=1, le=1000)] = 20,
    ) -> dict[str, Any]:
        """The call stack of the paused program, innermost first: function, file, line per frame.

        Use frame_index (the frame's 'id') with debug_variables / debug_evaluate to look at a caller. Library
        frames are marked is_external. Fails with NOT_PAUSED while the program runs."""
        sid = await self._sid(session_id)
        return plain(await self.backend.stacktrace(sid, thread_id, 0, max_frames))

    async def stacktrace_get(
        self,
        *,
        session_id: SessionId = None,
        thread_id: ThreadId = None,
        start_frame: Annotated[int, Field(description="First frame to return (paging deep stacks).", ge=0)] = 0,
        max_frames: Annotated[int, Field(description="Most frames to return.", ge=1, le=1000)] = 20,
    ) -> dict[str, Any]:
        """The call stack of one thread of the paused program, paged (start_frame, max_frames, total_frames).

        Frames' 'id' is the frame_index other tools take. Fails with NOT_PAUSED while the program runs."""
        sid = await self._sid(session_id)
        return plain(await self.backend.stacktrace(sid, thread_id, start_frame, max_frames))

    async def threads_list(self, *, session_id: SessionId = None) -> dict[str, Any]:
        """The program's threads: id, name, whether stopped, and which one is current.

        Use a thread's id as thread_id in stacktrace_get / variables_get to look at another thread."""
        sid = await self._sid(session_id)
        return {"session_id": sid, **plain(await self.backend.threads(sid))}

    async def object_inspect(
        self,
        *,
        object_ref: Annotated[
            str, Field(description="Variable name or expression of the object, e.g. 'customer' or 'self.cache'.")
        ],
        depth: Annotated[
            int, Field(description="How many levels of nested objects to expand (1-10).", ge=1, le=10)
        ] = 1,
        frame_index: FrameIndex = 0,
        thread_id: ThreadId = None,
        session_id: SessionId = None,
    ) -> dict[str, Any]:
        """One object in depth: its type, size, fields with values, nested objects to `depth`, cycles marked.

        Use when variables_get is not enough (deep structures, circular references). Fails with NOT_PAUSED
        while the program runs."""
        sid = await self._sid(session_id)
        return await self.backend.object_inspect(
            sid, object_ref, depth=depth, frame_index=frame_index, thread_id=thread_id
        )

    async def exception_autopsy(
        self,
        *,
        session_id: SessionId = None,
        max_frames: Annotated[int, Field(description="Stack frames to include.", ge=1, le=100)] = 10,
        include_variables_for_frames: Annotated[
            int, Field(description="Include locals for this many innermost frames.", ge=0, le=100)
        ] = 1,
        max_inner_depth: Annotated[
            int, Field(description="How deep to follow the exception's chain (__cause__/__context__).", ge=0, le=50)
        ] = 5,
    ) -> dict[str, Any]:
        """Everything about the exception the program is paused at, in one call: type, message, whether it
        is uncaught, the stack with source lines, the locals of the throwing frame(s), and the chain of
        causes.

        Use it right after an answer with reason 'exception'. Fails with NO_EXCEPTION when the program is
        paused elsewhere."""
        sid = await self._sid(session_id)
        found = await self.backend.autopsy(
            sid,
            max_frames=max_frames,
            include_variables_for_frames=include_variables_for_frames,
            max_inner_depth=max_inner_depth,
        )
        return plain(found)

    # -- registration ----------------------------------------------------------------------

    READ_ONLY = frozenset(
        {
            "debug_status",
            "debug_variables",
            "debug_stacktrace",
            "stacktrace_get",
            "threads_list",
            "variables_get",
            "object_inspect",
            "exception_autopsy",
            "debug_output",
        }
    )

    NAMES = (
        "debug_launch",
        "debug_attach",
        "debug_set_breakpoint",
        "debug_remove_breakpoint",
        "debug_set_exception_breakpoints",
        "debug_continue",
        "debug_step_over",
        "debug_step_into",
        "debug_step_out",
        "debug_pause",
        "breakpoint_wait",
        "debug_variables",
        "debug_evaluate",
        "debug_stacktrace",
        "debug_status",
        "debug_output",
        "debug_disconnect",
        "threads_list",
        "stacktrace_get",
        "variables_get",
        "evaluate",
        "object_inspect",
        "exception_autopsy",
    )

    def tools(self) -> list[Tool]:
        """The tools, with explicit names and compact input schemas."""
        tools = []
        for name in self.NAMES:
            body = self.resume_tool(name) if name in self.RESUMES else getattr(self, name)
            tool = Tool.from_function(
                guarded(body),
                name=name,
                description=_describe(body),
                annotations=ToolAnnotations(read_only_hint=name in self.READ_ONLY),
                structured_output=False,
            )
            tool.parameters = compact_schema(tool.parameters)
            tools.append(tool)
        return tools


def _describe(fn: Callable[..., Any]) -> str:
    """A docstring as a description: each paragraph on one line."""
    paragraphs = (fn.__doc__ or "").strip().split("\n\n")
    return "\n".join(" ".join(line.strip() for line in p.splitlines() if line.strip()) for p in paragraphs)


def build_server(backend: DebugService) -> MCPServer[Any]:
    """An MCP server whose tools drive ``backend``."""
    return MCPServer(
        "debugrelay",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
        tools=DebugTools(backend).tools(),
    )


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's titles and fold ``anyOf [X, null]`` into ``type: [X, "null"]``: the tool list is
    read by a model on every conversation, and this halves its size without changing what is accepted."""
    out = {k: v for k, v in schema.items() if k != "title"}
    if "properties" in out:
        out["properties"] = {name: compact_schema(prop) for name, prop in out["properties"].items()}
    if "items" in out and isinstance(out["items"], dict):
        out["items"] = compact_schema(out["items"])
    options = out.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        other = compact_schema(next(o for o in options if o != {"type": "null"}))
        if isinstance(other.get("type"), str):
            out.pop("anyOf")
            out = {**other, **out, "type": [other["type"], "null"]}
    if out.get("default", 0) is None:
        out.pop("default")
    return out
