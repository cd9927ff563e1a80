"""Local launcher: the target is a subprocess of this machine (the embedded default)."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import json
import logging
import os
import random
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import psutil

from debugrelay.dap import KEEPER_FILE, attach_args, keeper_command, new_secret, secret_pipe
from debugrelay.errors import LaunchFailed
from debugrelay.models import LaunchRequest, LocalTargetRecord, TargetRecord, given

from .base import Launcher, Target
from .boot import debugpy_args, interpreter_flags, prepare_boot_dir
from .project_python import launch_python

if TYPE_CHECKING:
    from .pool import LocalPool

log = logging.getLogger(__name__)


_recent_ports: collections.deque[int] = collections.deque(maxlen=512)
_EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")
_LOWEST = 10000  # below: ports services are commonly configured on


def _port_ranges() -> list[range]:
    """Ports outside the kernel's ephemeral range: one of these, free now, cannot be taken by another
    process's ``bind(0)`` or outgoing connection before the target binds it (a debuggee's own debugpy
    binds a few ephemeral ports as it starts; under load one took a port a launch was about to use)."""
    try:
        low, high = (int(n) for n in _EPHEMERAL.read_text().split())
    except (OSError, ValueError):
        return []
    return [r for r in (range(_LOWEST, low), range(high + 1, 65536)) if len(r) >= 1024]


def free_port() -> int:
    """A loopback port for a target to listen on: free now, outside the kernel's ephemeral range where
    the machine has one, and not handed out by this relay lately (two targets started at once must not
    both be told it)."""
    ranges = _port_ranges()
    port = 0
    for attempt in range(256):
        chosen = random.choice(ranges) if ranges and attempt < 192 else None  # then as the kernel picks
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", chosen[random.randrange(len(chosen))] if chosen else 0))
            except OSError:
                continue
            port = sock.getsockname()[1]
        if port not in _recent_ports:
            break
    _recent_ports.append(port)
    return port


def kill_tree(pid: int, *, reap_root: bool = True) -> None:
    """Kill a process and all its descendants, each by PID.

    ``reap_root=False`` leaves reaping the root to its parent (asyncio waits for its own child).
    """
    try:
        root = psutil.Process(pid)
        children = root.children(recursive=True)
    except psutil.NoSuchProcess:
        return
    for proc in [root, *children]:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            proc.kill()
    wait_gone([*children, root] if reap_root else children, timeout=3)


def _gone(proc: psutil.Process) -> bool:
    try:
        return proc.status() == psutil.STATUS_ZOMBIE  # dead; reaping is its parent's business
    except psutil.NoSuchProcess:
        return True


def wait_gone(procs: list[psutil.Process], timeout: float) -> None:
    """Wait until each process is dead. Orphans are reparented to PID 1, which may never reap
    them, so a zombie counts as gone (psutil.wait_procs would wait out its whole timeout)."""
    deadline = time.monotonic() + timeout
    pending = list(procs)
    while pending and time.monotonic() < deadline:
        pending = [p for p in pending if not _gone(p)]
        if pending:
            time.sleep(0.01)


def find_adapter(port: int) -> int | None:
    """PID of the debugpy adapter serving ``port``: it detaches from the debuggee (its parent is init)."""
    for proc in psutil.process_iter(["pid", "cmdline"]):
        if _adapter_of(proc.info.get("cmdline") or [], port):
            pid: int = proc.info["pid"]
            return pid
    return None


def serves_port(pid: int, port: int) -> bool:
    """Whether process ``pid`` is the debugpy adapter serving ``port`` (a recorded adapter PID may be reused)."""
    try:
        return _adapter_of(psutil.Process(pid).cmdline(), port)
    except psutil.Error:
        return False


def _adapter_of(cmd: list[str], port: int) -> bool:
    if not any("debugpy/adapter" in c or "debugpy.adapter" in c for c in cmd):
        return False
    return any(arg == "--port" and cmd[i + 1] == str(port) for i, arg in enumerate(cmd[:-1]))


MAX_STATUS_BYTES = 64 * 1024


def keeper_exit_code(path: str | None) -> int | None:
    """The exit code a keeper wrote to its status file when its debuggee ended (None: not ended, or no file)."""
    if not path:
        return None
    try:
        with Path(path).open("rb") as fh:
            code = json.loads(fh.read(MAX_STATUS_BYTES)).get("exit_code")  # a few dozen bytes when the keeper wrote it
    except (OSError, ValueError, AttributeError):
        return None
    return code if isinstance(code, int) else None


def log_tail(path: Path | str | None, max_bytes: int = 4096) -> str:
    """The end of a target's log file ('' when there is none)."""
    if not path:
        return ""
    try:
        with Path(path).open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - max_bytes))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


class LocalTarget(Target):
    """A subprocess of this relay: the debuggee itself, or (with a secret) its keeper, the debuggee's
    parent, serving ``port`` while debugpy listens on ``inner_port``."""

    kind = "local"

    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        port: int,
        log_path: Path,
        *,
        keeper_secret: str | None = None,
        inner_port: int | None = None,
        status_file: Path | None = None,
    ) -> None:
        self.proc = proc
        self.host = "127.0.0.1"
        self.port = port
        self.pid = proc.pid
        self.log_path = log_path
        self.adapter_pid: int | None = None
        self.keeper_secret = keeper_secret
        self.inner_port = inner_port
        self.status_file = status_file

    @property
    def debugpy_port(self) -> int:
        return self.inner_port or self.port

    def on_attached(self) -> None:
        if self.adapter_pid is None:  # a pooled target knows it already
            self.adapter_pid = find_adapter(self.debugpy_port)

    def poll(self) -> int | None:
        return self.proc.returncode

    async def send_input(self, data: bytes) -> None:
        stdin = self.proc.stdin
        if stdin is None or stdin.is_closing():
            raise LaunchFailed("the target's stdin is closed")
        stdin.write(data)
        with contextlib.suppress(ConnectionError):
            await stdin.drain()

    async def terminate(self) -> int | None:
        """End the debuggee, its children and its debugpy adapter (which outlives the debuggee)."""
        adapter = self.adapter_pid or await asyncio.to_thread(find_adapter, self.debugpy_port)
        if self.proc.returncode is None:
            await asyncio.to_thread(kill_tree, self.proc.pid, reap_root=False)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.proc.wait(), 5)
        if adapter is not None:
            await asyncio.to_thread(kill_tree, adapter)
        return self.proc.returncode

    def describe(self) -> LocalTargetRecord:
        record = self.described_as(LocalTargetRecord)
        record.adapter_pid, record.log = self.adapter_pid, str(self.log_path)
        with contextlib.suppress(psutil.Error):
            # what a later relay checks before it acts on this pid: a reused pid is another process
            proc = psutil.Process(self.proc.pid)
            record.started, record.uid = proc.create_time(), proc.uids().real
        if self.keeper_secret:
            record.debugpy_port, record.status_file = self.inner_port, str(self.status_file)
        return record

    def disown(self) -> None:
        """Keep the process when this relay exits: asyncio kills a child whose transport is closed
        or garbage-collected, so the transport forgets it (its stdin pipe closes: the target reads EOF)."""
        transport = getattr(self.proc, "_transport", None)
        if transport is not None and self.proc.returncode is None:
            transport._proc = None
            transport.close()

    def output_tail(self, max_bytes: int = 4096) -> str:
        return log_tail(self.log_path, max_bytes)


class AttachedTarget(LocalTarget):
    """A program someone else started, held by a keeper of this relay's (its process is the keeper's):
    ended by detaching, never killed; its path mappings are the attach's."""

    def __init__(
        self, proc: asyncio.subprocess.Process, port: int, log_path: Path, *, attached: Target, **kw: Any
    ) -> None:
        super().__init__(proc, port, log_path, **kw)
        self.attached = attached

    def path_mappings(self) -> list[dict[str, str]]:
        return self.attached.path_mappings()

    def describe(self) -> LocalTargetRecord:
        record = super().describe()
        record.attached_host, record.attached_port = self.attached.host, self.attached.port
        return record

    def on_attached(self) -> None:
        """No adapter of ours to note: debugpy's belongs to the program."""

    async def send_input(self, data: bytes) -> None:
        del data
        raise LaunchFailed("an attached program's stdin is its own: the relay cannot write to it")

    async def terminate(self) -> int | None:
        """Let the program go: the keeper ends (debugpy sees its client leave and the program runs on)."""
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.terminate()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.proc.wait(), 5)
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            await self.proc.wait()
        return None


@functools.lru_cache(maxsize=32)
def interpreter_version(python: str) -> str | None:
    """``major.minor`` of an interpreter (asked once per path); None when it cannot be run."""
    if python == sys.executable:
        return f"{sys.version_info[0]}.{sys.version_info[1]}"
    try:
        done = subprocess.run(
            [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def launch_folder(spec: LaunchRequest) -> str:
    """The folder a local launch runs in: its ``cwd``, else its script's folder, else the relay's."""
    return spec.cwd or (str(Path(spec.script).parent) if spec.script else os.getcwd())


def private_dir(path: Path) -> Path:
    """``path`` (a folder of the relay's own), readable by this user only: what programs print can be secret."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.chmod(0o700)
    return path


class LocalLauncher(Launcher):
    name = "local"

    def __init__(
        self,
        state_dir: str,
        *,
        pool_size: int = 0,
        launch_timeout: float = 20.0,
        request_timeout: float = 10.0,
        orphan_after: float | None = None,
        workspace: str | None = None,
    ) -> None:
        """``orphan_after``: the seconds a target's keeper waits without a relay before it ends the program
        (the relay's session timeout; a session's own is told by its relay once connected). None: never.
        ``workspace``: the folder above which a launch's project environment is not looked for."""
        self.state_dir = Path(state_dir)
        self.workspace = workspace
        self.orphan_after = orphan_after
        self.state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)  # a folder given is left as it is
        self.boot_dir = prepare_boot_dir(self.state_dir / "boot")
        self.log_dir = private_dir(self.state_dir / "targets")
        self.pool: LocalPool | None = None
        if pool_size > 0:
            from .pool import LocalPool

            self.pool = LocalPool(
                python=sys.executable,
                boot_dir=self.boot_dir,
                log_dir=self.log_dir,
                env=self._env({}, []),
                size=pool_size,
                launch_timeout=launch_timeout,
                request_timeout=request_timeout,
                orphan_after=orphan_after,
            )

    def _env(self, spec_env: dict[str, str], pythonpath: list[str]) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGRELAY_")}
        env.update(spec_env)
        paths = [str(self.boot_dir), *pythonpath]
        if env.get("PYTHONPATH"):
            paths.append(env["PYTHONPATH"])
        env["PYTHONPATH"] = os.pathsep.join(paths)
        env.setdefault("PYTHONUNBUFFERED", "1")
        return env

    def warm_up(self) -> None:
        if self.pool is not None:
            self.pool.start()

    def pool_status(self) -> dict[str, Any] | None:
        return self.pool.stats() if self.pool is not None else None

    async def close(self) -> None:
        if self.pool is not None:
            await self.pool.close()

    def python_version(self, spec: LaunchRequest) -> str | None:
        return interpreter_version(spec.python or sys.executable)

    def choose_python(self, spec: LaunchRequest) -> tuple[LaunchRequest, str | None]:
        """The launch's project's interpreter when it names none (the relay's own when the project has none)."""
        if spec.python:
            return spec, None
        folder = launch_folder(spec)
        if not os.path.isdir(folder):
            return spec, None  # start says what is wrong with it
        chosen = launch_python(folder, workspace=self.workspace)
        if chosen.path != sys.executable:
            spec = msgspec.structs.replace(spec, python=chosen.path)
        return spec, chosen.said()

    async def start(self, spec: LaunchRequest, *, session_id: str, again: bool = False) -> Target:
        python = spec.python or sys.executable
        if os.sep not in python and shutil.which(python) is None:
            raise LaunchFailed(f"interpreter '{python}' not found on PATH", details={"python": python})
        if os.sep in python and not os.access(python, os.X_OK):
            raise LaunchFailed(f"interpreter '{python}' is not an executable file", details={"python": python})
        cwd = launch_folder(spec)
        if not os.path.isdir(cwd):
            raise LaunchFailed(f"working directory '{cwd}' does not exist", details={"cwd": cwd})
        env = self._env(spec.env, spec.pythonpath)
        if self.pool is not None:
            warm = await self.pool.acquire(spec, session_id=session_id, python=python, cwd=cwd, env=env, again=again)
            if warm is not None:
                return warm
        flags = interpreter_flags(await asyncio.to_thread(interpreter_version, python))
        port, inner = free_port(), free_port()
        secret = new_secret()
        log_path = self.log_dir / f"{session_id}.log"
        status_file = self.log_dir / f"{session_id}.keeper.json"
        status_file.unlink(missing_ok=True)
        secret_fd = secret_pipe(secret)  # never in an environment: /proc/<pid>/environ is readable to its user
        argv = keeper_command(
            [python],
            listen=f"127.0.0.1:{port}",
            connect=f"127.0.0.1:{inner}",
            status_file=str(status_file),
            keeper=str(self.boot_dir / KEEPER_FILE),
            debuggee=[python, *flags, *debugpy_args(spec, f"127.0.0.1:{inner}")],
            attach=attach_args([], just_my_code=spec.just_my_code, sub_process=spec.debug_subprocesses),
            secret_fd=secret_fd,
            orphan_after=self.orphan_after,
        )
        with log_path.open("wb") as log:
            try:
                proc = await asyncio.create_subprocess_exec(
                    *argv,
                    cwd=cwd,
                    env=env,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=log,
                    stderr=log,
                    pass_fds=(secret_fd,),
                    start_new_session=True,  # survives the relay; ended by PID, never by group
                )
            except OSError as exc:
                raise LaunchFailed(f"cannot start '{python}': {exc}", details={"python": python}) from exc
            finally:
                os.close(secret_fd)
        return LocalTarget(proc, port, log_path, keeper_secret=secret, inner_port=inner, status_file=status_file)

    async def hold(self, attached: Target, attach: dict[str, Any], *, session_id: str) -> Target | None:
        port, secret = free_port(), new_secret()
        log_path = self.log_dir / f"{session_id}.log"
        status_file = self.log_dir / f"{session_id}.keeper.json"
        status_file.unlink(missing_ok=True)
        secret_fd = secret_pipe(secret)
        argv = keeper_command(
            [sys.executable],
            listen=f"127.0.0.1:{port}",
            connect=f"{attached.host}:{attached.port}",  # the checked address, never the name again
            status_file=str(status_file),
            keeper=str(self.boot_dir / KEEPER_FILE),
            debuggee=[],  # nothing to start: the keeper holds what debugpy serves there
            attach=attach,
            secret_fd=secret_fd,
            orphan_after=self.orphan_after,
        )
        with log_path.open("wb") as log_file:
            try:
                proc = await asyncio.create_subprocess_exec(
                    *argv,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=log_file,
                    stderr=log_file,
                    pass_fds=(secret_fd,),
                    start_new_session=True,  # survives the relay; ended by PID, never by group
                )
            except OSError as exc:
                raise LaunchFailed(f"cannot start the attach keeper: {exc}") from exc
            finally:
                os.close(secret_fd)
        return AttachedTarget(proc, port, log_path, keeper_secret=secret, status_file=status_file, attached=attached)

    def _own_files(self, record: LocalTargetRecord) -> LocalTargetRecord:
        """``record`` without a log or status file outside this relay's target folder: a stored record is
        a claim, and a relay reads no file of its host for one."""
        folder = self.log_dir.resolve()
        outside: dict[str, None] = {}
        for key, path in (("log", record.log), ("status_file", record.status_file)):
            if isinstance(path, str) and Path(path).resolve().parent != folder:
                log.warning("ignoring the stored %s path %r: not in %s", key, path, folder)
                outside[key] = None
        return msgspec.structs.replace(record, **outside)

    def recover(self, record: TargetRecord) -> Target | None:
        """A target an earlier relay process started: still running; ended, with the exit code its keeper
        wrote; or None (a target without a keeper: its exit code was lost with its parent)."""
        from .orphan import EndedTarget, OrphanTarget

        if not isinstance(record, LocalTargetRecord):
            return None
        record = self._own_files(record)
        found = OrphanTarget.find(record)
        if found is None and record.keeper:
            code = keeper_exit_code(given(record.status_file))
            if code is not None:
                return EndedTarget(code, given(record.log))
        return found
