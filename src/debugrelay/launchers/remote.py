"""Attach targets: a debugpy someone else started (``--listen``), found by address or by PID."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import sys
from typing import Any

import psutil

from debugrelay.config import Settings
from debugrelay.errors import InvalidRequest, LaunchFailed
from debugrelay.models import AttachSpec, RemoteTargetRecord, TargetRecord, given

from .attach_policy import check_attach_again, check_attach_host, listing
from .base import Launcher, Target
from .local import free_port


class RemoteTarget(Target):
    """No lifecycle of ours: we neither started it nor end it (detach leaves it running)."""

    kind = "remote"

    def __init__(
        self,
        host: str,
        port: int,
        pid: int | None = None,
        mappings: list[tuple[str, str]] | None = None,
        name: str | None = None,
    ) -> None:
        self.host = host  # the address connected to: checked, never a name resolved again
        self.port = port
        self.pid = pid
        self.mappings = mappings or []
        self.name = name if name and name != host else None  # the host name the attach gave, if any

    def poll(self) -> int | None:
        if self.pid is not None and not psutil.pid_exists(self.pid):
            return -1
        return None

    async def send_input(self, data: bytes) -> None:
        raise InvalidRequest("an attached process's stdin is not reachable through the relay")

    async def terminate(self) -> int | None:
        return None  # debugpy ends it on 'disconnect' with terminateDebuggee when asked

    def path_mappings(self) -> list[dict[str, str]]:
        return [{"localRoot": local, "remoteRoot": remote} for local, remote in self.mappings]

    def describe(self) -> RemoteTargetRecord:
        record = self.described_as(RemoteTargetRecord)
        record.path_mappings = [list(m) for m in self.mappings]
        if self.name:  # else absent, as before names were kept
            record.name = self.name
        return record

    @classmethod
    async def resolve(cls, spec: AttachSpec, address: str | None = None) -> RemoteTarget:
        """Where to connect: ``address`` (``spec.host`` as the attach policy resolved and checked it)
        and ``port``, or the debugpy listener of local process ``pid``."""
        mappings = [(m.local_root, m.remote_root) for m in spec.path_mappings]
        if spec.port is not None:
            return cls(address or spec.host, spec.port, spec.pid, mappings, name=spec.host)
        if spec.pid is None:
            raise InvalidRequest(
                "attach needs 'port' (with 'host') or 'pid'",
                hint='e.g. {"mode": "attach", "host": "127.0.0.1", "port": 5678}',
            )
        port = listening_port(spec.pid)
        if port is None:
            port = await inject(spec.pid)
        return cls("127.0.0.1", port, spec.pid, mappings)


class RemoteLauncher(Launcher):
    """Attach targets are not started by the relay; this only finds them again after a restart."""

    name = "remote"

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings  # with them, a stored address is checked again before it is reached

    async def start(self, spec: Any, *, session_id: str, again: bool = False) -> Target:
        raise InvalidRequest("remote targets are attached to, not launched", hint="Attach to it instead.")

    def recover(self, record: TargetRecord) -> Target | None:
        """The same address again; a local process named by PID must still be there."""
        if not isinstance(record, RemoteTargetRecord):
            return None
        host, port, pid = given(record.host), given(record.port), given(record.pid)
        if host is None or port is None:
            return None
        if pid is not None and not psutil.pid_exists(pid):
            return None
        name = given(record.name)
        name = host if name is None else name
        if self.settings is not None:  # a stored record is a claim: the attach policy holds for it too
            host = (
                check_attach_again(self.settings, name, host)
                if _is_address(host)
                else check_attach_host(self.settings, host)
            )
        mappings = [(m[0], m[1]) for m in given(record.path_mappings) or [] if len(m) == 2]
        return RemoteTarget(host, port, pid, mappings, name=name)


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def listening_port(pid: int) -> int | None:
    """The port a local debugpy started with ``--listen`` serves for process ``pid``."""
    try:
        proc = psutil.Process(pid)
        cmdline = proc.cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied) as exc:
        raise InvalidRequest(f"no process {pid} that can be debugged", details={"pid": pid}) from exc
    for i, arg in enumerate(cmdline):
        if arg == "--listen" and i + 1 < len(cmdline):
            with contextlib.suppress(ValueError):
                return int(cmdline[i + 1].rsplit(":", 1)[-1])
    return None


async def inject(pid: int) -> int:
    """Inject debugpy into a running process (needs ptrace rights and gdb) and return its port."""
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "debugpy",
        "--listen",
        f"127.0.0.1:{port}",
        "--pid",
        str(pid),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), 30)
    except TimeoutError as exc:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        raise LaunchFailed(f"injecting debugpy into process {pid} timed out", details={"pid": pid}) from exc
    if proc.returncode != 0:
        raise LaunchFailed(
            f"could not inject debugpy into process {pid}",
            details={"pid": pid, "output": out.decode(errors="replace")[-1000:]},
            hint="Start the process with 'python -m debugpy --listen HOST:PORT ...' and attach by port.",
        )
    return port


def debuggable_processes(settings: Settings, *, inject: bool = True) -> list[dict[str, object]]:
    """Local Python processes of the workspace that attach may take (``attach_policy.listing``), and the
    debugpy port of those that listen already; without ``inject`` (no local launcher), only those."""
    shown = listing(settings)
    out: list[dict[str, object]] = []
    for proc in psutil.process_iter(["pid", "name", "cmdline", "cwd", "uids"]):
        cmd = proc.info.get("cmdline") or []
        if not cmd or ("python" not in (proc.info.get("name") or "") and not any("python" in c for c in cmd[:1])):
            continue
        if any("debugpy/adapter" in c or "debugpy.adapter" in c or "debugpy/launcher" in c for c in cmd):
            continue
        uids = proc.info.get("uids")
        if not shown(proc.info["pid"], uids.real if uids else None, proc.info.get("cwd"), cmd):
            continue
        port = None
        if "--listen" in cmd:
            with contextlib.suppress(ValueError, IndexError):
                port = int(cmd[cmd.index("--listen") + 1].rsplit(":", 1)[-1])
        if port is None and not inject:
            continue
        item: dict[str, object] = {"pid": proc.info["pid"], "command": " ".join(cmd)[:300]}
        if port is not None:
            item["debugpy_port"] = port
        out.append(item)
    return out
