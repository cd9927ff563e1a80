"""Bearer-token check for every path but ``/health`` when the relay has a token."""

from __future__ import annotations

import hmac
from typing import Any

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from debugrelay.errors import Unauthorized

OPEN_PATHS = frozenset({"/health"})


def token_middleware(token: str | None) -> Any:
    def factory(app: ASGIApp) -> ASGIApp:
        async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
            if token and scope["type"] == ScopeType.HTTP and scope["path"] not in OPEN_PATHS:
                headers = dict(scope.get("headers") or [])
                given = headers.get(b"authorization", b"").decode("latin-1")
                scheme, _, value = given.partition(" ")
                if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip(), token):
                    raise Unauthorized("missing or wrong API token")
            await app(scope, receive, send)

        return middleware

    return factory
