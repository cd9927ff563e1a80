"""A local target started by an earlier relay process: not our child, found again by PID and port."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import psutil

from debugrelay.errors import InvalidState
from debugrelay.models import LocalTargetRecord, TargetRecord, given

from .base import Target
from .local import find_adapter, keeper_exit_code, kill_tree, log_tail, serves_port


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


class OrphanTarget(Target):
    """A debuggee that outlived the relay that launched it (``start_new_session``, output to a file).

    Its exit code is lost with its parent, unless it has a keeper (the process found is then the
    keeper, which writes the debuggee's exit code to its status file): ``poll()`` answers -1 once it
    is gone and no code is known (as for an attached process).
    Its stdin was a pipe of the dead relay: it reads EOF now and cannot be written to.
    """

    kind = "local"

    def __init__(
        self,
        proc: psutil.Process,
        port: int,
        log_path: str | None,
        adapter_pid: int | None,
        *,
        debugpy_port: int | None = None,
        status_file: str | None = None,
    ) -> None:
        self.proc = proc
        self.host = "127.0.0.1"
        self.port = port
        self.pid = proc.pid
        self.log_path = Path(log_path) if log_path else None
        self.adapter_pid = adapter_pid
        self.debugpy_port = debugpy_port or port
        self.status_file = status_file

    @classmethod
    def find(cls, record: TargetRecord) -> OrphanTarget | None:
        """The process ``record`` names, if it is the one that was started (same start time and user: a
        reused PID is another process) and still runs debugpy on that port. A record without the start
        time or the user, or not of a local target, names nothing."""
        if not isinstance(record, LocalTargetRecord):
            return None
        pid, port, recorded_start, recorded_uid = record.pid, record.port, record.started, record.uid
        if not isinstance(pid, int) or not isinstance(port, int):
            return None
        if not isinstance(recorded_start, int | float) or not isinstance(recorded_uid, int):
            return None
        try:
            proc = psutil.Process(pid)
            cmdline = proc.cmdline()
            started, uid = proc.create_time(), proc.uids().real
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            return None
        if abs(started - recorded_start) > 0.01 or uid != recorded_uid:
            return None  # the pid was reused: another process
        listens = any(
            arg == "--listen" and i + 1 < len(cmdline) and cmdline[i + 1].rsplit(":", 1)[-1] == str(port)
            for i, arg in enumerate(cmdline)
        )
        if not listens or not _alive(proc):
            return None
        return cls(
            proc,
            port,
            given(record.log),
            given(record.adapter_pid),
            debugpy_port=given(record.debugpy_port),
            status_file=given(record.status_file) if record.keeper else None,
        )

    def poll(self) -> int | None:
        if _alive(self.proc):
            return None
        code = keeper_exit_code(self.status_file)
        return -1 if code is None else code

    async def send_input(self, data: bytes) -> None:
        raise InvalidState(
            "this target's stdin was lost: the relay that started it stopped (the target reads EOF)",
            details={"pid": self.pid},
            hint="Restart the session to get a fresh stdin, or pass stdin_inputs at launch.",
        )

    async def terminate(self) -> int | None:
        adapter = self.adapter_pid or await asyncio.to_thread(find_adapter, self.debugpy_port)
        if _alive(self.proc):
            await asyncio.to_thread(kill_tree, self.proc.pid)
        if adapter is not None and await asyncio.to_thread(serves_port, adapter, self.debugpy_port):
            await asyncio.to_thread(kill_tree, adapter)
        return keeper_exit_code(self.status_file)

    def on_attached(self) -> None:
        self.adapter_pid = find_adapter(self.debugpy_port) or self.adapter_pid

    def describe(self) -> LocalTargetRecord:
        record = self.described_as(LocalTargetRecord)
        record.adapter_pid, record.log = self.adapter_pid, str(self.log_path) if self.log_path else None
        with contextlib.suppress(psutil.Error):
            record.started, record.uid = self.proc.create_time(), self.proc.uids().real
        if self.keeper_secret:
            record.debugpy_port, record.status_file = self.debugpy_port, self.status_file
        return record

    def output_tail(self, max_bytes: int = 4096) -> str:
        return log_tail(self.log_path, max_bytes)


class EndedTarget(Target):
    """A keeper-backed local target that ended while no relay ran: its keeper left the exit code."""

    kind = "local"

    def __init__(self, exit_code: int, log_path: str | None) -> None:
        self.host, self.port = "127.0.0.1", 0
        self.exit_code = exit_code
        self.log_path = log_path

    def poll(self) -> int | None:
        return self.exit_code

    async def send_input(self, data: bytes) -> None:
        raise InvalidState("the target has ended")

    async def terminate(self) -> int | None:
        return self.exit_code

    def output_tail(self, max_bytes: int = 4096) -> str:
        return log_tail(self.log_path, max_bytes)
