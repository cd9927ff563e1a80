"""One debug session: its record, its target and the one DAP connection that drives it.

Commands are serialized by a lock; events arrive from the DAP client's reader task. The record is
saved to the state store on every change that matters, so another relay can carry the session on.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import msgspec

from debugrelay.config import Settings
from debugrelay.dap import (
    ATTACH_ARGS,
    INITIALIZE_ARGS,
    DapClient,
    ExitedEvent,
    OutputEvent,
    StackFrame,
    StackTraceBody,
    StoppedEvent,
    ThreadEvent,
    ThreadsBody,
    as_body,
    attach_args,
    plain_exception_type,
)
from debugrelay.errors import (
    DebugpyError,
    DebugpyTimeout,
    InvalidReference,
    InvalidRequest,
    InvalidState,
    LaunchFailed,
    NotPaused,
    RelayError,
    TargetGone,
    ThreadNotFound,
)
from debugrelay.launchers import Launcher, Target
from debugrelay.launchers.policy import KNOWN_LAUNCHERS, refused_launcher
from debugrelay.models import (
    AttachSpec,
    ExceptionFilters,
    ExceptionInfo,
    LaunchRequest,
    Location,
    SessionRecord,
    Stop,
    StoppedThread,
)
from debugrelay.store import StateStore

from . import _testruns as testruns
from . import breakpoints as bps
from ._feed import ChangeFeed
from ._output import OutputBuffer

log = logging.getLogger(__name__)
CAPTURE_MARK = "[debugrelay-capture:"  # the lines of capture points (debugrelay.evidence)
STOP_HOOK_WAIT = 10.0  # s a terminate waits for the stop hook (a post-mortem snapshot) to finish

ACTIVE = ("launching", "running", "paused")
STEP_COMMANDS = {"step-over": "next", "step-into": "stepIn", "step-out": "stepOut", "continue": "continue"}

ATTACH_RETRY_SECONDS = 5.0  # a debugpy someone else starts may still be coming up


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
    ) -> None:
        self.record = record
        self.on_stop = on_stop
        self.store = store
        self.settings = settings
        self.launchers = launchers
        self.client: DapClient | None = None
        self.target: Target | None = None
        self.lock = asyncio.Lock()
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
        self.output.on_written = self.announce
        self.breakpoint_state = bps.BreakpointState()
        self.probe_available = True
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
        await self.store.save_session(self.record)

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

    def require_client(self) -> DapClient:
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
        return self.client

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

    def require_paused(self) -> DapClient:
        client = self.require_client()
        if self.status != "paused" or self.record.stop is None:
            raise NotPaused(f"the target is {self.status}, not paused", details={"status": self.status})
        return client

    def to_local(self, path: str | None) -> str | None:
        if path is None or self.target is None:
            return path
        return self.target.to_local_path(path)

    # -- launch / attach -------------------------------------------------------------------

    async def launch(self, spec: LaunchRequest) -> None:
        """Start the target and attach to it; breakpoints are in place before its first line runs."""
        async with self.lock:
            if self.status in ACTIVE:
                raise InvalidState(
                    f"session is already {self.status}",
                    details={"status": self.status},
                    hint="Terminate or restart it first.",
                )
            spec = testruns.narrowed(spec)
            launcher = self._launcher_for(spec)
            script = bps.prepare_launch(spec, launcher.name)
            self.record.mode = "launch"
            self.record.launch = spec
            await self._start(launcher, spec, script)

    def _launcher_for(self, spec: LaunchRequest) -> Launcher:
        name = spec.launcher or self.settings.default_launcher
        launcher = self.launchers.get(name)
        if launcher is None and name in KNOWN_LAUNCHERS:
            raise refused_launcher(name, sorted(self.launchers))
        if launcher is None:
            raise InvalidRequest(
                f"launcher '{name}' is not available on this relay",
                details={"launcher": name, "available": sorted(self.launchers)},
                hint="Use one of details.available.",
            )
        launcher.admit(spec)  # the operator's policy, before the relay reads any file the launch names
        return launcher

    async def _start(self, launcher: Launcher, spec: LaunchRequest, script: str | None) -> None:
        self.reset_run_state()
        bps.reset_run(self.record)
        self.record.status = "launching"
        self.record.exit_code = None
        self.record.reason = None
        self.record.error = None
        self.record.stop = None
        await self.save()
        target: Target | None = None
        try:
            target = await launcher.start(testruns.for_target(spec), session_id=self.id)
            self.target = target
            self.record.target = target.describe()
            self.record.keeper_secret = target.keeper_secret
            entry = bps.entry_breakpoint(self.record, spec, script) if spec.stop_on_entry else None
            filters = self.record.exception_filters or ExceptionFilters(filters=testruns.exception_filters(spec))
            self.record.exception_filters = filters
            await self.connect(target, self.settings.launch_timeout)
            await self.configure(
                attach_args(target.path_mappings(), just_my_code=spec.just_my_code, sub_process=spec.debug_subprocesses)
            )
            if entry is not None:
                log.debug("session %s: entry breakpoint at %s:%s", self.id, entry.file, entry.line)
            for line in spec.stdin_inputs:
                await target.send_input((line if line.endswith("\n") else line + "\n").encode())
        except RelayError as exc:
            await self._launch_failed(target, exc)
            raise
        except Exception as exc:
            log.exception("session %s: launch failed", self.id)
            err = LaunchFailed(f"launch failed: {exc}")
            await self._launch_failed(target, err)
            raise err from exc
        if self.record.status == "launching":
            self.record.status = "running"
        await self.save()
        self.notify()

    async def _launch_failed(self, target: Target | None, exc: RelayError) -> None:
        tail = target.output_tail() if target is not None else ""
        if tail:
            exc.details.setdefault("output_tail", tail[-2000:])
        if self.client is not None:
            await self.client.close()
            self.client = None
        if target is not None:
            with contextlib.suppress(Exception):
                await target.terminate()
        self.target = None
        self.record.status = "failed"
        self.record.error = exc.to_dict()
        self.record.breakpoints = [b for b in self.record.breakpoints if not b.internal]
        await self.save()
        self.notify()

    async def attach(self, spec: AttachSpec) -> None:
        """Attach to a debugpy someone else started (``--listen host:port``)."""
        from debugrelay.launchers.remote import RemoteTarget

        async with self.lock:
            if self.status in ACTIVE:
                raise InvalidState(f"session is already {self.status}", details={"status": self.status})
            if spec.pod is None and spec.port is None and spec.pid is not None and "local" not in self.launchers:
                # attaching by PID injects code into a process beside the relay: a local capability
                raise refused_launcher("local", sorted(self.launchers))
            from debugrelay.launchers.attach_policy import check_attach_host, check_attach_pid

            kubernetes = self.launchers.get("kubernetes")
            if spec.pod is not None:
                # a pod of the relay's namespace, found through the API: its IP is the cluster's, not a host to scan
                if kubernetes is None or not hasattr(kubernetes, "attach_target"):
                    raise refused_launcher("kubernetes", sorted(self.launchers))
            elif spec.port is not None:
                await asyncio.to_thread(check_attach_host, self.settings, spec.host)
            elif spec.pid is not None:
                check_attach_pid(self.settings, spec.pid)
            self.record.mode = "attach"
            self.record.attach = spec
            self.reset_run_state()
            self.record.status = "launching"
            await self.save()
            try:
                if spec.pod is not None:
                    target = await kubernetes.attach_target(spec)  # type: ignore[union-attr]
                else:
                    target = await RemoteTarget.resolve(spec)
            except RelayError as exc:
                await self._launch_failed(None, exc)
                raise
            try:
                self.target = target
                self.record.target = target.describe()
                self.record.keeper_secret = None
                await self.connect(target, ATTACH_RETRY_SECONDS)
                await self.configure({**ATTACH_ARGS, "justMyCode": False, "pathMappings": target.path_mappings()})
            except RelayError as exc:
                await self._launch_failed(None, exc)
                raise
            if self.record.status == "launching":
                self.record.status = "running"
            await self.save()
            self.notify()

    async def connect(self, target: Target, timeout: float, *, single_try: bool = False) -> None:
        """Connect to the target's debugpy and ``initialize``, retrying until it answers.

        A bare connect-and-close probe kills a debuggee waiting for its client, so readiness is
        the DAP handshake itself. A published container port accepts (Docker's proxy) before
        debugpy listens and then closes: that is retried too, it never reached debugpy.
        """
        warm = target.take_connection()  # a pooled target comes with its connection up and initialized
        if warm is not None and not warm.closed.is_set():
            warm.request_timeout, warm.name = self.settings.request_timeout, f"dap-{self.id}"
            warm.add_listener(self._on_event)
            self.client = warm
            target.on_attached()
            return
        deadline = time.monotonic() + timeout
        delay = 0.005
        while True:
            code = target.poll()
            if code is not None:
                raise LaunchFailed(
                    f"the target exited with code {code} before debugpy was ready",
                    details={"exit_code": code},
                )
            client: DapClient | None = None
            try:
                client = await DapClient.connect(
                    target.host,
                    target.port,
                    timeout=2.0,
                    request_timeout=self.settings.request_timeout,
                    name=f"dap-{self.id}",
                    secret=target.keeper_secret,
                )
                if not (client.keeper or {}).get("initialized"):
                    # readiness, not a request of the agent's: it may take as long as a start-up may
                    await client.request("initialize", INITIALIZE_ARGS, timeout=max(deadline - time.monotonic(), 1.0))
                break
            except (OSError, TimeoutError, TargetGone) as exc:
                if client is not None:
                    await client.close()
                if single_try or time.monotonic() > deadline:
                    raise LaunchFailed(
                        f"cannot reach debugpy at {target.host}:{target.port}: {_why_not(exc)}",
                        details={"host": target.host, "port": target.port},
                        hint="Is debugpy listening there (python -m debugpy --listen ...)? "
                        "Only one client can be attached at a time.",
                    ) from exc
                await asyncio.sleep(delay)
                delay = min(delay * 1.5, 0.05)
        client.add_listener(self._on_event)
        self.client = client
        target.on_attached()

    async def rejoin(self, target: Target, timeout: float) -> dict[str, Any]:
        """Connect to a keeper-backed target's keeper again and return its state.

        The events the keeper kept while no relay was connected follow its state, in order: the
        listener is in place before they are read.
        """
        client = await DapClient.connect(
            target.host,
            target.port,
            timeout=timeout,
            request_timeout=self.settings.request_timeout,
            name=f"dap-{self.id}",
            secret=target.keeper_secret,
        )
        client.add_listener(self._on_event)
        self.client = client
        target.on_attached()
        return client.keeper or {}

    def replay_stop(self, body: dict[str, Any], known: Stop | None) -> None:
        """Show a stop the target is still in (it happened while the last relay was attached);
        ``known`` is that stop as recorded then, kept as it was when it is the same place."""
        self.spawn(self._on_stopped(as_body(body, StoppedEvent), self._run_epoch, known))

    async def finish_configure(self) -> None:
        """What follows ``attach`` when the last relay went away before ``configurationDone``."""
        client = self.require_client()
        await bps.sync_all(self)
        await self.apply_exception_filters()
        await client.request("configurationDone")

    async def configure(self, attach_args: dict[str, Any]) -> None:
        """attach, breakpoints, exception filters, configurationDone: the target runs after this."""
        client = self.require_client()
        initialized = client.expect_event("initialized")
        attach = client.send("attach", attach_args)
        # a refused attach ("already being debugged": one client at a time) answers at once
        await asyncio.wait(
            {initialized, attach}, timeout=self.settings.launch_timeout, return_when=asyncio.FIRST_COMPLETED
        )
        if not initialized.done():
            with contextlib.suppress(TargetGone):
                if attach.done():
                    await client.result(attach, "attach", 0.1)
            raise DebugpyTimeout("debugpy did not initialize in time")
        await bps.sync_all(self)
        await self.apply_exception_filters()
        await client.request("configurationDone")
        await client.result(attach, "attach", self.settings.launch_timeout)

    async def apply_exception_filters(self) -> None:
        """Send the exception filters to debugpy (the rules live with the breakpoints)."""
        self.require_client()
        await bps.apply_exception_filters(self)

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

    def _on_event(self, event: str, body: Any) -> None:
        if any(take(event, body) for take in list(self.event_filters)):
            return
        if event == "output":
            out = as_body(body, OutputEvent)
            if out.category == "console" and bps.on_runs_report(self.record, out.output):
                return  # a breakpoint's runs, reported by the target: not the program's output
            if out.category == "console" and out.output.startswith(CAPTURE_MARK):
                return  # a capture point's row no relay collects any more (it restarted): not program output
            if out.category in ("stdout", "stderr") or (out.category == "console" and out.output):
                self.output.add("stdout" if out.category == "console" else out.category, out.output)
        elif event == "stopped":
            self.spawn(self._on_stopped(as_body(body, StoppedEvent), self._run_epoch))
        elif event == "continued":
            self._on_continued()
        elif event == "thread":
            thread = as_body(body, ThreadEvent)
            if thread.reason == "exited" and thread.thread_id is not None:
                self._threads.pop(thread.thread_id, None)
        elif event == "exited":
            self.record.exit_code = as_body(body, ExitedEvent).exit_code
        elif event in ("terminated", "_closed"):
            self.spawn(self._on_end(event))

    def _on_continued(self) -> None:
        self._run_epoch += 1
        self._reads.clear()
        self._frames.clear()
        self._refs.clear()
        if self.status == "paused":
            self.record.status = "running"
            self.record.stop = None
            self.notify()

    async def _on_stopped(self, body: StoppedEvent, epoch: int, known: Stop | None = None) -> None:
        client = self.client
        if client is None:
            return
        tid = body.thread_id
        reason = body.reason
        answers = await asyncio.gather(
            client.request("stackTrace", {"threadId": tid, "startFrame": 0, "levels": 50}),
            client.request("threads"),
            return_exceptions=True,
        )
        trace = as_body(answers[0], StackTraceBody)  # a failed request (an exception) reads as empty
        listed = as_body(answers[1], ThreadsBody).threads
        if epoch != self._run_epoch:
            return  # resumed meanwhile
        self._threads = {t.id: t.name for t in listed}
        frames = trace.stack_frames
        self._frames = {tid: frames}
        self._totals = {tid: trace.total_frames or len(frames)}
        location = self._location(frames[0]) if frames else None
        if known is not None and known.thread_id == tid and known.location == location:
            # the same stop, shown again by a relay that took the session over: not a new one
            self.record.stop = msgspec.structs.replace(
                known,
                threads=[StoppedThread(thread_id=t, name=n) for t, n in self._threads.items()]
                if len(listed) > 1
                else [],
            )
            self._remember_stop(self.record.stop, frames)
            self.record.status = "paused"
            with contextlib.suppress(RelayError):
                await self.save()
            self.notify()  # after the save: whoever waits answers knowing whether the stop is persisted
            return
        hit, entry = bps.on_hit(self.record, body.hit_breakpoint_ids)
        if hit and frames:
            await bps.read_hits(self, frames[0].id, hit)
        exception = None
        if reason == "exception":
            exception = await self._exception_info(client, tid, location)
            if not await bps.exception_wanted(self, frames, exception):
                # exception_types the relay filters itself (debugpy cannot): not one of them, go on
                with contextlib.suppress(RelayError):
                    await client.request("continue", {"threadId": tid})
                return
        elif entry:
            reason = "entry"
        self.record.stop_count += 1
        threads, changed = self._threads_to_show(len(listed))
        stop = Stop(
            reason=reason,
            thread_id=tid,
            location=location,
            description=body.description or body.text,
            breakpoint_ids=hit,
            exception=exception,
            all_threads_stopped=body.all_threads_stopped,
            threads=threads,
            threads_changed=changed,
            left_by=await self._left_by(client, tid, reason, frames, trace.total_frames or len(frames)),
            at=time.time(),
            seq=self.record.stop_count,
        )
        if epoch != self._run_epoch:
            return
        self._remember_stop(stop, frames)
        self.record.stop = stop
        self.record.stop_history = [*self.record.stop_history, stop][-self.settings.stop_history :]
        self.record.status = "paused"
        with contextlib.suppress(RelayError):
            await self.save()
        self.notify()  # after the save: whoever waits answers knowing whether the stop is persisted
        if entry:
            with contextlib.suppress(RelayError):
                await bps.drop_entry(self)
                await self.save()

    def _remember_stop(self, stop: Stop, frames: list[StackFrame]) -> None:
        """Keep what the stop's reads answer from while the agent reads it; the target resumes only after
        it is done (see resume)."""
        if self.on_stop is not None:
            self._snapshot = asyncio.ensure_future(self.on_stop(self, stop, frames))
            self._tasks.add(self._snapshot)
            self._snapshot.add_done_callback(self._tasks.discard)

    async def _left_by(
        self, client: DapClient, tid: int, reason: str, frames: list[StackFrame], depth: int
    ) -> ExceptionInfo | None:
        """After a step that came out of a deeper frame: the exception that carried it out, if one did."""
        before = self._tops.get(tid)
        top = frames[0] if frames else None
        if top is None:
            return None
        self._tops[tid] = (top.name, PurePosixPath((top.source and top.source.path) or "").name, depth)
        if reason != "step" or before is None or depth >= before[2] or not self.probe_available:
            return None
        try:
            body = await client.request(
                "evaluate",
                {
                    "expression": f"__import__('_debugrelay_probe').left_by({before[0]!r}, {before[1]!r})",
                    "frameId": top.id,
                    "context": "clipboard",
                },
            )
            found = json.loads(unquote_result(body.get("result", "")))
        except (RelayError, ValueError):
            return None
        if not isinstance(found, dict) or "type" not in found:
            return None
        where = found.get("location")
        location = (
            Location(file=self.to_local(where.get("file")), line=where.get("line"), function=where.get("function"))
            if isinstance(where, dict)
            else None
        )
        return ExceptionInfo(
            type=str(found["type"]).removeprefix("builtins."),
            message=str(found.get("message", "")),
            location=location,
        )

    def _threads_to_show(self, listed: int) -> tuple[list[StoppedThread], bool]:
        """A new stop's threads (when there are several) and whether they changed since the last stop."""
        shown = dict(self._threads) if listed > 1 else {}
        changed = shown != self._shown_threads
        self._shown_threads = shown
        return [StoppedThread(thread_id=t, name=n) for t, n in shown.items()], changed

    async def _exception_info(self, client: DapClient, tid: int, location: Location | None) -> ExceptionInfo:
        try:
            info = await client.request("exceptionInfo", {"threadId": tid})
        except RelayError:
            return ExceptionInfo(type="Exception", location=location)
        details = info.get("details") or {}
        type_name = plain_exception_type(details.get("typeName") or info.get("exceptionId") or "") or "Exception"
        message = details.get("message")
        if message is None:
            message = info.get("description") or ""
        mode = info.get("breakMode")
        return ExceptionInfo(
            type=type_name,
            message=message,
            unhandled=mode in ("unhandled", "userUnhandled"),
            break_mode=mode,
            location=location,
        )

    def _location(self, frame: StackFrame) -> Location:
        source = frame.source
        path = self.to_local(source.path) if source is not None else None
        return Location(file=path or (source.name if source else None), line=frame.line, function=frame.name)

    async def _on_end(self, why: str) -> None:
        if self._ending or self.status not in ACTIVE:
            return
        self._ending = True
        target, client = self.target, self.client
        exit_code = self.record.exit_code
        if target is not None:
            exit_code = await _wait_exit(target, 2.0) if exit_code is None else exit_code
            with contextlib.suppress(Exception):
                await target.terminate()
            if exit_code is None:
                exit_code = target.poll()
        if client is not None:
            await client.close()
        self.client = None
        await self.output.flush()
        self.record.exit_code = exit_code
        self.record.status = "terminated"
        self.record.reason = self.record.reason or "target_exited"
        self.record.stop = None
        self._frames.clear()
        self._refs.clear()
        self._reads.clear()
        self._run_epoch += 1
        bps.mark_unhit(self.record)
        with contextlib.suppress(RelayError):
            await self.save()
        self.notify()

    # -- execution control -----------------------------------------------------------------

    async def resume(self, command: str, thread_id: int | None = None, wait: float | None = None) -> None:
        """continue / step-over / step-into / step-out; steps wait for the next stop."""
        dap_command = STEP_COMMANDS[command]
        async with self.lock:
            client = self.require_paused()
            stop = self.record.stop
            assert stop is not None
            tid = thread_id or stop.thread_id
            if thread_id is not None and thread_id not in self._known_threads():
                raise ThreadNotFound(
                    f"no thread {thread_id}",
                    details={"thread_id": thread_id},
                    hint="List the target's threads.",
                )
            seen = self.record.stop_count
            if self._snapshot is not None and not self._snapshot.done():
                with contextlib.suppress(Exception):
                    await self._snapshot
            args: dict[str, Any] = {"threadId": tid}
            if dap_command == "continue" and thread_id is not None:
                args["singleThread"] = True
            # mark running before sending: the next 'stopped' event can beat the response
            self._on_continued()
            try:
                await client.request(dap_command, args)
            except RelayError:
                if self.record.stop_count == seen and self.status == "running":
                    self.record.status, self.record.stop = "paused", stop
                    self.notify()
                raise
        if wait:
            await self.wait_for_stop(seen, wait)

    def _known_threads(self) -> set[int]:
        return set(self._threads) | set(self._frames) | ({self.record.stop.thread_id} if self.record.stop else set())

    async def pause(self, wait: float = 2.0) -> None:
        async with self.lock:
            client = self.require_client()
            if self.status == "paused":
                return
            if self.status not in ("running", "launching"):
                raise InvalidState(f"cannot pause a {self.status} session", details={"status": self.status})
            seen = self.record.stop_count
            await client.request("pause", {"threadId": 0})
        await self.wait_for_stop(seen, wait)

    async def wait_for_stop(self, seen: int, timeout: float) -> bool:
        """Wait until a stop newer than ``seen`` is recorded or the session ends; False on timeout."""
        return await self._wait_until(lambda: self.record.stop_count > seen or self.status not in ACTIVE, timeout)

    async def wait(self, timeout: float) -> bool:
        """Long-poll until the session is paused or ended; True unless the timeout passed first."""
        return await self._wait_until(lambda: self.status not in ("launching", "running"), timeout)

    async def _wait_until(self, done: Callable[[], bool], timeout: float) -> bool:
        """Sleep on state changes (never a poll loop) until ``done()`` holds or ``timeout`` passes."""
        deadline = time.monotonic() + max(0.0, timeout)
        while not done():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            changed = self._changed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), remaining)
        return True

    async def terminate(self, reason: str = "terminated") -> None:
        """Kill the target (its whole process tree or container); the session stays, terminated."""
        async with self.lock:
            if self._snapshot is not None and not self._snapshot.done():
                # what the stop hook keeps (a crash's post-mortem) is read before the program goes
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(asyncio.shield(self._snapshot), STOP_HOOK_WAIT)
            await self._stop_target(reason, terminate=True)

    async def detach(self) -> None:
        """Disconnect and leave the target running (its breakpoints are cleared by debugpy)."""
        async with self.lock:
            if self.status not in ACTIVE:
                raise InvalidState(f"session is {self.status}: nothing to detach", details={"status": self.status})
            await self._stop_target("detached", terminate=False)

    async def _stop_target(self, reason: str, *, terminate: bool) -> None:
        self._ending = True
        client, target = self.client, self.target
        if client is not None and not client.closed.is_set():
            if not terminate or target is None:
                # detach (or a target we cannot kill ourselves): let debugpy resume or end it
                with contextlib.suppress(RelayError):
                    await client.request("disconnect", {"terminateDebuggee": terminate, "restart": False}, timeout=2.0)
            await client.close()
        self.client = None
        exit_code = self.record.exit_code
        if target is not None and terminate:
            with contextlib.suppress(Exception):
                code = await target.terminate()
                exit_code = code if exit_code is None else exit_code
        await self.output.flush()
        if self.status in ACTIVE or self.status == "created":
            self.record.status = "terminated"
            self.record.reason = reason
            self.record.exit_code = exit_code
        self.record.stop = None
        self.reset_run_state()
        self._ending = True
        self.target = None
        bps.mark_unhit(self.record)
        await self.save()
        self.notify()

    async def restart(self) -> None:
        """Start the same launch again, with the same breakpoints."""
        spec = self.record.launch
        if self.record.mode != "launch" or spec is None:
            raise InvalidState("only launched sessions can be restarted", hint="Attach again instead.")
        async with self.lock:
            launcher = self._launcher_for(spec)
            await self._stop_target("restarted", terminate=True)
            script = bps.prepare_launch(spec, launcher.name)
            await self._start(launcher, spec, script)

    async def close(self) -> None:
        """End the target and drop the connection (session deletion, relay shutdown)."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.terminate("deleted"), 10)
        for task in list(self._tasks):
            task.cancel()

    async def send_input(self, text: str) -> None:
        target = self.target
        if target is None or self.status not in ACTIVE:
            raise InvalidState(f"session is {self.status}: no target to send input to", details={"status": self.status})
        await target.send_input(text.encode())

    # -- inspection ------------------------------------------------------------------------

    def remember_threads(self, names: dict[int, str]) -> None:
        """Thread names as the target listed them (a stop names its threads)."""
        self._threads.update(names)

    async def frames(self, thread_id: int | None = None, levels: int = 0) -> tuple[int, list[StackFrame], int]:
        """(thread_id, DAP frames, total) for a paused thread, fetched once per stop."""
        client = self.require_paused()
        stop = self.record.stop
        assert stop is not None
        tid = thread_id or stop.thread_id
        cached = self._frames.get(tid)
        if cached is not None and levels and len(cached) >= min(levels, self._totals.get(tid, levels)):
            return tid, cached, max(len(cached), self._totals.get(tid, len(cached)))
        try:
            body = await client.request("stackTrace", {"threadId": tid, "startFrame": 0, "levels": max(levels, 1000)})
        except DebugpyError as exc:
            raise ThreadNotFound(
                f"no stack for thread {tid}: {exc.message}",
                details={"thread_id": tid},
                hint="List the target's threads.",
            ) from exc
        trace = as_body(body, StackTraceBody)
        frames = trace.stack_frames
        self._frames[tid] = frames
        self._totals[tid] = trace.total_frames or len(frames)
        return tid, frames, self._totals[tid]

    async def frame_id(self, index: int, thread_id: int | None = None) -> int:
        """DAP frame id of frame ``index`` (0 = top) of a paused thread."""
        if index < 0:
            raise InvalidRequest("frame_index must be >= 0", details={"frame_index": index})
        _, frames, total = await self.frames(thread_id, index + 1)
        if index >= len(frames):
            raise InvalidReference(
                f"no frame {index}: the stack has {total} frames",
                details={"frame_index": index, "total_frames": total},
                hint="A frame_index is a position in the stack trace (0 = top).",
            )
        return frames[index].id

    def stop_files(self) -> set[str]:
        """The files of the frames read at the current stop, as the user sees them."""
        files = set()
        for frames in self._frames.values():
            for frame in frames:
                path = self.to_local(frame.source.path) if frame.source else None
                if path:
                    files.add(path)
        return files

    def invalidate_reads(self) -> None:
        """An evaluation or a change of a variable may change what this stop's reads show: ask again
        (a frame's scopes and parameters stay)."""
        for key in [k for k in self._reads if not k[1]]:
            del self._reads[key]

    async def probe(self, frame_id: int, expression: str) -> str | None:
        """Evaluate a read-only helper in the target; None when the helper is not there."""
        if not self.probe_available or self.client is None:
            return None
        try:
            body = await self.read("evaluate", {"expression": expression, "frameId": frame_id, "context": "clipboard"})
        except DebugpyError as exc:
            if "No module named" in exc.message and "_debugrelay_probe" in exc.message:
                self.probe_available = False
            return None
        return unquote_result(body.get("result", ""))


def unquote_result(result: str) -> str:
    """debugpy answers a str evaluation with its repr, even in the 'clipboard' context."""
    if result[:1] in ("'", '"'):
        with contextlib.suppress(ValueError, SyntaxError):
            result = str(ast.literal_eval(result))
    return result


def _why_not(exc: BaseException) -> str:
    """Why a debugger connection failed, in words: never the bytes a peer sent (it may be any server)."""
    if isinstance(exc, TargetGone):
        return "not a DAP server there (it closed the connection or answered something else)"
    if isinstance(exc, TimeoutError):
        return "no answer in time"
    return f"cannot connect ({getattr(exc, 'strerror', None) or exc.__class__.__name__})"


async def _wait_exit(target: Target, timeout: float) -> int | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code = target.poll()
        if code is not None:
            return code
        await asyncio.sleep(0.02)
    return target.poll()
