"""The tools that start a program and follow its session: launch and attach; status, output and disconnect."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from debugrelay.errors import InvalidRequest
from debugrelay.models import AttachSpec, LaunchRequest, PathMapping, ReadyWhen, TraceRequest, joined_output
from debugrelay.models._traces import MAX_TRACES_PER_SESSION

from .. import policy
from .._asking import asking_folder
from ._declare import ActionGroup, ContinueTimeout, SessionId, WithLocals, action
from ._events import compact_breakpoint, plain


class StartTools(ActionGroup):
    """Run a program under the debugger, or attach to one that runs."""

    @action()
    async def debug_launch(
        self,
        *,
        script: Annotated[str | None, Field(description="Path (relative: your folder).")] = None,
        module: Annotated[str | None, Field(description="Or `python -m` this.")] = None,
        args: Annotated[list[str] | None, Field(description="Program arguments.")] = None,
        test: Annotated[
            str | None,
            Field(description="A pytest node id; pauses at failing asserts."),
        ] = None,
        env: Annotated[dict[str, str] | None, Field(description="Extra environment.")] = None,
        cwd: Annotated[str | None, Field(description="Working folder (default: the script's).")] = None,
        python: Annotated[str | None, Field(description="Interpreter.")] = None,
        breakpoints: Annotated[
            list[str] | None,
            Field(description="'FILE:LINE' to set first."),
        ] = None,
        trace: Annotated[
            list[str] | None,
            Field(description="FILE:FUNC to trace."),
        ] = None,
        stop_on_entry: Annotated[bool, Field(description="Pause on the first line.")] = False,
        stop_on_exception: Annotated[
            Literal["uncaught", "raised", "none"] | None,
            Field(description="'uncaught' (default), 'raised': every raise; this run only."),
        ] = None,
        session_id: Annotated[
            str | None,
            Field(description="Default: the latest if new or same program (restarts it)."),
        ] = None,
        children: bool = False,
        port: Annotated[int | None, Field(description="A service: answer once it listens here; its URL.")] = None,
        publish: Annotated[list[int] | None, Field(description="More ports at URLs.")] = None,
        launcher: Annotated[
            Literal["local", "docker", "kubernetes"] | None, Field(description="Default: the relay's.")
        ] = None,
        image: Annotated[str | None, Field(description="Container image.")] = None,
        timeout: ContinueTimeout = 30,
        locals: WithLocals = True,
    ) -> dict[str, Any]:
        """Run a Python program under the debugger (again: a restart); answers its first event."""
        script = policy.absolute(script) if script else None  # paths start in your folder, as every one does
        # a relative cwd starts in the folder the agent asks from; a module or a test runs there by default
        cwd = policy.absolute(cwd) if cwd else (None if script else asking_folder())
        if len(trace or []) > MAX_TRACES_PER_SESSION:  # refused before anything is set
            raise InvalidRequest(
                f"at most {MAX_TRACES_PER_SESSION} functions are traced in a session",
                details={"trace": len(trace or [])},
                hint="Trace the functions the value passes through, not every one.",
            )
        if test is not None and script is None and module is None:
            module = "pytest"
        prepared = await policy.prepare_launch(
            self.backend,
            session_id,
            script=script,
            module=module,
            breakpoints=breakpoints or [],
            folder=asking_folder() or policy.launch_folder(script, cwd),
            stop_on_exception=stop_on_exception,
        )
        sid = prepared.session_id
        for function in trace or []:  # before the run: its first calls are recorded too
            named = policy.traced_function(function, asking_folder() or policy.launch_folder(script, cwd))
            await self.backend.add_trace(sid, TraceRequest(function=named))
        spec = LaunchRequest(
            script=script,
            module=module,
            args=args or [],
            env=env or {},
            cwd=cwd,
            python=python,
            stop_on_entry=stop_on_entry,
            stop_on_exception=prepared.stop_on_exception,
            test=test,
            debug_subprocesses=children,
            ready=ReadyWhen(port=port) if port is not None else None,
            ports=list(dict.fromkeys([*([port] if port is not None else []), *(publish or [])])),
            launcher=launcher,
            image=image,
        )
        status, notes = await policy.launch_and_wait(self.backend, prepared, spec, timeout, details=locals)
        waited = 0 if port is not None else timeout  # a service: it listens (or stopped, or ended) by now
        event = await self.stops.event(sid, status, with_locals=locals, waited=waited, serving=port is not None)
        return {**event, **notes}

    @action()
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
        """Attach to a running program (debugpy listening, a pid, a pod): it keeps running; then set
        breakpoints, wait."""
        mappings = [PathMapping(local_root=k, remote_root=v) for k, v in (path_mappings or {}).items()]
        spec = AttachSpec(host=host, port=port, pid=pid, pod=pod, path_mappings=mappings)
        sid = (await self.backend.create_session(attach=spec)).session_id
        return await self.stops.event(sid, await self.backend.status(sid), with_locals=False)


class SessionTools(ActionGroup):
    """A session as the relay keeps it: its state, what the program printed, its end."""

    @action(read_only=True)
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

    @action(read_only=True)
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
        out: dict[str, Any] = {"session_id": sid, "text": joined_output(page.outputs), "cursor": page.cursor}
        if page.has_more:
            out["has_more"] = True
        if page.dropped:
            out["dropped"] = page.dropped
        return out

    @action()
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
        out = await self.stops.event(sid, status, with_locals=False)
        out.pop("hint", None)
        if forget:
            await self.backend.delete_session(sid)
            out["deleted"] = True
        return out
