"""Starting a session's target: launch through a launcher or attach to a debugpy someone else started, connect
(or reconnect to a keeper) and configure, so breakpoints are in place before the first line runs."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import msgspec

from debugrelay.dap import (
    ATTACH_ARGS,
    INITIALIZE_ARGS,
    DapClient,
    StoppedEvent,
    as_body,
    attach_args,
    let_go,
    tell_orphan_after,
)
from debugrelay.errors import (
    DebugpyError,
    DebugpyTimeout,
    InvalidRequest,
    InvalidState,
    LaunchFailed,
    RelayError,
    StoreUnavailable,
    TargetGone,
)
from debugrelay.launchers import Launcher, Target
from debugrelay.launchers.policy import KNOWN_LAUNCHERS, refused_launcher
from debugrelay.launchers.pool import shielded_start
from debugrelay.models import (
    AttachSpec,
    BreakpointRecord,
    ErrorBody,
    ExceptionFilters,
    LaunchRequest,
    SessionRecord,
    Stop,
)

from . import _calls as calls
from . import _seals as seals
from . import _stops as stops
from . import _testruns as testruns
from . import breakpoints as bps
from ._stops import ACTIVE

if TYPE_CHECKING:
    from ._session import Session

log = logging.getLogger(__name__)
# a debugpy someone else starts may still be coming up: the keeper holding it tries for 6 s (its
# ATTACH_REACH), then answers why it could not; the relay waits longer, so that answer is what it says
ATTACH_RETRY_SECONDS = 9.0
PROGRESS_CHECK = 0.25  # s between looks at a starting target's process while its debugger starts
PORT_TRIES = 3  # starts of a target whose port was taken between its choice and its bind
PORT_TAKEN = "[Errno 98] Address already in use"
_VERSION = re.compile(r"\d{1,2}\.\d{1,3}")  # a keeper's python: major.minor


async def launch(session: Session, spec: LaunchRequest) -> None:
    """Start the target and attach to it; breakpoints are in place before its first line runs."""
    await session.lock.acquire()
    try:
        spec, launcher, script = await _prepared(session, spec)
    except BaseException:
        session.lock.release()
        raise
    await answered(session, start(session, launcher, spec, script))


async def _prepared(session: Session, spec: LaunchRequest) -> tuple[LaunchRequest, Launcher, str | None]:
    """The launch checked and recorded: what runs, by which launcher, and the script as the target sees it."""
    if session.status in ACTIVE:
        raise InvalidState(
            f"session is already {session.status}",
            details={"status": session.status},
            hint="Terminate or restart it first.",
        )
    spec = testruns.narrowed(spec)
    launcher = await launcher_for(session, spec)
    spec, session.record.interpreter = await asyncio.to_thread(launcher.choose_python, spec)
    script = bps.prepare_launch(spec, launcher, session.source_roots)
    session.record.mode = "launch"
    seals.set_launch(session.keys, session.record, spec)
    return spec, launcher, script


async def answered(session: Session, starting: Awaitable[None]) -> None:
    """Run ``starting`` (a start: the caller holds the session's lock, the start lets it go) and return once
    it is done, or once ``launch_timeout`` passed while the target's debugger is still starting: the start
    goes on, the session says ``launching`` and, in ``starting``, what it waits for. A start that cannot
    reach its target fails as it did (its own bound)."""

    async def run() -> None:
        try:
            await starting
        finally:
            session.record.starting = None
            session.lock.release()

    task = asyncio.create_task(run(), name=f"start-{session.id}")
    task.add_done_callback(_seen)
    session.start_task = task
    reached = asyncio.ensure_future(session.debugger_starting.wait())
    try:
        await asyncio.wait({task}, timeout=session.settings.launch_timeout)
        while not task.done() and not reached.done():  # not yet at the target: its own bound applies
            await asyncio.wait({task, reached}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        reached.cancel()
    if task.done():
        task.result()
        return
    session.record.starting = session.waiting_for
    log.info(
        "session %s: still starting after %gs: %s", session.id, session.settings.launch_timeout, session.waiting_for
    )
    with contextlib.suppress(StoreUnavailable):
        await session.save()
    session.announce()


def _seen(task: asyncio.Task[None]) -> None:
    """A start's failure is the session's (its status and error say it): nothing more to report."""
    if not task.cancelled():
        task.exception()


async def stop_starting(session: Session) -> None:
    """End a start still under way (a terminate, a new launch): what it began is then ended as a run is."""
    task = session.start_task
    if task is not None and not task.done():
        task.cancel()
        await asyncio.wait({task})


async def launcher_for(session: Session, spec: LaunchRequest) -> Launcher:
    name = spec.launcher or session.settings.default_launcher
    launcher = session.launchers.get(name)
    if launcher is None and name in KNOWN_LAUNCHERS:
        raise refused_launcher(name, sorted(session.launchers))
    if launcher is None:
        raise InvalidRequest(
            f"launcher '{name}' is not available on this relay",
            details={"launcher": name, "available": sorted(session.launchers)},
            hint="Use one of details.available.",
        )
    # the operator's policy, before the relay reads any file the launch names (off the loop: it may
    # walk the folders a launch mounts)
    await asyncio.to_thread(launcher.admit, spec)
    return launcher


class _WarmTargetLost(LaunchFailed):
    """A target from a warm pool ended before the launch's program started in it: the pool's loss."""


async def start(session: Session, launcher: Launcher, spec: LaunchRequest, script: str | None) -> None:
    """Start the target; again on other ports when a port it was given was taken before it bound it (another
    process on the machine chose the same free port in that moment); cold when the warm target it was
    given ended before the program started (the pool is the relay's business, never the launch's)."""
    captures = _capture_logpoints(session)
    try:
        await _again_if_port_taken(session, "target", lambda again: _start_once(session, launcher, spec, script, again))
    except _WarmTargetLost:
        log.warning("session %s: its warm target ended before the program started: starting a cold one", session.id)
        _give_back(session, captures)
        cold = msgspec.structs.replace(spec, pool=False)
        await _again_if_port_taken(session, "target", lambda again: _start_once(session, launcher, cold, script, again))


def _capture_logpoints(session: Session) -> list[BreakpointRecord]:
    return [b for b in session.record.breakpoints if b.capture is not None]


def _give_back(session: Session, captures: list[BreakpointRecord]) -> None:
    """The capture points' logpoints a start given up took with it (a run's end ends them): the start that
    follows is the same run, so they are the session's again."""
    there = {b.id for b in session.record.breakpoints}
    session.record.breakpoints.extend(b for b in captures if b.id not in there)


def _warm_target_ended(session: Session, target: Target | None) -> bool:
    """``target`` came from a warm pool and has ended, or its debug connection has."""
    if target is None or not getattr(session.record.target, "pooled", None):  # as the launch described it
        return False
    return target.poll() is not None or session.client is None or session.client.closed.is_set()


async def _again_if_port_taken(session: Session, what: str, once: Callable[[bool], Awaitable[None]]) -> None:
    """``once``, again (at most :data:`PORT_TRIES` times) while it fails because a port its process was
    given was taken between the relay's choice and the process's bind; told whether it is such a retry."""
    captures = _capture_logpoints(session)
    for attempt in range(PORT_TRIES):
        try:
            await once(attempt > 0)
        except LaunchFailed as exc:
            if attempt + 1 == PORT_TRIES or PORT_TAKEN not in str(exc.details.get("output_tail", "")):
                raise
            log.info("session %s: a port of the %s was taken before it bound it: starting it again", session.id, what)
            _give_back(session, captures)
        else:
            return


async def _new_run(session: Session) -> None:
    """The session's state made ready for a new run of its program (the last run's forgotten), saved."""
    session.starts += 1
    session.reset_run_state()
    session.launched_at = time.monotonic()  # the first stop (or end) says how long the program took to reach it
    session.record.python = None  # this run's keeper says its own
    with contextlib.suppress(StoreUnavailable):  # Redis down: the launch goes on (the last run may be said again)
        await session.output.flush()  # what the last run printed was not this run's: no answer carries it
        session.record.output_answered = (await session.store.read_output(session.id, None, 1, newest=True)).cursor
    session.output.seen = 0  # the new target's keeper numbers its output from 1 again: none of it is a repeat
    session.processes.reset()
    session.calls.reset()  # the last run's calls are not this run's
    bps.reset_run(session.record)
    session.record.status = "launching"
    session.record.starting = None
    session.debugger_starting.clear()
    session.waiting_for = "the target's process to start"
    session.record.exit_code = None
    session.record.reason = None
    session.record.error = None
    session.record.stop = None
    session.record.published = []
    await session.save()


async def _start_once(
    session: Session, launcher: Launcher, spec: LaunchRequest, script: str | None, again: bool = False
) -> None:
    await _new_run(session)
    target: Target | None = None
    configured = False
    try:
        target = await shielded_start(
            launcher.start(
                calls.for_target(testruns.for_target(spec), session.record.traces), session_id=session.id, again=again
            ),
            _end,
        )
        session.target = target
        session.describe_target(target)
        session.keep_secret(target)
        entry = bps.entry_breakpoint(session.record, spec, script) if spec.stop_on_entry else None
        session.record.exception_filters = run_exception_filters(session.record, spec)
        await session.connect(target, session.settings.launch_timeout, starting=session.settings.start_timeout)
        await session.configure(
            attach_args(target.path_mappings(), just_my_code=spec.just_my_code, sub_process=spec.debug_subprocesses)
        )
        configured = True  # the program runs from here: nothing of it may be run again
        if entry is not None:
            log.debug("session %s: entry breakpoint at %s:%s", session.id, entry.file, entry.line)
        for line in spec.stdin_inputs:
            await target.send_input((line if line.endswith("\n") else line + "\n").encode())
    except RelayError as exc:
        counted(session, launcher.name, "failed")
        lost = not configured and _warm_target_ended(session, target)
        await launch_failed(session, target, exc)
        if lost:
            raise _WarmTargetLost(exc.message, details=exc.details) from exc
        raise
    except Exception as exc:
        log.exception("session %s: launch failed", session.id)
        counted(session, launcher.name, "failed")
        err = LaunchFailed(f"launch failed: {exc}")
        await launch_failed(session, target, err)
        raise err from exc
    counted(session, launcher.name, "started")
    if session.status in ACTIVE:
        session.record.published = await session.ports.open(session, spec.ports, [])
    if session.record.status == "launching":
        session.record.status = "running"
    await session.save()
    session.notify()


def run_exception_filters(record: SessionRecord, spec: LaunchRequest) -> ExceptionFilters:
    """The exception breakpoints a run starts with: the launch's ``stop_on_exception`` when it gives one,
    else those the agent set on the session, else the documented default (a test run stops on uncaught)."""
    if spec.stop_on_exception is None and record.exception_setting is not None:
        return record.exception_setting
    return ExceptionFilters(filters=testruns.exception_filters(spec))


async def _end(target: Target) -> None:
    """A target whose start was given up as it came up (a terminate while launching)."""
    with contextlib.suppress(Exception):
        await target.terminate()


def counted(session: Session, launcher: str, outcome: str) -> None:
    if session.metrics is not None:
        session.metrics.launches.labels(launcher, outcome).inc()
    if outcome == "failed":
        session.launched_at = None


async def launch_failed(session: Session, target: Target | None, exc: RelayError) -> None:
    await session.ports.close()
    session.record.published = []
    tail = target.output_tail() if target is not None else ""
    if tail:
        exc.details.setdefault("output_tail", tail[-2000:])
    if session.client is not None:
        await session.client.close()
        session.client = None
    if target is not None:
        with contextlib.suppress(Exception):
            await target.terminate()
    session.target = None
    session.record.status = "failed"
    session.record.error = ErrorBody(**exc.to_dict())
    session.record.breakpoints = [b for b in session.record.breakpoints if not b.internal]
    bps.drop_captures(session.record)
    await session.save()
    session.notify()


async def attach(session: Session, spec: AttachSpec) -> None:
    """Attach to a debugpy someone else started (``--listen host:port``)."""
    async with session.lock:
        if session.status in ACTIVE:
            raise InvalidState(f"session is already {session.status}", details={"status": session.status})
        if spec.pod is None and spec.port is None and spec.pid is not None and "local" not in session.launchers:
            # attaching by PID injects code into a process beside the relay: a local capability
            raise refused_launcher("local", sorted(session.launchers))
        from debugrelay.launchers.attach_policy import check_attach_host, check_attach_pid

        kubernetes = session.launchers.get("kubernetes")
        address: str | None = None  # the checked address: connected to, never the name again
        if spec.pod is not None:
            # a pod of the relay's namespace, found through the API: its IP is the cluster's, not a host to scan
            if kubernetes is None or not kubernetes.attaches_pods:
                raise refused_launcher("kubernetes", sorted(session.launchers))
        elif spec.port is not None:
            address = await asyncio.to_thread(check_attach_host, session.settings, spec.host)
        elif spec.pid is not None:
            await asyncio.to_thread(check_attach_pid, session.settings, spec.pid)  # reads /proc
        session.record.mode = "attach"
        session.record.attach = spec
        # the keeper beside the relay binds a port of the relay's choice, as a launched target does
        await _again_if_port_taken(
            session, "attach keeper", lambda _again: _attach_once(session, spec, kubernetes, address)
        )


async def _attach_once(session: Session, spec: AttachSpec, kubernetes: Launcher | None, address: str | None) -> None:
    from debugrelay.launchers.remote import RemoteTarget

    session.starts += 1
    session.reset_run_state()
    session.processes.reset()
    session.record.status = "launching"
    await session.save()
    try:
        if spec.pod is not None and kubernetes is not None:
            target = await kubernetes.attach_target(spec)
        else:
            target = await RemoteTarget.resolve(spec, address)
            target = await held(session, target)
    except RelayError as exc:
        await launch_failed(session, None, exc)
        raise
    try:
        session.target = target
        session.describe_target(target)
        session.keep_secret(target)
        try:
            await session.connect(target, ATTACH_RETRY_SECONDS)
        except DebugpyError as exc:  # the keeper beside the relay could not reach debugpy there
            raise LaunchFailed(
                exc.message,
                details={"host": spec.host, "port": spec.port},
                hint="Is debugpy listening there (python -m debugpy --listen ...)? "
                "Only one client can be attached at a time.",
            ) from exc
        await session.configure(attached_args(target))
    except RelayError as exc:
        await launch_failed(session, target, exc)  # a keeper holding it ends; the program runs on
        raise
    if session.record.status == "launching":
        session.record.status = "running"
    await session.save()
    session.notify()


def attached_args(target: Target) -> dict[str, Any]:
    return {**ATTACH_ARGS, "justMyCode": False, "pathMappings": target.path_mappings()}


async def held(session: Session, target: Target) -> Target:
    """``target`` held by a keeper beside the relay when a launcher keeps one (the local launcher's): the
    attached program then survives the relay as a launched one does. Without one, the relay holds it."""
    for launcher in session.launchers.values():
        keeper = await launcher.hold(target, attached_args(target), session_id=session.id)
        if keeper is not None:
            return keeper
    return target


async def connect(
    session: Session, target: Target, timeout: float, *, single_try: bool = False, starting: float | None = None
) -> None:
    """Connect to the target's debugpy and ``initialize``, retrying until it answers.

    A bare connect-and-close probe kills a debuggee waiting for its client, so readiness is
    the DAP handshake itself. A published container port accepts (Docker's proxy) before
    debugpy listens and then closes: that is retried too, it never reached debugpy. Reaching the
    target's keeper takes up to ``timeout`` s; once reached, its debugger is starting: waited for while
    the target's process lives, up to ``starting`` s from then (default ``timeout``).
    """
    warm = target.take_connection()  # a pooled target comes with its connection up and initialized
    if warm is not None and not warm.closed.is_set():
        warm.request_timeout, warm.name = session.settings.request_timeout, f"dap-{session.id}"
        listen(session, warm, target)
        target.on_attached()
        return
    deadline = time.monotonic() + timeout
    delay = 0.005
    waiting(session, "the target's process to listen for the relay")
    while True:
        gone(target)
        client: DapClient | None = None
        try:
            client = await DapClient.connect(
                target.host,
                target.port,
                timeout=2.0,
                request_timeout=session.settings.request_timeout,
                name=f"dap-{session.id}",
                secret=target.keeper_secret,
                stored_output=session.output.seen,
            )
            if not (client.keeper or {}).get("initialized"):
                if client.keeper is not None and starting is not None:  # the keeper answered: its program lives
                    deadline = max(deadline, time.monotonic() + starting)
                    session.debugger_starting.set()
                waiting(session, "the program's debugger (debugpy) to start and answer 'initialize'")
                if client.keeper is None:  # no keeper of ours: a debugpy (or whatever listens) answers at once
                    await client.request("initialize", INITIALIZE_ARGS, timeout=max(deadline - time.monotonic(), 1.0))
                else:
                    await until_answered(session, target, client, "initialize", args=INITIALIZE_ARGS, deadline=deadline)
            break
        except (OSError, TimeoutError, TargetGone) as exc:
            # our keeper answered, then the other end hung up on 'initialize': no debugger there, no retry
            refused = client is not None and client.keeper is not None and isinstance(exc, TargetGone)
            if client is not None:
                await client.close()
            if single_try or refused or time.monotonic() > deadline:
                raise LaunchFailed(
                    f"cannot reach debugpy at {target.host}:{target.port}: {_why_not(exc)}",
                    details={"host": target.host, "port": target.port},
                    hint="Is debugpy listening there (python -m debugpy --listen ...)? "
                    "Only one client can be attached at a time.",
                ) from exc
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, 0.05)
    listen(session, client, target)
    target.on_attached()


def waiting(session: Session, what: str) -> None:
    """What the start waits for now; a launch that answered before the start ended says it (``starting``)."""
    session.waiting_for = what
    if session.record.starting is not None:
        session.record.starting = what
        session.announce()


def gone(target: Target) -> None:
    """LaunchFailed when the target's process has ended (the cause is in what it printed: the output tail)."""
    code = target.poll()
    if code is not None:
        raise LaunchFailed(
            f"the target exited with code {code} before debugpy was ready",
            details={"exit_code": code},
        )


async def until_answered(
    session: Session, target: Target, client: DapClient, command: str, *, args: dict[str, Any], deadline: float
) -> Any:
    """``command``'s answer, waited for while the target's process lives (its debugger is starting, however
    slowly a loaded machine makes it), up to ``deadline``; then a timeout that says what it waited for."""
    fut = client.send(command, args)
    let_go(fut)  # a target gone, a deadline passed: no one awaits it then
    while not fut.done():
        gone(target)
        left = deadline - time.monotonic()
        if left <= 0:
            raise DebugpyTimeout(
                f"the target's debugger did not start in time: still waiting for {session.waiting_for}",
                details={"operation": command, "waiting_for": session.waiting_for},
                hint="The program runs but its debugger did not answer: is the machine overloaded, or does "
                "the program block at start-up (a sitecustomize, a .pth file)? Retry, or raise "
                "DEBUGRELAY_START_TIMEOUT.",
            )
        await asyncio.wait({fut}, timeout=min(left, PROGRESS_CHECK))
    return await client.result(fut, command, 1.0)


def listen(session: Session, client: DapClient, target: Target) -> None:
    """Take ``client`` as the session's connection: its events (the children's too) come here."""

    start = session.starts

    def heard(event: str, body: Any) -> None:
        # a connection to a start given up and begun again speaks of a target that is no longer the
        # session's: its last events ("terminated") must not end the new one
        if session.starts == start:
            stops.on_event(session, event, body)

    def heard_from(pid: int, event: str, body: Any) -> None:
        if session.starts == start:
            stops.on_process_event(session, pid, event, body)

    client.add_listener(heard)
    client.add_process_listener(heard_from)
    session.client = client
    tell_orphan_after(client, session.record.timeout_minutes)  # a keeper ends the program if no relay comes back
    hello = client.keeper or {}
    pid = hello.get("pid")
    session.processes.root_pid = pid if isinstance(pid, int) else getattr(target, "pid", None)
    said = hello.get("python")
    # a launched program's keeper runs on its interpreter (an attach's runs beside the relay: not said)
    if session.record.mode == "launch" and isinstance(said, str) and _VERSION.fullmatch(said):
        session.record.python = said  # the target's words: only a version is taken


async def rejoin(session: Session, target: Target, timeout: float) -> dict[str, Any]:
    """Connect to a keeper-backed target's keeper again and return its state.

    The events the keeper kept while no relay was connected follow its state, in order: the
    listener is in place before they are read.
    """
    if session.metrics is not None:
        session.metrics.keeper_reconnects.inc()
    try:
        stored: int | None = max(await session.store.output_seq(session.id), session.output.seen)
    except RelayError:
        stored = None  # unknown: the keeper sends nothing twice rather than the risk of doubles
    client = await DapClient.connect(
        target.host,
        target.port,
        timeout=timeout,
        request_timeout=session.settings.request_timeout,
        name=f"dap-{session.id}",
        secret=target.keeper_secret,
        stored_output=stored,
    )
    listen(session, client, target)
    target.on_attached()
    hello = client.keeper or {}
    for pid, stopped in session.processes.merge(hello.get("processes")):
        stops.arrived(session, pid, as_body(stopped, StoppedEvent))  # a child still paused where it was
    dropped, lost = hello.get("dropped_output_chars"), hello.get("lost_output")
    if isinstance(dropped, int) and dropped > 0:  # marked where it happened: before what the keeper kept
        session.output.add("debugger", f"[{dropped} characters of output dropped while no relay was connected]\n")
    if isinstance(lost, int) and lost > 0:
        session.output.add("debugger", f"[{lost} pieces of output lost with the relay that went away]\n")
    return hello


def replay_stop(session: Session, body: dict[str, Any], known: Stop | None) -> None:
    """Show a stop the target is still in (it happened while the last relay was attached);
    ``known`` is that stop as recorded then, kept as it was when it is the same place."""
    stops.arrived(session, None, as_body(body, StoppedEvent), known)


async def finish_configure(session: Session) -> None:
    """What follows ``attach`` when the last relay went away before ``configurationDone``."""
    client = session.require_client()
    await bps.sync_all(session)
    await session.apply_exception_filters()
    await client.request("configurationDone")


async def configure(session: Session, attach_args: dict[str, Any]) -> None:
    """attach, breakpoints, exception filters, configurationDone: the target runs after this."""
    session.require_client()
    client = session.client
    assert client is not None
    initialized = client.expect_event("initialized")
    attach = client.send("attach", attach_args)
    try:
        await _configured(session, client, initialized, attach)
    finally:
        let_go(initialized, attach)  # a start that failed first leaves them unanswered or failed: settled


async def _configured(
    session: Session, client: DapClient, initialized: asyncio.Future[Any], attach: asyncio.Future[Any]
) -> None:
    waiting(session, "the program's debugger (debugpy) to say 'initialized'")
    # a refused attach ("already being debugged": one client at a time) answers at once; a debugger still
    # starting is waited for while its process lives
    starting = session.debugger_starting.is_set()
    deadline = time.monotonic() + (session.settings.start_timeout if starting else session.settings.launch_timeout)
    while not (initialized.done() or attach.done()):
        if session.target is not None:
            gone(session.target)
        left = deadline - time.monotonic()
        if left <= 0:
            break
        await asyncio.wait(
            {initialized, attach}, timeout=min(left, PROGRESS_CHECK), return_when=asyncio.FIRST_COMPLETED
        )
    if not initialized.done():
        with contextlib.suppress(TargetGone):
            if attach.done():
                await client.result(attach, "attach", 0.1)
        raise DebugpyTimeout(
            "the target's debugger did not say 'initialized' in time",
            details={"operation": "attach", "waiting_for": session.waiting_for},
        )
    await bps.sync_all(session)
    await session.apply_exception_filters()
    await client.request("configurationDone")
    await client.result(attach, "attach", session.settings.launch_timeout)


async def apply_exception_filters(session: Session) -> None:
    """Send the exception filters to debugpy (the rules live with the breakpoints)."""
    session.require_client()
    await bps.apply_exception_filters(session)


def _why_not(exc: BaseException) -> str:
    """Why a debugger connection failed, in words: never the bytes a peer sent (it may be any server)."""
    if isinstance(exc, TargetGone):
        return "not a DAP server there (it closed the connection or answered something else)"
    if isinstance(exc, TimeoutError):
        return "no answer in time"
    return f"cannot connect ({getattr(exc, 'strerror', None) or exc.__class__.__name__})"
