"""An HTTP request the relay sends to a debugged service for the agent, and what came of it."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from ._base import Input, Model
from .limits import Port

MAX_REQUEST_PATH = 8_192  # characters of a request's path and query
MAX_REQUEST_HEADERS = 64
MAX_HEADER_VALUE = 8_192
MAX_REQUEST_BODY = 1 << 20  # characters of a request body
RESPONSE_BODY_SHOWN = 16_384  # characters of a response body in an answer; the rest is cut, and says so
MAX_REQUEST_WAIT = 300.0

HttpMethod = Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
RequestPath = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_REQUEST_PATH, pattern=r"^/[^\s]*$")]
HeaderName = Annotated[str, msgspec.Meta(min_length=1, max_length=256, pattern=r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")]
HeaderValue = Annotated[str, msgspec.Meta(max_length=MAX_HEADER_VALUE, pattern=r"^[^\r\n\x00]*$")]
RequestBodyText = Annotated[str, msgspec.Meta(max_length=MAX_REQUEST_BODY)]
RequestWait = Annotated[float, msgspec.Meta(ge=0, le=MAX_REQUEST_WAIT)]


class HttpCall(Input):
    """``POST /sessions/{id}/request``: sent from where the relay reaches the target (its loopback, the
    target's network); answered by the response, or by the stop it caused, whichever comes first."""

    method: HttpMethod = "GET"
    path: RequestPath = "/"
    port: Port | None = None  # the target's port; default: the launch's ``ready`` port
    headers: Annotated[dict[HeaderName, HeaderValue], msgspec.Meta(max_length=MAX_REQUEST_HEADERS)] = msgspec.field(
        default_factory=dict
    )
    body: RequestBodyText | None = None
    timeout: RequestWait = 30.0  # how long to wait for the response or a stop


class HttpResponse(Model):
    status: int
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    body: str = ""
    body_bytes: int | None = None  # the whole body's size, when the body shown was cut
    elapsed_ms: float = 0.0


class HttpCallView(Model):
    """One request and where it stands: ``pending`` (e.g. its handler is paused), ``answered`` or ``failed``."""

    request_id: str
    method: str
    path: str
    port: int
    state: Literal["pending", "answered", "failed"]
    response: HttpResponse | None = None
    error: str | None = None
