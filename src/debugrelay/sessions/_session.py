"""One debug session: its record, its target and the one DAP connection that drives it.

Commands are serialized by a lock; events arrive from the DAP client's reader task. The record is
saved to the state store on every change that matters, so another relay can carry the session on.

The session keeps the state and the connection; what each part of its work does lives in a module of its
own that takes the session: ``_launch`` (launch / attach), ``_stops`` (events and how a stop is shown),
``_execution`` (continue, steps, pause, terminate) and ``_reads`` (the current stop's frames and probes).
"""

from __future__ import annotations

import asyncio
import contextlib
import posixpath
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from debugrelay.config import Settings
from debugrelay.dap import Channel, DapClient, StackFrame
from debugrelay.errors import InvalidState, NotPaused, RelayError
from debugrelay.launchers import Launcher, Target
from debugrelay.launchers.policy import LaunchPolicy, under
from debugrelay.metrics import Metrics
from debugrelay.models import AttachSpec, LaunchRequest, SessionRecord, Stop
from debugrelay.store import StateStore
from debugrelay.trust import RelayKeys

from . import _execution, _launch, _reads, _stops
from . import _seals as seals
from . import breakpoints as bps
from ._calls import CallBook
from ._execution import STEP_COMMANDS
from ._feed import ChangeFeed
from ._files import SourceRoots, roots_for
from ._http import HttpCalls
from ._output import OutputBuffer
from ._ports import PublishedPorts
from ._processes import Processes
from ._reads import unquote_result
from ._stops import ACTIVE, CAPTURE_MARK

__all__ = ["ACTIVE", "CAPTURE_MARK", "STEP_COMMANDS", "RefMeta", "Session", "StopHook", "unquote_result"]


@dataclass(frozen=True)
class RefMeta:
    """What the relay knows about a variables reference: its frame, expression and ancestors."""

    frame_id: int
    evaluate_name: str | None
    chain: tuple[int, ...]
    obj_id: int | None = None
    length: int | None = None
    kind: str | None = None


StopHook = Callable[["Session", Stop, list[StackFrame]], Awaitable[None]]


class Session:
    """A live session. Create through :class:`SessionManager`."""

    def __init__(
        self,
        record: SessionRecord,
        *,
        store: StateStore,
        settings: Settings,
        launchers: dict[str, Launcher],
        on_stop: StopHook | None = None,
        keys: RelayKeys | None = None,
    ) -> None:
        self.record = record
        self.said: dict[str, str] = {}  # what this relay's answers about the session said once (not stored)
        self.keys = keys or RelayKeys.ephemeral()  # seals what a later relay acts on (see _seals)
        self.on_stop = on_stop
        self.store = store
        self.settings = settings
        self.launchers = launchers
        self._policy: LaunchPolicy | None = None  # the operator's roots, read once
        self.client: DapClient | None = None
        self.target: Target | None = None
        # targets started (or attached) for this session: a connection speaks for its own start's target only
        self.starts = 0
        self.start_task: asyncio.Task[None] | None = None  # a launch's start, going on after its answer
        self.waiting_for = ""  # what the start under way waits for (said as ``starting`` once answered)
        self.debugger_starting = asyncio.Event()  # this start reached the target: its debugger is starting
        self.lock = asyncio.Lock()
        self.answering = asyncio.Lock()  # one answer at a time takes the run's new output
        self._changed = asyncio.Event()
        self._run_epoch = 0
        self._frames: dict[int, list[StackFrame]] = {}
        self._totals: dict[int, int] = {}
        self._refs: dict[int, RefMeta] = {}
        self._threads: dict[int, str] = {}
        self._shown_threads: dict[int, str] | None = None  # the threads the last stop listed
        self._tops: dict[int, tuple[str, str, int]] = {}  # thread -> (function, file name, depth) at its last stop
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reads: dict[tuple[Any, ...], asyncio.Future[Any]] = {}  # read-only DAP answers of this stop
        self._snapshot: asyncio.Task[Any] | None = None  # the stop's locals being kept for /changes
        self._ending = False
        self.output = OutputBuffer(record.id, store, settings.output_entry_max_chars)
        self.feed: ChangeFeed | None = None  # the manager's: live views sleep on it
        self.metrics: Metrics | None = None  # the manager's: what /metrics counts
        self.launched_at: float | None = None  # this run's launch, until its first stop (or end) is counted
        self.output.on_written = self.announce
        self.breakpoint_state = bps.BreakpointState()
        self.probe_available = True
        self.processes = Processes(record)
        self.ports = PublishedPorts()  # a container target's service ports, forwarded from this machine
        self.http = HttpCalls()  # requests the relay sent to the program (a service) for the agent
        self.calls = CallBook(record, store)  # the calls of the session's traced functions
        # told of each DAP event first; one answering True takes it (a brief pause, a capture point's row)
        self.event_filters: list[Callable[[str, Any], bool]] = []

    # -- small helpers ---------------------------------------------------------------------

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def status(self) -> str:
        return self.record.status

    def touch(self) -> None:
        self.record.last_activity = time.time()

    async def save(self) -> None:
        self.seal()
        await self.store.save_session(self.record)

    def seal(self) -> None:
        """Seal the code the record makes a target run (watches, breakpoints' conditions and log messages)."""
        seals.seal_code(self.keys, self.record)

    def describe_target(self, target: Target) -> None:
        """Keep what finds ``target`` again in the record, sealed: a later relay acts on nothing else."""
        seals.set_target(self.keys, self.record, target.describe())

    def keep_secret(self, target: Target) -> None:
        """Keep ``target``'s keeper secret in the record, encrypted: a reader of the store cannot use it."""
        secret = target.keeper_secret
        self.record.keeper_secret = self.keys.hide(self.id, secret) if secret else None

    def notify(self) -> None:
        """Wake whoever waits for this session to change (a stop, an end)."""
        event, self._changed = self._changed, asyncio.Event()
        event.set()
        self.announce()

    def announce(self) -> None:
        """Tell live views (``/ui``) the session changed, without waking its waiters (output, a call)."""
        if self.feed is not None:
            self.feed.bump(self.id)

    def spawn(self, coro: Any) -> None:
        """Run ``coro`` as a task of this session: cancelled when its connection goes."""
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @property
    def channel(self) -> Channel | None:
        """The live connection to the process the current stop is in (the root when none is), or None."""
        if self.client is None or self.client.closed.is_set():
            return None
        return Channel(self.client, self.processes.focus)

    def require_client(self) -> Channel:
        """The connection to the process the current stop is in (the root when none is), or InvalidState."""
        if self.client is None or self.client.closed.is_set():
            details: dict[str, Any] = {"status": self.status}
            if self.client is not None and self.client.close_reason:
                details["connection"] = self.client.close_reason  # why the debug connection ended
            raise InvalidState(
                f"session is {self.status}: there is no running target",
                details=details,
                hint="Launch the target first."
                if self.status in ("created", "terminated")
                else "The debug connection to the target ended; the session's status says what became of it.",
            )
        return Channel(self.client, self.processes.focus)

    async def read(
        self, command: str, args: dict[str, Any], seconds: float | None = None, *, stable: bool = False
    ) -> Any:
        """A read-only DAP request (scopes, variables, stackTrace, a probe read), asked once per stop.

        Answers are kept until the target resumes, or until an evaluation may have changed what they
        show unless ``stable`` (a frame's scopes and parameters: no evaluation changes them); callers
        asking the same while it is in flight share the one request.
        """
        client = self.require_client()
        key = (self._run_epoch, stable, command, *sorted(args.items()))
        fut = self._reads.get(key)
        if fut is None:
            fut = asyncio.ensure_future(client.request(command, args, timeout=seconds))
            self._reads[key] = fut

            def forget_failure(done: asyncio.Future[Any]) -> None:
                if (done.cancelled() or done.exception() is not None) and self._reads.get(key) is done:
                    del self._reads[key]

            fut.add_done_callback(forget_failure)
        return await asyncio.shield(fut)

    async def drop_connection(self, *, disconnect: bool, final: bool = False) -> bool:
        """Close the DAP connection without ending the session or the target; with ``disconnect`` tell
        debugpy first (it then resumes the debuggee); ``final``: this relay lets the session go, nothing
        that arrives later may change it. Returns whether the connection was live."""
        self._ending = True  # the connection's '_closed' event must not end the session
        client, self.client = self.client, None
        live = client is not None and not client.closed.is_set()
        if client is not None:
            if live and disconnect:
                with contextlib.suppress(RelayError):
                    await client.request("disconnect", {"terminateDebuggee": False, "restart": False}, timeout=2.0)
            await client.close()
        for task in list(self._tasks):  # what that connection's events started
            task.cancel()
        self._ending = final
        return live

    def ref_meta(self, ref: int) -> RefMeta | None:
        """What the relay knows of a variables reference of this stop."""
        return self._refs.get(ref)

    def remember_ref(self, ref: int, meta: RefMeta) -> None:
        self._refs[ref] = meta

    def require_paused(self) -> Channel:
        client = self.require_client()
        if self.status != "paused" or self.record.stop is None:
            raise NotPaused(f"the target is {self.status}, not paused", details={"status": self.status})
        return client

    @property
    def policy(self) -> LaunchPolicy:
        if self._policy is None:
            self._policy = LaunchPolicy.from_settings(self.settings)
        return self._policy

    def source_roots(self, launch: LaunchRequest | None = None) -> SourceRoots:
        """The folders this session's files are read from on the relay's disk (see ``_files``);
        ``launch``: a launch about to start, instead of the recorded one."""
        return roots_for(self.settings, launch or self.record.launch, self.policy)

    def target_may_read(self, path: str) -> bool:
        """Whether ``path`` (as the user sees it) may be read on the target's side: a file of the current
        stop's frames, the script, or under the working folder or the operator's roots. Nothing is
        resolved on the relay's disk: the file is the target's."""
        if not posixpath.isabs(path):
            return False
        clean = posixpath.normpath(path)
        if clean in self.stop_files():
            return True
        launch = self.record.launch
        folders: list[str] = [*self.policy.roots, *self.policy.source_roots]
        if launch is not None:
            if launch.script and posixpath.normpath(launch.script) == clean:
                return True
            if launch.cwd:
                folders.append(posixpath.normpath(launch.cwd))
        return any(under(clean, folder) for folder in folders)

    def to_local(self, path: str | None) -> str | None:
        if path is None or self.target is None:
            return path
        return self.target.to_local_path(path)

    # -- launch / attach -------------------------------------------------------------------

    async def launch(self, spec: LaunchRequest) -> None:
        """Start the target and attach to it; breakpoints are in place before its first line runs."""
        await _launch.launch(self, spec)

    async def attach(self, spec: AttachSpec) -> None:
        """Attach to a debugpy someone else started (``--listen host:port``)."""
        await _launch.attach(self, spec)

    async def connect(
        self, target: Target, timeout: float, *, single_try: bool = False, starting: float | None = None
    ) -> None:
        """Connect to the target's debugpy and ``initialize``, retrying until it answers.

        A bare connect-and-close probe kills a debuggee waiting for its client, so readiness is
        the DAP handshake itself. A published container port accepts (Docker's proxy) before
        debugpy listens and then closes: that is retried too, it never reached debugpy.
        """
        await _launch.connect(self, target, timeout, single_try=single_try, starting=starting)

    async def rejoin(self, target: Target, timeout: float) -> dict[str, Any]:
        """Connect to a keeper-backed target's keeper again and return its state.

        The events the keeper kept while no relay was connected follow its state, in order: the
        listener is in place before they are read.
        """
        return await _launch.rejoin(self, target, timeout)

    def replay_stop(self, body: dict[str, Any], known: Stop | None) -> None:
        """Show a stop the target is still in (it happened while the last relay was attached);
        ``known`` is that stop as recorded then, kept as it was when it is the same place."""
        _launch.replay_stop(self, body, known)

    async def finish_configure(self) -> None:
        """What follows ``attach`` when the last relay went away before ``configurationDone``."""
        await _launch.finish_configure(self)

    async def configure(self, attach_args: dict[str, Any]) -> None:
        """attach, breakpoints, exception filters, configurationDone: the target runs after this."""
        await _launch.configure(self, attach_args)

    async def apply_exception_filters(self) -> None:
        """Send the exception filters to debugpy (the rules live with the breakpoints)."""
        await _launch.apply_exception_filters(self)

    def reset_run_state(self) -> None:
        """Forget what belonged to the last run: cached reads, frames, references, threads."""
        self._reads.clear()
        self._frames.clear()
        self._totals.clear()
        self._refs.clear()
        self._threads.clear()
        self._shown_threads = None
        self._tops.clear()
        self._ending = False
        self._run_epoch += 1

    # -- events ----------------------------------------------------------------------------

    async def show_process(self, pid: int) -> None:
        """Show the stop of another paused process: stack, variables, evaluate, steps and continue apply to
        it. The stop shown until now waits its turn and is shown again as it was (not a new stop)."""
        await _stops.show_process(self, pid)

    # -- execution control -----------------------------------------------------------------

    async def resume(
        self, command: str, thread_id: int | None = None, wait: float | None = None, *, every: bool = False
    ) -> None:
        """continue / step-over / step-into / step-out of the process that stopped; steps wait for the next
        stop. ``every``: a continue resumes every paused process of the program."""
        await _execution.resume(self, command, thread_id, wait, every=every)

    async def pause(self, wait: float = 2.0) -> None:
        await _execution.pause(self, wait)

    async def wait_for_stop(self, seen: int, timeout: float) -> bool:
        """Wait until a stop newer than ``seen`` is recorded or the session ends; False on timeout."""
        return await _execution.wait_for_stop(self, seen, timeout)

    async def wait(self, timeout: float) -> bool:
        """Long-poll until the session is paused or ended; True unless the timeout passed first."""
        return await _execution.wait(self, timeout)

    async def terminate(self, reason: str = "terminated") -> None:
        """Kill the target (its whole process tree or container); the session stays, terminated."""
        await _execution.terminate(self, reason)

    async def detach(self) -> None:
        """Disconnect and leave the target running (its breakpoints are cleared by debugpy)."""
        await _execution.detach(self)

    async def restart(self) -> None:
        """Start the same launch again, with the same breakpoints."""
        await _execution.restart(self)

    async def close(self) -> None:
        """End the target and drop the connection (session deletion, relay shutdown)."""
        await _execution.close(self)
        self.http.cancel()

    async def send_input(self, text: str) -> None:
        await _execution.send_input(self, text)

    # -- inspection ------------------------------------------------------------------------

    def remember_threads(self, names: dict[int, str]) -> None:
        """Thread names as the target listed them (a stop names its threads)."""
        self._threads.update(names)

    async def frames(self, thread_id: int | None = None, levels: int = 0) -> tuple[int, list[StackFrame], int]:
        """(thread_id, DAP frames, total) for a paused thread, fetched once per stop."""
        return await _reads.frames(self, thread_id, levels)

    async def frame_id(self, index: int, thread_id: int | None = None) -> int:
        """DAP frame id of frame ``index`` (0 = top) of a paused thread."""
        return await _reads.frame_id(self, index, thread_id)

    def stop_files(self) -> set[str]:
        """The files of the frames read at the current stop, as the user sees them."""
        return _reads.stop_files(self)

    def invalidate_reads(self) -> None:
        """An evaluation or a change of a variable may change what this stop's reads show: ask again
        (a frame's scopes and parameters stay)."""
        for key in [k for k in self._reads if not k[1]]:
            del self._reads[key]

    async def probe(self, frame_id: int, expression: str) -> str | None:
        """Evaluate a read-only helper in the target; None when the helper is not there."""
        return await _reads.probe(self, frame_id, expression)
