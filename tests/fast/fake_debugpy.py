"""A stand-in for debugpy (named as such) and a launcher that starts it instead of a program.

``FakeDebugpy`` speaks the DAP subset the relay uses over a real loopback socket and plays a
scripted program: a list of stops (file, line, function, locals); ``configurationDone`` starts it,
the program stops at each breakpoint it reaches, and ends with the exit code given; a step that raises
ends it with a traceback on stderr (exit code 1), stopping there first when an exception breakpoint
asks for it. Expressions are evaluated against the stop's locals, in this process. The fast tests
drive the relay's session state machine, its service layer and the MCP tools against it in seconds;
the real debugpy stays in the integration tier.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from typing import Any

from debugrelay.dap import frame, read_frame
from debugrelay.launchers import Launcher, Target
from debugrelay.models import LaunchRequest

THREAD = 1


@dataclass
class Step:
    """One place the scripted program passes, with its locals there."""

    file: str
    line: int
    function: str = "main"
    locals: dict[str, Any] = field(default_factory=dict)
    output: str = ""  # printed just before the program reaches this line
    raises: str = ""  # "ValueError: message": raised here and never caught, it ends the program


@dataclass
class Program:
    steps: list[Step]
    exit_code: int = 0
    loops: bool = False  # after its last step it runs on (a busy loop) until paused
    refusals: dict[str, str] = field(default_factory=dict)  # command -> the message debugpy refuses it with
    hangs_up_at: str = ""  # a command that is never answered: the connection closes instead (the target died)


class FakeDebugpy:
    """A scripted DAP peer: one client at a time, one thread, one frame per stop."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.breakpoints: dict[str, set[int]] = {}
        self.position = -1  # index of the step the program is paused at; -1: not started
        self.requests: list[str] = []
        self.refs: dict[int, dict[str, Any]] = {}
        self.ids: dict[tuple[str, int], int] = {}  # breakpoint ids, as debugpy numbers them
        self.break_modes: set[str] = set()  # exception breakpoints, as debugpy's break modes
        self.raised = False  # paused at the exception the current step raised
        self.ended = asyncio.Event()
        self.server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seq = 0
        attach: dict[str, Any] | None = None

        def send(message: dict[str, Any]) -> None:
            nonlocal seq
            seq += 1
            writer.write(frame(json.dumps({"seq": seq, **message}).encode()))

        def event(name: str, body: dict[str, Any] | None = None) -> None:
            send({"type": "event", "event": name, "body": body or {}})

        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            while (data := await read_frame(reader)) is not None:
                request = json.loads(data)
                command, args = request["command"], request.get("arguments") or {}
                self.requests.append(command)
                if command == self.program.hangs_up_at:
                    break
                if command in self.program.refusals:
                    send(_response(request, success=False, message=self.program.refusals[command]))
                    continue
                try:
                    body = self._answer(command, args, event)
                except LookupError as exc:
                    send(_response(request, success=False, message=str(exc)))
                    continue
                if command == "attach":
                    attach = request  # as debugpy does: answered once configured
                    continue
                send(_response(request, body=body))
                if command == "configurationDone" and attach is not None:
                    send(_response(attach, body={}))
                    attach = None
                if command in ("configurationDone", "continue", "next", "stepIn", "stepOut"):
                    self._run(event, single_step=command in ("next", "stepIn", "stepOut"))
                elif command == "pause" and self.position >= len(self.program.steps) - 1:
                    self.position = len(self.program.steps) - 1  # caught in the loop at the last step
                    event("stopped", {"reason": "pause", "threadId": THREAD, "allThreadsStopped": True})
                elif command == "disconnect":
                    break
                await writer.drain()
        writer.close()

    def _answer(self, command: str, args: dict[str, Any], event: Any) -> dict[str, Any]:
        if command == "initialize":
            return {"supportsConfigurationDoneRequest": True}
        if command == "attach":
            event("initialized")
            return {}
        if command == "setBreakpoints":
            path = args["source"]["path"]
            lines = [b["line"] for b in args.get("breakpoints", [])]
            self.breakpoints[path] = set(lines)
            return {"breakpoints": [{"id": self._id(path, n), "verified": True, "line": n} for n in lines]}
        if command == "setExceptionBreakpoints":
            modes = {_BREAK_MODES[f] for f in args.get("filters", []) if f in _BREAK_MODES}
            modes |= {o.get("breakMode", "") for o in args.get("exceptionOptions", [])}
            self.break_modes = modes
            return {"breakpoints": []}
        if command == "setFunctionBreakpoints":
            return {"breakpoints": []}
        if command == "threads":
            return {"threads": [{"id": THREAD, "name": "MainThread"}]}
        if command in ("continue", "next", "stepIn", "stepOut", "pause", "configurationDone", "disconnect"):
            return {"allThreadsContinued": True} if command == "continue" else {}
        if command == "setDebuggerProperty":
            return {}
        step = self._paused()
        if command == "exceptionInfo":
            if not self.raised:
                raise LookupError("not stopped at an exception")
            kind, _, message = step.raises.partition(": ")
            mode = "unhandled" if self.break_modes - {"always"} else "always"
            details = {"typeName": kind, "message": message}
            return {"exceptionId": kind, "description": message, "breakMode": mode, "details": details}
        if command == "stackTrace":
            frame_ = {"id": 100, "name": step.function, "line": step.line, "column": 1, "source": {"path": step.file}}
            return {"stackFrames": [frame_], "totalFrames": 1}
        if command == "scopes":
            return {"scopes": [{"name": "Locals", "variablesReference": 1, "expensive": False}]}
        if command == "variables":
            values = step.locals if args["variablesReference"] == 1 else self.refs.get(args["variablesReference"], {})
            return {"variables": [_variable(name, value) for name, value in values.items()]}
        if command == "evaluate":
            try:
                value = eval(args["expression"], {}, dict(step.locals))  # the fake's own stand-in for Python
            except Exception as exc:
                raise LookupError(f"Traceback (most recent call last):\n{type(exc).__name__}: {exc}") from None
            return {"result": repr(value), "type": type(value).__name__, "variablesReference": 0}
        raise LookupError(f"the fake debugpy does not know '{command}'")

    def _id(self, path: str, line: int) -> int:
        return self.ids.setdefault((path, line), len(self.ids) + 1)

    def _raise(self, event: Any) -> None:
        """The current step raises: an exception breakpoint stops there first; then it ends the program."""
        step = self.program.steps[self.position]
        if self.break_modes and not self.raised:
            self.raised = True
            kind = step.raises.partition(":")[0]
            event("stopped", {"reason": "exception", "threadId": THREAD, "allThreadsStopped": True, "text": kind})
        else:
            self._crash(event)

    def _crash(self, event: Any) -> None:
        """The uncaught exception ends the program: Python prints its traceback and exits with 1."""
        step = self.program.steps[self.position]
        trace = f'Traceback (most recent call last):\n  File "{step.file}", line {step.line}, in {step.function}\n'
        event("output", {"category": "stderr", "output": f"{trace}{step.raises}\n"})
        self.position = len(self.program.steps)
        event("exited", {"exitCode": 1})
        event("terminated")
        self.ended.set()

    def _paused(self) -> Step:
        if not 0 <= self.position < len(self.program.steps):
            raise LookupError("not paused")
        return self.program.steps[self.position]

    def _run(self, event: Any, *, single_step: bool) -> None:
        """Run on from the current step: stop at the next step with a breakpoint (or the next one, stepping),
        or where a step raises."""
        if 0 <= self.position < len(self.program.steps) and self.program.steps[self.position].raises:
            self._raise(event)  # paused on the line that raises: it raises now
            return
        for index in range(self.position + 1, len(self.program.steps)):
            step = self.program.steps[index]
            if step.output:
                event("output", {"category": "stdout", "output": step.output})
            if step.raises and not single_step and step.line not in self.breakpoints.get(step.file, set()):
                self.position = index
                self._raise(event)
                return
            if single_step or step.line in self.breakpoints.get(step.file, set()):
                self.position = index
                reason = "step" if single_step else "breakpoint"
                ids = [] if single_step else [self._id(step.file, step.line)]
                body = {"reason": reason, "threadId": THREAD, "allThreadsStopped": True, "hitBreakpointIds": ids}
                event("stopped", body)
                return
        if self.program.loops:
            self.position = len(self.program.steps)
            return
        self.position = len(self.program.steps)
        event("exited", {"exitCode": self.program.exit_code})
        event("terminated")
        self.ended.set()


_BREAK_MODES = {"raised": "always", "uncaught": "unhandled", "userUnhandled": "userUnhandled"}


def _response(request: dict[str, Any], *, success: bool = True, body: Any = None, message: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "response",
        "request_seq": request["seq"],
        "command": request["command"],
        "success": success,
    }
    if success:
        out["body"] = body or {}
    else:
        out["message"] = message
    return out


def _variable(name: str, value: Any) -> dict[str, Any]:
    return {"name": name, "value": repr(value), "type": type(value).__name__, "variablesReference": 0}


class FakeTarget(Target):
    """The fake debugpy as a launched target: no process; it ends when its program does."""

    kind = "local"

    def __init__(self, peer: FakeDebugpy) -> None:
        self.peer = peer
        self.host = "127.0.0.1"
        self.port = peer.port
        self.killed = False

    def poll(self) -> int | None:
        if self.killed:
            return -9
        if not self.peer.ended.is_set():
            return None
        return 1 if any(step.raises for step in self.peer.program.steps) else self.peer.program.exit_code

    async def send_input(self, data: bytes) -> None:
        return None

    async def terminate(self) -> int | None:
        self.killed = True
        await self.peer.close()
        return -9


class FakeLauncher(Launcher):
    """Starts a fake debugpy playing ``program`` instead of running the script (named as a stand-in)."""

    name = "local"

    def __init__(self, program: Program) -> None:
        self.program = program
        self.peers: list[FakeDebugpy] = []

    async def start(self, spec: LaunchRequest, *, session_id: str, again: bool = False) -> Target:
        peer = FakeDebugpy(self.program)
        await peer.start()
        self.peers.append(peer)
        return FakeTarget(peer)

    async def close(self) -> None:
        for peer in self.peers:
            await peer.close()
