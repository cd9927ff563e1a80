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
from debugrelay.models import (
    AttachSpec,
    BreakpointView,
    LaunchRequest,
    OutputLine,
    PathMapping,
    Status,
    Variable,
    cut_text,
)
from debugrelay.service import LOCALS_MAX, VALUE_MAX, DebugService, calling, policy
from debugrelay.sessions import BreakpointRequest
from debugrelay.store import tracking_writes

log = logging.getLogger("debugrelay.mcp")

OUTPUT_MAX = 2000  # characters of program output attached to an event (the tail is kept)
EXCEPTION_MODES: dict[str, list[str]] = {"uncaught": ["uncaught"], "raised": ["raised"], "none": []}

INSTRUCTIONS = """\
debugrelay debugs Python programs: breakpoints, stepping, variables and expressions in the \
running program. Typical story: debug_set_breakpoint(file, line) -> debug_launch(script) (answers \
with the first stop and its local variables) -> debug_evaluate / debug_variables / \
debug_stacktrace -> debug_step_over / debug_continue -> ... -> debug_disconnect. debug_launch \
stops on uncaught exceptions by default; then exception_autopsy gives the whole crash context in \
one call.
Arguments every tool shares: session_id (default: the most recent session, so it is only needed \
with several); thread_id (default: the thread that stopped; threads_list gives the others); \
frame_index (0 = where the program stopped, 1 = its caller, ...: a frame's 'id' in \
debug_stacktrace); timeout (seconds to wait for the next stop, at most 300, default 30, 10 for \
steps and pause; then the answer is status 'running' with timed_out, not an error; 0 = answer at \
once); locals (default true: include the stopped frame's locals in the answer); library \
(default false: runs of library frames in a stack come as one entry, 'collapsed' counting them; \
true lists each). A recursion in a stack is one entry too ('repeated', 'arguments', 'last_arguments').
debug_launch, debug_continue, debug_step_over/into/out, debug_pause and breakpoint_wait answer \
with the event: status 'paused' with reason (breakpoint, step, exception, pause, entry), location, \
the source line ('code'), the frame's locals and the values of watched expressions \
(debug_evaluate watch=true); 'terminated' with exit_code; or 'running' with timed_out. Output \
printed since the previous answer comes as 'output'. Inspection tools answer NOT_PAUSED while the \
program runs. Secrets in answers are placeholders ([SECRET_1], ...): use one in an expression, \
condition or logpoint and the relay puts the value back."""

# The tool list is read by a model in every conversation (bench/tool_list.py measures it): a
# description says what the name does not, once. The arguments every tool shares are described
# once, in INSTRUCTIONS (SHARED names them), and carry no description of their own.
SHARED = ("session_id", "thread_id", "frame_index", "timeout", "locals", "library")
SessionId = Annotated[str | None, Field()]
ThreadId = Annotated[int | None, Field()]
FrameIndex = Annotated[int, Field(ge=0)]
WithLocals = bool
ContinueTimeout = Annotated[float, Field(ge=0, le=300)]
StepTimeout = ContinueTimeout
LibraryFrames = bool

ToolFn = Callable[..., Awaitable[dict[str, Any]]]


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


def guarded(fn: ToolFn, service: DebugService | None = None) -> Callable[..., Awaitable[CallToolResult]]:
    """Turn a tool body's dict into an answer and its domain errors into tool errors; an answer to a
    change the state store could not record yet (``service`` knows) says ``"persisted": false``."""

    @functools.wraps(fn)
    async def run(*args: Any, **kwargs: Any) -> CallToolResult:
        try:
            with tracking_writes() as tracking, calling(f"tool {fn.__name__}"):  # the agent's trail names the tool
                data = await fn(*args, **kwargs)
            # the change was made; the state store was down and records it once it is back
            sid = data.get("session_id") or kwargs.get("session_id")
            kept = tracking.found or (service is not None and isinstance(sid, str) and service.unpersisted(sid))
            return answer({**data, "persisted": False} if kept else data)
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


def _restated(var: dict[str, Any]) -> bool:
    """Children that the value's own repr already shows whole (a list's items, a dict's values)."""
    kids = var.get("children") or []
    value = str(var.get("value", ""))
    return bool(kids) and not var.get("truncated") and all(str(k.get("value")) in value for k in kids)


PLAIN_TYPES = frozenset({"int", "float", "str", "bool", "NoneType", "bytes", "list", "tuple", "dict", "set"})


def _said(var: dict[str, Any], shown: dict[str, str]) -> bool:
    """Whether the stop's compact ``locals`` already say all of a variable: its whole value, of a type
    the value shows, with no children of its own to add."""
    value = str(var.get("value", ""))
    return (
        shown.get(str(var.get("name"))) == value
        and var.get("type") in PLAIN_TYPES
        and not var.get("truncated")
        and not var.get("children")
    )


def compact_autopsy(autopsy: dict[str, Any], stop: dict[str, Any] | None = None) -> dict[str, Any]:
    """An autopsy without what it repeats: children a value already shows, positions, and, when it rides
    with the ``stop`` answer, the thread, the exception and the top frame's place the stop gives."""
    frames = autopsy.get("frames") or []
    for frame in frames:
        frame.pop("index", None)
        for var in frame.get("locals") or []:
            if _restated(var):
                var.pop("children")
    if autopsy.get("total_frames") == len(frames) and not autopsy.get("frames_truncated"):
        autopsy.pop("total_frames")
    (autopsy.get("exception") or {}).pop("break_mode", None)  # 'unhandled' says it
    if stop is None:
        return autopsy
    if autopsy.get("thread_id") == stop.get("thread_id"):
        autopsy.pop("thread_id")
    said = stop.get("exception") or {}
    exception = autopsy.get("exception") or {}
    for key, value in list(exception.items()):
        same = value == said.get(key) or (key == "type" and str(value).removeprefix("builtins.") == said.get(key))
        if same or key == "break_mode" or (key == "location" and value == stop.get("location")):
            exception.pop(key)
    if not exception:
        autopsy.pop("exception", None)
    location = stop.get("location") or {}
    if frames and (frames[0].get("file"), frames[0].get("line")) == (location.get("file"), location.get("line")):
        for key in ("file", "line", "function"):
            frames[0].pop(key, None)
        source = frames[0].get("source") or {}
        if source.get("lines") and source.get("text") == stop.get("code"):
            source.pop("text")  # the stop's 'code'; 'lines' holds it
        shown = stop.get("locals") or {}
        left = [v for v in frames[0].get("locals") or [] if not _said(v, shown)]
        if left:
            frames[0]["locals"] = left
        else:
            frames[0].pop("locals", None)
    return autopsy


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
        out = {v.name: cut_text(v.value, VALUE_MAX) for v in page.variables}
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
            if "code" not in out and location.get("file") and location.get("line"):
                code = await self.backend.source_line(sid, str(location["file"]), int(location["line"]))
                if code:
                    out["code"] = code.strip()
            if not with_locals:
                out.pop("locals", None)
            elif "locals" not in out and "locals_error" not in out:  # a status read without its details
                try:
                    out["locals"] = await self._locals(sid)
                except (RelayError, ApiError) as exc:
                    out["locals_error"] = exc.message
            if exception:
                exception.pop("break_mode", None)  # 'unhandled' says it
            if out.get("autopsy"):
                # the stop's locals are not listed again in the autopsy's top frame
                out["autopsy"] = compact_autopsy(out["autopsy"], out)
            elif exception:
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
        script: Annotated[str | None, Field(description="Absolute, or relative to cwd.")] = None,
        module: Annotated[str | None, Field(description="Or `python -m` this.")] = None,
        args: Annotated[list[str] | None, Field(description="Program arguments.")] = None,
        test: Annotated[
            str | None,
            Field(description="A pytest node id; pauses at failing asserts."),
        ] = None,
        env: Annotated[dict[str, str] | None, Field(description="Extra environment.")] = None,
        cwd: Annotated[str | None, Field(description="Relative paths start here.")] = None,
        python: Annotated[str | None, Field(description="Interpreter.")] = None,
        breakpoints: Annotated[
            list[str] | None,
            Field(description="'FILE:LINE' to set first."),
        ] = None,
        stop_on_entry: Annotated[bool, Field(description="Pause on the first line.")] = False,
        stop_on_exception: Annotated[
            Literal["uncaught", "raised", "none"] | None,
            Field(description="'uncaught' (default), 'raised': every raise; omitted: unchanged."),
        ] = None,
        session_id: Annotated[
            str | None,
            Field(description="Default: the latest if new or same program (restarts it)."),
        ] = None,
        timeout: ContinueTimeout = 30,
        locals: WithLocals = True,
    ) -> dict[str, Any]:
        """Run a Python program under the debugger (again: a restart); answers its first event. Breakpoints
        set before apply."""
        script = policy.absolute(script, cwd) if script else None
        if test is not None and script is None and module is None:
            module = "pytest"
        sid, reused = await policy.launch_target(self.backend, session_id, script, module)
        carried = (await self.backend.breakpoints(sid)).breakpoints if reused else []
        if breakpoints:
            folder = policy.launch_folder(script, cwd)
            await self.backend.add_breakpoints(sid, [policy.parse_location(b, folder) for b in breakpoints])
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
            test=test,
        )
        launched = await self.backend.launch(sid, spec)
        status = await self.backend.wait(sid, timeout, False, details=locals)
        out = await self.event(sid, status, with_locals=locals, waited=timeout)
        if launched.stops_on:
            out.setdefault("stops_on", launched.stops_on)
        if reused:
            out["reused"] = True  # the session ran before: what it had set applies again
            if carried:
                out["carried_breakpoints"] = [policy.brief_breakpoint(b) for b in carried]
        unset = await policy.unset_breakpoints(self.backend, sid)
        if unset:
            out["unverified_breakpoints"] = [
                {**policy.brief_breakpoint(b), "message": b.message} if b.message else policy.brief_breakpoint(b)
                for b in unset
            ]
        return out

    async def debug_attach(
        self,
        *,
        port: Annotated[int | None, Field(description="Port of `debugpy --listen PORT`.")] = None,
        host: Annotated[str, Field(description="Its host.")] = "127.0.0.1",
        pid: Annotated[int | None, Field(description="Or a local process id.")] = None,
        path_mappings: Annotated[
            dict[str, str] | None,
            Field(description="Local folder -> target folder."),
        ] = None,
        pod: Annotated[str | None, Field(description="Or a Kubernetes pod.")] = None,
    ) -> dict[str, Any]:
        """Attach to a running program (debugpy listening, a pid, or a pod); it keeps running. Then
        debug_set_breakpoint, breakpoint_wait."""
        mappings = [PathMapping(local_root=k, remote_root=v) for k, v in (path_mappings or {}).items()]
        spec = AttachSpec(host=host, port=port, pid=pid, pod=pod, path_mappings=mappings)
        sid = (await self.backend.create_session(attach=spec)).session_id
        return await self.event(sid, await self.backend.status(sid), with_locals=False)

    # -- breakpoints -----------------------------------------------------------------------

    async def debug_set_breakpoint(
        self,
        *,
        file: Annotated[str | None, Field(description="Absolute, or relative to the launch's cwd.")] = None,
        line: Annotated[int | None, Field(description="1-based line.", ge=1)] = None,
        function: Annotated[
            str | None,
            Field(description="Or a function: 'mod.Class.run'."),
        ] = None,
        condition: Annotated[str | None, Field(description="e.g. 'i > 100'.")] = None,
        hit_condition: Annotated[str | None, Field(description="'5', '>= 5', '% 5' (every 5th).")] = None,
        log_message: Annotated[
            str | None,
            Field(description="Print, not pause: 'i={i} {x!r:>8}'."),
        ] = None,
        session_id: SessionId = None,
    ) -> dict[str, Any]:
        """A line or function breakpoint (condition, hit count, logpoint), before or during a run; a line
        that cannot stop gets a suggestion."""
        sid = await self._sid_or_new(session_id)
        if not function and (not file or line is None):
            raise InvalidRequest("give file and line, or function", hint="e.g. file='/app/main.py', line=42")
        folder = None if function else await policy.session_folder(self.backend, sid)
        request = BreakpointRequest(
            file=None if function else policy.absolute(str(file), folder),
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
        breakpoint_id: Annotated[str, Field(description="e.g. 'bp_1'.")],
        session_id: SessionId = None,
    ) -> dict[str, Any]:
        """Remove a breakpoint (debug_status lists them)."""
        sid = await self._sid(session_id)
        await self.backend.remove_breakpoint(sid, breakpoint_id)
        return {"session_id": sid, "removed": breakpoint_id}

    async def debug_set_exception_breakpoints(
        self,
        *,
        filters: Annotated[
            list[Literal["raised", "uncaught", "userUnhandled"]],
            Field(description="'raised': even caught ones; []: none."),
        ],
        exception_types: Annotated[list[str] | None, Field(description="Only these: ['KeyError']")] = None,
        session_id: SessionId = None,
    ) -> dict[str, Any]:
        """Which exceptions pause (replaces stop_on_exception)."""
        sid = await self._sid_or_new(session_id)
        result = await self.backend.set_exception_breakpoints(sid, list(filters), exception_types or [])
        return {"session_id": sid, **plain(result)}

    # -- execution control -----------------------------------------------------------------

    RESUMES: ClassVar[dict[str, tuple[str, float, str]]] = {
        "debug_continue": (
            "continue",
            30,
            "Resume until the next breakpoint, exception or the end.",
        ),
        "debug_step_over": (
            "step-over",
            10,
            "Run the current line, calls included; pause on the next.",
        ),
        "debug_step_into": (
            "step-into",
            10,
            "Into the function called on the current line.",
        ),
        "debug_step_out": (
            "step-out",
            10,
            "Finish the function; pause in its caller (return value in locals).",
        ),
    }

    def resume_tool(self, name: str) -> ToolFn:
        """One of the execution-control tools of :attr:`RESUMES`: they differ only in the command."""
        command, default, doc = self.RESUMES[name]

        async def tool(
            *,
            session_id: SessionId = None,
            thread_id: ThreadId = None,
            timeout: ContinueTimeout = default,
            locals: WithLocals = True,
        ) -> dict[str, Any]:
            sid = await self._sid(session_id)
            status = await self.backend.resume(sid, command, thread_id, timeout, details=locals)
            return await self.event(sid, status, with_locals=locals, waited=timeout)

        tool.__name__ = tool.__qualname__ = name
        tool.__doc__ = doc
        return tool

    async def debug_pause(
        self,
        *,
        session_id: SessionId = None,
        timeout: StepTimeout = 10,
        locals: WithLocals = True,
    ) -> dict[str, Any]:
        """Pause a running program where it is (a hang)."""
        sid = await self._sid(session_id)
        await self.backend.pause(sid)
        status = await self.backend.wait(sid, timeout, False, details=locals)  # at once when it paused
        return await self.event(sid, status, with_locals=locals, waited=timeout)

    async def breakpoint_wait(
        self,
        *,
        session_id: SessionId = None,
        timeout: ContinueTimeout = 30,
        include_autopsy: Annotated[bool, Field(description="At an exception, add exception_autopsy.")] = False,
        locals: WithLocals = True,
    ) -> dict[str, Any]:
        """Wait, not resuming, until the program pauses or ends (after timed_out or debug_attach)."""
        sid = await self._sid(session_id)
        status = await self.backend.wait(sid, timeout, include_autopsy, details=locals)
        return await self.event(sid, status, with_locals=locals, waited=timeout)

    async def debug_disconnect(
        self,
        *,
        session_id: SessionId = None,
        terminate: Annotated[
            bool | None,
            Field(description="Default: kill if launched, not if attached."),
        ] = None,
        forget: Annotated[bool, Field(description="Also delete the session.")] = False,
    ) -> dict[str, Any]:
        """End the program (or detach); the session stays for debug_launch unless forget."""
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
        """The session from the relay's records (cheap): stop or exit, launch, breakpoints, hits, other
        sessions."""
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
        since: Annotated[str | None, Field(description="Cursor of a previous answer.")] = None,
        limit: Annotated[int, Field(description="Most entries.", ge=1, le=10000)] = 500,
    ) -> dict[str, Any]:
        """What the program printed ([stderr] marked) and a cursor for `since`."""
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
        changed: Annotated[bool, Field(description="Top frame: what changed since its last stop.")] = False,
    ) -> dict[str, Any]:
        """A frame's locals: name, value, type; 'ref' marks values to expand (variables_get expand)."""
        sid = await self._sid(session_id)
        if changed:
            return {"session_id": sid, **plain(await self.backend.changes(sid))}
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
            Field(description="'all': arguments and locals."),
        ] = "all",
        expand: Annotated[
            str | None,
            Field(description="Children of a path: 'order.items[0]'."),
        ] = None,
        start: Annotated[int, Field(description="Paging.", ge=0)] = 0,
        count: Annotated[int, Field(description="Paging.", ge=1, le=1000)] = 50,
    ) -> dict[str, Any]:
        """A frame's variables by scope, or a path's children (expand); paged."""
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
        expression: Annotated[str, Field(description="e.g. 'len(items)'.")],
        frame_index: FrameIndex = 0,
        thread_id: ThreadId = None,
        session_id: SessionId = None,
        watch: Annotated[bool | None, Field(description="true: also in every stop; false: no more.")] = None,
    ) -> dict[str, Any]:
        """A Python expression's repr and type in a paused frame; it runs in the program (side effects)."""
        if watch is None:
            return await self.evaluate(
                expression=expression, frame_index=frame_index, thread_id=thread_id, session_id=session_id
            )
        sid = await self._sid(session_id)
        same = [w for w in (await self.backend.watches(sid)).watches if w.expression == expression]
        if not watch:
            for w in same:
                await self.backend.remove_watch(sid, w.watch_id)
            return {"session_id": sid, "unwatched": expression, "removed": len(same)}
        value = same[0] if same else await self.backend.add_watch(sid, expression)
        out = {k: v for k, v in plain(value).items() if k not in ("expandable", "available")}
        if value.available is False:
            out["note"] = "its value comes with the next stop"
        return {"session_id": sid, **out}

    async def evaluate(
        self,
        *,
        expression: Annotated[str, Field(description="Python expression.")],
        frame_index: FrameIndex = 0,
        thread_id: ThreadId = None,
        format: Annotated[Literal["hex", "binary"] | None, Field(description="For an int.")] = None,
        session_id: SessionId = None,
    ) -> dict[str, Any]:
        """debug_evaluate with a number format; 'ref' marks a value to expand."""
        sid = await self._sid(session_id)
        result = await self.backend.evaluate(
            sid,
            expression,
            frame_index=frame_index,
            thread_id=thread_id,
            format=format,
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
        max_frames: Annotated[int, Field(description="Most frames.", ge=1, le=1000)] = 20,
        library: LibraryFrames = False,
    ) -> dict[str, Any]:
        """The paused call stack, innermost first; a frame's 'id' is its frame_index."""
        sid = await self._sid(session_id)
        return plain(await self.backend.stacktrace(sid, thread_id, 0, max_frames, library=library))

    async def stacktrace_get(
        self,
        *,
        session_id: SessionId = None,
        thread_id: ThreadId = None,
        start_frame: Annotated[int, Field(description="Paging: first frame.", ge=0)] = 0,
        max_frames: Annotated[int, Field(description="Most frames.", ge=1, le=1000)] = 20,
        library: LibraryFrames = False,
    ) -> dict[str, Any]:
        """debug_stacktrace of any thread, paged (total_frames)."""
        sid = await self._sid(session_id)
        return plain(await self.backend.stacktrace(sid, thread_id, start_frame, max_frames, library=library))

    async def threads_list(self, *, session_id: SessionId = None) -> dict[str, Any]:
        """The threads: id (thread_id), name, stopped, current."""
        sid = await self._sid(session_id)
        return {"session_id": sid, **plain(await self.backend.threads(sid))}

    async def object_inspect(
        self,
        *,
        object_ref: Annotated[str, Field(description="e.g. 'self.cache'.")],
        depth: Annotated[int, Field(description="Levels to expand.", ge=1, le=10)] = 1,
        frame_index: FrameIndex = 0,
        thread_id: ThreadId = None,
        session_id: SessionId = None,
    ) -> dict[str, Any]:
        """One object in depth: type, size, fields, nested to `depth`, cycles marked."""
        sid = await self._sid(session_id)
        return await self.backend.object_inspect(
            sid, object_ref, depth=depth, frame_index=frame_index, thread_id=thread_id
        )

    async def exception_autopsy(
        self,
        *,
        session_id: SessionId = None,
        max_frames: Annotated[int, Field(description="Frames.", ge=1, le=100)] = 10,
        include_variables_for_frames: Annotated[int, Field(description="Frames with locals.", ge=0, le=100)] = 1,
        max_inner_depth: Annotated[int, Field(description="Cause chain depth.", ge=0, le=50)] = 5,
    ) -> dict[str, Any]:
        """The exception paused at, in one call: type, message, stack with source, locals, causes."""
        sid = await self._sid(session_id)
        found = await self.backend.autopsy(
            sid,
            max_frames=max_frames,
            include_variables_for_frames=include_variables_for_frames,
            max_inner_depth=max_inner_depth,
        )
        return compact_autopsy(plain(found))

    async def debug_redactions(self, *, session_id: SessionId = None) -> dict[str, Any]:
        """The placeholders hidden in this session's answers: rule, where, when (never the value)."""
        return plain(await self.backend.redactions(await self._sid(session_id)))

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
            "debug_redactions",
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
        "debug_redactions",
    )

    def tools(self) -> list[Tool]:
        """The tools, with explicit names and compact input schemas."""
        tools = []
        for name in self.NAMES:
            body = self.resume_tool(name) if name in self.RESUMES else getattr(self, name)
            tool = Tool.from_function(
                guarded(body, None if name in self.READ_ONLY | {"evaluate"} else self.backend),
                name=name,
                description=_describe(body),
                annotations=ToolAnnotations(read_only_hint=True) if name in self.READ_ONLY else None,
                structured_output=False,
            )
            tool.parameters = compact_schema(tool.parameters)
            for shared in SHARED:  # their bounds and defaults are in INSTRUCTIONS
                prop = tool.parameters["properties"].get(shared, {})
                prop.pop("maximum", None)
                prop.pop("default", None)
            tools.append(tool)
        return tools


def _describe(fn: Callable[..., Any]) -> str:
    """A docstring as a description: each paragraph on one line."""
    paragraphs = (fn.__doc__ or "").strip().split("\n\n")
    return "\n".join(" ".join(line.strip() for line in p.splitlines() if line.strip()) for p in paragraphs)


def build_server(backend: DebugService) -> MCPServer[Any]:
    """An MCP server whose tools drive ``backend``."""
    from ._evidence_tools import EvidenceTools, prompts

    server: MCPServer[Any] = MCPServer(
        "debugrelay",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
        tools=DebugTools(backend).tools() + EvidenceTools(backend).tools(),
    )
    for prompt in prompts():
        server.add_prompt(prompt)
    return server


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The advertised input schema, cut to what teaches: no pydantic titles, an optional ``X | None`` shown as
    ``X`` (leaving it out is how a client says none), no default of ``None``/``false``/``0``, no lower
    bound of 0 or 1 and no upper bound of 100 or more. The tool list is read by a model on every
    conversation; what is accepted is unchanged (the arguments are still validated against the full
    signature)."""
    out = {k: v for k, v in schema.items() if k != "title"}
    if "properties" in out:
        out["properties"] = {name: compact_schema(prop) for name, prop in out["properties"].items()}
    if "items" in out and isinstance(out["items"], dict):
        out["items"] = compact_schema(out["items"])
    options = out.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        other = compact_schema(next(o for o in options if o != {"type": "null"}))
        out.pop("anyOf")
        out = {**other, **out}
    if "default" in out and out["default"] in (None, False, 0):
        out.pop("default")
    if out.get("minimum") in (0, 1):
        out.pop("minimum")
    if isinstance(out.get("maximum"), int) and out["maximum"] >= 100:  # a page size's ceiling: enforced, not taught
        out.pop("maximum")
    return out
