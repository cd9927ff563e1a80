"""What the MCP tools drive: the relay's services in this process, or a running relay over HTTP.

Both backends answer with the HTTP API's JSON shapes, so the tools are written once.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any

import msgspec

from debugrelay import inspect as inspection
from debugrelay.client import AsyncRelayClient
from debugrelay.errors import InvalidRequest, RelayError
from debugrelay.models import AttachSpec, LaunchRequest
from debugrelay.sessions import Session, SessionManager, breakpoints, session_view, status_view
from debugrelay.sessions._source import read_source


class Backend(abc.ABC):
    """The operations the tools need; results are the HTTP API's JSON bodies."""

    @abc.abstractmethod
    async def list_sessions(self) -> list[dict[str, Any]]:
        """Sessions, oldest first, each ``{session_id, status, ...}``."""

    @abc.abstractmethod
    async def create_session(self, name: str | None = None) -> dict[str, Any]:
        """A new session in the ``created`` state."""

    @abc.abstractmethod
    async def attach_session(self, spec: dict[str, Any]) -> dict[str, Any]:
        """A new session attached to a listening debugpy."""

    @abc.abstractmethod
    async def delete_session(self, session_id: str) -> None:
        """End the target and forget the session."""

    @abc.abstractmethod
    async def session(self, session_id: str) -> dict[str, Any]:
        """Session detail, read from the record only (the debugger is not asked)."""

    @abc.abstractmethod
    async def status(self, session_id: str) -> dict[str, Any]:
        """Compact status, read from the record only."""

    @abc.abstractmethod
    async def breakpoints(self, session_id: str) -> list[dict[str, Any]]:
        """The session's breakpoints with verification and hit counts."""

    @abc.abstractmethod
    async def add_breakpoints(self, session_id: str, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Set breakpoints (validated against the source first)."""

    @abc.abstractmethod
    async def remove_breakpoint(self, session_id: str, breakpoint_id: str) -> None:
        """Remove one breakpoint."""

    @abc.abstractmethod
    async def set_exception_breakpoints(
        self, session_id: str, filters: list[str], exception_types: list[str]
    ) -> dict[str, Any]:
        """Which exceptions pause the target."""

    @abc.abstractmethod
    async def launch(self, session_id: str, spec: dict[str, Any]) -> dict[str, Any]:
        """Start the program; answers as soon as it runs."""

    @abc.abstractmethod
    async def resume(self, session_id: str, command: str, thread_id: int | None, wait: float) -> dict[str, Any]:
        """continue/step-*; waits up to ``wait`` s for the next stop (``timed_out`` when none came)."""

    @abc.abstractmethod
    async def pause(self, session_id: str) -> dict[str, Any]:
        """Pause the running target."""

    @abc.abstractmethod
    async def wait(self, session_id: str, seconds: float, include_autopsy: bool) -> dict[str, Any]:
        """Long-poll until paused or ended (the current stop when already paused)."""

    @abc.abstractmethod
    async def terminate(self, session_id: str) -> dict[str, Any]:
        """Kill the target; the session stays."""

    @abc.abstractmethod
    async def detach(self, session_id: str) -> dict[str, Any]:
        """Disconnect and leave the target running."""

    @abc.abstractmethod
    async def threads(self, session_id: str) -> list[dict[str, Any]]:
        """Threads of the target."""

    @abc.abstractmethod
    async def stacktrace(self, session_id: str, thread_id: int | None, start: int, count: int) -> dict[str, Any]:
        """Frames of a paused thread."""

    @abc.abstractmethod
    async def scopes(self, session_id: str, frame_index: int, thread_id: int | None) -> list[dict[str, Any]]:
        """Scopes (Locals, Globals) of a frame."""

    @abc.abstractmethod
    async def variables(self, session_id: str, reference: int, start: int, count: int | None) -> dict[str, Any]:
        """Children of a scope or an expandable value."""

    @abc.abstractmethod
    async def frame_variables(
        self,
        session_id: str,
        *,
        scope: str,
        frame_index: int,
        thread_id: int | None,
        expand: str | None,
        start: int,
        count: int | None,
    ) -> dict[str, Any]:
        """A frame's variables by scope (locals, arguments, globals, all), or the children of a path."""

    @abc.abstractmethod
    async def evaluate(
        self,
        session_id: str,
        expression: str,
        *,
        frame_index: int,
        thread_id: int | None,
        context: str = "repl",
        format: str | None = None,
    ) -> dict[str, Any]:
        """Evaluate in a paused frame."""

    @abc.abstractmethod
    async def output(self, session_id: str, since: str | None, limit: int) -> dict[str, Any]:
        """Output entries after a cursor."""

    @abc.abstractmethod
    async def source_line(self, session_id: str, path: str, line: int) -> str | None:
        """One line of a source file, or None when unreadable."""

    @abc.abstractmethod
    async def autopsy(self, session_id: str, **options: Any) -> dict[str, Any]:
        """The whole exception context in one answer."""

    @abc.abstractmethod
    async def object_inspect(self, session_id: str, object_ref: str, **options: Any) -> dict[str, Any]:
        """An object's fields, expanded to a depth."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release what the backend holds."""


# -- in this process ------------------------------------------------------------------------


def _convert(data: dict[str, Any], kind: type[Any], what: str) -> Any:
    try:
        return msgspec.convert(data, kind)
    except msgspec.ValidationError as exc:
        raise InvalidRequest(f"invalid {what}: {exc}", details={"errors": [str(exc)]}) from exc


class LocalBackend(Backend):
    """The relay's own services (``debugrelay mcp`` embedded, and ``/mcp`` on the relay)."""

    def __init__(self, manager: SessionManager | Callable[[], SessionManager]) -> None:
        self._manager = manager

    @property
    def manager(self) -> SessionManager:
        return self._manager if isinstance(self._manager, SessionManager) else self._manager()

    def _get(self, session_id: str) -> Session:
        return self.manager.get(session_id)

    def _status(self, session: Session) -> dict[str, Any]:
        return status_view(session, self.manager.expires_in(session))

    async def list_sessions(self) -> list[dict[str, Any]]:
        mgr = self.manager
        return [
            {"session_id": s.id, "name": s.record.name, **status_view(s, mgr.expires_in(s))}
            for s in await mgr.list_all()
        ]

    async def create_session(self, name: str | None = None) -> dict[str, Any]:
        session = await self.manager.create(name=name)
        return {"session_id": session.id, **session_view(session, self.manager.expires_in(session))}

    async def attach_session(self, spec: dict[str, Any]) -> dict[str, Any]:
        attach = _convert(spec, AttachSpec, "attach request")
        session = await self.manager.create(attach=attach)
        return {"session_id": session.id, **session_view(session, self.manager.expires_in(session))}

    async def delete_session(self, session_id: str) -> None:
        await self.manager.delete(session_id)

    async def session(self, session_id: str) -> dict[str, Any]:
        session = self._get(session_id)
        return session_view(session, self.manager.expires_in(session))

    async def status(self, session_id: str) -> dict[str, Any]:
        return self._status(self._get(session_id))

    async def breakpoints(self, session_id: str) -> list[dict[str, Any]]:
        session = self._get(session_id)
        ended = session.status in ("terminated", "failed")
        return [breakpoints.view(b, ended) for b in await breakpoints.listing(session)]

    async def add_breakpoints(self, session_id: str, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        session = self._get(session_id)
        reqs, _ = breakpoints.parse_requests(requests)
        async with session.lock:
            created = await breakpoints.add(session, reqs)
        return [breakpoints.view(b) for b in created]

    async def remove_breakpoint(self, session_id: str, breakpoint_id: str) -> None:
        session = self._get(session_id)
        async with session.lock:
            await breakpoints.remove(session, breakpoint_id)

    async def set_exception_breakpoints(
        self, session_id: str, filters: list[str], exception_types: list[str]
    ) -> dict[str, Any]:
        wanted = await breakpoints.set_exception_filters(self._get(session_id), filters, exception_types)
        return {"filters": wanted.filters, "exception_types": wanted.exception_types}

    async def launch(self, session_id: str, spec: dict[str, Any]) -> dict[str, Any]:
        request = _convert(spec, LaunchRequest, "launch request")
        session = self._get(session_id)
        await session.launch(request)
        return self._status(session)

    async def resume(self, session_id: str, command: str, thread_id: int | None, wait: float) -> dict[str, Any]:
        session = self._get(session_id)
        seen = session.record.stop_count
        await session.resume(command, thread_id, wait)
        out = self._status(session)
        if wait and session.status == "running" and session.record.stop_count == seen:
            out["timed_out"] = True
        return out

    async def pause(self, session_id: str) -> dict[str, Any]:
        session = self._get(session_id)
        await session.pause()
        return self._status(session)

    async def wait(self, session_id: str, seconds: float, include_autopsy: bool) -> dict[str, Any]:
        session = self._get(session_id)
        done = await session.wait(seconds)
        session.touch()
        out = self._status(session)
        if not done:
            out["timed_out"] = True
        stop = session.record.stop
        if include_autopsy and session.status == "paused" and stop is not None and stop.exception is not None:
            out["autopsy"] = await inspection.autopsy(session)
        return out

    async def terminate(self, session_id: str) -> dict[str, Any]:
        session = self._get(session_id)
        await session.terminate()
        return self._status(session)

    async def detach(self, session_id: str) -> dict[str, Any]:
        session = self._get(session_id)
        await session.detach()
        return self._status(session)

    async def threads(self, session_id: str) -> list[dict[str, Any]]:
        return await self._get(session_id).threads()

    async def stacktrace(self, session_id: str, thread_id: int | None, start: int, count: int) -> dict[str, Any]:
        return await self._get(session_id).stacktrace(thread_id, start, count)

    async def scopes(self, session_id: str, frame_index: int, thread_id: int | None) -> list[dict[str, Any]]:
        return await self._get(session_id).scopes(frame_index, thread_id)

    async def variables(self, session_id: str, reference: int, start: int, count: int | None) -> dict[str, Any]:
        return await self._get(session_id).variables(reference, start, count)

    async def frame_variables(
        self,
        session_id: str,
        *,
        scope: str,
        frame_index: int,
        thread_id: int | None,
        expand: str | None,
        start: int,
        count: int | None,
    ) -> dict[str, Any]:
        result: dict[str, Any] = await inspection.frame_variables(
            self._get(session_id),
            scope=scope,
            frame_index=frame_index,
            thread_id=thread_id,
            expand=expand,
            start=start,
            count=count,
        )
        return result

    async def evaluate(
        self,
        session_id: str,
        expression: str,
        *,
        frame_index: int,
        thread_id: int | None,
        context: str = "repl",
        format: str | None = None,
    ) -> dict[str, Any]:
        result = await self._get(session_id).evaluate(expression, frame_index, context, thread_id)
        if format in ("hex", "binary") and result.get("type") in ("int", "bool"):
            value = int(result["result"] == "True") if result["type"] == "bool" else int(result["result"])
            result["result"] = hex(value) if format == "hex" else bin(value)
        return result

    async def output(self, session_id: str, since: str | None, limit: int) -> dict[str, Any]:
        session = self._get(session_id)
        await session.output.flush()
        page = await self.manager.store.read_output(session_id, since, limit)
        out: dict[str, Any] = {
            "outputs": [{"type": e.type, "text": e.text, "timestamp": e.timestamp} for e in page.entries],
            "cursor": page.cursor,
            "has_more": page.has_more,
        }
        if page.dropped:
            out["dropped"] = page.dropped if page.dropped > 0 else True
        return out

    async def source_line(self, session_id: str, path: str, line: int) -> str | None:
        text = read_source(self.manager.source_path(path))
        if text is None:
            return None
        lines = text.splitlines()
        return lines[line - 1] if 0 < line <= len(lines) else None

    async def autopsy(self, session_id: str, **options: Any) -> dict[str, Any]:
        session = self._get(session_id)
        result: dict[str, Any] = await inspection.autopsy(session, **options)
        return result

    async def object_inspect(self, session_id: str, object_ref: str, **options: Any) -> dict[str, Any]:
        session = self._get(session_id)
        result: dict[str, Any] = await inspection.object_inspect(session, object_ref, **options)
        return result


# -- over HTTP ------------------------------------------------------------------------------


class HttpBackend(Backend):
    """A running relay (``debugrelay mcp --url URL``); every tool becomes HTTP calls."""

    def __init__(self, client: AsyncRelayClient) -> None:
        self.client = client

    async def list_sessions(self) -> list[dict[str, Any]]:
        data = await self.client.list_sessions()
        sessions: list[dict[str, Any]] = data["sessions"]
        return sessions

    async def create_session(self, name: str | None = None) -> dict[str, Any]:
        data: dict[str, Any] = await self.client.create_session(name=name)
        return data

    async def attach_session(self, spec: dict[str, Any]) -> dict[str, Any]:
        data: dict[str, Any] = await self.client.create_session(mode="attach", **spec)
        return data

    async def delete_session(self, session_id: str) -> None:
        await self.client.delete_session(session_id)

    async def session(self, session_id: str) -> dict[str, Any]:
        data: dict[str, Any] = await self.client.get_session(session_id)
        return data

    async def status(self, session_id: str) -> dict[str, Any]:
        data: dict[str, Any] = await self.client.status(session_id)
        return data

    async def breakpoints(self, session_id: str) -> list[dict[str, Any]]:
        data = await self.client.breakpoints(session_id)
        found: list[dict[str, Any]] = data["breakpoints"]
        return found

    async def add_breakpoints(self, session_id: str, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        data = await self.client.add_breakpoints(session_id, requests)
        created: list[dict[str, Any]] = data["breakpoints"]
        return created

    async def remove_breakpoint(self, session_id: str, breakpoint_id: str) -> None:
        await self.client.remove_breakpoint(session_id, breakpoint_id)

    async def set_exception_breakpoints(
        self, session_id: str, filters: list[str], exception_types: list[str]
    ) -> dict[str, Any]:
        data: dict[str, Any] = await self.client.set_exception_breakpoints(session_id, filters, exception_types)
        return data

    async def launch(self, session_id: str, spec: dict[str, Any]) -> dict[str, Any]:
        data: dict[str, Any] = await self.client.launch(session_id, spec)
        return data

    async def resume(self, session_id: str, command: str, thread_id: int | None, wait: float) -> dict[str, Any]:
        data: dict[str, Any] = await self.client.resume(session_id, command, thread_id=thread_id, wait=wait)
        data.pop("message", None)
        return data

    async def pause(self, session_id: str) -> dict[str, Any]:
        data: dict[str, Any] = await self.client.pause(session_id)
        return data

    async def wait(self, session_id: str, seconds: float, include_autopsy: bool) -> dict[str, Any]:
        data: dict[str, Any] = await self.client.wait(session_id, seconds, include_autopsy)
        return data

    async def terminate(self, session_id: str) -> dict[str, Any]:
        data: dict[str, Any] = await self.client.terminate(session_id)
        return data

    async def detach(self, session_id: str) -> dict[str, Any]:
        data: dict[str, Any] = await self.client.detach(session_id)
        return data

    async def threads(self, session_id: str) -> list[dict[str, Any]]:
        data = await self.client.threads(session_id)
        found: list[dict[str, Any]] = data["threads"]
        return found

    async def stacktrace(self, session_id: str, thread_id: int | None, start: int, count: int) -> dict[str, Any]:
        data: dict[str, Any] = await self.client.stacktrace(session_id, thread_id, start, count)
        return data

    async def scopes(self, session_id: str, frame_index: int, thread_id: int | None) -> list[dict[str, Any]]:
        data = await self.client.scopes(session_id, frame_index, thread_id)
        found: list[dict[str, Any]] = data["scopes"]
        return found

    async def variables(self, session_id: str, reference: int, start: int, count: int | None) -> dict[str, Any]:
        data: dict[str, Any] = await self.client.variables(session_id, reference, start, count)
        return data

    async def frame_variables(
        self,
        session_id: str,
        *,
        scope: str,
        frame_index: int,
        thread_id: int | None,
        expand: str | None,
        start: int,
        count: int | None,
    ) -> dict[str, Any]:
        data: dict[str, Any] = await self.client.frame_variables_by_scope(
            session_id,
            scope=scope,
            frame_index=frame_index,
            thread_id=thread_id,
            expand=expand,
            start=start,
            count=count,
        )
        return data

    async def evaluate(
        self,
        session_id: str,
        expression: str,
        *,
        frame_index: int,
        thread_id: int | None,
        context: str = "repl",
        format: str | None = None,
    ) -> dict[str, Any]:
        data: dict[str, Any] = await self.client.evaluate(
            session_id, expression, frame_index=frame_index, thread_id=thread_id, context=context, format=format
        )
        return data

    async def output(self, session_id: str, since: str | None, limit: int) -> dict[str, Any]:
        data: dict[str, Any] = await self.client.output(session_id, since, limit)
        return data

    async def source_line(self, session_id: str, path: str, line: int) -> str | None:
        try:
            data = await self.client.source(session_id, path, line, line)
        except RelayError:
            return None
        except Exception:  # the line is a courtesy: never fail a stop report for it
            return None
        text = str(data.get("content") or "")
        return text.rstrip("\n") if text else None

    async def autopsy(self, session_id: str, **options: Any) -> dict[str, Any]:
        data: dict[str, Any] = await self.client.autopsy(session_id, **options)
        return data

    async def object_inspect(self, session_id: str, object_ref: str, **options: Any) -> dict[str, Any]:
        data: dict[str, Any] = await self.client.object_inspect(session_id, object_ref, **options)
        return data

    async def close(self) -> None:
        await self.client.aclose()
