"""Domain errors: one hierarchy, each with a stable code, an HTTP status and a hint.

The API and the MCP server map these to their own envelopes; nothing here imports a web framework.
"""

from __future__ import annotations

from typing import Any, ClassVar


class RelayError(Exception):
    """Root of every error an agent can see: ``code``, ``message``, ``details`` and ``hint``."""

    code: ClassVar[str] = "internal_error"
    status: ClassVar[int] = 500
    default_hint: ClassVar[str] = ""

    def __init__(self, message: str, *, details: dict[str, Any] | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.details = details or {}
        self.hint = hint if hint is not None else self.default_hint
        self.hint_is_default = hint is None  # an adapter may word it its own way (HTTP path, tool name)

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": self.details, "hint": self.hint}


class InvalidRequest(RelayError):
    code = "invalid_request"
    status = 400
    default_hint = "Fix the request: each operation documents the shape it expects."


class InvalidLine(InvalidRequest):
    code = "invalid_line"
    default_hint = "Pick a line between 1 and details.max_line."


class InvalidCondition(InvalidRequest):
    code = "invalid_condition"
    default_hint = "The condition must be a valid Python expression."


class FileNotFound(InvalidRequest):
    code = "file_not_found"
    default_hint = "Check the path: it must exist where the target runs."


class SyntaxErrorInScript(InvalidRequest):
    code = "syntax_error"
    default_hint = "Fix the syntax error, then launch again: the session is still 'created'."


class SessionNotFound(RelayError):
    code = "session_not_found"
    status = 404
    default_hint = "List the sessions, or create one."


class BreakpointNotFound(RelayError):
    code = "breakpoint_not_found"
    status = 404
    default_hint = "List the session's breakpoints."


class NotFound(RelayError):
    code = "not_found"
    status = 404


class ThreadNotFound(NotFound):
    code = "thread_not_found"
    default_hint = "List the target's threads."


class InvalidState(RelayError):
    """The session is in a state where this operation makes no sense (409)."""

    code = "invalid_state"
    status = 409


class Unsealed(InvalidState):
    """Code read back from the state store without this relay's seal (a watch, a breakpoint, a profile): it is
    shown and never run; it cannot be changed or applied either."""

    code = "unsealed"
    default_hint = (
        "It was read from the state store without the seal of a relay sharing this relay's key "
        "(DEBUGRELAY_TOKEN), so it is never run. Remove it and set it again if it is yours."
    )


class NotPaused(InvalidState):
    code = "NOT_PAUSED"
    default_hint = "The target is running: pause it, or wait until it stops."


class NoException(InvalidState):
    code = "NO_EXCEPTION"
    default_hint = "The session is not stopped at an exception; set exception breakpoints and wait for one."


class InvalidReference(RelayError):
    code = "INVALID_REFERENCE"
    status = 404
    default_hint = "References are valid only while paused at the stop that produced them; fetch them again."


class DepthExceeded(InvalidRequest):
    code = "DEPTH_EXCEEDED"
    default_hint = "Use a depth between 1 and 10."


class EvaluationError(InvalidRequest):
    code = "evaluation_error"
    default_hint = "The expression raised in the target; fix it or check the names in scope."


class TooManySessions(RelayError):
    code = "too_many_sessions"
    status = 429
    default_hint = "Delete sessions you no longer need."


class TooManyWaits(RelayError):
    code = "too_many_waits"
    status = 429
    default_hint = "Close a wait you no longer need; one wait per session is enough: it answers every stop."


class LaunchFailed(RelayError):
    code = "launch_failed"
    status = 400
    default_hint = "Check the interpreter, the script path and the session's output."


class RestartFailed(LaunchFailed):
    """The session's recorded launch cannot start again (its interpreter, script or folder is gone or never
    was): the restart asked for nothing wrong, the launch it repeats is (409)."""

    status = 409
    default_hint = "Launch it again with what changed (POST /sessions/{id}/launch)."


class DebugpyTimeout(RelayError):
    code = "debugpy_timeout"
    status = 504
    default_hint = "The target did not answer in time; retry, or pause/terminate the session if it hangs."


class CollectFailed(RelayError):
    """A snapshot could not be read: the target did not pause, or the collector failed in it."""

    code = "collect_failed"
    status = 409  # the program's state (a long C call, no pause hook) keeps it from pausing now
    default_hint = "Retry; a program busy in one long C call cannot pause until it returns."


class TargetGone(RelayError):
    code = "target_gone"
    status = 409
    default_hint = "The debug target has ended; read its output, then relaunch or delete the session."


class ServiceUnreachable(RelayError):
    """A request for the debugged service found nothing listening where the relay reaches the target."""

    code = "service_unreachable"
    status = 409  # the target's state (not started listening, ended), not the request, is at fault
    default_hint = "Is the server listening on that port yet? Check the output, or wait and send again."


class DebugpyError(RelayError):
    """debugpy answered a request with ``success: false``; the message is debugpy's own."""

    code = "debugger_error"
    status = 400
    default_hint = "debugpy refused the request for the reason in the message; check ids against a fresh stack."


class Unauthorized(RelayError):
    code = "unauthorized"
    status = 401
    default_hint = "Send the relay's token as 'Authorization: Bearer <DEBUGRELAY_TOKEN>'."


class StoreUnavailable(RelayError):
    code = "store_unavailable"
    status = 503
    default_hint = "The state store (Redis) is unreachable; the relay reconnects by itself, retry shortly."


class Refused(RelayError):
    """The operator's policy does not allow this (a path outside the roots, an image off the list, ...).

    ``details.setting`` names the setting that would allow it.
    """

    code = "refused"
    status = 403
    default_hint = "The relay's operator decides this: see details.setting (README, Security)."


class Forbidden(RelayError):
    """The caller's credential does not allow this on this session (its role, or the session's owner)."""

    code = "forbidden"
    status = 403


class Unsupported(RelayError):
    code = "unsupported"
    status = 400


class FunctionNotFound(NotFound):
    code = "function_not_found"
    default_hint = (
        "Name it as 'file path:Class.method' (or 'package.module:function'); details.nearest lists close names."
    )


class ApiError(Exception):
    """The relay answered a client with its error envelope, or could not be reached (``status`` 0); here, not in
    the client, so code that only catches it (the MCP tools) loads no HTTP client."""

    def __init__(
        self, status: int, code: str, message: str, *, hint: str = "", details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.hint = hint
        self.details = details or {}

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": self.details, "hint": self.hint}

    @property
    def hint_is_default(self) -> bool:
        """No hint, or the API's wording of the domain's default one (an adapter words it its own way)."""
        return not self.hint or any(word in self.hint for word in _HTTP_WORDS)


_HTTP_WORDS = ("/sessions", "/schema", "GET ", "POST ", "DELETE ", "/wait", "/output", "/scopes")
