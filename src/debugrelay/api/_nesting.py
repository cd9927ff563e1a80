"""Request bodies nest at most ``MAX_JSON_DEPTH`` arrays and objects deep, on every route (``/mcp`` and
what a replica forwards too): a deeper body is refused with a 400 before anything decodes it, as decoding
and walking it would exhaust Python's recursion limit (a 500) or forward it on."""

from __future__ import annotations

import re
from itertools import accumulate
from typing import Any

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from debugrelay.errors import InvalidRequest
from debugrelay.models.limits import MAX_JSON_DEPTH

MAX_SCANNED = 16 * 1024 * 1024  # the app's body limit: a larger body is refused by it (413), not scanned here
_BODILESS = frozenset({"GET", "HEAD", "OPTIONS"})
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')  # a JSON string, escapes included (linear: no backtracking)
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_SIGNED = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # read as signed bytes: +1 opens, -1 closes


def nests_too_deep(raw: bytes) -> bool:
    """Whether arrays and objects nest more than ``MAX_JSON_DEPTH`` deep in ``raw`` (brackets inside strings
    do not count); a body that opens no more than that many cannot."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_JSON_DEPTH:
        return False
    brackets = _STRING.sub(b"", raw).translate(_SIGNED, _NOT_BRACKET)
    return max(accumulate(memoryview(brackets).cast("b")), default=0) > MAX_JSON_DEPTH


def _too_deep() -> InvalidRequest:
    return InvalidRequest(
        f"the request body nests arrays and objects more than {MAX_JSON_DEPTH} deep",
        details={"max_depth": MAX_JSON_DEPTH},
        hint=f"Send a body nested at most {MAX_JSON_DEPTH} levels deep.",
    )


def nesting_middleware(app: ASGIApp) -> ASGIApp:
    """Read a request's body first and refuse it when it nests too deep; else hand it on as read."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP or scope.get("method") in _BODILESS:
            await app(scope, receive, send)
            return
        read: list[Any] = []
        size = 0
        while size <= MAX_SCANNED:
            message: Any = await receive()
            read.append(message)
            size += len(message.get("body", b""))
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        else:  # too large to scan: the app refuses it by its own limit
            await app(scope, _replay(read, receive), send)
            return
        if nests_too_deep(b"".join(m.get("body", b"") for m in read)):
            raise _too_deep()
        await app(scope, _replay(read, receive), send)

    return middleware


def _replay(read: list[Any], receive: Receive) -> Receive:
    """``receive`` that gives the messages already read, then the client's own."""
    pending = list(read)

    async def replayed() -> Any:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed
