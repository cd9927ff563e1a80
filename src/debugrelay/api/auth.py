"""Bearer-token check for every path but ``/health`` when the relay has a token.

``/ui`` checks its own: the bearer token or the view's cookie (see ``api.ui``), which is good there only."""

from __future__ import annotations

import hmac
from typing import Any

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from debugrelay.errors import Unauthorized

OPEN_PATHS = frozenset({"/health"})


def _is_ui(path: str) -> bool:
    return path == "/ui" or path.startswith("/ui/")


def token_middleware(token: str | None) -> Any:
    expected = token.encode() if token else b""  # compared as bytes: any header a client sends is comparable

    def factory(app: ASGIApp) -> ASGIApp:
        async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
            path = scope["path"]
            if token and scope["type"] == ScopeType.HTTP and path not in OPEN_PATHS and not _is_ui(path):
                headers = dict(scope.get("headers") or [])
                scheme, _, value = headers.get(b"authorization", b"").partition(b" ")
                if scheme.lower() != b"bearer" or not hmac.compare_digest(value.strip(), expected):
                    raise Unauthorized("missing or wrong API token")
            await app(scope, receive, send)

        return middleware

    return factory
