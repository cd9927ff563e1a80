"""``/mcp`` on the relay: the tools over streamable HTTP, on the relay's own session manager (apart from
stdio's module, so ``debugrelay mcp`` never loads the web framework)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from litestar import Litestar, asgi
from litestar.handlers import ASGIRouteHandler
from litestar.types import Receive, Scope, Send
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.transport_security import TransportSecuritySettings

from debugrelay import access
from debugrelay.config import Settings, normalize_origin
from debugrelay.service import RelayService
from debugrelay.sessions import SessionManager

from ._toolset import build_server


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """The SDK's own Host/Origin check, from the settings the relay's browser checks use (which run first)."""
    hosts = [f"[{h}]" if ":" in h else h for h in settings.reachable_hosts()]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[h for host in hosts for h in (host, f"{host}:*")],
        allowed_origins=[
            *(f"{scheme}://{host}{port}" for scheme in ("http", "https") for host in hosts for port in ("", ":*")),
            *(normalize_origin(o) for o in settings.cors_origins),
        ],
    )


async def _as_caller(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Run an MCP message as the caller whose credential its HTTP request carried: the SDK handles it in
    a task of its own, where the request's context is not."""
    request = ctx.request
    caller = getattr(request, "scope", {}).get(access.SCOPE_KEY) if request is not None else None
    if not isinstance(caller, access.Caller):
        return await call_next(ctx)
    with access.acting_as(caller):
        return await call_next(ctx)


class McpEndpoint:
    """``/mcp`` on the relay: the tools over streamable HTTP, on the relay's own SessionManager.

    Register ``handler`` with the app and ``lifespan`` after the lifespan that sets
    ``app.state.manager``; MCP sessions and HTTP sessions are then the same sessions.
    """

    def __init__(self, settings: Settings, path: str = "/mcp") -> None:
        self._manager: SessionManager | None = None
        self.server = build_server(RelayService(self._get_manager))
        self.server.streamable_http_app(transport_security=transport_security(settings), host=settings.host)
        self.server.middleware.append(_as_caller)
        self.sessions = self.server.session_manager
        sessions = self.sessions

        @asgi(path, is_mount=True, copy_scope=True)
        async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
            await sessions.handle_request(scope, receive, send)  # type: ignore[arg-type]

        self.handler: ASGIRouteHandler = mcp_endpoint

    def _get_manager(self) -> SessionManager:
        if self._manager is None:
            raise RuntimeError("the relay has not started")
        return self._manager

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Litestar) -> AsyncIterator[None]:
        self._manager = app.state.manager
        async with self.sessions.run():
            yield
