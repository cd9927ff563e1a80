"""A tool call's answer: one JSON object (compact text and structured content), or a tool error carrying
``{"error": {code, message, hint, details}}`` whose hint names tools."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from mcp.types import CallToolResult, TextContent

from debugrelay.errors import ApiError, RelayError

log = logging.getLogger("debugrelay.mcp")

ToolFn = Callable[..., Awaitable[dict[str, Any]]]


def _text(data: dict[str, Any]) -> str:
    return msgspec.json.encode(data).decode()


def answer(data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=_text(data))], structured_content=data)


MCP_HINTS = {
    "NOT_PAUSED": "The program is running: call breakpoint_wait to wait for the next stop, or debug_pause to stop it.",
    "session_not_found": "Call debug_status to see the sessions, or debug_launch to start a program.",
    "invalid_state": "Call debug_status to see the session's state; debug_launch runs the program again.",
    "INVALID_REFERENCE": "References live only until the program resumes: list variables again (debug_variables).",
    "target_gone": "The program has ended: debug_output shows what it printed; debug_launch runs it again.",
    "NO_EXCEPTION": "Not stopped at an exception. debug_launch stops on uncaught exceptions by default; "
    "debug_set_exception_breakpoints(['raised']) stops on every raise.",
    "breakpoint_not_found": "debug_status lists the session's breakpoints.",
    "debugpy_timeout": "The program did not answer in time: retry, or debug_pause / debug_disconnect it.",
    "evaluation_error": "The expression raised in the program: fix it (debug_variables lists the names in scope).",
    "invalid_request": "Fix the arguments: the tool's input schema describes each one.",
    "unsupported": "Use variables_get or debug_evaluate instead.",
}


def failure(error: dict[str, Any]) -> CallToolResult:
    error = {k: v for k, v in error.items() if v not in (None, "", {}, [])}
    payload = {"error": error}
    return CallToolResult(
        content=[TextContent(type="text", text=_text(payload))], structured_content=payload, is_error=True
    )


def error_dict(exc: RelayError | ApiError) -> dict[str, Any]:
    """The error with a hint that names tools: the domain's default hint, or an HTTP one from a relay,
    is replaced by the tools' wording of it."""
    data = exc.to_dict()
    if exc.code in MCP_HINTS and (exc.hint_is_default or not exc.hint):
        data["hint"] = MCP_HINTS[exc.code]
    return data


def guarded(fn: ToolFn) -> Callable[..., Awaitable[CallToolResult]]:
    """Turn a tool body's dict into an answer and its domain errors into tool errors (the relay's answer
    already says ``"persisted": false`` where a change waits for the state store)."""

    @functools.wraps(fn)
    async def run(*args: Any, **kwargs: Any) -> CallToolResult:
        try:
            return answer(await fn(*args, **kwargs))
        except (RelayError, ApiError) as exc:
            return failure(error_dict(exc))
        except Exception as exc:
            log.exception("tool %s failed", fn.__name__)
            return failure(
                {
                    "code": "internal_error",
                    "message": f"the relay failed: {exc.__class__.__name__}",
                    "hint": "This is a relay bug, not your call; the session is intact. Retry, or check debug_status.",
                }
            )

    run.__annotations__ = {**fn.__annotations__, "return": CallToolResult}
    return run
