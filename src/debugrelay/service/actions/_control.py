"""The tools that decide where the program stops and make it run: breakpoints, continue, steps, pause, wait.
Each that runs the program waits for its next event and answers it."""

from __future__ import annotations

import contextlib
from typing import Annotated, Any, Literal

from pydantic import Field

from debugrelay.errors import InvalidRequest, RelayError
from debugrelay.models import BreakpointRequest
from debugrelay.models.limits import ResumeCommand

from .. import policy
from ._declare import ActionGroup, ContinueTimeout, SessionId, StepTimeout, ThreadId, WithLocals, action
from ._events import compact_breakpoint, plain


class BreakpointTools(ActionGroup):
    """Line, function and exception breakpoints, set before or during a run."""

    @action()
    async def debug_set_breakpoint(
        self,
        *,
        file: Annotated[str | None, Field(description="Path (relative: your folder).")] = None,
        line: Annotated[int | None, Field(description="1-based line.", ge=1)] = None,
        function: Annotated[
            str | None,
            Field(description="Or a function: 'mod.Class.run'."),
        ] = None,
        condition: Annotated[str | None, Field(description="e.g. 'i > 100'.")] = None,
        hit_condition: Annotated[str | None, Field(description="'5', '>= 5', '% 5' (every 5th).")] = None,
        log_message: Annotated[
            str | None,
            Field(description="Print, not pause: 'i={i} {x!r:>8}'."),
        ] = None,
        session_id: SessionId = None,
    ) -> dict[str, Any]:
        """A line or function breakpoint (condition, hit count, logpoint), before or during a run; a line
        that never stops gets a suggestion."""
        sid = await self._sid_or_new(session_id)
        if not function and (not file or line is None):
            raise InvalidRequest("give file and line, or function", hint="e.g. file='/app/main.py', line=42")
        folder = None if function else await policy.relative_base(self.backend, sid)
        request = BreakpointRequest(
            file=None if function else policy.absolute(str(file), folder),
            line=None if function else line,
            function=function,
            condition=condition,
            hit_condition=hit_condition,
            log_message=log_message,
        )
        created = await self.backend.add_breakpoints(sid, [request])
        return {"session_id": sid, **compact_breakpoint(created[0])}

    @action()
    async def debug_remove_breakpoint(
        self,
        *,
        breakpoint_id: Annotated[str, Field(description="'bp_1' or 'all'.")],
        session_id: SessionId = None,
    ) -> dict[str, Any]:
        """Remove a breakpoint (debug_status lists them)."""
        sid = await self._sid(session_id)
        if breakpoint_id == "all":
            return plain(await self.backend.clear_breakpoints(sid))
        await self.backend.remove_breakpoint(sid, breakpoint_id)
        return {"session_id": sid, "removed": breakpoint_id}

    @action()
    async def debug_set_exception_breakpoints(
        self,
        *,
        filters: Annotated[
            list[Literal["raised", "uncaught", "userUnhandled"]],
            Field(description="'raised': even caught ones; []: none."),
        ],
        exception_types: Annotated[list[str] | None, Field(description="Only these: ['KeyError']")] = None,
        session_id: SessionId = None,
    ) -> dict[str, Any]:
        """Which exceptions pause (replaces stop_on_exception)."""
        sid = await self._sid_or_new(session_id)
        result = await self.backend.set_exception_breakpoints(sid, list(filters), exception_types or [])
        return {"session_id": sid, **plain(result)}


class ControlTools(ActionGroup):
    """Resume, step, pause or wait: each answers the event that follows (a stop, the end, or still running)."""

    async def _resumed(
        self, command: ResumeCommand, session_id: str | None, thread_id: int | None, timeout: float, locals: bool
    ) -> dict[str, Any]:
        sid = await self._sid(session_id)
        status = await self.backend.resume(sid, command, thread_id, timeout, details=locals)
        return await self.stops.event(sid, status, with_locals=locals, waited=timeout)

    @action()
    async def debug_continue(
        self,
        *,
        session_id: SessionId = None,
        thread_id: ThreadId = None,
        timeout: ContinueTimeout = 30,
        locals: WithLocals = True,
    ) -> dict[str, Any]:
        """Resume until the next breakpoint, exception or the end."""
        return await self._resumed("continue", session_id, thread_id, timeout, locals)

    @action()
    async def debug_step_over(
        self,
        *,
        session_id: SessionId = None,
        thread_id: ThreadId = None,
        timeout: ContinueTimeout = 10,
        locals: WithLocals = True,
    ) -> dict[str, Any]:
        """Run the current line, calls included; pause on the next."""
        return await self._resumed("step-over", session_id, thread_id, timeout, locals)

    @action()
    async def debug_step_into(
        self,
        *,
        session_id: SessionId = None,
        thread_id: ThreadId = None,
        timeout: ContinueTimeout = 10,
        locals: WithLocals = True,
    ) -> dict[str, Any]:
        """Into the function called on the current line."""
        return await self._resumed("step-into", session_id, thread_id, timeout, locals)

    @action()
    async def debug_step_out(
        self,
        *,
        session_id: SessionId = None,
        thread_id: ThreadId = None,
        timeout: ContinueTimeout = 10,
        locals: WithLocals = True,
    ) -> dict[str, Any]:
        """Finish the function; pause in its caller (return value in locals)."""
        return await self._resumed("step-out", session_id, thread_id, timeout, locals)

    @action()
    async def debug_run_to(
        self,
        *,
        file: Annotated[str, Field(description="Path (relative: your folder).")],
        line: Annotated[int, Field(ge=1)],
        session_id: SessionId = None,
        thread_id: ThreadId = None,
        timeout: ContinueTimeout = 30,
        locals: WithLocals = True,
    ) -> dict[str, Any]:
        """Continue to FILE:LINE (a breakpoint for this call only); answers the stop there, or an earlier one."""
        sid = await self._sid(session_id)
        path = policy.absolute(file, await policy.relative_base(self.backend, sid))
        there = [b for b in (await self.backend.breakpoints(sid)).breakpoints if (b.file, b.line) == (path, line)]
        made = (
            None if there else (await self.backend.add_breakpoints(sid, [BreakpointRequest(file=path, line=line)]))[0]
        )
        try:
            status = await self.backend.resume(sid, "continue", thread_id, timeout, details=locals)
        finally:
            if made is not None:  # the agent's own breakpoints stay as they were
                with contextlib.suppress(RelayError):
                    await self.backend.remove_breakpoint(sid, made.breakpoint_id)
        return await self.stops.event(sid, status, with_locals=locals, waited=timeout)

    @action()
    async def debug_pause(
        self,
        *,
        session_id: SessionId = None,
        timeout: StepTimeout = 10,
        locals: WithLocals = True,
    ) -> dict[str, Any]:
        """Pause a running program where it is (a hang)."""
        sid = await self._sid(session_id)
        await self.backend.pause(sid)
        status = await self.backend.wait(sid, timeout, False, details=locals)  # at once when it paused
        return await self.stops.event(sid, status, with_locals=locals, waited=timeout)

    @action()
    async def breakpoint_wait(
        self,
        *,
        session_id: SessionId = None,
        timeout: ContinueTimeout = 30,
        include_autopsy: Annotated[bool, Field(description="At an exception, add exception_autopsy.")] = False,
        locals: WithLocals = True,
    ) -> dict[str, Any]:
        """Wait, not resuming, until the program pauses or ends (after timed_out or debug_attach)."""
        sid = await self._sid(session_id)
        status = await self.backend.wait(sid, timeout, include_autopsy, details=locals)
        return await self.stops.event(sid, status, with_locals=locals, waited=timeout)
