"""The tools that read a paused program: its frames' variables, expressions, stacks, threads, objects,
the exception it stopped at, and what was redacted from the answers."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from .._base import DebugService
from ._declare import ActionGroup, FrameIndex, LibraryFrames, SessionId, ThreadId, action
from ._events import compact_autopsy, compact_variable, plain


async def evaluated(
    backend: DebugService,
    sid: str,
    expression: str,
    *,
    frame_index: int,
    thread_id: int | None,
    format: Literal["hex", "binary"] | None = None,
) -> dict[str, Any]:
    """An expression's value as the tools answer it; 'ref' marks a value to expand."""
    result = await backend.evaluate(sid, expression, frame_index=frame_index, thread_id=thread_id, format=format)
    out: dict[str, Any] = {"result": result.result, "type": result.type}
    if result.variable_reference:
        out["ref"] = result.variable_reference
    if result.truncated:
        out["truncated"] = True
    return out


class FrameTools(ActionGroup):
    """The debugger's everyday reads of the stopped frame: its locals, an expression, the stack."""

    @action(read_only=True)
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

    @action()
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
        sid = await self._sid(session_id)
        if watch is None:
            return await evaluated(self.backend, sid, expression, frame_index=frame_index, thread_id=thread_id)
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

    @action(read_only=True)
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


class InspectionTools(ActionGroup):
    """Reads in depth: any scope or thread, paged stacks, an object's fields, the exception's autopsy."""

    @action(read_only=True)
    async def threads_list(
        self,
        *,
        session_id: SessionId = None,
        show_pid: Annotated[
            int | None,
            Field(description="A paused process to show.", ge=1),
        ] = None,
    ) -> dict[str, Any]:
        """The threads: id (thread_id), name, stopped, current; processes if several."""
        sid = await self._sid(session_id)
        answer: dict[str, Any] = {"session_id": sid}
        if show_pid is not None:
            answer["stop"] = plain(await self.backend.show_process(sid, show_pid))
        answer.update(plain(await self.backend.threads(sid)))
        processes = plain(await self.backend.processes(sid))
        if len(processes["processes"]) > 1:
            answer.update(processes)
        return answer

    @action(read_only=True)
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

    @action(read_only=True)
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

    @action(marks_unpersisted=False)
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
        return await evaluated(
            self.backend, sid, expression, frame_index=frame_index, thread_id=thread_id, format=format
        )

    @action(read_only=True)
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
        return plain(
            await self.backend.object_inspect(
                sid, object_ref, depth=depth, frame_index=frame_index, thread_id=thread_id
            )
        )

    @action(read_only=True)
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

    @action(read_only=True)
    async def debug_redactions(self, *, session_id: SessionId = None) -> dict[str, Any]:
        """The placeholders hidden in this session's answers: rule, where, when (never the value)."""
        return plain(await self.backend.redactions(await self._sid(session_id)))
