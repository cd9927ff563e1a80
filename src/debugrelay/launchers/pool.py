"""Warm pools: debug targets started before anyone asks, handed out when a session launches.

A cold launch spends ~0.4 s before debugpy listens (interpreter start-up and the debugpy import),
a container more. A pooled target has done all of that already: it runs ``_debugrelay_pool``
(see ``_boot/_debugrelay_pool.py``) behind its keeper, like a cold target (a secret of its own,
made with it, handed to the session with the target), listens, and the relay's DAP connection to
its keeper is open and ``initialize``d (which is also how the pool knows it is ready). So a warm
target survives a relay restart exactly like a cold one. A launch writes one line of JSON to
the target's stdin (cwd, environment changes, argv, script or module); the program sets itself up
like ``python -m debugpy --listen ... --wait-for-client`` would and waits for ``configurationDone``,
so the session's breakpoints are in place before its first line runs.

Targets are kept per interpreter: the relay's own from the start, another once a launch used it. A pytest
run's are kept apart: they import pytest and the plugins its entry points name before they listen (the
warnings those imports give are shown when the run starts), so a test run skips pytest's own start-up too.

A launch gets a cold start instead when a pooled interpreter cannot be made into what it asks for:
another interpreter or image, environment read at interpreter start-up (``PYTHON*``, locale,
``LD_*``, debugpy's own variables), ``debug_subprocesses``, ``pool: false``, or an empty pool.

Containers are pooled per *key*: everything fixed when a container is created (image, interpreter,
working directory and mounts, limits, user, network). A key is kept warm only after a launch has
used it (the first launch in a folder is cold; the next ones are warm), at most ``MAX_KEYS`` keys,
the least recently used dropped first (:mod:`.docker_pool`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from pathlib import Path
from typing import Any, Generic, TypeVar

from debugrelay.dap import KEEPER_FILE, DapClient, attach_args, keeper_command, new_secret, secret_pipe
from debugrelay.errors import LaunchFailed, TargetGone
from debugrelay.models import LaunchRequest, LocalTargetRecord

from .boot import interpreter_flags
from .local import LocalTarget, find_adapter, free_port, interpreter_version, kill_tree

log = logging.getLogger(__name__)

POOL_MODULE = "_debugrelay_pool"
# in the command line for whoever looks for debug targets by it (ps, cleanup scripts): a debugpy target
POOL_MARK = ("--role", "warm-debugpy-target")
MAX_KEYS = 4  # container keys, or local interpreters (with or without pytest imported), kept warm at once
PRELOAD = "pytest"  # what a test run's warm targets import ahead: pytest and its plugins
PRELOAD_WITHIN = 300.0  # s a warm target importing pytest's plugins may take (a loaded machine: the pool waits)
_PYTEST = ("pytest", "py.test")
_RETRY_MAX = 30.0  # seconds between attempts once starting pooled targets keeps failing

# read when the interpreter (or debugpy, or the dynamic linker) starts: a running one cannot change them
_STARTUP_PREFIXES = ("PYTHON", "LC_", "LD_", "PYDEVD_", "DEBUGPY_", "MALLOC_")
_STARTUP_NAMES = frozenset({"LANG", "LANGUAGE", "TZ"})


def startup_names(names: set[str]) -> list[str]:
    """Those of ``names`` a running interpreter cannot take on (they only act at start-up)."""
    return sorted(n for n in names if n in _STARTUP_NAMES or n.startswith(_STARTUP_PREFIXES))


def env_changes(base: dict[str, str], wanted: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """What turns environment ``base`` into ``wanted``: (variables to set, variables to remove)."""
    changed = {k: v for k, v in wanted.items() if base.get(k) != v}
    return changed, sorted(k for k in base if k not in wanted)


def cold_reason(spec: LaunchRequest, base_env: dict[str, str], env: dict[str, str]) -> str | None:
    """Why ``spec`` (whose target environment is ``env``) cannot run in a target started with ``base_env``."""
    if not spec.pool:
        return "opted_out"
    if spec.debug_subprocesses:
        return "debug_subprocesses"
    changed, removed = env_changes(base_env, env)
    names = set(changed) | set(removed)
    if "PYTHONPATH" not in spec.env:
        names.discard("PYTHONPATH")  # only the launch's `pythonpath`: the pooled program puts it on sys.path
    if startup_names(names):
        return "startup_env"
    return None


def spec_line(spec: LaunchRequest, cwd: str, base_env: dict[str, str], env: dict[str, str]) -> bytes:
    """The line a pooled target reads on its stdin to become ``spec``."""
    changed, removed = env_changes(base_env, env)
    message = {
        "cwd": cwd,
        "env": changed,
        "unset": removed,
        "pythonpath": list(spec.pythonpath),
        "script": spec.script,
        "module": spec.module,
        "args": list(spec.args),
        "just_my_code": spec.just_my_code,
    }
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


async def connect_initialized(
    host: str,
    port: int,
    *,
    secret: str,
    ended: Callable[[], bool],
    within: float,
    request_timeout: float,
    name: str,
) -> DapClient:
    """A DAP connection to a starting target's keeper, ``initialize``d: retried until debugpy answers.

    Like a session's own connect, readiness is the DAP handshake itself (the keeper listens before
    debugpy does and holds the request until debugpy answers).
    """
    from debugrelay.dap import INITIALIZE_ARGS

    deadline = time.monotonic() + within
    delay = 0.01
    while True:
        if ended():
            raise LaunchFailed("the pooled target exited before debugpy was ready")
        client: DapClient | None = None
        try:
            client = await DapClient.connect(
                host, port, timeout=2.0, request_timeout=request_timeout, name=name, secret=secret
            )
            await client.request("initialize", INITIALIZE_ARGS, timeout=max(deadline - time.monotonic(), 1.0))
        except (OSError, TimeoutError, TargetGone) as exc:
            if client is not None:
                await client.close()
            if time.monotonic() > deadline:
                raise LaunchFailed(f"the pooled target did not answer at {host}:{port}: {exc}") from exc
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, 0.1)
        else:
            return client


def _named(key: Hashable) -> str:
    """A local pool's key as ``GET /pool`` says it: the interpreter, and what its targets have imported."""
    return f"{key[0]} ({key[1]})" if isinstance(key, tuple) else str(key)


def _poolable(python: str) -> bool:
    """Whether warm targets can be made of ``python``: an interpreter that runs, 3.8 or newer (the keeper's)."""
    major, _, minor = (interpreter_version(python) or "").partition(".")
    return major.isdigit() and minor.isdigit() and (int(major), int(minor)) >= (3, 8)


T = TypeVar("T")
S = TypeVar("S")


class WarmPool(Generic[T]):
    """Keeps ``size`` ready items per key, started in the background one at a time per key.

    ``spawn(key)`` starts an item and returns it once ready; ``alive(item)`` tells whether a ready
    item is still usable; ``discard(item)`` ends one. Nothing is started before :meth:`keep_warm`.
    """

    def __init__(
        self,
        name: str,
        size: int,
        *,
        spawn: Callable[[Hashable], Awaitable[T]],
        alive: Callable[[T], bool],
        discard: Callable[[T], Awaitable[None]],
        max_keys: int = 1,
    ) -> None:
        self.name = name
        self.size = size
        self._spawn = spawn
        self._alive = alive
        self._discard = discard
        self.max_keys = max_keys
        self._ready: OrderedDict[Hashable, list[T]] = OrderedDict()  # least recently used key first
        self._fillers: dict[Hashable, asyncio.Task[None]] = {}
        self._starting: dict[Hashable, int] = {}
        self._closed = False
        self.handed_out = 0
        self.started = 0
        self.failed = 0
        self.cold: dict[str, int] = {}

    def keep_warm(self, key: Hashable) -> None:
        """Keep ``size`` items of ``key`` ready from now on (refilled after each hand-out)."""
        if self._closed or self.size <= 0:
            return
        if key in self._ready:
            self._ready.move_to_end(key)
        else:
            self._ready[key] = []
            while len(self._ready) > self.max_keys:
                old, items = self._ready.popitem(last=False)
                task = self._fillers.pop(old, None)
                if task is not None:
                    task.cancel()
                for item in items:
                    self.background(self._discard(item))
        task = self._fillers.get(key)
        if task is None or task.done():
            self._fillers[key] = asyncio.create_task(self._fill(key), name=f"pool-{self.name}-fill")

    def take(self, key: Hashable) -> T | None:
        """A ready item of ``key`` (the pool refills behind it), or None: start a cold one."""
        items = self._ready.get(key)
        found: T | None = None
        while items:
            item = items.pop(0)
            if self._alive(item):
                found = item
                break
            self.background(self._discard(item))
        if key in self._ready:
            self.keep_warm(key)
        if found is not None:
            self.handed_out += 1
        return found

    def note_cold(self, reason: str) -> None:
        self.cold[reason] = self.cold.get(reason, 0) + 1

    async def _fill(self, key: Hashable) -> None:
        failures = 0
        while not self._closed and key in self._ready and len(self._ready[key]) < self.size:
            self._starting[key] = self._starting.get(key, 0) + 1
            try:
                item = await self._spawn(key)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.failed += 1
                failures += 1
                log.warning("pool %s: could not start a warm target: %s", self.name, exc)
                await asyncio.sleep(min(_RETRY_MAX, 0.5 * 2**failures))
                continue
            finally:
                self._starting[key] -= 1
            failures = 0
            self.started += 1
            if self._closed or key not in self._ready:
                await self._discard(item)
                return
            self._ready[key].append(item)

    def background(self, coro: Awaitable[None]) -> None:
        """Run ``coro`` (ending or setting up an item) without waiting for it; its failure is dropped."""

        async def run() -> None:
            with contextlib.suppress(Exception):
                await coro

        task = asyncio.ensure_future(run())
        _KEEP.add(task)
        task.add_done_callback(_KEEP.discard)

    def ready(self, key: Hashable) -> int:
        return sum(1 for item in self._ready.get(key, []) if self._alive(item))

    def warm_keys(self) -> list[Hashable]:
        return list(self._ready)

    def stats(self) -> dict[str, Any]:
        return {
            "size": self.size,
            "ready": sum(self.ready(k) for k in self._ready),
            "starting": sum(self._starting.values()),
            "handed_out": self.handed_out,
            "started": self.started,
            "failed": self.failed,
            "cold_starts": dict(self.cold),
        }

    async def close(self) -> None:
        """Stop refilling and end every item not handed out."""
        self._closed = True
        tasks = list(self._fillers.values())
        for task in tasks:
            task.cancel()
        # a start that was under way ends with its task: spawn() cleans up what it began
        await asyncio.gather(*tasks, return_exceptions=True)
        items = [item for items in self._ready.values() for item in items]
        self._ready.clear()
        await asyncio.gather(*(self._discard(item) for item in items), return_exceptions=True)


_KEEP: set[asyncio.Future[None]] = set()


# -- local processes --------------------------------------------------------------------------------


class PooledLocalTarget(LocalTarget):
    """A local target that was started warm behind its keeper; the relay's DAP connection is already open."""

    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        port: int,
        log_path: Path,
        client: DapClient,
        adapter_pid: int | None,
        *,
        keeper_secret: str,
        inner_port: int,
        status_file: Path,
    ) -> None:
        super().__init__(
            proc, port, log_path, keeper_secret=keeper_secret, inner_port=inner_port, status_file=status_file
        )
        self.client: DapClient | None = client
        self.adapter_pid = adapter_pid

    def take_connection(self) -> DapClient | None:
        client, self.client = self.client, None
        return client

    def describe(self) -> LocalTargetRecord:
        record = super().describe()
        record.pooled = True
        return record


class LocalPool:
    """Warm interpreters for local launches: of the relay's own Python from the start, and of each other
    interpreter once a launch used it (the first launch on it is cold, the next ones warm; at most
    ``MAX_KEYS`` interpreters, the least recently used dropped first)."""

    def __init__(
        self,
        *,
        python: str,
        boot_dir: Path,
        log_dir: Path,
        env: dict[str, str],
        size: int,
        launch_timeout: float = 20.0,
        request_timeout: float = 10.0,
        orphan_after: float | None = None,
    ) -> None:
        self.python = python
        self.orphan_after = orphan_after  # a warm keeper whose relay is gone for good ends too
        self.boot_dir = boot_dir
        self.log_dir = log_dir
        self.env = env
        self.launch_timeout = launch_timeout
        self.request_timeout = request_timeout
        self._ids = itertools.count(1)
        self.pool: WarmPool[PooledLocalTarget] = WarmPool(
            "local", size, spawn=self._spawn, alive=self._alive, discard=self._discard, max_keys=MAX_KEYS
        )

    def start(self) -> None:
        self.pool.keep_warm(self.python)

    async def acquire(
        self,
        spec: LaunchRequest,
        *,
        session_id: str,
        python: str,
        cwd: str,
        env: dict[str, str],
        again: bool = False,
    ) -> PooledLocalTarget | None:
        """A warm target of ``python`` now running ``spec`` (a pytest run's has pytest and its plugins
        imported already, when one is ready), or None (with the reason counted, once a launch) for a cold start."""
        reason = cold_reason(spec, self.env, env)
        keys: list[Hashable] = [(python, PRELOAD), python] if spec.module in _PYTEST else [python]
        target = None
        for key in keys if reason is None else []:
            target = self.pool.take(key)
            if target is not None:
                break
        if reason is None and keys[0] not in self.pool.warm_keys() and await asyncio.to_thread(_poolable, python):
            self.pool.keep_warm(keys[0])  # the next such launch on this interpreter is warm
        if target is None:
            if reason is None:
                reason = "empty" if python in self.pool.warm_keys() else "interpreter"
            if not again:
                self.pool.note_cold(reason)
            return None
        stdin = target.proc.stdin
        assert stdin is not None
        stdin.write(spec_line(spec, cwd, self.env, env))
        log_path = self.log_dir / f"{session_id}.log"
        with contextlib.suppress(OSError):
            target.log_path.rename(log_path)  # the open file follows: output goes on into the session's log
            target.log_path = log_path
        return target

    async def _spawn(self, key: Hashable) -> PooledLocalTarget:
        python, preload = key if isinstance(key, tuple) else (str(key), None)
        flags = interpreter_flags(await asyncio.to_thread(interpreter_version, python))
        port, inner = free_port(), free_port()
        secret = new_secret()
        name = f"pool-{os.getpid()}-{next(self._ids)}"
        log_path = self.log_dir / f"{name}.log"
        status_file = self.log_dir / f"{name}.keeper.json"
        secret_fd = secret_pipe(secret)  # never in an environment: /proc/<pid>/environ is readable to its user
        argv = keeper_command(
            [python],
            listen=f"127.0.0.1:{port}",
            connect=f"127.0.0.1:{inner}",
            status_file=str(status_file),
            keeper=str(self.boot_dir / KEEPER_FILE),
            # as a file, not -m: with frozen modules off, runpy's frames would show under the program's
            debuggee=[
                python,
                *flags,
                str(self.boot_dir / f"{POOL_MODULE}.py"),
                "--listen",
                f"127.0.0.1:{inner}",
                *POOL_MARK,
                *(["--preload", preload] if preload else []),
            ],
            attach=attach_args([], just_my_code=False),  # the launch's own choice is applied when it is taken
            secret_fd=secret_fd,
            orphan_after=self.orphan_after,
        )
        try:
            with log_path.open("wb") as out:
                proc = await shielded_start(
                    asyncio.create_subprocess_exec(
                        *argv,
                        cwd=str(self.log_dir),
                        env=self.env,
                        stdin=asyncio.subprocess.PIPE,
                        stdout=out,
                        stderr=out,
                        pass_fds=(secret_fd,),
                        start_new_session=True,  # like a cold target; it exits by itself when our stdin pipe closes
                    ),
                    lambda p: _end_process(p, inner),
                )
        finally:
            os.close(secret_fd)
        try:
            client = await connect_initialized(
                "127.0.0.1",
                port,
                secret=secret,
                ended=lambda: proc.returncode is not None,
                within=self.launch_timeout if preload is None else PRELOAD_WITHIN,
                request_timeout=self.request_timeout,
                name=f"dap-pool-{proc.pid}",
            )
        except BaseException:
            await _end_process(proc, inner)
            raise
        adapter = await asyncio.to_thread(find_adapter, inner)
        return PooledLocalTarget(
            proc, port, log_path, client, adapter, keeper_secret=secret, inner_port=inner, status_file=status_file
        )

    @staticmethod
    def _alive(target: PooledLocalTarget) -> bool:
        return target.proc.returncode is None and target.client is not None and not target.client.closed.is_set()

    @staticmethod
    async def _discard(target: PooledLocalTarget) -> None:
        client = target.take_connection()
        if client is not None:
            await client.close()
        await target.terminate()
        for path in (target.log_path, target.status_file):
            with contextlib.suppress(OSError):
                if path is not None:
                    path.unlink()

    def stats(self) -> dict[str, Any]:
        """The pool's state; ``size``: the warm targets it keeps, over every interpreter it keeps warm."""
        stats = self.pool.stats()
        kept = {_named(k): self.pool.ready(k) for k in self.pool.warm_keys()}
        return {**stats, "size": stats["size"] * max(1, len(kept)), "python": self.python, "interpreters": kept}

    async def close(self) -> None:
        await self.pool.close()


async def shielded_start(starting: Awaitable[S], end: Callable[[S], Awaitable[None]]) -> S:
    """Await something being started; if we are cancelled meanwhile, let it finish and end it (no leaks)."""
    task = asyncio.ensure_future(starting)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await end(await task)
        raise


async def _end_process(proc: asyncio.subprocess.Process, debugpy_port: int) -> None:
    if proc.returncode is None:
        await asyncio.to_thread(kill_tree, proc.pid, reap_root=False)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), 5)
    adapter = await asyncio.to_thread(find_adapter, debugpy_port)
    if adapter is not None:
        await asyncio.to_thread(kill_tree, adapter)
