"""The error answers every operation can give, documented once in the OpenAPI document."""

from __future__ import annotations

from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec

from debugrelay.models import ErrorEnvelope

ERRORS = {
    400: "Bad input (invalid_request and its kinds: invalid_line, invalid_condition, file_not_found, ...), "
    "or a bad Host (invalid_host); nothing was changed",
    401: "Missing or wrong API token (unauthorized)",
    403: "Refused by the operator's policy (refused) or a foreign browser origin (forbidden_origin)",
    404: "No such session, breakpoint, reference or profile",
    409: "Wrong state for this operation (NOT_PAUSED, NO_EXCEPTION, invalid_state, target_gone, unsealed), or a "
    "program that could not pause for a snapshot (collect_failed)",
    415: "The body is not JSON (unsupported_media_type)",
    429: "Too many sessions or open waits",
    503: "The state store is unreachable (store_unavailable) for a read from it or a new session: nothing was "
    "changed; or the owning replica does not answer. A change to an existing session is made anyway and "
    'answered with "persisted": false (see X-Debugrelay-Persisted)',
    504: "The target did not answer in time (debugpy_timeout)",
}


def document_errors(*handlers: object) -> None:
    """Add the error envelope, per status, to the OpenAPI answers of every route handler of ``handlers``."""
    specs = {
        status: ResponseSpec(data_container=ErrorEnvelope, description=text, generate_examples=False)
        for status, text in ERRORS.items()
    }
    for owner in handlers:
        found = [owner] if isinstance(owner, HTTPRouteHandler) else [vars(owner)[name] for name in vars(owner)]
        for handler in found:
            if isinstance(handler, HTTPRouteHandler):
                handler.responses = {**specs, **(handler.responses or {})}
