"""The processes of one session's program: the root and the Python processes it starts.

A keeper attaches to each child debugpy announces and tags its events with the child's pid; it also
announces the Python descendants that run without the debugger (child debugging off), so a stop can
say which processes a breakpoint will not reach. One stop is shown at a time: a stop of another
process waits until the process shown goes on (or ends), then it is shown in its turn.
"""

from __future__ import annotations

from typing import Any

import msgspec

from debugrelay.dap import StoppedEvent
from debugrelay.models import ProcessInfo, SessionRecord, Stop
from debugrelay.store import timestamp

MAX_PROCESSES = 200  # kept per session; the oldest ended ones go first
MAX_COMMAND = 512
MAX_NOTES = 20  # the session's notes kept (as its recovery keeps them)
MAX_WHY = 200
REFUSED_NOTE = "announced to the debugger as a child of the program, was refused"


class Processes:
    """Which process the current stop is in, the stops waiting their turn, and every process seen."""

    def __init__(self, record: SessionRecord) -> None:
        self.record = record
        self.focus: int | None = None  # the child the current stop is in; None: the root process
        self.showing = False  # a stop is shown (or being read for showing): others wait their turn
        self.queued: dict[int | None, StoppedEvent] = {}  # process -> its stop, in arrival order
        self.shown_event: StoppedEvent | None = None  # the stop shown, as debugpy said it
        self.set_aside: dict[int | None, Stop] = {}  # stops shown before, waiting again: shown as they were
        self.root_pid: int | None = None

    def reset(self) -> None:
        """A new run: no stop, no children yet."""
        self.focus, self.showing = None, False
        self.queued.clear()
        self.set_aside.clear()
        self.root_pid = None
        self.record.processes = []

    def ended(self) -> None:
        """The program ended: so did every process it left (the keeper ends them with it)."""
        self.focus, self.showing = None, False
        self.queued.clear()
        self.set_aside.clear()
        for proc in self.record.processes:
            if proc.state != "exited":
                proc.state = "exited"

    # -- the table --------------------------------------------------------------------------------

    def get(self, pid: int) -> ProcessInfo | None:
        return next((p for p in self.record.processes if p.pid == pid), None)

    def announced(self, body: dict[str, Any]) -> bool:
        """A keeper's ``debugrelay.process`` event: a child started, attached or ended. True if it changed."""
        pid = body.get("pid")
        if not isinstance(pid, int) or pid == self.root_pid:
            return False
        state = body.get("state")
        if state == "refused":
            self._refused(pid, body)
            return True
        known = self.get(pid)
        command = body.get("command")
        ppid = body.get("ppid")
        debugged = body.get("debugged")
        if known is None:
            if state == "exited" and not debugged:
                return False  # a short-lived process never announced as running: nothing to say
            known = ProcessInfo(pid=pid, debugged=debugged is not False)
            self.record.processes = [*self.record.processes, known]
            self._bound()
        elif debugged is True:
            known.debugged = True  # found first, attached since
        if isinstance(command, str) and command:
            known.command = command[:MAX_COMMAND]
        if isinstance(ppid, int):
            known.ppid = ppid
        if state == "exited":
            known.state = "exited"
            code = body.get("exit_code")
            known.exit_code = code if isinstance(code, int) else known.exit_code
        elif state == "running" and known.state != "paused":
            known.state = "running"
        return True

    def _refused(self, pid: int, body: dict[str, Any]) -> None:
        """debugpy announced a process the keeper would not attach (not a child of the program: something
        else connected to the debugger): never listed; one note says so, the latest refusal replacing the
        one before."""
        why = body.get("why")
        count = body.get("refused")
        text = f"{timestamp()} process {pid}, {REFUSED_NOTE}"
        if isinstance(why, str) and why:
            text += f": {why[:MAX_WHY]}"
        if isinstance(count, int) and count > 1:
            text += f" ({count} refused in this run)"
        notes = [note for note in self.record.notes if REFUSED_NOTE not in note]
        self.record.notes = [*notes, text][-MAX_NOTES:]

    def merge(self, listed: Any) -> list[tuple[int, dict[str, Any]]]:
        """A keeper's list of processes (its hello): the table updated; the stops they are in returned."""
        paused: list[tuple[int, dict[str, Any]]] = []
        for entry in listed if isinstance(listed, list) else []:
            if not isinstance(entry, dict) or not isinstance(entry.get("pid"), int):
                continue
            self.announced(entry)
            if isinstance(entry.get("paused"), dict):
                paused.append((entry["pid"], entry["paused"]))
        return paused

    def set_state(self, pid: int | None, state: str, exit_code: int | None = None) -> None:
        known = self.get(pid) if pid is not None else None
        if known is None:
            if pid is None or pid == self.root_pid:
                return
            known = ProcessInfo(pid=pid)
            self.record.processes = [*self.record.processes, known]
            self._bound()
        if known.state == "exited":
            return
        known.state = state  # type: ignore[assignment]
        if exit_code is not None:
            known.exit_code = exit_code

    def _bound(self) -> None:
        procs = self.record.processes
        while len(procs) > MAX_PROCESSES:
            ended = next((i for i, p in enumerate(procs) if p.state == "exited"), 0)
            procs = procs[:ended] + procs[ended + 1 :]
        self.record.processes = procs

    def undebugged(self) -> list[ProcessInfo]:
        """Python processes of the program that run without the debugger."""
        return [p for p in self.record.processes if not p.debugged and p.state != "exited"]

    def debugged_running(self) -> list[int]:
        return [p.pid for p in self.record.processes if p.debugged and p.state == "running"]

    def table(self, root_state: str, root_command: str | None) -> list[ProcessInfo]:
        """Every process of the session, the root first."""
        root = ProcessInfo(pid=self.root_pid or 0, root=True, state=root_state, command=root_command)  # type: ignore[arg-type]
        return [root, *(msgspec.structs.replace(p) for p in self.record.processes)]

    # -- stops, one shown at a time --------------------------------------------------------------

    def queue(self, process: int | None, body: StoppedEvent) -> None:
        self.queued.pop(process, None)
        self.queued[process] = body

    def unqueue(self, process: int | None) -> None:
        self.queued.pop(process, None)
        self.set_aside.pop(process, None)

    def next_queued(self) -> tuple[int | None, StoppedEvent] | None:
        if not self.queued:
            return None
        process = next(iter(self.queued))
        return process, self.queued.pop(process)

    def key(self, pid: int) -> int | None:
        """The key of ``pid`` among the stops: None for the program's own process."""
        return None if pid == self.root_pid else pid
