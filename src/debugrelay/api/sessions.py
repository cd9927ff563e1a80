"""Session lifecycle, launch/attach, execution control, wait, output and input."""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from litestar import Controller, Request, delete, get, patch, post

from debugrelay.errors import InvalidRequest
from debugrelay.models import AttachSpec, Input, LaunchRequest, PathMapping
from debugrelay.sessions import SessionManager, session_view, status_view

from ._body import optional_body


class SessionCreate(Input):
    name: str | None = None
    timeout_minutes: float | None = None
    mode: Literal["launch", "attach"] = "launch"
    host: str = "127.0.0.1"
    port: int | None = None
    pid: int | None = None
    path_mappings: list[PathMapping] = msgspec.field(default_factory=list)
    launch: LaunchRequest | None = None


class SessionPatch(Input):
    name: str | None = None
    timeout_minutes: float | None = None


class ResumeBody(Input):
    thread_id: int | None = None
    wait: float | None = None
    timeout: float | None = None


class WaitBody(Input):
    timeout: float = 30.0
    include_autopsy: bool = False


class InputBody(Input):
    input: str | None = None
    text: str | None = None
    data: str | None = None
    newline: bool = False


MAX_WAIT = 300.0
STEP_WAIT = 10.0


def _wait_value(value: float | None, default: float) -> float:
    if value is None:
        return default
    if value < 0 or value > MAX_WAIT:
        raise InvalidRequest(f"wait/timeout must be between 0 and {MAX_WAIT:g} seconds", details={"timeout": value})
    return value


def status_of(manager: SessionManager, session_id: str) -> dict[str, Any]:
    session = manager.get(session_id)
    return status_view(session, manager.expires_in(session))


class SessionController(Controller):
    path = "/sessions"
    tags = ["sessions"]  # noqa: RUF012

    @post("/", status_code=201, summary="Create a debug session (launch mode, or attach to a debugpy)")
    async def create_session(self, manager: SessionManager, request: Request[Any, Any, Any]) -> dict[str, Any]:
        body = await optional_body(request, SessionCreate) or SessionCreate()
        attach = None
        if body.mode == "attach":
            attach = AttachSpec(host=body.host, port=body.port, pid=body.pid, path_mappings=body.path_mappings)
        session = await manager.create(name=body.name, timeout_minutes=body.timeout_minutes, attach=attach)
        if body.launch is not None:
            await session.launch(body.launch)
        return {"session_id": session.id, **session_view(session, manager.expires_in(session))}

    @get("/", summary="List sessions with their status")
    async def list_sessions(self, manager: SessionManager) -> dict[str, Any]:
        sessions = [
            {"session_id": s.id, "name": s.record.name, **status_view(s, manager.expires_in(s))}
            for s in await manager.list_all()
        ]
        return {"sessions": sessions, "total": len(sessions)}

    @get("/{session_id:str}", summary="Session detail")
    async def get_session(self, manager: SessionManager, session_id: str) -> dict[str, Any]:
        session = manager.get(session_id)
        return session_view(session, manager.expires_in(session))

    @patch("/{session_id:str}", summary="Rename a session or change its idle timeout")
    async def patch_session(self, manager: SessionManager, session_id: str, data: SessionPatch) -> dict[str, Any]:
        session = manager.get(session_id)
        if data.timeout_minutes is not None and data.timeout_minutes <= 0:
            raise InvalidRequest("timeout_minutes must be > 0", details={"timeout_minutes": data.timeout_minutes})
        if data.name is not None:
            session.record.name = data.name
        if data.timeout_minutes is not None:
            session.record.timeout_minutes = data.timeout_minutes
            manager.poke()
        await session.save()
        return session_view(session, manager.expires_in(session))

    @delete("/{session_id:str}", status_code=200, summary="End the target and forget the session")
    async def delete_session(self, manager: SessionManager, session_id: str) -> dict[str, Any]:
        await manager.delete(session_id)
        return {"deleted": True, "session_id": session_id}

    @get("/{session_id:str}/status", summary="Compact status: paused where and why, or exit code")
    async def status(self, manager: SessionManager, session_id: str) -> dict[str, Any]:
        return status_of(manager, session_id)

    @get("/{session_id:str}/ping", summary="Heartbeat: resets the idle timeout")
    async def ping(self, manager: SessionManager, session_id: str) -> dict[str, Any]:
        session = manager.get(session_id)
        return {"ok": True, "status": session.status, "expires_in_seconds": round(manager.expires_in(session), 1)}

    @post("/{session_id:str}/launch", status_code=200, summary="Launch a script or module under debugpy")
    async def launch(self, manager: SessionManager, session_id: str, data: LaunchRequest) -> dict[str, Any]:
        session = manager.get(session_id)
        await session.launch(data)
        return status_of(manager, session_id)

    @post("/{session_id:str}/attach", status_code=200, summary="Attach to a debugpy listening at host:port or in a pid")
    async def attach(self, manager: SessionManager, session_id: str, data: AttachSpec) -> dict[str, Any]:
        session = manager.get(session_id)
        await session.attach(data)
        return status_of(manager, session_id)

    async def _resume(
        self, manager: SessionManager, session_id: str, request: Request[Any, Any, Any], command: str, default: float
    ) -> dict[str, Any]:
        body = await optional_body(request, ResumeBody) or ResumeBody()
        wait = _wait_value(body.wait if body.wait is not None else body.timeout, default)
        session = manager.get(session_id)
        seen = session.record.stop_count
        await session.resume(command, body.thread_id, wait)
        out = status_of(manager, session_id)
        if wait and session.status == "running" and session.record.stop_count == seen:
            out["timed_out"] = True
            out["message"] = f"still running after {wait:g}s; call /wait or /pause"
        return out

    @post("/{session_id:str}/continue", status_code=200, summary="Resume until the next breakpoint or the end")
    async def continue_(
        self, manager: SessionManager, session_id: str, request: Request[Any, Any, Any]
    ) -> dict[str, Any]:
        return await self._resume(manager, session_id, request, "continue", 0.0)

    @post("/{session_id:str}/step-over", status_code=200, summary="Run the current line; answers with the new location")
    async def step_over(
        self, manager: SessionManager, session_id: str, request: Request[Any, Any, Any]
    ) -> dict[str, Any]:
        return await self._resume(manager, session_id, request, "step-over", STEP_WAIT)

    @post("/{session_id:str}/step-into", status_code=200, summary="Step into the call on the current line")
    async def step_into(
        self, manager: SessionManager, session_id: str, request: Request[Any, Any, Any]
    ) -> dict[str, Any]:
        return await self._resume(manager, session_id, request, "step-into", STEP_WAIT)

    @post("/{session_id:str}/step-out", status_code=200, summary="Finish the current function; stop in its caller")
    async def step_out(
        self, manager: SessionManager, session_id: str, request: Request[Any, Any, Any]
    ) -> dict[str, Any]:
        return await self._resume(manager, session_id, request, "step-out", STEP_WAIT)

    @post("/{session_id:str}/threads/{thread_id:int}/continue", status_code=200, summary="Resume one thread")
    async def continue_thread(self, manager: SessionManager, session_id: str, thread_id: int) -> dict[str, Any]:
        session = manager.get(session_id)
        await session.resume("continue", thread_id, 0.0)
        return status_of(manager, session_id)

    @post("/{session_id:str}/pause", status_code=200, summary="Pause the running target")
    async def pause(self, manager: SessionManager, session_id: str) -> dict[str, Any]:
        session = manager.get(session_id)
        await session.pause()
        return status_of(manager, session_id)

    @post("/{session_id:str}/wait", status_code=200, summary="Long-poll until the target pauses or ends")
    async def wait(self, manager: SessionManager, session_id: str, request: Request[Any, Any, Any]) -> dict[str, Any]:
        body = await optional_body(request, WaitBody) or WaitBody()
        timeout = _wait_value(body.timeout, 30.0)
        session = manager.get(session_id)
        done = await session.wait(timeout)
        session.touch()
        out = status_of(manager, session_id)
        if not done:
            out["timed_out"] = True
        if (
            body.include_autopsy
            and session.status == "paused"
            and session.record.stop
            and session.record.stop.exception
        ):
            from debugrelay.inspect import autopsy

            out["autopsy"] = await autopsy(session)
        return out

    @post(
        "/{session_id:str}/restart", status_code=200, summary="Restart the program with the same launch and breakpoints"
    )
    async def restart(self, manager: SessionManager, session_id: str) -> dict[str, Any]:
        session = manager.get(session_id)
        await session.restart()
        return status_of(manager, session_id)

    @post("/{session_id:str}/detach", status_code=200, summary="Disconnect and leave the target running")
    async def detach(self, manager: SessionManager, session_id: str) -> dict[str, Any]:
        session = manager.get(session_id)
        await session.detach()
        return status_of(manager, session_id)

    @post("/{session_id:str}/terminate", status_code=200, summary="Kill the target; the session stays")
    async def terminate(self, manager: SessionManager, session_id: str) -> dict[str, Any]:
        session = manager.get(session_id)
        await session.terminate()
        return status_of(manager, session_id)

    @get("/{session_id:str}/output", summary="stdout/stderr since a cursor, paginated")
    async def output(
        self,
        manager: SessionManager,
        session_id: str,
        since: str | None = None,
        limit: int = 200,
        stream: str | None = None,
    ) -> dict[str, Any]:
        if limit < 1 or limit > 10_000:
            raise InvalidRequest("limit must be between 1 and 10000", details={"limit": limit})
        session = manager.get(session_id)
        await session.output.flush()
        page = await manager.store.read_output(session_id, since, limit)
        entries = [e for e in page.entries if stream is None or e.type == stream]
        out: dict[str, Any] = {
            "outputs": [{"type": e.type, "text": e.text, "timestamp": e.timestamp} for e in entries],
            "cursor": page.cursor,
            "has_more": page.has_more,
        }
        if page.dropped:
            out["dropped"] = page.dropped if page.dropped > 0 else True
            out["message"] = "older output was dropped: the buffer is capped (DEBUGRELAY_OUTPUT_BUFFER_ENTRIES)"
        return out

    @delete("/{session_id:str}/output", status_code=200, summary="Clear the output buffer")
    async def clear_output(self, manager: SessionManager, session_id: str) -> dict[str, Any]:
        manager.get(session_id)
        await manager.store.clear_output(session_id)
        return {"cleared": True}

    async def _input(self, manager: SessionManager, session_id: str, data: InputBody) -> dict[str, Any]:
        text = data.input if data.input is not None else data.text if data.text is not None else data.data
        if text is None:
            raise InvalidRequest("give the text to send as 'input'", hint='e.g. {"input": "yes\\n"}')
        if data.newline and not text.endswith("\n"):
            text += "\n"
        session = manager.get(session_id)
        await session.send_input(text)
        return {"sent": len(text.encode())}

    @post("/{session_id:str}/input", status_code=200, summary="Send text to the target's stdin")
    async def send_input(self, manager: SessionManager, session_id: str, data: InputBody) -> dict[str, Any]:
        return await self._input(manager, session_id, data)

    @post("/{session_id:str}/stdin", status_code=200, summary="Alias of /input", include_in_schema=False)
    async def send_stdin(self, manager: SessionManager, session_id: str, data: InputBody) -> dict[str, Any]:
        return await self._input(manager, session_id, data)
