"""Every operation a client can ask of the relay, written once over the session manager.

The HTTP API, both MCP backends and the CLI are adapters over these methods: they parse their own
input, call one operation, and present the typed answer in their own way.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Iterator
from typing import Any

import msgspec

from debugrelay import inspection
from debugrelay.errors import FileNotFound, InvalidRequest, NotFound, Refused, RelayError, TooManyWaits
from debugrelay.launchers.policy import LaunchPolicy, under
from debugrelay.models import (
    AttachSpec,
    Autopsy,
    BreakpointList,
    BreakpointRecord,
    BreakpointView,
    Changes,
    ChildrenPage,
    Cleared,
    Completions,
    Deleted,
    EvaluateResult,
    ExceptionFilters,
    ExceptionFiltersView,
    InputSent,
    LaunchRequest,
    OutputLine,
    OutputPage,
    Ping,
    Profile,
    ProfileApplied,
    ProfileList,
    ProfileSaved,
    ScopedVariables,
    Scopes,
    SessionDetail,
    SessionList,
    SessionSummary,
    SetVariableResult,
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
from debugrelay.sessions import (
    BreakpointRequest,
    BreakpointUpdate,
    Session,
    SessionDocument,
    SessionManager,
    breakpoints,
    clone,
    export,
    import_session,
    read_source,
    session_view,
    status_view,
    watches,
)

from ._base import DebugService

MAX_WAIT = 300.0  # seconds one call may wait for the next stop
STEP_WAIT = 10.0  # a step answers with the new location: wait for it unless told otherwise
MAX_PAGE = 1000
OUTPUT_PAGE_MAX = 10_000
CONTEXTS = ("watch", "repl", "hover", "clipboard", "variables")
FORMATS = (None, "default", "hex", "binary")
_PROFILE_NAME = re.compile(r"[\w.@-]{1,100}")
_PROFILE_FIELDS = ("id", "verified", "hit_count", "dap_id", "internal", "pending", "message", "suggestion")


def wait_seconds(value: float | None, default: float) -> float:
    """A wait or timeout a client gave, checked; ``default`` when it gave none."""
    if value is None:
        return default
    if not 0 <= value <= MAX_WAIT:
        raise InvalidRequest(f"wait/timeout must be between 0 and {MAX_WAIT:g} seconds", details={"timeout": value})
    return value


def check_length(field: str, value: str | None, limit: int) -> None:
    """A string a client gave, within its bound (the HTTP API checks the same on decoding)."""
    if value is not None and len(value) > limit:
        raise InvalidRequest(
            f"{field} is {len(value)} characters long; at most {limit} are accepted",
            details={"field": field, "length": len(value), "max_length": limit},
        )


def check_timeout_minutes(value: float | None) -> None:
    if value is not None and not 0 < value <= limits.MAX_TIMEOUT_MINUTES:
        raise InvalidRequest(
            f"timeout_minutes must be > 0 and at most {limits.MAX_TIMEOUT_MINUTES}",
            details={"timeout_minutes": value, "max": limits.MAX_TIMEOUT_MINUTES},
        )


def check_page(start: int, count: int | None, max_count: int = MAX_PAGE) -> None:
    if start < 0:
        raise InvalidRequest("start must be >= 0", details={"start": start})
    if count is not None and not 1 <= count <= max_count:
        raise InvalidRequest(f"count must be between 1 and {max_count}", details={"count": count})


def format_number(result: EvaluateResult, fmt: str | None) -> EvaluateResult:
    """An integer result shown in hex or binary; anything else (bool included) as debugpy gave it."""
    if fmt in ("hex", "binary") and result.type == "int" and result.result.lstrip("-").isdigit():
        value = int(result.result)
        result.result = hex(value) if fmt == "hex" else bin(value)
    return result


def _ended(session: Session) -> bool:
    return session.status in ("terminated", "failed")


def breakpoint_view(bp: BreakpointRecord, ended: bool = False) -> BreakpointView:
    return msgspec.convert(breakpoints.view(bp, ended), BreakpointView)


def _no_profile(name: str) -> NotFound:
    return NotFound(
        f"no breakpoint profile '{name}' (or it could not be read)", details={"name": name}, hint="List the profiles."
    )


def _profile_entry(bp: BreakpointRecord) -> dict[str, Any]:
    data: dict[str, Any] = msgspec.to_builtins(bp)
    for key in _PROFILE_FIELDS:
        data.pop(key, None)
    return data


class RelayService(DebugService):
    """The relay's operations over this process's :class:`SessionManager`.

    ``manager`` may be a callable returning it, for adapters built before the relay has started.
    """

    def __init__(self, manager: SessionManager | Any) -> None:
        self._manager = manager
        self._policy: LaunchPolicy | None = None  # the operator's roots, read once

    @contextlib.contextmanager
    def _waiting(self, session_id: str) -> Iterator[None]:
        """Count a long-poll: each holds a client's connection, so their number is bounded."""
        waits = self.manager.open_waits
        if waits[session_id] >= limits.MAX_WAITS_PER_SESSION:
            raise TooManyWaits(
                f"{limits.MAX_WAITS_PER_SESSION} waits are open on this session already",
                details={"max_per_session": limits.MAX_WAITS_PER_SESSION},
            )
        if waits.total() >= limits.MAX_WAITS:
            raise TooManyWaits(
                f"{limits.MAX_WAITS} waits are open on this relay already", details={"max": limits.MAX_WAITS}
            )
        waits[session_id] += 1
        try:
            yield
        finally:
            waits[session_id] -= 1
            if not waits[session_id]:
                del waits[session_id]

    def _source_path(self, session: Session, path: str) -> str:
        """``path`` resolved, if it is a file of ``session``: its script, under its folders or the workspace
        roots, in Python's library, or a file of a frame at the current stop; else :class:`Refused`."""
        resolved = os.path.realpath(path)
        if not os.path.isfile(resolved):
            raise FileNotFound(
                f"cannot read '{path}'",
                details={"file": path},
                hint="Give a path from a stack frame's 'file'; the relay must be able to read it.",
            )
        if self._policy is None:
            self._policy = LaunchPolicy.from_settings(self.manager.settings)
        roots = [*self._policy.roots, *self._policy.source_roots]
        found = breakpoints.search_roots(session.record)
        if found is not None:
            roots += [os.path.realpath(p) for p in found[0]]
        if resolved in {os.path.realpath(f) for f in session.stop_files()} or any(under(resolved, r) for r in roots):
            return self.manager.source_path(resolved)
        raise Refused(
            f"'{path}' is not a file of this session",
            details={"path": path, "setting": "DEBUGRELAY_WORKSPACE, DEBUGRELAY_ALLOWED_ROOTS"},
            hint="Give a file of the program: its script, a file under its folder, or a stack frame's 'file'.",
        )

    @property
    def manager(self) -> SessionManager:
        m = self._manager
        return m if isinstance(m, SessionManager) else m()

    def _get(self, session_id: str) -> Session:
        return self.manager.get(session_id)

    def _status(self, session: Session, **extra: Any) -> Status:
        return msgspec.convert({**status_view(session, self.manager.expires_in(session)), **extra}, Status)

    def _detail(self, session: Session, **extra: Any) -> SessionDetail:
        view = session_view(session, self.manager.expires_in(session))
        return msgspec.convert({**view, **extra}, SessionDetail)

    # -- sessions ------------------------------------------------------------------------------------

    async def list_sessions(self) -> SessionList:
        mgr = self.manager
        found = [
            msgspec.convert({**status_view(s, mgr.expires_in(s)), "name": s.record.name}, SessionSummary)
            for s in await mgr.list_all()
        ]
        return SessionList(sessions=found, total=len(found))

    async def create_session(
        self,
        *,
        name: str | None = None,
        timeout_minutes: float | None = None,
        attach: AttachSpec | None = None,
        launch: LaunchRequest | None = None,
    ) -> SessionDetail:
        check_length("name", name, limits.MAX_NAME)
        check_timeout_minutes(timeout_minutes)
        session = await self.manager.create(name=name, timeout_minutes=timeout_minutes, attach=attach)
        if launch is not None:
            await session.launch(launch)
        return self._detail(session)

    async def session(self, session_id: str) -> SessionDetail:
        return self._detail(self._get(session_id))

    async def update_session(
        self, session_id: str, *, name: str | None = None, timeout_minutes: float | None = None
    ) -> SessionDetail:
        session = self._get(session_id)
        check_length("name", name, limits.MAX_NAME)
        check_timeout_minutes(timeout_minutes)
        if name is not None:
            session.record.name = name
        if timeout_minutes is not None:
            session.record.timeout_minutes = timeout_minutes
            self.manager.poke()
        await session.save()
        return self._detail(session)

    async def delete_session(self, session_id: str) -> Deleted:
        await self.manager.delete(session_id)
        return Deleted(deleted=True, session_id=session_id)

    async def status(self, session_id: str) -> Status:
        return self._status(self._get(session_id))

    async def ping(self, session_id: str) -> Ping:
        session = self._get(session_id)
        expires = round(self.manager.expires_in(session), 1)
        return Ping(ok=True, status=session.record.status, expires_in_seconds=expires)

    # -- running the program --------------------------------------------------------------------------

    async def launch(self, session_id: str, spec: LaunchRequest) -> Status:
        session = self._get(session_id)
        await session.launch(spec)
        return self._status(session)

    async def attach(self, session_id: str, spec: AttachSpec) -> Status:
        session = self._get(session_id)
        await session.attach(spec)
        return self._status(session)

    async def resume(self, session_id: str, command: str, thread_id: int | None = None, wait: float = 0.0) -> Status:
        """continue/step-*: waits up to ``wait`` s for the next stop; ``timed_out`` when none came."""
        wait = wait_seconds(wait, 0.0)
        session = self._get(session_id)
        seen = session.record.stop_count
        with self._waiting(session_id):
            await session.resume(command, thread_id, wait)
        if wait and session.status == "running" and session.record.stop_count == seen:
            return self._status(session, timed_out=True, message=f"still running after {wait:g}s")
        return self._status(session)

    async def pause(self, session_id: str) -> Status:
        session = self._get(session_id)
        await session.pause()
        return self._status(session)

    async def wait(self, session_id: str, timeout: float = 30.0, include_autopsy: bool = False) -> Status:
        """Until the target pauses or ends (the current stop when already paused)."""
        timeout = wait_seconds(timeout, 30.0)
        session = self._get(session_id)
        with self._waiting(session_id):
            done = await session.wait(timeout)
        session.touch()
        status = self._status(session, timed_out=not done)
        stop = session.record.stop
        if include_autopsy and session.status == "paused" and stop is not None and stop.exception is not None:
            status.autopsy = await self.autopsy(session_id)
        return status

    async def restart(self, session_id: str) -> Status:
        session = self._get(session_id)
        await session.restart()
        return self._status(session)

    async def detach(self, session_id: str) -> Status:
        session = self._get(session_id)
        await session.detach()
        return self._status(session)

    async def terminate(self, session_id: str) -> Status:
        session = self._get(session_id)
        await session.terminate()
        return self._status(session)

    # -- output and input -------------------------------------------------------------------------------

    async def output(
        self, session_id: str, since: str | None = None, limit: int = 200, stream: str | None = None
    ) -> OutputPage:
        if not 1 <= limit <= OUTPUT_PAGE_MAX:
            raise InvalidRequest(f"limit must be between 1 and {OUTPUT_PAGE_MAX}", details={"limit": limit})
        session = self._get(session_id)
        await session.output.flush()
        page = await self.manager.store.read_output(session_id, since, limit)
        lines = [
            OutputLine(type=e.type, text=e.text, timestamp=e.timestamp)
            for e in page.entries
            if stream is None or e.type == stream
        ]
        out = OutputPage(outputs=lines, cursor=page.cursor, has_more=page.has_more)
        if page.dropped:
            out.dropped = page.dropped if page.dropped > 0 else True
            out.message = "older output was dropped: the buffer is capped (DEBUGRELAY_OUTPUT_BUFFER_ENTRIES)"
        return out

    async def clear_output(self, session_id: str) -> Cleared:
        self._get(session_id)
        await self.manager.store.clear_output(session_id)
        return Cleared(cleared=True)

    async def send_input(self, session_id: str, text: str, newline: bool = False) -> InputSent:
        check_length("input", text, limits.MAX_INPUT)
        if newline and not text.endswith("\n"):
            text += "\n"
        await self._get(session_id).send_input(text)
        return InputSent(sent=len(text.encode()))

    # -- breakpoints ---------------------------------------------------------------------------------

    async def breakpoints(self, session_id: str) -> BreakpointList:
        session = self._get(session_id)
        listed = await breakpoints.listing(session)
        return BreakpointList(breakpoints=[breakpoint_view(b, _ended(session)) for b in listed])

    async def breakpoint(self, session_id: str, breakpoint_id: str) -> BreakpointView:
        session = self._get(session_id)
        await breakpoints.listing(session)
        return breakpoint_view(breakpoints.find(session.record, breakpoint_id), _ended(session))

    async def add_breakpoints(self, session_id: str, requests: list[BreakpointRequest]) -> list[BreakpointView]:
        """All or none: one that cannot be set leaves the session as it was."""
        session = self._get(session_id)
        if len(requests) > limits.MAX_BREAKPOINTS_PER_REQUEST:
            raise InvalidRequest(
                f"{len(requests)} breakpoints in one request; at most "
                f"{limits.MAX_BREAKPOINTS_PER_REQUEST} are set at once",
                details={"count": len(requests), "max": limits.MAX_BREAKPOINTS_PER_REQUEST},
            )
        requests = breakpoints.validate_all(requests)
        have = sum(1 for b in session.record.breakpoints if not b.internal)
        if have + len(requests) > limits.MAX_BREAKPOINTS_PER_SESSION:
            raise InvalidRequest(
                f"the session has {have} breakpoints; at most {limits.MAX_BREAKPOINTS_PER_SESSION} are accepted",
                details={"breakpoints": have, "adding": len(requests), "max": limits.MAX_BREAKPOINTS_PER_SESSION},
                hint="Remove breakpoints you no longer need.",
            )
        async with session.lock:
            created = await breakpoints.add(session, requests)
        return [breakpoint_view(b) for b in created]

    async def update_breakpoint(self, session_id: str, breakpoint_id: str, change: BreakpointUpdate) -> BreakpointView:
        session = self._get(session_id)
        async with session.lock:
            bp = await breakpoints.update(session, breakpoint_id, change)
        return breakpoint_view(bp)

    async def remove_breakpoint(self, session_id: str, breakpoint_id: str) -> Deleted:
        session = self._get(session_id)
        async with session.lock:
            await breakpoints.remove(session, breakpoint_id)
        return Deleted(deleted=True, breakpoint_id=breakpoint_id)

    async def set_exception_breakpoints(
        self, session_id: str, filters: list[str], exception_types: list[str]
    ) -> ExceptionFiltersView:
        wanted = await breakpoints.set_exception_filters(self._get(session_id), filters, exception_types)
        return ExceptionFiltersView(filters=wanted.filters, exception_types=wanted.exception_types)

    async def exception_breakpoints(self, session_id: str) -> ExceptionFiltersView:
        filters = self._get(session_id).record.exception_filters or ExceptionFilters()
        return ExceptionFiltersView(filters=filters.filters, exception_types=filters.exception_types)

    # -- breakpoint profiles -------------------------------------------------------------------------

    async def list_profiles(self) -> ProfileList:
        profiles = await self.manager.store.list_profiles()
        return ProfileList(
            profiles=[
                Profile(name=n, breakpoints=[_profile_entry(b) for b in bps]) for n, bps in sorted(profiles.items())
            ]
        )

    async def profile(self, name: str) -> Profile:
        saved = await self.manager.store.get_profile(name)
        if saved is None:
            raise _no_profile(name)
        return Profile(name=name, breakpoints=[_profile_entry(b) for b in saved])

    async def save_profile(
        self, name: str, *, session_id: str | None = None, requests: list[BreakpointRequest] | None = None
    ) -> ProfileSaved:
        """A named breakpoint set, from a session's breakpoints or given; a line past the end is refused now."""
        if not _PROFILE_NAME.fullmatch(name):
            raise InvalidRequest(
                f"'{name}' is not a profile name",
                details={"name": name},
                hint="Use 1-100 letters, digits, '_', '-', '.' or '@'.",
            )
        if (session_id is None) == (requests is None):
            raise InvalidRequest("give either 'session_id' or 'breakpoints'", details={"name": name})
        if session_id is not None:
            source = [b for b in self._get(session_id).record.breakpoints if not b.internal]
        else:
            source = [breakpoints.record_from(r) for r in breakpoints.validate_all(requests or [])]
            for bp in source:
                breakpoints.verify_locally(bp)
        saved = [breakpoints.profile_entry(b, i) for i, b in enumerate(source, 1)]
        replaced = await self.manager.store.get_profile(name) is not None
        await self.manager.store.save_profile(name, saved)
        return ProfileSaved(name=name, breakpoints=len(saved), replaced=replaced)

    async def apply_profile(self, session_id: str, name: str) -> ProfileApplied:
        session = self._get(session_id)
        saved = await self.manager.store.get_profile(name)
        if saved is None:
            raise _no_profile(name)
        async with session.lock:
            created, skipped = await breakpoints.apply_saved(session, list(saved))
        out = ProfileApplied(profile=name, breakpoints=[breakpoint_view(b) for b in created], skipped=skipped)
        if skipped:
            out.warning = f"{len(skipped)} saved breakpoint(s) could not be set and were skipped"
        return out

    # -- inspection ----------------------------------------------------------------------------------

    async def threads(self, session_id: str) -> Threads:
        return await inspection.threads(self._get(session_id))

    async def stacktrace(
        self, session_id: str, thread_id: int | None = None, start: int = 0, count: int = 20
    ) -> StackTrace:
        check_page(start, count)
        return await inspection.stacktrace(self._get(session_id), thread_id, start, count)

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
        found = await inspection.frame_variables(
            self._get(session_id),
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
        text = await asyncio.to_thread(read_source, self._source_path(session, path))
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
            allowed = self._source_path(self._get(session_id), path)
        except RelayError:
            return None
        text = await asyncio.to_thread(read_source, allowed)
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
    ) -> dict[str, Any]:
        session = self._get(session_id)
        found: dict[str, Any] = await inspection.object_inspect(
            session, object_ref, depth=depth, frame_index=frame_index, thread_id=thread_id
        )
        return found

    async def changes(self, session_id: str) -> Changes:
        return msgspec.convert(await inspection.changes(self._get(session_id)), Changes)

    # -- configuration documents -------------------------------------------------------------------------

    async def export(self, session_id: str, *, reveal_env: bool = False) -> dict[str, Any]:
        """The session's configuration document; environment values masked unless ``reveal_env``."""
        return export(self._get(session_id).record, reveal_env=reveal_env)

    async def import_session(self, document: SessionDocument) -> SessionDetail:
        session, report = await import_session(self.manager, document)
        return self._detail(session, **report)

    async def clone(self, session_id: str, *, name: str | None = None, start: bool = False) -> SessionDetail:
        session, report = await clone(self.manager, self._get(session_id), name=name, start=start)
        return self._detail(session, cloned_from=session_id, **report)
