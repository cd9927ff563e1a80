"""Threads, stack, scopes, variables, evaluate, set variable, completions and source."""

from __future__ import annotations

from typing import Any

from litestar import Controller, delete, get, post

from debugrelay.errors import FileNotFound, InvalidRequest
from debugrelay.models import Input
from debugrelay.sessions import SessionManager, watches
from debugrelay.sessions._source import read_source


class EvaluateBody(Input):
    expression: str
    frame_id: int | None = None
    frame_index: int | None = None
    thread_id: int | None = None
    context: str = "repl"
    format: str | None = None


class SetVariableBody(Input):
    name: str
    value: str


class WatchBody(Input):
    expression: str


class CompletionsBody(Input):
    text: str
    column: int | None = None
    frame_id: int | None = None


SUMMARY_FIELDS = frozenset({"name", "type", "length", "expandable", "variable_reference", "index"})


def _page(start: int, count: int | None, max_count: int = 1000) -> None:
    if start < 0:
        raise InvalidRequest("start must be >= 0", details={"start": start})
    if count is not None and not 1 <= count <= max_count:
        raise InvalidRequest(f"count must be between 1 and {max_count}", details={"count": count})


class InspectionController(Controller):
    path = "/sessions/{session_id:str}"
    tags = ["inspection"]  # noqa: RUF012

    @get("/threads", summary="Threads of the target")
    async def threads(self, manager: SessionManager, session_id: str) -> dict[str, Any]:
        return {"threads": await manager.get(session_id).threads()}

    @get("/stacktrace", summary="Call stack of a paused thread (frame ids are indexes, 0 = top)")
    async def stacktrace(
        self,
        manager: SessionManager,
        session_id: str,
        thread_id: int | None = None,
        start_frame: int = 0,
        max_frames: int = 20,
    ) -> dict[str, Any]:
        _page(start_frame, max_frames)
        return await manager.get(session_id).stacktrace(thread_id, start_frame, max_frames)

    @get("/threads/{thread_id:int}/stacktrace", summary="Call stack of one thread")
    async def thread_stacktrace(
        self, manager: SessionManager, session_id: str, thread_id: int, start_frame: int = 0, max_frames: int = 20
    ) -> dict[str, Any]:
        _page(start_frame, max_frames)
        return await manager.get(session_id).stacktrace(thread_id, start_frame, max_frames)

    @get("/frames/{frame_id:int}/scopes", summary="Scopes (Locals, Globals) of a frame")
    async def scopes(
        self, manager: SessionManager, session_id: str, frame_id: int, thread_id: int | None = None
    ) -> dict[str, Any]:
        return {"scopes": await manager.get(session_id).scopes(frame_id, thread_id)}

    @get("/frames/{frame_id:int}/variables", summary="Variables of a frame's first scope (Locals)")
    async def frame_variables(
        self,
        manager: SessionManager,
        session_id: str,
        frame_id: int,
        *,
        thread_id: int | None = None,
        start: int = 0,
        count: int | None = None,
        summary: bool = False,
    ) -> dict[str, Any]:
        _page(start, count)
        session = manager.get(session_id)
        scopes = await session.scopes(frame_id, thread_id)
        if not scopes:
            return {"variables": [], "total": 0, "has_more": False}
        out = await session.variables(scopes[0]["reference"], start, count)
        if summary:  # spec 4.7: names, types and sizes only
            out["variables"] = [{k: v for k, v in var.items() if k in SUMMARY_FIELDS} for var in out["variables"]]
        return out

    @get(
        "/frames/{frame_id:int}/variables/{reference:int}/children",
        summary="Children of a variable, paged by offset/limit (same as /variables/{reference})",
    )
    async def children(
        self,
        manager: SessionManager,
        session_id: str,
        frame_id: int,
        reference: int,
        *,
        offset: int = 0,
        limit: int = 100,
    ) -> dict[str, Any]:
        _page(offset, limit)
        out = await manager.get(session_id).variables(reference, offset, limit)
        return {"items": out["variables"], "total": out["total"], "has_more": out["has_more"], "offset": offset}

    @get("/scopes/{reference:int}/variables", summary="Variables of a scope")
    async def scope_variables(
        self, manager: SessionManager, session_id: str, reference: int, start: int = 0, count: int | None = None
    ) -> dict[str, Any]:
        _page(start, count)
        return await manager.get(session_id).variables(reference, start, count)

    @get("/variables/{reference:int}", summary="Children of an expandable variable, paged by start/count")
    async def expand(
        self, manager: SessionManager, session_id: str, reference: int, start: int = 0, count: int | None = 100
    ) -> dict[str, Any]:
        _page(start, count)
        out = await manager.get(session_id).variables(reference, start, count)
        return {"items": out["variables"], "total": out["total"], "has_more": out["has_more"], "start": start}

    @post("/evaluate", status_code=200, summary="Evaluate an expression in a frame (default: top frame)")
    async def evaluate(self, manager: SessionManager, session_id: str, data: EvaluateBody) -> dict[str, Any]:
        if data.context not in ("watch", "repl", "hover", "clipboard", "variables"):
            raise InvalidRequest(
                f"unknown context '{data.context}'", details={"context": data.context}, hint="Use watch, repl or hover."
            )
        if data.format not in (None, "default", "hex", "binary"):
            raise InvalidRequest(f"unknown format '{data.format}'", hint="Use default, hex or binary.")
        frame = data.frame_id if data.frame_id is not None else data.frame_index
        result = await manager.get(session_id).evaluate(data.expression, frame, data.context, data.thread_id)
        if data.format in ("hex", "binary") and result.get("type") == "int" and result["result"].lstrip("-").isdigit():
            value = int(result["result"])
            result["result"] = hex(value) if data.format == "hex" else bin(value)
        return result

    @post("/variables/{reference:int}/set", status_code=200, summary="Set a variable's value (a Python expression)")
    async def set_variable(
        self, manager: SessionManager, session_id: str, reference: int, data: SetVariableBody
    ) -> dict[str, Any]:
        return await manager.get(session_id).set_variable(reference, data.name, data.value)

    @post("/completions", status_code=200, summary="Completions in the paused frame's context")
    async def completions(self, manager: SessionManager, session_id: str, data: CompletionsBody) -> dict[str, Any]:
        session = manager.get(session_id)
        return {"targets": await session.completions(data.text, data.column, data.frame_id)}

    @get("/source", summary="Source of a file (any frame's file), optionally a line range")
    async def source(
        self, manager: SessionManager, session_id: str, path: str, start: int = 1, end: int | None = None
    ) -> dict[str, Any]:
        manager.get(session_id)
        text = read_source(manager.source_path(path))
        if text is None:
            raise FileNotFound(
                f"cannot read '{path}'",
                details={"file": path},
                hint="Give a path from a stack frame's 'file'; the relay must be able to read it.",
            )
        lines = text.splitlines()
        if start < 1:
            raise InvalidRequest("start must be >= 1", details={"start": start})
        stop = len(lines) if end is None else min(end, len(lines))
        return {
            "path": path,
            "start": start,
            "end": stop,
            "total_lines": len(lines),
            "content": "\n".join(lines[start - 1 : stop]) + ("\n" if stop >= start else ""),
        }

    @post("/watch", status_code=200, summary="Add a watch expression; answers with its value when paused")
    async def add_watch(self, manager: SessionManager, session_id: str, data: WatchBody) -> dict[str, Any]:
        session = manager.get(session_id)
        watch = await watches.add(session, data.expression)
        return await watches.value(session, watch)

    @get("/watch", summary="Watch expressions with their values in the top frame")
    async def list_watches(self, manager: SessionManager, session_id: str) -> dict[str, Any]:
        return {"watches": await watches.values(manager.get(session_id))}

    @delete("/watch/{watch_id:str}", status_code=200, summary="Remove a watch expression")
    async def remove_watch(self, manager: SessionManager, session_id: str, watch_id: str) -> dict[str, Any]:
        await watches.remove(manager.get(session_id), watch_id)
        return {"deleted": True, "watch_id": watch_id}
