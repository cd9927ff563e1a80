"""Local launcher: the target is a subprocess of this machine (the embedded default)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import sys
from pathlib import Path

import psutil

from debugrelay.errors import LaunchFailed
from debugrelay.models import LaunchRequest

from .base import Launcher, Target
from .boot import debugpy_args, prepare_boot_dir


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def kill_tree(pid: int) -> None:
    """Kill a process and all its descendants, each by PID (debugpy's adapter outlives its debuggee)."""
    try:
        root = psutil.Process(pid)
        procs = [*root.children(recursive=True), root]
    except psutil.NoSuchProcess:
        return
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            proc.kill()
    psutil.wait_procs(procs, timeout=3)


class LocalTarget(Target):
    kind = "local"

    def __init__(self, proc: asyncio.subprocess.Process, port: int, log_path: Path) -> None:
        self.proc = proc
        self.host = "127.0.0.1"
        self.port = port
        self.pid = proc.pid
        self.log_path = log_path

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
        if self.proc.returncode is None:
            await asyncio.to_thread(kill_tree, self.proc.pid)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.proc.wait(), 5)
        else:
            # the debuggee is gone; its adapter and children may not be
            await asyncio.to_thread(_kill_orphans, self.proc.pid)
        return self.proc.returncode

    def output_tail(self, max_bytes: int = 4096) -> str:
        try:
            with self.log_path.open("rb") as fh:
                fh.seek(0, os.SEEK_END)
                size = fh.tell()
                fh.seek(max(0, size - max_bytes))
                return fh.read().decode("utf-8", "replace")
        except OSError:
            return ""


def _kill_orphans(pid: int) -> None:
    """Kill processes left behind by an ended target: its debugpy adapter, by command line."""
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmd = proc.info.get("cmdline") or []
        if any("debugpy/adapter" in c or "debugpy.adapter" in c for c in cmd) and str(pid) in " ".join(cmd):
            with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                proc.kill()


class LocalLauncher(Launcher):
    name = "local"

    def __init__(self, state_dir: str) -> None:
        self.state_dir = Path(state_dir)
        self.boot_dir = prepare_boot_dir(self.state_dir / "boot")
        self.log_dir = self.state_dir / "targets"
        self.log_dir.mkdir(parents=True, exist_ok=True)

    async def start(self, spec: LaunchRequest, *, session_id: str) -> Target:
        python = spec.python or sys.executable
        if os.sep not in python and shutil.which(python) is None:
            raise LaunchFailed(f"interpreter '{python}' not found on PATH", details={"python": python})
        if os.sep in python and not os.access(python, os.X_OK):
            raise LaunchFailed(f"interpreter '{python}' is not an executable file", details={"python": python})
        cwd = spec.cwd or (str(Path(spec.script).parent) if spec.script else os.getcwd())
        if not Path(cwd).is_dir():
            raise LaunchFailed(f"working directory '{cwd}' does not exist", details={"cwd": cwd})
        env = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGRELAY_")}
        env.update(spec.env)
        paths = [str(self.boot_dir), *spec.pythonpath]
        if env.get("PYTHONPATH"):
            paths.append(env["PYTHONPATH"])
        env["PYTHONPATH"] = os.pathsep.join(paths)
        env.setdefault("PYTHONUNBUFFERED", "1")
        port = free_port()
        argv = [python, *debugpy_args(spec, f"127.0.0.1:{port}")]
        log_path = self.log_dir / f"{session_id}.log"
        with log_path.open("wb") as log:
            try:
                proc = await asyncio.create_subprocess_exec(
                    *argv,
                    cwd=cwd,
                    env=env,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=log,
                    stderr=log,
                    start_new_session=True,  # survives the relay; ended by PID, never by group
                )
            except OSError as exc:
                raise LaunchFailed(f"cannot start '{python}': {exc}", details={"python": python}) from exc
        return LocalTarget(proc, port, log_path)
