"""Carry a stored session on in this relay: re-attach to a target that outlived its relay, or
record what is known of one that ended meanwhile; and the reverse, leave targets for the next relay.

A launched target has a keeper (``_boot/_debugrelay_keeper.py``) holding its DAP connection: the
relay reconnects to the keeper, reads its state and the events it kept, and goes on where the last
relay left off (a paused program is still paused, its breakpoints still set). Without a keeper
(attach sessions) the relay connects to debugpy itself, as follows.

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
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from debugrelay.dap import ATTACH_ARGS, INITIALIZE_ARGS
from debugrelay.errors import LaunchFailed, RelayError
from debugrelay.launchers import Launcher, Target
from debugrelay.launchers.local import log_tail
from debugrelay.launchers.remote import RemoteLauncher
from debugrelay.models import ErrorBody, LocalTargetRecord, SessionRecord, TargetRecord
from debugrelay.store import timestamp

from . import _seals as seals
from . import breakpoints as bps
from ._session import ACTIVE, Session

if TYPE_CHECKING:
    from ._manager import SessionManager

log = logging.getLogger(__name__)

REATTACH_TIMEOUT = 10.0  # retry connecting this long: the old client may still be going away
RETRY_DELAY = 0.5
HANDOVER_GAP = 0.3  # after a detach, before another relay may connect (see the module docstring)
MAX_NOTES = 20
STOP_SHOWN = 5.0  # wait this long for a replayed stop to be read (its stack) before writing the note
RESUMED = "resumed while no relay was attached"
STOPPED_DETACHED = "stopped while no relay was attached"


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
        launcher = RemoteLauncher(manager.settings)
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
    unproven = seals.unsealed(manager.keys, record)
    if unproven:
        _set_aside(session, unproven)
    code = [w.id for w in record.watches if w.unsealed] + [b.id for b in record.breakpoints if b.unsealed]
    code += [t.id for t in record.traces if t.unsealed]
    if code:  # marked as the session was made (SessionManager.new_session): shown, never run
        _note(
            record,
            f"{timestamp()} relay {manager.settings.instance_id} found {', '.join(code)} in the store without a seal "
            "of a relay sharing its key: shown, never run",
        )
        log.warning("session %s: stored %s not sealed with this relay's key; never run", record.id, ", ".join(code))
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
        known = record.stop
        where = _where(record)
        stored = record.target
        launcher, target = await _find(manager, session, stored)
        if target is None or target.poll() is not None:
            await _ended(session, target, stored, launcher is None)
            return
        session.target = target
        secret = manager.keys.reveal(record.id, record.keeper_secret)
        kept = stored is not None and stored.keeper is True and secret is not None
        if kept:
            target.keeper_secret = secret
        session.reset_run_state()
        record.stop = None
        record.status = "running"
        if not kept:  # debugpy forgot them with its client; a keeper kept them, and their ids
            for bp in record.breakpoints:
                bp.dap_id = None
        hello: dict[str, Any] = {}
        try:
            if kept:
                hello = await _rejoin(session, target, known)
            else:
                await _connect(session, target)
        except TargetBusy:
            session.target = None
            raise
        except RelayError as exc:
            if target.poll() is not None:
                await _ended(session, target, stored, False)
                return
            await _failed(session, exc)
            return
        session.describe_target(target)
        if record.launch is not None and record.launch.ports and record.mode == "launch":
            record.published = await session.ports.open(session, record.launch.ports, record.published)
        record.recovered = True
        if kept:
            what = await _kept(session, hello, was_paused, where)
        else:
            what = f"; it was paused{where} and {RESUMED}" if was_paused else ""
        _note(record, f"{timestamp()} recovered by relay {manager.settings.instance_id}{what}")
        await session.save()
        session.notify()
        log.info("session %s: re-attached to %s:%s%s", session.id, target.host, target.port, what)


def _kind(session: Session, stored: TargetRecord | None) -> str:
    """The kind of the session's target: its record's, else what its mode launches or attaches to."""
    if stored is not None:
        return stored.kind
    return "remote" if session.record.mode == "attach" else "local"


async def _find(
    manager: SessionManager, session: Session, stored: TargetRecord | None
) -> tuple[Launcher | None, Target | None]:
    """The launcher of the session's target, and the target as it finds it again (or None)."""
    kind = _kind(session, stored)
    launcher = launcher_for(manager, kind)
    if launcher is None:
        log.warning("session %s: no launcher '%s' on this relay to find its target", session.id, kind)
        return None, None
    if stored is None:  # no record names a target: nothing to find
        return launcher, None
    try:
        return launcher, await asyncio.to_thread(launcher.recover, stored)
    except RelayError as exc:  # the launcher's policy refuses what the record names
        log.warning("session %s: its %s target is not reached again: %s", session.id, kind, exc.message)
        return launcher, None
    except Exception:
        log.exception("session %s: could not look for its %s target", session.id, kind)
        return launcher, None


async def _rejoin(session: Session, target: Target, known: Any) -> dict[str, Any]:
    """Reconnect to the target's keeper; finish a set-up the last relay left half done; show the stop
    the target is still in. Returns the keeper's state."""
    deadline = time.monotonic() + REATTACH_TIMEOUT
    while True:
        try:
            hello = await session.rejoin(target, max(0.5, min(2.0, deadline - time.monotonic())))
            break
        except (OSError, TimeoutError, RelayError) as exc:
            await session.drop_connection(disconnect=False)
            if target.poll() is not None or time.monotonic() + RETRY_DELAY > deadline:
                message = exc.message if isinstance(exc, RelayError) else str(exc) or type(exc).__name__
                raise LaunchFailed(f"the target's keeper does not take the relay back: {message}") from exc
            log.info("session %s: keeper not reached (%s); retrying", session.id, exc)
            await asyncio.sleep(RETRY_DELAY)
    if hello.get("exit_code") is not None:
        return hello  # the program ended meanwhile: its last output and its end follow, nothing to set up
    try:
        if not hello.get("configured"):
            client = session.require_client()
            if not hello.get("initialized"):
                await client.request("initialize", INITIALIZE_ARGS)
            if hello.get("attached"):
                await session.finish_configure()
            else:
                await session.configure(attach_args(session, target))
    except RelayError:
        await session.drop_connection(disconnect=False)
        raise
    paused = hello.get("paused")
    if paused is not None and not hello.get("paused_while_detached"):
        session.replay_stop(paused, known)  # a stop the keeper kept replays itself, with the events
    return hello


async def _kept(session: Session, hello: dict[str, Any], was_paused: bool, where: str) -> str:
    """What the keeper kept, for the session's notes (waiting for a stop it replays to be shown)."""
    record = session.record
    parts: list[str] = []
    if hello.get("paused") is not None:
        await session.wait(STOP_SHOWN)
        now = _where(record)
        if hello.get("paused_while_detached"):
            reason = record.stop.reason if record.stop else "a stop"
            parts.append(f"it {STOPPED_DETACHED} ({reason}{now})")
        else:
            parts.append(f"it is still paused{now or where}")
    elif was_paused:
        parts.append(f"it was paused{where} and was resumed before the last relay went away")
    if hello.get("queued"):
        parts.append(f"{hello['queued']} event(s) kept meanwhile were replayed")
    dropped = int(hello.get("dropped_output_chars") or 0)
    if dropped:
        parts.append(f"{dropped} characters of output were dropped meanwhile (the keeper keeps at most 8 MiB)")
    return "; " + "; ".join(parts) if parts else ""


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


async def _ended(session: Session, target: Target | None, stored: TargetRecord | None, unknown: bool) -> None:
    """The target ended while no relay was attached: terminated, with its exit code if known and its log."""
    record = session.record
    code = target.poll() if target is not None else None
    stored_log = stored.log if isinstance(stored, LocalTargetRecord) else None
    tail = target.output_tail() if target is not None else log_tail(_own_log(session, stored_log))
    record.status = "terminated"
    record.reason = "target_exited"
    record.exit_code = None if code is None or code == -1 else code
    record.stop = None
    record.recovered = True
    why = f"no launcher '{_kind(session, stored)}' here to find it" if unknown else "it ended"
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


def _set_aside(session: Session, fields: list[str]) -> None:
    """Drop stored fields without this relay's seal: a record is a claim, and one no relay sharing this
    relay's key wrote (changed in the store, or sealed with another token) is never acted on. A target
    it named is neither ended, read nor connected to; a launch it named is not started again."""
    record = session.record
    stored = msgspec.to_builtins(record.target) if record.target is not None else {}
    claimed = {k: str(v)[:80] for k, v in stored.items() if k in _CLAIM_KEYS and v is not None}
    what: list[str] = []
    if "target" in fields:
        seals.set_target(session.keys, record, None)
        record.keeper_secret = None
        what.append(f"its target ({claimed})" if claimed else "its target")
        if record.status in ACTIVE:
            record.status = "terminated"
            record.reason = "target_unverified"
            record.exit_code = None
            record.stop = None
            record.error = ErrorBody(
                code="target_unverified",
                message="the stored record of this session's target is not sealed by a relay sharing this "
                "relay's key: nothing was done to it (not ended, not read, not connected to)",
                details={"claimed": claimed},
                hint="Replicas must share DEBUGRELAY_TOKEN; otherwise the state store holds a record no relay "
                "wrote. Launch the session again, and end a target it really had by hand.",
            )
            bps.mark_unhit(record)
    if "launch" in fields:
        seals.set_launch(session.keys, record, None)
        what.append("its launch")
    record.recovered = True
    _note(
        record,
        f"{timestamp()} relay {session.settings.instance_id} set aside {' and '.join(what)}: not sealed by a relay "
        "sharing its key (DEBUGRELAY_TOKEN), so not acted on",
    )
    log.warning("session %s: stored %s not sealed with this relay's key; not acted on", session.id, ", ".join(fields))


_CLAIM_KEYS = ("kind", "pid", "port", "container_id", "pod")


async def _failed(session: Session, exc: RelayError) -> None:
    """Still running but debugpy does not take the relay back: failed; terminate/delete still end it."""
    record = session.record
    record.status = "failed"
    record.recovered = True
    record.error = ErrorBody(
        code="recovery_failed",
        message=f"the target still runs but the relay could not re-attach: {exc.message}",
        details={
            "host": session.target.host if session.target else None,
            "port": session.target.port if session.target else None,
        },
        hint="Restart the session or delete it; both end the old target.",
    )
    _note(record, f"{timestamp()} re-attach failed: {exc.message}")
    await session.save()
    session.notify()
    log.warning("session %s: could not re-attach: %s", session.id, exc.message)


def _own_log(session: Session, path: object) -> str | None:
    """A stored log path only when it is in this relay's target folder: a record is a claim, and a relay
    copies no other file of its host into a session's output."""
    folder = (Path(session.settings.state_dir) / "targets").resolve()
    if isinstance(path, str) and Path(path).resolve().parent == folder:
        return path
    return None


def _where(record: SessionRecord) -> str:
    loc = record.stop.location if record.stop else None
    if loc is None or not loc.file:
        return ""
    return f" at {loc.file}:{loc.line}"


async def release(session: Session, *, save: bool) -> bool:
    """Drop the DAP connection without ending the target and keep the record as it is, for the relay
    that carries the session on next. A keeper-backed target stays as it is (a paused one paused);
    without a keeper the relay says ``disconnect`` (debugpy resumes it and clears its breakpoints).

    Returns whether a live connection to debugpy itself was dropped (the next client must then wait
    a moment; a keeper takes the next relay at once).
    """
    try:
        await asyncio.wait_for(session.lock.acquire(), 5)
        locked = True
    except TimeoutError:
        locked = False  # a command hangs on the target: detach anyway
    try:
        kept = session.target is not None and session.target.keeper_secret is not None
        live = await session.drop_connection(disconnect=not kept, final=True) and not kept
        await session.ports.close()  # the next relay publishes them again
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
