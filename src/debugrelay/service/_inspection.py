"""Reads of a session's program: threads, processes, stacks, scopes, variables, evaluation, source, watches,
autopsy, object inspection and changes. Once the program has ended they answer from its post-mortem
snapshot where one was kept."""

from __future__ import annotations

import msgspec

from debugrelay import inspection
from debugrelay.errors import FileNotFound, InvalidRequest, RelayError
from debugrelay.models import (
    Autopsy,
    Changes,
    ChildrenPage,
    Completions,
    Deleted,
    EvaluateResult,
    FrameView,
    ObjectInspection,
    ProcessList,
    ScopedVariables,
    Scopes,
    SetVariableResult,
    Snapshot,
    SourceText,
    StackTrace,
    Status,
    Threads,
    Variable,
    VariablesPage,
    Watches,
    WatchValue,
    limits,
)
from debugrelay.sessions import process_table, watches

from ._core import CONTEXTS, FORMATS, ServiceCore, check_length, check_page, ended, format_number


class InspectionOps(ServiceCore):
    """The operations that read the program's state."""

    # -- inspection ----------------------------------------------------------------------------------

    async def threads(self, session_id: str) -> Threads:
        return await inspection.threads(self._get(session_id))

    async def processes(self, session_id: str) -> ProcessList:
        session = self._get(session_id)
        return ProcessList(**process_table(session))

    async def show_process(self, session_id: str, pid: int) -> Status:
        session = self._get(session_id)
        await session.show_process(pid)
        return self._status(session)

    async def stacktrace(
        self, session_id: str, thread_id: int | None = None, start: int = 0, count: int = 20, *, library: bool = False
    ) -> StackTrace:
        check_page(start, count)
        session = self._get(session_id)
        if ended(session):
            snap = await self._find_post_mortem(session_id)
            if snap is not None:
                return self._post_mortem_stack(snap, session_id, thread_id, start, count)
        return await inspection.stacktrace(session, thread_id, start, count, library=library)

    def _post_mortem_stack(
        self, snap: Snapshot, session_id: str, thread_id: int | None, start: int, count: int
    ) -> StackTrace:
        """The crashed thread's stack from the post-mortem snapshot (after the program ended)."""
        autopsy = snap.data.get("autopsy") or {}
        frames = autopsy.get("frames") or []
        tid = int(autopsy.get("thread_id") or 0)
        if thread_id is not None and thread_id != tid:
            raise InvalidRequest(
                f"the post-mortem holds the stack of thread {tid} (the crashed one)",
                details={"thread_id": thread_id, "post_mortem_thread": tid},
                hint=f"Every thread's stack with locals: GET /sessions/{session_id}/snapshots/{snap.snapshot_id}",
            )
        views = [
            FrameView(
                id=i,
                name=f.get("function"),
                file=(f.get("source") or {}).get("file") or f.get("file"),
                line=f.get("line"),
            )
            for i, f in enumerate(frames[start : start + count], start=start)
        ]
        total = int(autopsy.get("total_frames") or len(frames))
        return StackTrace(thread_id=tid, total_frames=total, frames=views, post_mortem=snap.snapshot_id)

    async def scopes(self, session_id: str, frame_index: int = 0, thread_id: int | None = None) -> Scopes:
        return await inspection.scopes(self._get(session_id), frame_index, thread_id)

    async def variables(
        self, session_id: str, reference: int, start: int = 0, count: int | None = None
    ) -> VariablesPage:
        check_page(start, count)
        return await inspection.variables(self._get(session_id), reference, start, count)

    async def frame_locals(
        self,
        session_id: str,
        frame_index: int = 0,
        *,
        thread_id: int | None = None,
        start: int = 0,
        count: int | None = None,
        summary: bool = False,
    ) -> VariablesPage:
        """The frame's first scope (Locals); ``summary``: names, types and sizes only."""
        check_page(start, count)
        session = self._get(session_id)
        scopes = (await inspection.scopes(session, frame_index, thread_id)).scopes
        if not scopes:
            return VariablesPage(variables=[], total=0, has_more=False)
        page = await inspection.variables(session, scopes[0].reference, start, count)
        if summary:
            page.variables = [
                Variable(
                    name=v.name,
                    type=v.type,
                    length=v.length,
                    expandable=v.expandable,
                    variable_reference=v.variable_reference,
                    index=v.index,
                )
                for v in page.variables
            ]
        return page

    async def children(
        self, session_id: str, reference: int, start: int = 0, count: int | None = 100, *, by_offset: bool = False
    ) -> ChildrenPage:
        """Children of an expandable value; ``by_offset`` answers with ``offset`` instead of ``start``."""
        check_page(start, count)
        page = await self.variables(session_id, reference, start, count)
        out = ChildrenPage(items=page.variables, total=page.total, has_more=page.has_more)
        if by_offset:
            out.offset = start
        else:
            out.start = start
        return out

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
        """A frame's variables by scope (locals, arguments, globals, all), or the children of a path."""
        session = self._get(session_id)
        snap = await self._find_post_mortem(session_id) if ended(session) and expand is None else None
        if snap is not None and thread_id is None:
            return self._post_mortem_variables(snap, scope, frame_index, start, count)
        found = await inspection.frame_variables(
            session,
            scope=scope,
            frame_index=frame_index,
            thread_id=thread_id,
            expand=expand,
            start=start,
            count=count,
        )
        return msgspec.convert(found, ScopedVariables)

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
        """Evaluate in a paused frame; ``format`` hex/binary applies to integers."""
        check_length("expression", expression, limits.MAX_EXPRESSION)
        if context not in CONTEXTS:
            raise InvalidRequest(
                f"unknown context '{context}'", details={"context": context}, hint="Use watch, repl or hover."
            )
        if format not in FORMATS:
            raise InvalidRequest(
                f"unknown format '{format}'", details={"format": format}, hint="Use default, hex or binary."
            )
        found = await inspection.evaluate(self._get(session_id), expression, frame_index, context, thread_id)
        return format_number(found, format)

    async def set_variable(self, session_id: str, reference: int, name: str, value: str) -> SetVariableResult:
        return await inspection.set_variable(self._get(session_id), reference, name, value)

    async def completions(
        self, session_id: str, text: str, column: int | None = None, frame_index: int | None = None
    ) -> Completions:
        return Completions(targets=await inspection.completions(self._get(session_id), text, column, frame_index))

    async def source(self, session_id: str, path: str, start: int = 1, end: int | None = None) -> SourceText:
        """Lines ``start``..``end`` (1-based, inclusive) of a source file."""
        session = self._get(session_id)
        if start < 1:
            raise InvalidRequest("start must be >= 1", details={"start": start})
        text = await self._read_text(session, path)
        if text is None:
            raise FileNotFound(
                f"cannot read '{path}'",
                details={"file": path},
                hint="Give a path from a stack frame's 'file'; the relay must be able to read it.",
            )
        lines = text.splitlines()
        stop = len(lines) if end is None else min(end, len(lines))
        content = "\n".join(lines[start - 1 : stop]) + ("\n" if stop >= start else "")
        return SourceText(path=path, start=start, end=stop, total_lines=len(lines), content=content)

    async def source_line(self, session_id: str, path: str, line: int) -> str | None:
        """One line of a source file, or None when it cannot be read (a courtesy, never an error)."""
        try:
            text = await self._read_text(self._get(session_id), path)
        except RelayError:
            return None
        if text is None:
            return None
        lines = text.splitlines()
        return lines[line - 1] if 0 < line <= len(lines) else None

    async def add_watch(self, session_id: str, expression: str) -> WatchValue:
        session = self._get(session_id)
        check_length("expression", expression, limits.MAX_EXPRESSION)
        if len(session.record.watches) >= limits.MAX_WATCHES:
            raise InvalidRequest(
                f"the session has {limits.MAX_WATCHES} watch expressions already",
                details={"max": limits.MAX_WATCHES},
                hint="Remove a watch you no longer need.",
            )
        watch = await watches.add(session, expression)
        return await inspection.watch_value(session, watch)

    async def watches(self, session_id: str) -> Watches:
        return Watches(watches=await inspection.watch_values(self._get(session_id)))

    async def remove_watch(self, session_id: str, watch_id: str) -> Deleted:
        await watches.remove(self._get(session_id), watch_id)
        return Deleted(deleted=True, watch_id=watch_id)

    async def autopsy(
        self,
        session_id: str,
        *,
        max_frames: int = 10,
        include_variables_for_frames: int = 1,
        max_inner_depth: int = 5,
    ) -> Autopsy:
        session = self._get(session_id)
        snap = await self._find_post_mortem(session_id) if ended(session) else None
        if snap is not None and isinstance(snap.data.get("autopsy"), dict) and "exception" in snap.data["autopsy"]:
            answer = msgspec.convert(snap.data["autopsy"], Autopsy)
            answer.post_mortem = snap.snapshot_id
            return answer
        found = await inspection.autopsy(session, max_frames, include_variables_for_frames, max_inner_depth)
        return msgspec.convert(found, Autopsy)

    async def object_inspect(
        self,
        session_id: str,
        object_ref: str,
        *,
        depth: int = 1,
        frame_index: int = 0,
        thread_id: int | None = None,
    ) -> ObjectInspection:
        return await inspection.object_inspect(
            self._get(session_id), object_ref, depth=depth, frame_index=frame_index, thread_id=thread_id
        )

    async def changes(self, session_id: str) -> Changes:
        return msgspec.convert(await inspection.changes(self._get(session_id)), Changes)

    def _post_mortem_variables(
        self, snap: Snapshot, scope: str, frame_index: int, start: int, count: int | None
    ) -> ScopedVariables:
        """A crashed frame's arguments and locals as the post-mortem kept them (the innermost frames)."""
        check_page(start, count)
        frames = (snap.data.get("autopsy") or {}).get("frames") or []
        frame = frames[frame_index] if 0 <= frame_index < len(frames) else None
        if scope not in ("all", "locals", "arguments") or frame is None or "locals" not in frame:
            kept = sum(1 for f in frames if "locals" in f)
            raise InvalidRequest(
                f"the post-mortem keeps the arguments and locals of the {kept} innermost frame(s) of the crash",
                details={"frame_index": frame_index, "scope": scope, "post_mortem": snap.snapshot_id},
                hint=f"Every thread's frames and locals: GET .../snapshots/{snap.snapshot_id}",
            )
        picked = [
            *(frame.get("arguments") or [] if scope in ("all", "arguments") else []),
            *(frame.get("locals") or [] if scope in ("all", "locals") else []),
        ]
        found = [
            msgspec.convert({k: v for k, v in v.items() if k not in ("variable_reference", "children")}, Variable)
            for v in picked
        ]
        page = found[start : start + count] if count is not None else found[start:]
        return ScopedVariables(
            frame_id=frame_index,
            variables=page,
            total=len(found),
            has_more=start + len(page) < len(found),
            scope=scope,
            post_mortem=snap.snapshot_id,
        )
