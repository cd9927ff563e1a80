"""Threads, stack, scopes, variables, evaluate, set variable, completions, source and watches."""

from __future__ import annotations

from typing import Literal

from litestar import Controller, delete, get, post
from litestar.params import JSONBody

from debugrelay.models import (
    ChildrenPage,
    Completions,
    Deleted,
    EvaluateResult,
    Input,
    ProcessList,
    Scopes,
    SetVariableResult,
    SourceText,
    StackTrace,
    Threads,
    VariablesPage,
    Watches,
    WatchValue,
)
from debugrelay.models.limits import Expression

from ._deps import Service
from ._params import Count, FrameNumber, Line, PageSize, Start


class EvaluateBody(Input):
    expression: Expression
    frame_id: FrameNumber | None = None
    frame_index: FrameNumber | None = None
    thread_id: int | None = None
    context: Literal["watch", "repl", "hover", "clipboard", "variables"] = "repl"
    format: Literal["default", "hex", "binary"] | None = None


class SetVariableBody(Input):
    name: Expression
    value: Expression


class WatchBody(Input):
    expression: Expression


class CompletionsBody(Input):
    text: Expression
    column: int | None = None
    frame_id: FrameNumber | None = None


class InspectionController(Controller):
    path = "/sessions/{session_id:str}"
    tags = ["inspection"]  # noqa: RUF012

    @get("/threads", summary="Threads of the target")
    async def threads(self, service: Service, session_id: str) -> Threads:
        return await service.threads(session_id)

    @get("/processes", summary="The program's processes: its own, then the Python processes it started")
    async def processes(self, service: Service, session_id: str) -> ProcessList:
        """Each with pid, parent pid, command line, state (running, paused, exited), exit code, and whether
        the debugger follows it (debug_subprocesses)."""
        return await service.processes(session_id)

    @get("/stacktrace", summary="Call stack of a paused thread (frame ids are indexes, 0 = top)")
    async def stacktrace(
        self,
        service: Service,
        session_id: str,
        thread_id: int | None = None,
        start_frame: Start = 0,
        max_frames: PageSize = 20,
        *,
        library: bool = False,
    ) -> StackTrace:
        """Runs of library frames (stdlib, site-packages, pytest) come folded into one entry with their
        count and last frame; ``library=true`` lists them one by one."""
        return await service.stacktrace(session_id, thread_id, start_frame, max_frames, library=library)

    @get("/threads/{thread_id:int}/stacktrace", summary="Call stack of one thread")
    async def thread_stacktrace(
        self,
        service: Service,
        session_id: str,
        thread_id: int,
        start_frame: Start = 0,
        max_frames: PageSize = 20,
        *,
        library: bool = False,
    ) -> StackTrace:
        return await service.stacktrace(session_id, thread_id, start_frame, max_frames, library=library)

    @get("/frames/{frame_id:int}/scopes", summary="Scopes (Locals, Globals) of a frame")
    async def scopes(self, service: Service, session_id: str, frame_id: int, thread_id: int | None = None) -> Scopes:
        return await service.scopes(session_id, frame_id, thread_id)

    @get("/frames/{frame_id:int}/variables", summary="Variables of a frame's first scope (Locals)")
    async def frame_variables(
        self,
        service: Service,
        session_id: str,
        frame_id: int,
        *,
        thread_id: int | None = None,
        start: Start = 0,
        count: Count = None,
        summary: bool = False,
    ) -> VariablesPage:
        return await service.frame_locals(
            session_id, frame_id, thread_id=thread_id, start=start, count=count, summary=summary
        )

    @get(
        "/frames/{frame_id:int}/variables/{reference:int}/children",
        summary="Children of a variable, paged by offset/limit (same as /variables/{reference})",
    )
    async def children(
        self,
        service: Service,
        session_id: str,
        frame_id: int,
        reference: int,
        *,
        offset: Start = 0,
        limit: PageSize = 100,
    ) -> ChildrenPage:
        return await service.children(session_id, reference, offset, limit, by_offset=True)

    @get("/scopes/{reference:int}/variables", summary="Variables of a scope")
    async def scope_variables(
        self, service: Service, session_id: str, reference: int, start: Start = 0, count: Count = None
    ) -> VariablesPage:
        return await service.variables(session_id, reference, start, count)

    @get("/variables/{reference:int}", summary="Children of an expandable variable, paged by start/count")
    async def expand(
        self, service: Service, session_id: str, reference: int, start: Start = 0, count: Count = 100
    ) -> ChildrenPage:
        return await service.children(session_id, reference, start, count)

    @post("/evaluate", status_code=200, summary="Evaluate an expression in a frame (default: top frame)")
    async def evaluate(self, service: Service, session_id: str, data: JSONBody[EvaluateBody]) -> EvaluateResult:
        return await service.evaluate(
            session_id,
            data.expression,
            frame_index=data.frame_id if data.frame_id is not None else data.frame_index,
            thread_id=data.thread_id,
            context=data.context,
            format=data.format,
        )

    @post("/variables/{reference:int}/set", status_code=200, summary="Set a variable's value (a Python expression)")
    async def set_variable(
        self, service: Service, session_id: str, reference: int, data: SetVariableBody
    ) -> SetVariableResult:
        return await service.set_variable(session_id, reference, data.name, data.value)

    @post("/completions", status_code=200, summary="Completions in the paused frame's context")
    async def completions(self, service: Service, session_id: str, data: JSONBody[CompletionsBody]) -> Completions:
        return await service.completions(session_id, data.text, data.column, data.frame_id)

    @get("/source", summary="Source of a file (any frame's file), optionally a line range")
    async def source(
        self, service: Service, session_id: str, path: str, start: Line = 1, end: int | None = None
    ) -> SourceText:
        return await service.source(session_id, path, start, end)

    @post("/watch", status_code=200, summary="Add a watch expression; answers with its value when paused")
    async def add_watch(self, service: Service, session_id: str, data: JSONBody[WatchBody]) -> WatchValue:
        return await service.add_watch(session_id, data.expression)

    @get("/watch", summary="Watch expressions with their values in the top frame")
    async def list_watches(self, service: Service, session_id: str) -> Watches:
        return await service.watches(session_id)

    @delete("/watch/{watch_id:str}", status_code=200, summary="Remove a watch expression")
    async def remove_watch(self, service: Service, session_id: str, watch_id: str) -> Deleted:
        return await service.remove_watch(session_id, watch_id)
