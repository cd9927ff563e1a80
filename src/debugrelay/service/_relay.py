"""Every operation a client can ask of the relay, written once over the session manager.

The HTTP API, both MCP backends and the CLI are adapters over these methods: they parse their own
input, call one operation, and present the typed answer in their own way.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import posixpath
import re
from collections.abc import Iterator
from typing import Any

import msgspec

from debugrelay import evidence, inspection
from debugrelay.errors import FileNotFound, InvalidRequest, InvalidState, NotFound, Refused, RelayError, TooManyWaits
from debugrelay.evidence import snapshots
from debugrelay.evidence._analyze import DETECTORS, analyze
from debugrelay.launchers.policy import LaunchPolicy, under
from debugrelay.models import (
    Analysis,
    AttachSpec,
    Autopsy,
    BreakpointList,
    BreakpointRecord,
    BreakpointView,
    CaptureList,
    CapturePoint,
    CaptureRequest,
    CaptureTable,
    Changes,
    ChildrenPage,
    Cleared,
    Completions,
    Deleted,
    EvaluateResult,
    EvidencePage,
    ExceptionFilters,
    ExceptionFiltersView,
    FrameView,
    InputSent,
    LaunchRequest,
    OutputLine,
    OutputPage,
    Ping,
    Profile,
    ProfileApplied,
    ProfileList,
    ProfileSaved,
    Redactions,
    ScopedVariables,
    Scopes,
    SessionDetail,
    SessionList,
    SessionSummary,
    SetVariableResult,
    Snapshot,
    SnapshotBounds,
    SnapshotList,
    SnapshotSummary,
    SourceText,
    StackTrace,
    Status,
    Threads,
    Variable,
    VariablesPage,
    Watches,
    WatchValue,
    cut_text,
    limits,
)
from debugrelay.redaction import secret_expression, secret_name
from debugrelay.sessions import (
    MAX_SOURCE_BYTES,
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
    stops_on,
    watches,
)

from ._base import DebugService
from ._redaction import redacting, seam_for
from ._trail import recording

MAX_WAIT = 300.0  # seconds one call may wait for the next stop
LOCALS_MAX = 25  # variables listed with a stop's details; the rest are a variables call away
VALUE_MAX = 120  # characters of one value in a stop's details (a cut value ends saying how much more)
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


# a repeat inside a repeated group ('(a+)+', '(x*y)*'): Python's re may backtrack for ever on such a pattern
_NESTED_REPEAT = re.compile(r"\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)\s*[+*{]")


def _grep_pattern(grep: str) -> re.Pattern[str]:
    """``grep`` compiled, or InvalidRequest: not a regular expression, or one that could run for ever."""
    if _NESTED_REPEAT.search(grep):
        raise InvalidRequest(
            "grep repeats a group that repeats itself, which can take for ever to match",
            details={"grep": grep},
            hint="Simplify it: e.g. 'a+' for '(a+)+'; a plain word finds most lines.",
        )
    try:
        return re.compile(grep)
    except re.error as exc:
        raise InvalidRequest(f"grep is not a regular expression: {exc}", details={"grep": grep}) from exc


def _grep_lines(text: str, pattern: re.Pattern[str] | None) -> tuple[int, list[str]]:
    """(the number of lines, the lines; with ``pattern``, only the matching ones, numbered)."""
    lines = text.splitlines()
    if pattern is None:
        return len(lines), lines
    return len(lines), [f"{n}: {line}" for n, line in enumerate(lines, 1) if pattern.search(line)]


def _runs(session: Session) -> list[dict[str, Any]]:
    """The conditional or counted breakpoints whose line ran, as the target last reported: hits so far,
    runs, their rate, and what slows the program."""
    out = []
    for bp in session.record.breakpoints:
        if bp.runs and not bp.internal:
            view = breakpoint_view(bp)
            item = {"breakpoint_id": view.breakpoint_id, "hit_count": view.hit_count, "runs": view.runs}
            item["runs_per_second"] = view.runs_per_second
            if view.slow:
                item["slow"] = view.slow
            out.append(item)
    return out


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


@recording
@redacting
class RelayService(DebugService):
    """The relay's operations over this process's :class:`SessionManager`.

    ``manager`` may be a callable returning it, for adapters built before the relay has started.
    Every answer and error passes through redaction on its way out (see ``_redaction``).
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

    async def _read_text(self, session: Session, path: str) -> str | None:
        """A source file of ``session``: read through its target when the target has files of its own
        (a container's are not the relay's), else from the relay's disk; both under the same rules."""
        target = session.target
        if target is not None and self._target_may_read(session, path):
            data = await target.read_file(target.to_remote_path(posixpath.normpath(path)), MAX_SOURCE_BYTES)
            if data is not None:
                return data.decode("utf-8", errors="replace")
        return await asyncio.to_thread(read_source, self._source_path(session, path))

    def _target_may_read(self, session: Session, path: str) -> bool:
        """``path`` (as the user sees it) is the session's: a file of the current stop's frames, its script,
        or under its working folder or the workspace roots. Nothing is resolved on the relay's disk."""
        if not posixpath.isabs(path):
            return False
        clean = posixpath.normpath(path)
        if clean in session.stop_files():
            return True
        launch = session.record.launch
        folders: list[str] = []
        if launch is not None:
            if launch.script and posixpath.normpath(launch.script) == clean:
                return True
            if launch.cwd:
                folders.append(posixpath.normpath(launch.cwd))
        if self._policy is None:
            self._policy = LaunchPolicy.from_settings(self.manager.settings)
        folders += [*self._policy.roots, *self._policy.source_roots]
        return any(under(clean, folder) for folder in folders)

    @property
    def manager(self) -> SessionManager:
        m = self._manager
        return m if isinstance(m, SessionManager) else m()

    def unpersisted(self, session_id: str) -> bool:
        return self.manager.store.pending_for(session_id)

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
        launched = session.record.launch or spec
        return self._status(session, stops_on=stops_on(launched, session.record.exception_filters))

    async def attach(self, session_id: str, spec: AttachSpec) -> Status:
        session = self._get(session_id)
        await session.attach(spec)
        return self._status(session)

    async def resume(
        self, session_id: str, command: str, thread_id: int | None = None, wait: float = 0.0, details: bool = False
    ) -> Status:
        """continue/step-*: waits up to ``wait`` s for the next stop; ``timed_out`` when none came."""
        wait = wait_seconds(wait, 0.0)
        session = self._get(session_id)
        seen = session.record.stop_count
        with self._waiting(session_id):
            await session.resume(command, thread_id, wait)
        if wait and session.status == "running" and session.record.stop_count == seen:
            status = self._status(session, timed_out=True, message=f"still running after {wait:g}s")
            status.breakpoint_runs = _runs(session)
            return status
        status = self._status(session)
        return await self.stop_details(session_id, status) if details else status

    async def stop_details(self, session_id: str, status: Status) -> Status:
        """A stop with what an agent looks at first: the source line, the top frame's locals (compact,
        the count of the others said) and each watch expression's value. Every interface answers it."""
        if status.status != "paused":
            return status
        session = self._get(session_id)
        where = status.location
        if status.exception is not None:  # said once: the place is the stop's, the text the exception's
            exception = status.exception = msgspec.structs.replace(status.exception, break_mode=None)
            if exception.location == where:
                exception.location = None
            status.description = None
        if where is not None and where.file and where.line:
            code = await self.source_line(session_id, where.file, where.line)
            status.code = code.strip() if code else None
        try:
            scopes = (await self.scopes(session_id, 0, status.thread_id)).scopes
            page = (
                await self.variables(session_id, scopes[0].reference, 0, LOCALS_MAX)
                if scopes
                else VariablesPage(variables=[], total=0, has_more=False)
            )
        except RelayError as exc:
            status.locals_error = exc.message
        else:
            status.locals = {v.name: cut_text(v.value, VALUE_MAX) for v in page.variables}
            more = page.total - len(page.variables)
            if more > 0:
                status.locals["..."] = f"{more} more"
        if session.record.watches:
            status.watches = {}
            for watch in await inspection.watch_values(session):
                shown = f"error: {watch.error}" if watch.error else cut_text(watch.result or "", VALUE_MAX)
                status.watches[watch.expression] = shown
        return status

    async def pause(self, session_id: str) -> Status:
        session = self._get(session_id)
        await session.pause()
        return self._status(session)

    async def wait(
        self, session_id: str, timeout: float = 30.0, include_autopsy: bool = False, details: bool = False
    ) -> Status:
        """Until the target pauses or ends (the current stop when already paused)."""
        timeout = wait_seconds(timeout, 30.0)
        session = self._get(session_id)
        with self._waiting(session_id):
            done = await session.wait(timeout)
        session.touch()
        status = self._status(session, timed_out=not done)
        if not done:
            status.breakpoint_runs = _runs(session)
        stop = session.record.stop
        if include_autopsy and session.status == "paused" and stop is not None and stop.exception is not None:
            status.autopsy = await self.autopsy(session_id)
        return await self.stop_details(session_id, status) if details else status

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
        self, session_id: str, thread_id: int | None = None, start: int = 0, count: int = 20, *, library: bool = False
    ) -> StackTrace:
        check_page(start, count)
        session = self._get(session_id)
        if _ended(session):
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
        snap = await self._find_post_mortem(session_id) if _ended(session) and expand is None else None
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
        snap = await self._find_post_mortem(session_id) if _ended(session) else None
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
    ) -> dict[str, Any]:
        session = self._get(session_id)
        found: dict[str, Any] = await inspection.object_inspect(
            session, object_ref, depth=depth, frame_index=frame_index, thread_id=thread_id
        )
        return found

    async def changes(self, session_id: str) -> Changes:
        return msgspec.convert(await inspection.changes(self._get(session_id)), Changes)

    # -- evidence: snapshots, post-mortem, capture points, analysis (seed 002) ---------------------------

    async def take_snapshot(self, session_id: str, bounds: SnapshotBounds | None = None) -> SnapshotSummary:
        """Every thread's stack with locals, tasks, locks and process facts; a running program is paused
        for the read and resumed as it was."""
        session = self._get(session_id)
        hub = evidence.hub_for(self.manager)
        async with session.lock:
            return await snapshots.take(session, hub.store, bounds or SnapshotBounds())

    async def snapshots(self, session_id: str) -> SnapshotList:
        self._get(session_id)
        found = await snapshots.listing(evidence.hub_for(self.manager).store, session_id)
        return SnapshotList(snapshots=found, total=len(found))

    async def snapshot(self, session_id: str, snapshot_id: str) -> Snapshot:
        """A whole snapshot ("post_mortem" is the latest post-mortem of the session)."""
        self._get(session_id)
        store = evidence.hub_for(self.manager).store
        if snapshot_id == "post_mortem":
            return await self._post_mortem(session_id)
        evidence.check_id(snapshot_id)
        item, data = await snapshots.load(store, session_id, snapshot_id)
        return snapshots.whole(item, data)

    async def _find_post_mortem(self, session_id: str) -> Snapshot | None:
        store = evidence.hub_for(self.manager).store
        for evidence_id in reversed(await store.ids(session_id)):
            item = await store.get(evidence_id)
            if item is not None and item.kind == "post_mortem":
                return snapshots.whole(item, msgspec.json.decode(item.text))
        return None

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

    async def _post_mortem(self, session_id: str) -> Snapshot:
        found = await self._find_post_mortem(session_id)
        if found is not None:
            return found
        raise NotFound(
            "this session has no post-mortem snapshot",
            details={"session_id": session_id},
            hint="One is taken when the program stops at an uncaught exception: launch with "
            "stop_on_exception 'uncaught' (or set that exception breakpoint).",
        )

    async def add_capture(self, session_id: str, request: CaptureRequest) -> CapturePoint:
        """A capture point: rows of values at a line, without pausing the program."""
        session = self._get(session_id)
        return await evidence.hub_for(self.manager).captures.add(session, request)

    async def captures(self, session_id: str) -> CaptureList:
        return CaptureList(captures=evidence.hub_for(self.manager).captures.listing(self._get(session_id)))

    async def capture_table(self, session_id: str, capture_id: str, start: int = 0, count: int = 100) -> CaptureTable:
        check_page(start, count)
        found = await evidence.hub_for(self.manager).captures.table(self._get(session_id), capture_id, start, count)
        await self._hide_secret_columns(session_id, found)
        return found

    async def _hide_secret_columns(self, session_id: str, found: CaptureTable) -> None:
        """A row is a list, so a column named like a secret (``password``) is hidden here, cell by cell;
        the answer's own redaction then sees every other string."""
        seam = seam_for(self.manager)
        if seam.redactor is None:
            return
        secret = [i for i, c in enumerate(found.columns) if secret_name(c) or secret_expression(c)]
        if not secret:
            return
        placeholders = await seam.table(session_id)
        for row in found.rows:
            for i in secret:
                if row[i] is not None and not isinstance(row[i], bool | int | float):
                    row[i] = seam.redactor.walk(row[i], placeholders, "capture_table", secret=True)
        await seam.persist(session_id, placeholders)

    async def remove_capture(self, session_id: str, capture_id: str) -> CapturePoint:
        return await evidence.hub_for(self.manager).captures.remove(self._get(session_id), capture_id)

    async def evidence(
        self, evidence_id: str, *, offset: int = 0, limit: int = 200, grep: str | None = None
    ) -> EvidencePage:
        """An evidence item's lines, paged (or the lines matching ``grep``), redacted as its session's."""
        evidence.check_id(evidence_id)
        item = await evidence.hub_for(self.manager).store.get(evidence_id)
        if item is None:
            raise evidence.no_evidence(evidence_id)
        return await self.session_evidence(item.session_id, evidence_id, offset=offset, limit=limit, grep=grep)

    async def session_evidence(
        self, session_id: str, evidence_id: str, *, offset: int = 0, limit: int = 200, grep: str | None = None
    ) -> EvidencePage:
        evidence.check_id(evidence_id)
        if offset < 0 or not 1 <= limit <= MAX_PAGE:
            raise InvalidRequest(
                f"offset must be >= 0 and limit between 1 and {MAX_PAGE}", details={"offset": offset, "limit": limit}
            )
        check_length("grep", grep, 200)
        item = await evidence.hub_for(self.manager).store.get(evidence_id)
        if item is None or item.session_id != session_id:
            raise evidence.no_evidence(evidence_id)
        pattern = _grep_pattern(grep) if grep else None
        total, lines = await asyncio.to_thread(_grep_lines, item.text, pattern)  # up to 16 MiB: off the loop
        matches = len(lines) if pattern is not None else None
        page = lines[offset : offset + limit]
        return EvidencePage(
            evidence_id=evidence_id,
            kind=item.kind,
            title=item.title,
            total_lines=total,
            offset=offset,
            lines=page,
            has_more=offset + limit < len(lines),
            matches=matches,
        )

    async def analyze(
        self, session_id: str, snapshot_ids: list[str] | None = None, *, take: int = 0, interval: float = 1.0
    ) -> Analysis:
        """Known patterns over the given snapshots (or, with ``take``, 1-2 new ones ``interval`` s apart;
        with neither, the session's last two)."""
        session = self._get(session_id)
        hub = evidence.hub_for(self.manager)
        if not 0 <= take <= 2 or not 0 <= interval <= 30:
            raise InvalidRequest(
                "take must be 0, 1 or 2 and interval between 0 and 30 seconds",
                details={"take": take, "interval": interval},
            )
        ids = list(snapshot_ids or [])
        if len(ids) > 2:
            raise InvalidRequest("analyze compares at most two snapshots", details={"snapshot_ids": ids})
        for sid in ids:
            evidence.check_id(sid)
        for n in range(take):
            if n:
                await asyncio.sleep(interval)  # the second snapshot is taken this long after the first
            async with session.lock:
                ids.append((await snapshots.take(session, hub.store, SnapshotBounds())).snapshot_id)
        if not ids:
            ids = [s.snapshot_id for s in await snapshots.listing(hub.store, session_id)][-2:]
        if not ids:
            raise InvalidState(
                "no snapshot to analyze",
                details={"session_id": session_id},
                hint="Take a snapshot first, or pass take=1 (take=2 to compare two, for leaks and busy loops).",
            )
        found = [await snapshots.load(hub.store, session_id, sid) for sid in ids]
        found.sort(key=lambda pair: float(pair[1].get("taken_at") or pair[0].created_at))
        matches = analyze([(item.id, data) for item, data in found])
        out = Analysis(
            session_id=session_id, snapshots=[i.id for i, _ in found], matches=matches, checked=list(DETECTORS)
        )
        if len(found) < 2:
            out.note = "one snapshot: leak, busy loop and exception storm need two (take=2)"
        return out

    # -- redaction -------------------------------------------------------------------------------------

    async def redactions(self, session_id: str) -> Redactions:
        """What this session's answers have had redacted: rule, placeholder, where, when; never the value."""
        self._get(session_id)
        seam = seam_for(self.manager)
        if not seam.enabled:
            return Redactions(
                session_id=session_id,
                enabled=False,
                redactions=[],
                total=0,
                note="redaction is off (DEBUGRELAY_REDACTION)",
            )
        found = seam.view(await seam.table(session_id))
        return Redactions(session_id=session_id, enabled=True, redactions=found, total=len(found))

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
