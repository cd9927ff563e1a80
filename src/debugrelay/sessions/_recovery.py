"""Carry a stored session on in this relay: re-attach to a target that outlived its relay, or
record what is known of one that ended meanwhile; and the reverse, leave targets for the next relay.

Measured with debugpy 1.8.22: when the DAP client vanishes (even SIGKILLed), the debuggee keeps
running, a paused one resumes and its breakpoints are cleared; the ``--listen`` port takes a new
client about 250 ms later, one client at a time ("already being debugged"). A client that connects
while debugpy is still dropping the previous one can leave the adapter answering nothing ever
after, so a handover leaves a gap before the next relay may connect.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any

from debugrelay.dap import ATTACH_ARGS
from debugrelay.errors import RelayError
from debugrelay.launchers import Launcher, Target
from debugrelay.launchers.local import log_tail
from debugrelay.launchers.remote import RemoteLauncher
from debugrelay.models import SessionRecord
from debugrelay.store import timestamp

from . import breakpoints as bps
from ._session import ACTIVE, Session

if TYPE_CHECKING:
    from ._manager import SessionManager

log = logging.getLogger(__name__)

REATTACH_TIMEOUT = 10.0  # retry connecting this long: the old client may still be going away
RETRY_DELAY = 0.5
HANDOVER_GAP = 0.3  # after a detach, before another relay may connect (see the module docstring)
MAX_NOTES = 20
RESUMED = "resumed while no relay was attached"


class TargetBusy(RelayError):
    """Another debug client holds the target: its owner still runs, this relay must not take over."""

    code = "session_busy"
    status = 503
    default_hint = "Another relay is attached to this target; retry shortly (requests go to the owner)."


def launcher_for(manager: SessionManager, kind: str) -> Launcher | None:
    """The launcher that finds a target of ``kind`` again (a target's describe() names it)."""
    launcher = manager.launchers.get(kind)
    if launcher is None:
        launcher = next((lc for lc in manager.launchers.values() if lc.name == kind), None)
    if launcher is None and kind == "remote":
        launcher = RemoteLauncher()
    return launcher


def _note(record: SessionRecord, text: str) -> None:
    record.notes = [*record.notes, text][-MAX_NOTES:]


async def adopt(manager: SessionManager, record: SessionRecord) -> Session:
    """Make ``record`` one of this relay's sessions; re-attach to its target when it was running.

    The caller holds the session's lease. Raises :class:`TargetBusy` when another client is
    attached to the target (the session is then not kept here).
    """
    session = manager.new_session(record)
    record.owner = manager.settings.instance_id
    manager.sessions[record.id] = session
    try:
        if record.status in ACTIVE:
            await reattach(manager, session)
        else:
            await session.save()
    except TargetBusy:
        manager.sessions.pop(record.id, None)
        raise
    manager.poke()
    return session


async def reattach(manager: SessionManager, session: Session) -> None:
    """Find the target again, connect, re-send breakpoints and exception filters; or mark it ended."""
    record = session.record
    async with session.lock:
        was_paused = record.status == "paused"
        where = _where(record)
        described: dict[str, Any] = dict(record.target or {})
        kind = described.get("kind") or ("remote" if record.mode == "attach" else "local")
        launcher = launcher_for(manager, str(kind))
        target: Target | None = None
        if launcher is not None:
            try:
                target = await asyncio.to_thread(launcher.recover, described)
            except Exception:
                log.exception("session %s: could not look for its %s target", session.id, kind)
        else:
            log.warning("session %s: no launcher '%s' on this relay to find its target", session.id, kind)
        if target is None or target.poll() is not None:
            await _ended(session, target, described, launcher is None)
            return
        session.target = target
        session.reset_run_state()
        record.stop = None
        record.status = "running"
        for bp in record.breakpoints:
            bp.dap_id = None
        try:
            await _connect(session, target)
        except TargetBusy:
            session.target = None
            raise
        except RelayError as exc:
            if target.poll() is not None:
                await _ended(session, target, described, False)
                return
            await _failed(session, exc)
            return
        record.target = target.describe()
        record.recovered = True
        resumed = f"; it was paused{where} and {RESUMED}" if was_paused else ""
        _note(record, f"{timestamp()} recovered by relay {manager.settings.instance_id}{resumed}")
        await session.save()
        session.notify()
        log.info("session %s: re-attached to %s:%s%s", session.id, target.host, target.port, resumed)


def attach_args(session: Session, target: Target) -> dict[str, Any]:
    """What the first attach sent (launch options and path mappings)."""
    record = session.record
    own = getattr(target, "path_mappings", None)  # targets that map paths (containers) say how
    if callable(own):
        mappings = own()
    else:
        specs = record.attach.path_mappings if record.attach is not None else []
        mappings = [{"localRoot": m.local_root, "remoteRoot": m.remote_root} for m in specs]
    args: dict[str, Any] = {**ATTACH_ARGS, "pathMappings": mappings}
    if record.mode == "launch" and record.launch is not None:
        args.update(justMyCode=record.launch.just_my_code, subProcess=record.launch.debug_subprocesses)
    else:
        args["justMyCode"] = False
    return args


async def _connect(session: Session, target: Target) -> None:
    deadline = time.monotonic() + REATTACH_TIMEOUT
    while True:
        try:
            await session.connect(target, max(0.5, deadline - time.monotonic()))
            await session.configure(attach_args(session, target))
        except RelayError as exc:
            await session.drop_connection(disconnect=False)
            busy = "already being debugged" in exc.message
            if target.poll() is not None or time.monotonic() + RETRY_DELAY > deadline:
                if busy:
                    raise TargetBusy(f"another client is attached to the target: {exc.message}") from exc
                raise
            log.info("session %s: re-attach failed (%s); retrying", session.id, exc.message)
            await asyncio.sleep(RETRY_DELAY)
        else:
            return


async def _ended(session: Session, target: Target | None, described: dict[str, Any], unknown: bool) -> None:
    """The target ended while no relay was attached: terminated, with its exit code if known and its log."""
    record = session.record
    code = target.poll() if target is not None else None
    tail = target.output_tail() if target is not None else log_tail(described.get("log"))
    record.status = "terminated"
    record.reason = "target_exited"
    record.exit_code = None if code is None or code == -1 else code
    record.stop = None
    record.recovered = True
    why = f"no launcher '{described.get('kind')}' here to find it" if unknown else "it ended"
    known = "" if record.exit_code is not None else " (exit code unknown)"
    _note(
        record,
        f"{timestamp()} the target was gone when relay {session.settings.instance_id} "
        f"took the session over: {why} while no relay was attached{known}",
    )
    bps.mark_unhit(record)
    session.target = None
    if target is not None:  # what is left of it: a stopped container, a lingering adapter
        with contextlib.suppress(Exception):
            await target.terminate()
    if tail:
        header = "[debugrelay] the target ended while no relay was attached; the end of its log:\n"
        with contextlib.suppress(RelayError):
            await session.store.append_output(record.id, [("log", header + tail, time.time())])
    await session.save()
    session.notify()
    log.info("session %s: target gone while detached; marked terminated", session.id)


async def _failed(session: Session, exc: RelayError) -> None:
    """Still running but debugpy does not take the relay back: failed; terminate/delete still end it."""
    record = session.record
    record.status = "failed"
    record.recovered = True
    record.error = {
        "code": "recovery_failed",
        "message": f"the target still runs but the relay could not re-attach: {exc.message}",
        "details": {
            "host": session.target.host if session.target else None,
            "port": session.target.port if session.target else None,
        },
        "hint": "Restart the session or delete it; both end the old target.",
    }
    _note(record, f"{timestamp()} re-attach failed: {exc.message}")
    await session.save()
    session.notify()
    log.warning("session %s: could not re-attach: %s", session.id, exc.message)


def _where(record: SessionRecord) -> str:
    loc = record.stop.location if record.stop else None
    if loc is None or not loc.file:
        return ""
    return f" at {loc.file}:{loc.line}"


async def release(session: Session, *, save: bool) -> bool:
    """Drop the DAP connection without ending the target (it resumes; debugpy clears its
    breakpoints) and keep the record as it is, for the relay that carries the session on next.

    Returns whether a live connection was dropped (the next client must then wait a moment).
    """
    try:
        await asyncio.wait_for(session.lock.acquire(), 5)
        locked = True
    except TimeoutError:
        locked = False  # a command hangs on the target: detach anyway
    try:
        live = await session.drop_connection(disconnect=True, final=True)
        with contextlib.suppress(RelayError):
            await session.output.flush()
        if session.target is not None:
            session.target.disown()
        if save:
            with contextlib.suppress(RelayError):
                await session.save()
        return live
    finally:
        if locked:
            session.lock.release()
