"""The folder a request is asked from (``X-Debugrelay-Folder``), for the service's one rule of relative
paths (``service/_asking.py``)."""

from __future__ import annotations

from urllib.parse import unquote

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from debugrelay.service._asking import FOLDER_HEADER, asked_from

_HEADER = FOLDER_HEADER.encode()
_MAX = 4096  # a path longer than any a file system takes is no folder


def asker_middleware(app: ASGIApp) -> ASGIApp:
    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await app(scope, receive, send)
            return
        raw = next((value for name, value in scope["headers"] if name == _HEADER), None)
        folder = unquote(raw.decode("latin-1")) if raw is not None and len(raw) <= _MAX else None
        with asked_from(folder):
            await app(scope, receive, send)

    return middleware
