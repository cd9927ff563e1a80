"""Execution control of a session's target: continue and steps, pause, waiting for a stop, terminate, detach and
restart. Each command holds the session's lock, so commands of one session never interleave."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from debugrelay.errors import InvalidState, LaunchFailed, RelayError, RestartFailed, ThreadNotFound

from . import _launch as launch
from . import _stops as stops
from . import breakpoints as bps
from ._stops import ACTIVE

if TYPE_CHECKING:
    from debugrelay.models import LaunchRequest

    from ._session import Session

STOP_HOOK_WAIT = 10.0  # s a terminate waits for the stop hook (a post-mortem snapshot) to finish
STEP_COMMANDS = {"step-over": "next", "step-into": "stepIn", "step-out": "stepOut", "continue": "continue"}


async def resume(
    session: Session, command: str, thread_id: int | None = None, wait: float | None = None, *, every: bool = False
) -> None:
    """continue / step-over / step-into / step-out of the process that stopped; steps wait for the next
    stop. ``every``: a continue resumes every paused process of the program."""
    dap_command = STEP_COMMANDS[command]
    async with session.lock:
        client = session.require_paused()
        focus = session.processes.focus
        stop = session.record.stop
        assert stop is not None
        tid = thread_id or stop.thread_id
        if thread_id is not None and thread_id not in known_threads(session):
            raise ThreadNotFound(
                f"no thread {thread_id}",
                details={"thread_id": thread_id},
                hint="List the target's threads.",
            )
        seen = session.record.stop_count
        if session._snapshot is not None and not session._snapshot.done():
            with contextlib.suppress(Exception):
                await session._snapshot
        args: dict[str, Any] = {"threadId": tid}
        if dap_command == "continue" and thread_id is not None:
            args["singleThread"] = True
        if every and dap_command == "continue":
            await continue_waiting(session)
        # mark running before sending: the next 'stopped' event can beat the response
        stops.on_continued(session, focus)
        try:
            await client.request(dap_command, args)
        except RelayError:
            if session.record.stop_count == seen and session.status == "running":
                session.record.status, session.record.stop = "paused", stop
                session.processes.focus, session.processes.showing = focus, True
                session.notify()
            raise
    if wait:
        await session.wait_for_stop(seen, wait)


async def continue_waiting(session: Session) -> None:
    """Resume the processes whose stops wait their turn (``continue`` with ``all``)."""
    client = session.client
    waiting = list(session.processes.queued)
    session.processes.queued.clear()
    for process in waiting:
        session.processes.set_state(process, "running")
        if client is not None:
            with contextlib.suppress(RelayError):
                await client.request("continue", {"threadId": 0}, process=process)


def known_threads(session: Session) -> set[int]:
    return (
        set(session._threads)
        | set(session._frames)
        | ({session.record.stop.thread_id} if session.record.stop else set())
    )


async def pause(session: Session, wait: float = 2.0) -> None:
    async with session.lock:
        client = session.require_client()
        if session.status == "paused":
            return
        if session.status not in ("running", "launching"):
            raise InvalidState(f"cannot pause a {session.status} session", details={"status": session.status})
        seen = session.record.stop_count
        await client.request("pause", {"threadId": 0})
        root = session.client
        for pid in session.processes.debugged_running():  # pause stops the whole program, children too
            if root is not None:
                with contextlib.suppress(RelayError):
                    await root.request("pause", {"threadId": 0}, process=pid)
    await session.wait_for_stop(seen, wait)


async def wait_for_stop(session: Session, seen: int, timeout: float) -> bool:
    """Wait until a stop newer than ``seen`` is recorded or the session ends; False on timeout."""
    return await wait_until(session, lambda: session.record.stop_count > seen or session.status not in ACTIVE, timeout)


async def wait(session: Session, timeout: float) -> bool:
    """Long-poll until the session is paused or ended; True unless the timeout passed first."""
    return await wait_until(session, lambda: session.status not in ("launching", "running"), timeout)


async def wait_until(session: Session, done: Callable[[], bool], timeout: float) -> bool:
    """Sleep on state changes (never a poll loop) until ``done()`` holds or ``timeout`` passes."""
    deadline = time.monotonic() + max(0.0, timeout)
    while not done():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        changed = session._changed
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(changed.wait(), remaining)
    return True


async def terminate(session: Session, reason: str = "terminated") -> None:
    """Kill the target (its whole process tree or container); the session stays, terminated."""
    await launch.stop_starting(session)
    async with session.lock:
        if session._snapshot is not None and not session._snapshot.done():
            # what the stop hook keeps (a crash's post-mortem) is read before the program goes
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(session._snapshot), STOP_HOOK_WAIT)
        await stop_target(session, reason, terminate=True)


async def detach(session: Session) -> None:
    """Disconnect and leave the target running (its breakpoints are cleared by debugpy)."""
    async with session.lock:
        if session.status not in ACTIVE:
            raise InvalidState(f"session is {session.status}: nothing to detach", details={"status": session.status})
        await stop_target(session, "detached", terminate=False)


async def stop_target(session: Session, reason: str, *, terminate: bool) -> None:
    session._ending = True
    client, target = session.client, session.target
    if client is not None and not client.closed.is_set():
        if not terminate or target is None:
            # detach (or a target we cannot kill ourselves): let debugpy resume or end it
            with contextlib.suppress(RelayError):
                await client.request("disconnect", {"terminateDebuggee": terminate, "restart": False}, timeout=2.0)
        await client.close()
    session.client = None
    exit_code = session.record.exit_code
    if target is not None and terminate:
        with contextlib.suppress(Exception):
            code = await target.terminate()
            exit_code = code if exit_code is None else exit_code
    elif target is not None and hasattr(target, "attached"):  # a keeper of ours holding an attach: it goes too
        with contextlib.suppress(Exception):
            await target.terminate()
    await session.output.flush()
    if session.status in ACTIVE or session.status == "created":
        session.record.status = "terminated"
        session.record.reason = reason
        session.record.exit_code = exit_code
    session.record.stop = None
    bps.drop_captures(session.record)
    session.reset_run_state()
    session.processes.ended()
    session._ending = True
    session.target = None
    bps.mark_unhit(session.record)
    await session.save()
    session.notify()


async def restart(session: Session) -> None:
    """Start the same launch again, with the same breakpoints."""
    spec = session.record.launch
    if session.record.mode != "launch":
        raise InvalidState("only launched sessions can be restarted", hint="Attach again instead.")
    if spec is None:
        raise InvalidState(
            "this session has no launch to start again",
            hint="Launch it (POST /sessions/{id}/launch with the program to run).",
        )
    try:
        await _start_again(session, spec)
    except RestartFailed:
        raise
    except LaunchFailed as exc:  # the launch repeated cannot run (any more): not the restart's fault
        raise RestartFailed(exc.message, details=exc.details) from exc


async def _start_again(session: Session, spec: LaunchRequest) -> None:
    await launch.stop_starting(session)
    await session.lock.acquire()
    try:
        launcher = await launch.launcher_for(session, spec)
        await stop_target(session, "restarted", terminate=True)
        script = bps.prepare_launch(spec, launcher, session.source_roots)
    except BaseException:
        session.lock.release()
        raise
    await launch.answered(session, launch.start(session, launcher, spec, script))


async def close(session: Session) -> None:
    """End the target and drop the connection (session deletion, relay shutdown)."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(session.terminate("deleted"), 10)
    for task in list(session._tasks):
        task.cancel()


async def send_input(session: Session, text: str) -> None:
    target = session.target
    if target is None or session.status not in ACTIVE:
        raise InvalidState(
            f"session is {session.status}: no target to send input to", details={"status": session.status}
        )
    await target.send_input(text.encode())
