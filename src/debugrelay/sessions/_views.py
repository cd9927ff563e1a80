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
    elif rec.status in ("terminated", "failed"):
        if rec.reason:
            out["reason"] = rec.reason
        if rec.exit_code is not None or rec.status == "terminated":
            out["exit_code"] = rec.exit_code
            out["description"] = killed_by(rec.exit_code)
        if rec.error:
            out["error"] = rec.error
    if rec.recovered:
        out["recovered"] = True
    if expires_in is not None:
        total = rec.timeout_minutes * 60
        if expires_in <= total * WARN_FRACTION:
            minutes = max(0, round(expires_in / 60))
            out["warning"] = f"Session will expire in {minutes} minutes"
    return out


def killed_by(exit_code: int | None) -> str | None:
    """Why a target ended, when a signal ended it: a process's negative code, or a container's 128 + n."""
    if exit_code is None:
        return None
    number = -exit_code if exit_code < 0 else exit_code - 128 if 128 < exit_code < 160 else 0
    try:
        name = signal.Signals(number).name
    except ValueError:
        return None
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
            "breakpoints": sum(1 for b in rec.breakpoints if not b.internal),
        }
    )
    if expires_in is not None:
        out["expires_in_seconds"] = round(max(0.0, expires_in), 1)
    if rec.launch is not None:
        out["launch"] = masked_launch(rec.launch)
    if rec.attach is not None:
        out["attach"] = _compact(msgspec.to_builtins(rec.attach))
    if rec.target is not None:
        out["target"] = {k: v for k, v in rec.target.items() if v is not None}
        out["survives_relay_restart"] = bool(rec.target.get("keeper"))
    if rec.notes:
        out["notes"] = rec.notes
    return {k: v for k, v in out.items() if v is not None or k == "exit_code"}
