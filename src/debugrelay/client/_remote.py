"""The relay's operations through its HTTP API: the same typed answers as in process."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

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
from debugrelay.service import DebugService

from ._client import ApiError, AsyncRelayClient

T = TypeVar("T")


def _typed(data: Any, kind: type[T]) -> T:
    return msgspec.convert(data, kind)


def _body(spec: msgspec.Struct) -> dict[str, Any]:
    """A request Struct as JSON, without the fields left unset."""
    return {k: v for k, v in msgspec.to_builtins(spec).items() if v is not None}


class RemoteService(DebugService):
    """A running relay (``debugrelay mcp --url URL``, the CLI); errors arrive as :class:`ApiError`."""

    def __init__(self, client: AsyncRelayClient) -> None:
        self.client = client

    async def list_sessions(self) -> SessionList:
        return _typed(await self.client.list_sessions(), SessionList)

    async def create_session(
        self,
        *,
        name: str | None = None,
        timeout_minutes: float | None = None,
        attach: AttachSpec | None = None,
        launch: LaunchRequest | None = None,
    ) -> SessionDetail:
        body: dict[str, Any] = {"name": name, "timeout_minutes": timeout_minutes}
        if attach is not None:
            body.update(mode="attach", **_body(attach))
        if launch is not None:
            body["launch"] = _body(launch)
        return _typed(await self.client.create_session(**body), SessionDetail)

    async def session(self, session_id: str) -> SessionDetail:
        return _typed(await self.client.get_session(session_id), SessionDetail)

    async def delete_session(self, session_id: str) -> Deleted:
        return _typed(await self.client.delete_session(session_id), Deleted)

    async def status(self, session_id: str) -> Status:
        return _typed(await self.client.status(session_id), Status)

    async def launch(self, session_id: str, spec: LaunchRequest) -> Status:
        return _typed(await self.client.launch(session_id, _body(spec)), Status)

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
        answer = await self.client.resume(
            session_id, command, thread_id=thread_id, timeout=wait, locals=details, every=every
        )
        return _typed(answer, Status)

    async def pause(self, session_id: str) -> Status:
        return _typed(await self.client.pause(session_id), Status)

    async def wait(
        self, session_id: str, timeout: float = 30.0, include_autopsy: bool = False, details: bool = False
    ) -> Status:
        return _typed(await self.client.wait(session_id, timeout, include_autopsy, locals=details), Status)

    async def restart(self, session_id: str) -> Status:
        return _typed(await self.client.restart(session_id), Status)

    async def terminate(self, session_id: str) -> Status:
        return _typed(await self.client.terminate(session_id), Status)

    async def detach(self, session_id: str) -> Status:
        return _typed(await self.client.detach(session_id), Status)

    async def output(
        self,
        session_id: str,
        since: str | None = None,
        limit: int = 200,
        stream: str | None = None,
        *,
        newest: bool = False,
    ) -> OutputPage:
        return _typed(await self.client.output(session_id, since, limit, stream, newest=newest), OutputPage)

    async def new_output(self, session_id: str) -> OutputPage:
        return _typed(await self.client.new_output(session_id), OutputPage)

    async def breakpoints(self, session_id: str) -> BreakpointList:
        return _typed(await self.client.breakpoints(session_id), BreakpointList)

    async def add_breakpoints(self, session_id: str, requests: list[BreakpointRequest]) -> list[BreakpointView]:
        data = await self.client.add_breakpoints(session_id, [_body(r) for r in requests])
        return _typed(data, BreakpointList).breakpoints

    async def remove_breakpoint(self, session_id: str, breakpoint_id: str) -> Deleted:
        return _typed(await self.client.remove_breakpoint(session_id, breakpoint_id), Deleted)

    async def set_exception_breakpoints(
        self, session_id: str, filters: list[str], exception_types: list[str]
    ) -> ExceptionFiltersView:
        data = await self.client.set_exception_breakpoints(session_id, filters, exception_types)
        return _typed(data, ExceptionFiltersView)

    async def threads(self, session_id: str) -> Threads:
        return _typed(await self.client.threads(session_id), Threads)

    async def processes(self, session_id: str) -> ProcessList:
        return _typed(await self.client.processes(session_id), ProcessList)

    async def request(self, session_id: str, call: HttpCall) -> Status:
        return _typed(await self.client.request(session_id, msgspec.to_builtins(call)), Status)

    async def request_result(self, session_id: str, request_id: str) -> HttpCallView:
        return _typed(await self.client.request_result(session_id, request_id), HttpCallView)

    async def show_process(self, session_id: str, pid: int) -> Status:
        return _typed(await self.client.show_process(session_id, pid), Status)

    async def stacktrace(
        self, session_id: str, thread_id: int | None = None, start: int = 0, count: int = 20, *, library: bool = False
    ) -> StackTrace:
        found = await self.client.stacktrace(session_id, thread_id, start, count, library=library)
        return _typed(found, StackTrace)

    async def scopes(self, session_id: str, frame_index: int = 0, thread_id: int | None = None) -> Scopes:
        return _typed(await self.client.scopes(session_id, frame_index, thread_id), Scopes)

    async def variables(
        self, session_id: str, reference: int, start: int = 0, count: int | None = None
    ) -> VariablesPage:
        return _typed(await self.client.variables(session_id, reference, start, count), VariablesPage)

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
        data = await self.client.frame_variables_by_scope(
            session_id,
            scope=scope,
            frame_index=frame_index,
            thread_id=thread_id,
            expand=expand,
            start=start,
            count=count,
        )
        return _typed(data, ScopedVariables)

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
        data = await self.client.evaluate(
            session_id, expression, frame_index=frame_index, thread_id=thread_id, context=context, format=format
        )
        return _typed(data, EvaluateResult)

    async def source_line(self, session_id: str, path: str, line: int) -> str | None:
        try:
            data = await self.client.source(session_id, path, line, line)
        except ApiError:  # the line is a courtesy: never fail a stop report for it
            return None
        text = str(data.get("content") or "")
        return text.rstrip("\n") if text else None

    async def autopsy(
        self,
        session_id: str,
        *,
        max_frames: int = 10,
        include_variables_for_frames: int = 1,
        max_inner_depth: int = 5,
    ) -> Autopsy:
        data = await self.client.autopsy(
            session_id,
            max_frames=max_frames,
            include_variables_for_frames=include_variables_for_frames,
            max_inner_depth=max_inner_depth,
        )
        return _typed(data, Autopsy)

    async def add_watch(self, session_id: str, expression: str) -> WatchValue:
        return _typed(await self.client.add_watch(session_id, expression), WatchValue)

    async def watches(self, session_id: str) -> Watches:
        return _typed(await self.client.watches(session_id), Watches)

    async def remove_watch(self, session_id: str, watch_id: str) -> Deleted:
        return _typed(await self.client.remove_watch(session_id, watch_id), Deleted)

    async def changes(self, session_id: str) -> Changes:
        return _typed(await self.client.changes(session_id), Changes)

    async def object_inspect(
        self,
        session_id: str,
        object_ref: str,
        *,
        depth: int = 1,
        frame_index: int = 0,
        thread_id: int | None = None,
    ) -> ObjectInspection:
        data = await self.client.object_inspect(
            session_id, object_ref, depth=depth, frame_index=frame_index, thread_id=thread_id
        )
        return _typed(data, ObjectInspection)

    async def redactions(self, session_id: str) -> Redactions:
        return _typed(await self.client.redactions(session_id), Redactions)

    async def close(self) -> None:
        await self.client.aclose()

    # -- evidence ---------------------------------------------------------------------------

    async def take_snapshot(self, session_id: str, bounds: SnapshotBounds | None = None) -> SnapshotSummary:
        given = _body(bounds) if bounds is not None else {}
        return _typed(await self.client.take_snapshot(session_id, **given), SnapshotSummary)

    async def snapshots(self, session_id: str) -> SnapshotList:
        return _typed(await self.client.snapshots(session_id), SnapshotList)

    async def snapshot(self, session_id: str, snapshot_id: str) -> Snapshot:
        return _typed(await self.client.snapshot(session_id, snapshot_id), Snapshot)

    async def add_capture(self, session_id: str, request: CaptureRequest) -> CapturePoint:
        return _typed(await self.client.add_capture(session_id, **_body(request)), CapturePoint)

    async def captures(self, session_id: str) -> CaptureList:
        return _typed(await self.client.captures(session_id), CaptureList)

    async def capture_table(self, session_id: str, capture_id: str, start: int = 0, count: int = 100) -> CaptureTable:
        found = await self.client.capture_table(session_id, capture_id, start=start, count=count)
        return _typed(found, CaptureTable)

    async def remove_capture(self, session_id: str, capture_id: str) -> CapturePoint:
        return _typed(await self.client.remove_capture(session_id, capture_id), CapturePoint)

    async def evidence(
        self, evidence_id: str, *, offset: int = 0, limit: int = 200, grep: str | None = None
    ) -> EvidencePage:
        found = await self.client.evidence(evidence_id, offset=offset, limit=limit, grep=grep)
        return _typed(found, EvidencePage)

    async def analyze(
        self, session_id: str, snapshot_ids: list[str] | None = None, *, take: int = 0, interval: float = 1.0
    ) -> Analysis:
        found = await self.client.analyze(session_id, snapshot_ids=snapshot_ids, take=take, interval=interval)
        return _typed(found, Analysis)
