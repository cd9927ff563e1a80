"""Calling the read-only helper module inside the target, with a timeout and a clear failure."""

from __future__ import annotations

import ast
import json
import re
from typing import TYPE_CHECKING, Any

from debugrelay.errors import DebugpyError, DebugpyTimeout, TargetGone

if TYPE_CHECKING:
    from debugrelay.sessions import Session

PROBE = "__import__('_debugrelay_probe')"
READ_TIMEOUT = 5.0  # one read of the target's state; a slow repr must not hold an autopsy for longer


class ProbeUnavailable(Exception):
    """The helper could not answer: not on the target's path (attach mode), timed out or failed."""


async def call_probe(
    session: Session, frame_id: int, call: str, seconds: float = READ_TIMEOUT, *, stable: bool = False
) -> Any:
    """Evaluate ``_debugrelay_probe.<call>`` in DAP frame ``frame_id`` and decode its JSON answer;
    ``stable``: what no evaluation can change (a frame's parameters) is asked once per stop."""
    client = session.channel
    if client is None or not session.probe_available:
        raise ProbeUnavailable("the relay's helper module is not available in this target")
    args = {"expression": f"{PROBE}.{call}", "frameId": frame_id, "context": "clipboard"}
    try:
        if stable:
            body = await session.read("evaluate", args, seconds, stable=True)
        else:
            body = await client.request("evaluate", args, timeout=seconds)
    except DebugpyTimeout as exc:
        raise ProbeUnavailable(f"reading the target timed out after {seconds:g}s") from exc
    except (DebugpyError, TargetGone) as exc:
        if "No module named" in exc.message and "_debugrelay_probe" in exc.message:
            session.probe_available = False
        raise ProbeUnavailable(last_line(exc.message)) from exc
    try:
        return json.loads(unquote(body.get("result", "")))
    except ValueError as exc:
        raise ProbeUnavailable("the helper's answer was not JSON") from exc


def unquote(result: str) -> str:
    """debugpy answers a str evaluation with its repr, even in the 'clipboard' context."""
    if result[:1] in ("'", '"'):
        try:
            value = ast.literal_eval(result)
        except (ValueError, SyntaxError):
            return result
        return value if isinstance(value, str) else result
    return result


async def dap(
    session: Session, command: str, args: dict[str, Any], seconds: float = READ_TIMEOUT, *, stable: bool = False
) -> Any:
    """One read-only DAP request on the session's connection with a read timeout (asked once per stop;
    ``stable``: kept through evaluations too, see :meth:`Session.read`)."""
    if session.client is None:
        raise TargetGone("the debug connection is closed")
    return await session.read(command, args, seconds, stable=stable)


def last_line(message: str) -> str:
    """debugpy sends the whole traceback of a failed evaluation; its last line says what failed."""
    lines = [line for line in message.strip().splitlines() if line.strip()]
    return lines[-1] if lines else message


_TB_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<function>.+))?$', re.MULTILINE)
NOT_PYTHON = "The expression is not valid Python, so nothing ran in the program: fix its syntax."


def is_syntax_error(message: str) -> bool:
    """Whether a failed evaluation never ran: the expression itself did not compile."""
    return last_line(message).startswith(("SyntaxError", "IndentationError", "TabError"))


def raised_at(message: str) -> dict[str, Any] | None:
    """Where the program's own code raised, for an exception that left a call made by the expression:
    the traceback's innermost frame after the expression's (``<string>``); None when the expression
    itself raised."""
    frames = list(_TB_FRAME.finditer(message))
    called = [i for i, f in enumerate(frames) if f["file"] == "<string>"]
    if not called or called[-1] == len(frames) - 1:
        return None
    inner = frames[-1]
    found: dict[str, Any] = {"file": inner["file"], "line": int(inner["line"])}
    if inner["function"]:
        found["function"] = inner["function"].strip()
    return found
