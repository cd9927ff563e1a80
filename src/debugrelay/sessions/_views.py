"""What the API shows of a session: a compact status and a fuller detail view."""

from __future__ import annotations

import signal
from typing import Any

import msgspec

from debugrelay.models import LaunchRequest

from ._session import Session

WARN_FRACTION = 0.5  # warn once half of the idle timeout has passed


def _loc(value: Any) -> Any:
    return msgspec.to_builtins(value) if value is not None else None


def _compact(data: dict[str, Any]) -> dict[str, Any]:
    """Only what was set: agents pay for every default echoed back."""
    return {k: v for k, v in data.items() if v is not None and v is not False and v not in ([], {})}


MASK = "***"


def masked_launch(spec: LaunchRequest) -> dict[str, Any]:
    """A launch as shown to clients: what was set, environment values masked (they often hold secrets)."""
    data = _compact(msgspec.to_builtins(spec))
    if data.get("env"):
        data["env"] = dict.fromkeys(data["env"], MASK)
    return data


def status_view(session: Session, expires_in: float | None = None) -> dict[str, Any]:
    """``{status, reason, location, exception, exit_code, ...}``: compact, nothing omitted that is set.

    A program with several threads: the stopped one's name and the count; every thread's state when the
    threads changed since the previous stop (the threads listing gives it on request): 11 unchanged
    threads cost ~900 bytes a stop."""
    rec = session.record
    out: dict[str, Any] = {"session_id": rec.id, "status": rec.status}
    stop = rec.stop
    if rec.status == "paused" and stop is not None:
        out["reason"] = stop.reason
        out["thread_id"] = stop.thread_id
        if stop.location is not None:
            out["location"] = _loc(stop.location)
        if stop.breakpoint_ids:
            out["breakpoint_ids"] = stop.breakpoint_ids
        if stop.exception is not None:
            out["exception"] = _loc(stop.exception)
        if stop.left_by is not None:
            out["left_by_exception"] = _loc(stop.left_by)
        if stop.description and stop.reason not in ("breakpoint", "step", "entry"):
            out["description"] = stop.description
        if stop.threads:  # several threads (spec 4.3): which one stopped, how many; the list when it changed
            out["thread_name"] = next((t.name for t in stop.threads if t.thread_id == stop.thread_id), None)
            out["thread_count"] = len(stop.threads)
        if stop.threads and stop.threads_changed:
            out["all_threads"] = [
                {
                    "thread_id": t.thread_id,
                    "name": t.name,
                    "status": "paused" if stop.all_threads_stopped or t.thread_id == stop.thread_id else "running",
                }
                for t in stop.threads
            ]
    if rec.status == "launching" and rec.starting:
        out["starting"] = rec.starting
    if rec.published and rec.status in ("launching", "running", "paused"):
        out["published"] = [msgspec.to_builtins(p) for p in rec.published]
    if rec.status in ("terminated", "failed"):
        if rec.reason:
            out["reason"] = rec.reason
        ran_plain = [p for p in rec.processes if not p.debugged]
        if ran_plain and any(b.shown for b in rec.breakpoints):
            # a breakpoint that never stopped may have been in one of these
            out["undebugged"] = [{"pid": p.pid, "command": p.command} for p in ran_plain[:10]]
            out["undebugged_note"] = UNDEBUGGED_AFTER
        if rec.exit_code is not None or rec.status == "terminated":
            out["exit_code"] = rec.exit_code
            out["description"] = rec.ended or killed_by(rec.exit_code, rec.reason)
        if rec.error:
            out["error"] = rec.error
    if rec.processes and rec.status in ("running", "paused", "launching"):
        _processes(session, out)
    if rec.recovered:
        out["recovered"] = True
    if expires_in is not None:
        total = rec.timeout_minutes * 60
        if expires_in <= total * WARN_FRACTION:
            minutes = max(0, round(expires_in / 60))
            out["warning"] = f"Session will expire in {minutes} minutes"
    return out


UNDEBUGGED_NOTE = (
    "these Python processes run without the debugger: no breakpoint stops in them; launch with"
    " debug_subprocesses true to debug child processes"
)
UNDEBUGGED_AFTER = (
    "these Python processes ran without the debugger: no breakpoint could stop in them; launch with"
    " debug_subprocesses true to debug child processes"
)


def _processes(session: Session, out: dict[str, Any]) -> None:
    """A program with children: the stopped process, the stops waiting their turn, the undebugged ones."""
    procs = session.processes
    stop = session.record.stop
    if session.record.status == "paused" and stop is not None and stop.process is not None:
        out["process"] = stop.process
    if procs.queued:
        out["processes_waiting"] = len(procs.queued)
    undebugged = procs.undebugged()
    if undebugged:
        out["undebugged"] = [{"pid": p.pid, "command": p.command} for p in undebugged[:10]]
        out["undebugged_note"] = UNDEBUGGED_NOTE


def process_table(session: Session) -> dict[str, Any]:
    """The program's processes, its own first: ``{processes, undebugged_note}``."""
    rec = session.record
    procs = session.processes
    stop = rec.stop
    if rec.status in ("terminated", "failed", "created"):
        root_state = "exited" if rec.status != "created" else "running"
    elif (rec.status == "paused" and stop is not None and procs.focus is None) or None in procs.queued:
        root_state = "paused"
    else:
        root_state = "running"
    command = None
    if rec.launch is not None:
        command = " ".join([rec.launch.script or f"-m {rec.launch.module}", *rec.launch.args])[:512]
    table = procs.table(root_state, command)
    if rec.status == "paused":
        shown = procs.focus if procs.focus is not None else procs.root_pid
        for proc in table:
            proc.shown = proc.pid == shown
    if rec.status in ("terminated", "failed"):
        table[0].exit_code = rec.exit_code
    out: dict[str, Any] = {"processes": table}
    if procs.undebugged():
        out["undebugged_note"] = UNDEBUGGED_NOTE
    return out


# the ends the relay made itself (the session's ``reason``): a signal then says nothing about the program
_RELAY_ENDED = {
    "terminated": "as asked",
    "restarted": "to run it again",
    "deleted": "with its session",
    "timeout": "the session timed out",
}


def killed_by(exit_code: int | None, reason: str | None = None) -> str | None:
    """Why a target ended, when a signal ended it: a process's negative code, or a container's 128 + n."""
    if exit_code is None:
        return None
    number = -exit_code if exit_code < 0 else exit_code - 128 if 128 < exit_code < 160 else 0
    try:
        name = signal.Signals(number).name
    except ValueError:
        return None
    if reason in _RELAY_ENDED:
        return f"ended by {name}: the relay ended it ({_RELAY_ENDED[reason]})"
    hint = " (killed from outside, or out of memory)" if name == "SIGKILL" else ""
    return f"ended by {name}{hint}"


def session_view(session: Session, expires_in: float | None = None) -> dict[str, Any]:
    rec = session.record
    out = status_view(session, expires_in)
    out.update(
        {
            "name": rec.name,
            "mode": rec.mode,
            "created_at": rec.created_at,
            "timeout_minutes": rec.timeout_minutes,
            "breakpoints": sum(1 for b in rec.breakpoints if b.shown),
        }
    )
    if expires_in is not None:
        out["expires_in_seconds"] = round(max(0.0, expires_in), 1)
    if rec.created_by is not None:
        out["created_by"] = rec.created_by
    if rec.shared_with:
        out["shared_with"] = rec.shared_with
    if rec.launch is not None:
        out["launch"] = masked_launch(rec.launch)
        out["python"] = rec.python
    if rec.attach is not None:
        out["attach"] = _compact(msgspec.to_builtins(rec.attach))
    if rec.target is not None:
        target = msgspec.to_builtins(rec.target)
        shown = {k: v for k, v in target.items() if v is not None and not k.startswith("attached_")}
        if target.get("attached_host"):  # held by a keeper: the program's address, not the keeper's
            shown.update(host=target["attached_host"], port=target.get("attached_port"))
        out["target"] = shown
        out["survives_relay_restart"] = bool(rec.target.keeper)
    if rec.notes:
        out["notes"] = rec.notes
    return {k: v for k, v in out.items() if v is not None or k == "exit_code"}
