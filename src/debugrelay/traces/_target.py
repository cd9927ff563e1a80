"""Telling a target what to trace, and reading what it recorded (its ``_debugrelay_trace`` boot module).

At a launch the traces go in the environment (``DEBUGRELAY_TRACES``): they are in place before the program's
first line. Added or removed later, the module is called through ``evaluate``: in the paused frame, or in a
running program paused briefly for it. A paused program's calls (those still running included) are read the
same way; a running one's arrive on their own (``debugrelay.calls`` events, through the keeper).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from debugrelay.errors import InvalidState, RelayError
from debugrelay.evidence import BriefPause, evaluate_helper

if TYPE_CHECKING:
    from debugrelay.sessions import Session

MODULE = "_debugrelay_trace"
EVENT = "debugrelay.calls"  # a batch of calls the target sent through its keeper
CALL_TIMEOUT = 20.0


async def call(session: Session, function: str, argument: Any) -> Any:
    """``_debugrelay_trace.<function>(json of argument)`` in the target, its JSON answer decoded.

    A paused program is called where it is paused; a running one is paused for the call and resumed."""
    if session.status == "paused":
        return await _evaluate(session, await session.frame_id(0), function, argument)
    if session.status != "running":
        raise InvalidState(f"session is {session.status}", details={"status": session.status})
    async with BriefPause(session) as frame_id:
        return await _evaluate(session, frame_id, function, argument)


async def _evaluate(session: Session, frame_id: int, function: str, argument: Any) -> Any:
    return await evaluate_helper(
        session,
        frame_id,
        f"__import__({MODULE!r}).{function}({json.dumps(argument)!r})",
        what="the tracer",
        hint="Traces need a program the relay started (launch), which has the relay's start-up hooks.",
        timeout=CALL_TIMEOUT,
    )


async def paused_calls(session: Session) -> Any | None:
    """What a paused program recorded since the calls the session has (its running calls included), or None
    when it cannot say."""
    if session.status != "paused" or session.client is None:
        return None
    stop = session.record.stop
    process = stop.process if stop is not None else None
    try:
        batch = await _evaluate(session, await session.frame_id(0), "dump", session.calls.read_options(process))
    except RelayError:
        return None
    if process is None and isinstance(batch, dict) and batch.get("pid") is not None:
        session.calls.root_pid = str(batch["pid"])
    return batch
