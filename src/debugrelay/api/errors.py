"""One error envelope everywhere: ``{"error": {"code", "message", "details", "hint"}}``."""

from __future__ import annotations

import logging
from typing import Any

from litestar import MediaType, Request, Response
from litestar.exceptions import HTTPException, ValidationException

from debugrelay.errors import RelayError

from ._derived import identifier

log = logging.getLogger(__name__)

_HTTP_CODES = {
    400: ("invalid_request", "Fix the request; see /schema for the expected shape."),
    401: ("unauthorized", "Send 'Authorization: Bearer <DEBUGRELAY_TOKEN>'."),
    404: ("not_found", "See /schema for the API's paths."),
    405: ("method_not_allowed", "See /schema for the methods each path takes."),
    413: ("payload_too_large", "Send a smaller body."),
    415: ("unsupported_media_type", "Send JSON with 'Content-Type: application/json'."),
}


def envelope(
    status: int, code: str, message: str, details: Any = None, hint: str = "", *, headers: dict[str, str] | None = None
) -> Response[Any]:
    return Response(
        {"error": {"code": code, "message": message, "details": details or {}, "hint": hint}},
        status_code=status,
        media_type=MediaType.JSON,
        headers=headers,
    )


# The domain's default hints in the API's words: the operations named by method and path.
HTTP_HINTS = {
    "invalid_request": "Fix the request body or parameters; see /schema for the expected shape.",
    "session_not_found": "List sessions with GET /sessions or create one with POST /sessions.",
    "breakpoint_not_found": "List breakpoints with GET /sessions/{id}/breakpoints.",
    "NOT_PAUSED": "The target is running: call POST /sessions/{id}/pause or /wait until it stops.",
    "NO_EXCEPTION": "The session is not stopped at an exception; set exception breakpoints and /wait.",
    "evaluation_error": "The expression raised in the target; fix it or check the names in scope (/scopes).",
    "too_many_sessions": "Delete sessions you no longer need (DELETE /sessions/{id}).",
    "launch_failed": "Check the interpreter, the script path and the session output (GET /sessions/{id}/output).",
    "target_gone": "The debug target has ended; read /output, then relaunch or delete the session.",
}


def relay_error_handler(_: Request[Any, Any, Any], exc: RelayError) -> Response[Any]:
    hint = HTTP_HINTS.get(exc.code, exc.hint) if exc.hint_is_default else exc.hint
    wait = exc.details.get("retry_after")
    # a refusal that names when to come back says it in the header clients and proxies read too
    headers = {"Retry-After": str(wait)} if isinstance(wait, int) and not isinstance(wait, bool) else None
    return envelope(exc.status, exc.code, exc.message, exc.details, hint, headers=headers)


def validation_handler(request: Request[Any, Any, Any], exc: ValidationException) -> Response[Any]:
    extra = exc.extra if isinstance(exc.extra, list | dict) else None
    if isinstance(extra, list):
        extra = [_wire_names(request, e) for e in extra]
    detail = str(exc.detail or "invalid request body")
    return envelope(
        400,
        "invalid_request",
        detail,
        {"errors": extra} if extra else {},
        "Fix the fields named in details.errors; see /schema for the expected shape.",
    )


def _wire_names(request: Request[Any, Any, Any], error: Any) -> Any:
    """An error about a parameter names it as the client sent it, not as the handler calls it (``scope``,
    a name Litestar keeps for itself, is ``scope_`` inside)."""
    op = request.scope.get("route_handler").opt.get("operation") if request.scope.get("route_handler") else None
    if op is None or not isinstance(error, dict) or not isinstance(error.get("key"), str):
        return error
    names = {identifier(p.wire): p.wire for p in op.params}
    return {**error, "key": names.get(error["key"], error["key"])}


def http_error_handler(_: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    code, hint = _HTTP_CODES.get(exc.status_code, ("http_error", ""))
    extra = exc.extra if isinstance(exc.extra, dict) else {}
    # Litestar's 405 names the path's methods in its headers ("allow"): the answer must carry them (RFC 9110)
    headers = {k.title(): v for k, v in (exc.headers or {}).items()}
    if exc.status_code == 405 and "Allow" in headers:
        allowed = sorted(m.strip() for m in headers["Allow"].split(","))
        headers["Allow"] = ", ".join(allowed)
        extra = {**extra, "allowed": allowed}
    return envelope(exc.status_code, code, str(exc.detail), extra, hint, headers=headers or None)


def internal_error_handler(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return envelope(
        500,
        "internal_error",
        f"the relay failed: {exc.__class__.__name__}",
        {"path": request.url.path},
        "This is a relay bug, not your request; the session is intact. Retry, or report it with the relay log.",
    )


exception_handlers: dict[Any, Any] = {
    RelayError: relay_error_handler,
    ValidationException: validation_handler,
    HTTPException: http_error_handler,
    Exception: internal_error_handler,
}
