"""Running the program and its output: launch, attach, continue and steps (with the stop's details an agent
looks at first), pause, wait, restart, detach, terminate, the output pages and the program's input."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec

from debugrelay import inspection, traces
from debugrelay.errors import InvalidRequest, NotFound, RelayError, ServiceUnreachable
from debugrelay.models import (
    AttachSpec,
    Cleared,
    HttpCall,
    HttpCallView,
    InputSent,
    LaunchRequest,
    OutputLine,
    OutputPage,
    Status,
    VariablesPage,
    cut_text,
    joined_output,
    last_lines,
    limits,
)
from debugrelay.models.limits import OUTPUT_PAGE_MAX
from debugrelay.redaction import PAGE_MAX_CHARS
from debugrelay.sessions import (
    ACTIVE,
    LEFT_OUT,
    service_address,
    stops_on,
    test_runner,
    wait_listening,
    without_runner_noise,
)

from ._core import (
    CODE_TYPES,
    LOCALS_MAX,
    MODULE_NAMES_READ,
    NEW_OUTPUT_LINES,
    VALUE_MAX,
    ServiceCore,
    breakpoint_runs,
    check_length,
    wait_seconds,
)

TRACED_AT_STOP = 5  # traced calls an exception stop names
END_OUTPUT = 2000  # characters of the program's output an answer saying it ended carries (the tail)
SLOW_TRACER = (
    "Python 3.11: CPU-bound code runs 4-7x slower under the debugger; a 3.12+ 'python' or a container "
    "target runs at full speed"
)


def _older_than(version: str, than: tuple[int, int]) -> bool:
    major, _, minor = version.partition(".")
    return major.isdigit() and minor.isdigit() and (int(major), int(minor)) < than


class RunningOps(ServiceCore):
    """The operations that run the program and read or feed its output."""

    # -- running the program --------------------------------------------------------------------------

    async def launch(self, session_id: str, spec: LaunchRequest) -> Status:
        """Run a program in the session; a program it launched that still runs or is paused is ended
        first (launching again means restart, on every interface), and the answer says so."""
        session = self._get(session_id)
        extra: dict[str, Any] = {}
        if session.status in ACTIVE and session.record.mode == "launch":
            extra["restarted"] = f"its {session.status} run was ended"
            await session.terminate()
        await session.launch(spec)
        launched = session.record.launch or spec
        carried = launched.stop_on_exception is None and session.record.exception_setting is not None
        extra["stops_on"] = stops_on(launched, session.record.exception_filters, carried=carried)
        if spec.ready is not None:
            extra["ready"] = await wait_listening(session, spec.ready.port, spec.ready.timeout)
        version = session.record.python  # as the target's keeper said, on the program's own interpreter
        if version is None:
            launcher = session.launchers.get(spec.launcher or session.settings.default_launcher)
            version = await asyncio.to_thread(launcher.python_version, spec) if launcher is not None else None
            if version:
                session.record.python = version
                await session.save()
        if session.record.interpreter:
            extra["interpreter"] = session.record.interpreter
        if version:
            extra["python"] = version
            if _older_than(version, (3, 12)):
                extra.setdefault("warning", SLOW_TRACER)
        return self._status(session, **extra)

    async def request(self, session_id: str, call: HttpCall) -> Status:
        session = self._get(session_id)
        ready = session.record.launch.ready if session.record.launch is not None else None
        host, port = service_address(session, call.port or (ready.port if ready is not None else None))
        seen = session.record.stop_count
        view, sent = await session.http.start(session, host, msgspec.structs.replace(call, port=port))
        with self._waiting(session_id):
            stopped = asyncio.ensure_future(session.wait_for_stop(seen, call.timeout))
            first: set[asyncio.Future[Any]] = {sent, stopped}
            done, _ = await asyncio.wait(first, timeout=call.timeout, return_when=asyncio.FIRST_COMPLETED)
            stopped.cancel()
        if view.request_id in session.http.refused and session.record.stop_count == seen:
            session.http.take_unreported()
            raise ServiceUnreachable(
                f"nothing answered on port {port} of the target ({view.error})",
                details={"host": host, "port": port, "status": session.record.status},
            )
        session.touch()
        return self._status(session, request=view, timed_out=not done)

    async def request_result(self, session_id: str, request_id: str) -> HttpCallView:
        view = self._get(session_id).http.get(request_id)
        if view is None:
            raise NotFound(
                f"no request {request_id} in this session",
                details={"request_id": request_id},
                hint="Requests are kept by id for the session's last 50; send it again.",
            )
        return view

    async def attach(self, session_id: str, spec: AttachSpec) -> Status:
        session = self._get(session_id)
        await session.attach(spec)
        return self._status(session)

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
        """continue/step-*: waits up to ``wait`` s for the next stop; ``timed_out`` when none came."""
        wait = wait_seconds(wait, 0.0)
        session = self._get(session_id)
        seen = session.record.stop_count
        with self._waiting(session_id):
            await session.resume(command, thread_id, wait, every=every)
        if wait and session.status == "running" and session.record.stop_count == seen:
            status = self._status(session, timed_out=True, message=f"still running after {wait:g}s")
            status.breakpoint_runs = breakpoint_runs(session)
            return status
        status = self._status(session)
        return await self.stop_details(session_id, status) if details else await self.ended(session_id, status)

    async def stop_details(self, session_id: str, status: Status) -> Status:
        """A stop with what an agent looks at first: the source line, the top frame's locals (compact,
        the count of the others said) and each watch expression's value. Every interface answers it."""
        if status.status != "paused":
            return await self.ended(session_id, status)
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
        at_module = where is not None and where.function == "<module>"
        try:
            scopes = (await self.scopes(session_id, 0, status.thread_id)).scopes
            page = (
                await self.variables(session_id, scopes[0].reference, 0, MODULE_NAMES_READ if at_module else LOCALS_MAX)
                if scopes
                else VariablesPage(variables=[], total=0, has_more=False)
            )
        except RelayError as exc:
            status.locals_error = exc.message
        else:
            # a module's own values: what it imported and the code it defines are a variables call away
            kept = [v for v in page.variables if not (at_module and v.type in CODE_TYPES)][:LOCALS_MAX]
            status.locals = {v.name: cut_text(v.value, VALUE_MAX) for v in kept}
            more = page.total - len(kept)
            if more > 0:
                status.locals["..."] = f"{more} more" + (" (modules, functions, classes)" if at_module else "")
        if session.record.watches:
            status.watches = {}
            for watch in await inspection.watch_values(session):
                shown = f"error: {watch.error}" if watch.error else cut_text(watch.result or "", VALUE_MAX)
                status.watches[watch.expression] = shown
        return await self._traced_at_stop(session_id, status)

    async def _traced_at_stop(self, session_id: str, status: Status) -> Status:
        """An exception stop names the traced calls it stopped in (read from the paused program)."""
        session = self._get(session_id)
        if status.exception is None or not session.record.traces:
            return status
        await session.calls.load()
        batch = await traces.paused_calls(session)
        if batch is not None:
            session.calls.take(batch)
        running = session.calls.find([t.id for t in session.record.traces], outcome_is="running")
        status.traced_calls = [str(c.get("call_id")) for c in reversed(running)][:TRACED_AT_STOP]
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
            status.breakpoint_runs = breakpoint_runs(session)
        stop = session.record.stop
        if include_autopsy and session.status == "paused" and stop is not None and stop.exception is not None:
            status.autopsy = await self.autopsy(session_id)
        return await self.stop_details(session_id, status) if details else await self.ended(session_id, status)

    async def ended(self, session_id: str, status: Status) -> Status:
        """An answer that says the program ended carries what it printed that no answer carried yet (the
        last END_OUTPUT characters, marked when cut: the output pages have all of it), and the next step."""
        if status.status == "paused":
            return await self._traced_at_stop(session_id, status)
        if status.status != "terminated":
            return status
        try:
            page = await self.new_output(session_id)
        except RelayError:
            return status
        text = joined_output(page.outputs)
        if text:
            text, cut = last_lines(text, END_OUTPUT)
            if cut or page.skipped or page.has_more:
                status.output_truncated = "earlier output omitted: the output pages show all of it"
            status.output = text or None
        kept = " with its breakpoints" if self._get(session_id).record.breakpoints else ""
        status.hint = f"The program ended: its output pages show all it printed; launch runs it again{kept}."
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
        self,
        session_id: str,
        since: str | None = None,
        limit: int = 200,
        stream: str | None = None,
        *,
        newest: bool = False,
    ) -> OutputPage:
        if not 1 <= limit <= OUTPUT_PAGE_MAX:
            raise InvalidRequest(f"limit must be between 1 and {OUTPUT_PAGE_MAX}", details={"limit": limit})
        session = self._get(session_id)
        await session.output.flush()
        page = await self.manager.store.read_output(session_id, since, limit, newest=newest)
        lines: list[OutputLine] = []
        cursor, has_more, size, skipped = page.cursor, page.has_more, 0, page.skipped
        if newest:  # the newest that fit, the cursor still at the end
            kept = [e for e in page.entries if stream is None or e.type == stream]
            for e in reversed(kept):
                if lines and size + len(e.text) > PAGE_MAX_CHARS:
                    skipped = -1
                    break
                lines.append(OutputLine(type=e.type, text=e.text, timestamp=e.timestamp))
                size += len(e.text)
            lines.reverse()
        else:
            for before, e in zip([since or "0", *(e.cursor for e in page.entries)], page.entries, strict=False):
                if stream is not None and e.type != stream:
                    continue
                if lines and size + len(e.text) > PAGE_MAX_CHARS:  # no more than one answer has redacted
                    cursor, has_more = before, True
                    break
                lines.append(OutputLine(type=e.type, text=e.text, timestamp=e.timestamp))
                size += len(e.text)
        out = OutputPage(outputs=lines, cursor=cursor, has_more=has_more)
        if skipped:
            out.skipped = skipped if skipped > 0 else True
        if page.dropped:
            out.dropped = page.dropped if page.dropped > 0 else True
            out.message = (
                "older output was dropped: the buffer is capped"
                " (DEBUGRELAY_OUTPUT_BUFFER_ENTRIES, DEBUGRELAY_OUTPUT_BUFFER_BYTES)"
            )
        return out

    async def new_output(self, session_id: str) -> OutputPage:
        """What the program printed that no answer carried yet (a test run's: without the runner's banner
        and warnings, which the output pages keep)."""
        session = self._get(session_id)
        async with session.answering:  # two answers at once never carry the same lines
            since = session.record.output_answered
            page = await self.output(session_id, since, NEW_OUTPUT_LINES, newest=True)
            if page.cursor and page.cursor != since:
                session.record.output_answered = page.cursor
                await session.save()
        launched = session.record.launch
        if launched is not None and test_runner(launched) == "pytest":
            page.outputs, cut = without_runner_noise(page.outputs)
            if cut:
                page.left_out = LEFT_OUT
        return page

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
