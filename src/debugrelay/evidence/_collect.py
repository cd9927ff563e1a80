"""Running the snapshot collector inside a target: installed once per process, called in a paused frame.

A running target is paused for the read and resumed as it was; the pause is the relay's own (the
session does not record a stop, wake waiters or re-read locals for it).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import signal
import time
from importlib import resources
from typing import TYPE_CHECKING, Any

import psutil

from debugrelay.dap import StackTraceBody, as_body
from debugrelay.errors import CollectFailed, DebugpyError, InvalidState, RelayError
from debugrelay.inspection._probe import unquote

if TYPE_CHECKING:
    from debugrelay.sessions import Session

SOURCE = resources.files("debugrelay._boot").joinpath("_debugrelay_snapshot.py").read_text()
MODULE = "_debugrelay_snapshot_" + hashlib.sha256(SOURCE.encode()).hexdigest()[:10]
COLLECT_TIMEOUT = 20.0  # a snapshot walks every object once (gc counts): seconds on a large heap
PAUSE_TIMEOUT = 5.0
RESUME_TIMEOUT = 2.0
NUDGE_AFTER = 0.05  # s without a pause before the main thread is woken with a signal (harmless: a no-op)

# The module, made from SOURCE when this process has not got it yet; then its function is called.
_GET = (
    "(__import__('sys').modules.get({name!r}) or (lambda m: (exec(compile({src!r}, '<debugrelay-snapshot>',"
    " 'exec'), m.__dict__), __import__('sys').modules.__setitem__({name!r}, m), m)[2])"
    "(__import__('types').ModuleType({name!r})))"
)


def module_expression() -> str:
    """An expression answering the collector module (installing it on first use)."""
    return _GET.format(name=MODULE, src=SOURCE)


def installed_expression() -> str:
    """The collector module as a logpoint may name it: installed by the relay in a running target, or
    imported from the relay's boot folder on a launched target's path (a capture set before launch)."""
    return f"(__import__('sys').modules.get({MODULE!r}) or __import__('_debugrelay_snapshot'))"


async def evaluate_json(session: Session, frame_id: int, call: str, timeout: float = COLLECT_TIMEOUT) -> Any:
    """``<collector>.<call>`` evaluated in ``frame_id``, its JSON answer decoded."""
    return await evaluate_helper(
        session,
        frame_id,
        f"{module_expression()}.{call}",
        what="the snapshot collector",
        hint="The target must be a CPython debugpy can evaluate in.",
        timeout=timeout,
    )


async def evaluate_helper(
    session: Session, frame_id: int, expression: str, *, what: str, hint: str, timeout: float = COLLECT_TIMEOUT
) -> Any:
    """``expression`` (a call of one of the relay's helpers in the target, which answers JSON and never
    raises) evaluated in ``frame_id``, its answer decoded; :class:`CollectFailed` naming ``what`` otherwise."""
    client = session.require_client()
    try:
        body = await client.request(
            "evaluate", {"expression": expression, "frameId": frame_id, "context": "clipboard"}, timeout=timeout
        )
    except DebugpyError as exc:
        raise CollectFailed(
            f"the target could not run {what}",
            details={"reason": exc.message.strip().splitlines()[-1][:300] if exc.message.strip() else ""},
            hint=hint,
        ) from exc
    try:
        found = json.loads(unquote(str(body.get("result", ""))))
    except ValueError as exc:
        raise CollectFailed(f"{what}'s answer was not JSON") from exc
    if isinstance(found, dict) and set(found) == {"error"}:
        raise CollectFailed(f"{what} failed in the target", details={"reason": found["error"]})
    return found


# Run inside a target's container: SIGWINCH to the debuggee (not the keeper, the adapter or itself).
_NUDGE_IN_CONTAINER = """
import os, signal
for p in os.listdir('/proc'):
    if not p.isdigit() or int(p) == os.getpid():
        continue
    try:
        line = open('/proc/%s/cmdline' % p, 'rb').read().replace(b'\\0', b' ')
    except OSError:
        continue
    if (b'-m debugpy' in line or b'_debugrelay_pool' in line) and b'_debugrelay_keeper' not in line:
        os.kill(int(p), signal.SIGWINCH)
        print(p)
        break
"""


def nudge(session: Session) -> bool:
    """SIGWINCH to the debuggee (the relay's boot hook gave it a no-op Python handler): a local process,
    or the one in a target's container."""
    target = session.target
    if target is None:
        return False
    container = getattr(target, "container", None)
    if container is not None and hasattr(container, "exec_run"):
        try:
            for python in ("python3", "python"):
                result = container.exec_run([python, "-c", _NUDGE_IN_CONTAINER])
                if result.exit_code == 0:
                    return bool(result.output.strip())
        except Exception:  # the engine's errors: no nudge, the pause times out and says so
            return False
        return False
    if target.kind != "local" or not target.pid:
        return False
    try:
        root = psutil.Process(target.pid)
        for proc in [root, *root.children(recursive=True)]:
            line = " ".join(proc.cmdline())
            if "_debugrelay_keeper" in line or "debugpy/adapter" in line or "debugpy.adapter" in line:
                continue
            proc.send_signal(signal.SIGWINCH)
            return True
    except (psutil.Error, OSError):
        return False
    return False


class BriefPause:
    """The target paused by the relay for one read, and resumed as it was.

    Used as ``async with BriefPause(session) as frame_id``: ``frame_id`` is a frame of a stopped thread.
    A target already paused is read where it is and left paused. A real stop (a breakpoint) arriving
    during the pause goes to the session as usual, and then the target is left paused there.
    """

    def __init__(self, session: Session) -> None:
        self.session = session
        self.paused_ms = 0.0
        self._stopped: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._ours = False
        self._real_stop = False
        self._thread = 0
        self._resumed = False
        self.nudged = False
        self._started = time.monotonic()

    def _take(self, event: str, body: Any) -> bool:
        if event == "stopped" and isinstance(body, dict):
            ours = body.get("reason") == "pause" and not self._stopped.done()
            if not self._stopped.done():
                self._stopped.set_result(int(body.get("threadId") or 0))
            if ours:
                return True
            self._real_stop = True  # a breakpoint (or another's pause): the session records it, it stays
            return False
        if event == "continued" and self._ours and not self._real_stop and self._resumed:
            self._drop()
            return True
        return False

    async def __aenter__(self) -> int:
        session = self.session
        if session.status == "paused":
            return await session.frame_id(0)
        if session.status != "running":
            raise InvalidState(
                f"session is {session.status}: there is no running program to read",
                details={"status": session.status},
                hint="Launch or attach first; after the program ended, read its post-mortem snapshot.",
            )
        client = session.require_client()
        self._ours = True
        session.event_filters.append(self._take)
        try:
            await client.request("pause", {"threadId": 0})
            try:
                await asyncio.wait_for(asyncio.shield(self._stopped), NUDGE_AFTER)
            except TimeoutError:
                # every thread is blocked in C (a deadlock): a signal runs Python in the main thread
                self.nudged = await asyncio.to_thread(nudge, session)
            thread_id = self._thread = await asyncio.wait_for(self._stopped, PAUSE_TIMEOUT)
            trace = as_body(await client.request("stackTrace", {"threadId": thread_id, "levels": 1}), StackTraceBody)
        except (TimeoutError, RelayError) as exc:
            await self._resume()
            raise CollectFailed(
                "the target did not pause for the snapshot", hint="Try again; a target in a long C call cannot pause."
            ) from exc
        if not trace.stack_frames:
            await self._resume()
            raise CollectFailed("the paused thread has no Python frame to read in")
        return trace.stack_frames[0].id

    async def _resume(self) -> None:
        session = self.session
        try:
            if not self._real_stop and session.client is not None:
                # after a pause that never took hold debugpy may not answer: the program runs anyway
                self._resumed = True
                with contextlib.suppress(RelayError):
                    await session.client.request("continue", {"threadId": self._thread}, timeout=RESUME_TIMEOUT)
        finally:
            self.paused_ms = (time.monotonic() - self._started) * 1000
            # debugpy's 'continued' event follows the answer; it is ours too
            asyncio.get_running_loop().call_later(1.0, self._drop)

    def _drop(self) -> None:
        if self._take in self.session.event_filters:
            self.session.event_filters.remove(self._take)

    async def __aexit__(self, *exc: object) -> None:
        if self._ours:
            await self._resume()
