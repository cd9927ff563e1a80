"""Where the tools are served: stdio (``debugrelay mcp``) and ``/mcp`` on the relay."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import AsyncIterator
from typing import Any

from litestar import Litestar, asgi
from litestar.handlers import ASGIRouteHandler
from litestar.types import Receive, Scope, Send
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.transport_security import TransportSecuritySettings

from debugrelay import access
from debugrelay.config import Settings, load_settings, normalize_origin
from debugrelay.service import DebugService, RelayService
from debugrelay.sessions import SessionManager

from ._toolset import build_server

log = logging.getLogger("debugrelay.mcp")


async def serve_stdio(url: str | None = None, token: str | None = None) -> None:
    """Serve the tools on stdin/stdout until the client closes them (or SIGTERM).

    Without ``url`` the relay's services run in this process (local targets, in-memory state unless
    DEBUGRELAY_REDIS_URL is set); with it every tool is forwarded to the relay at ``url``.
    """
    manager: SessionManager | None = None
    backend: DebugService
    if url:
        from debugrelay.client import AsyncRelayClient, RemoteService

        backend = RemoteService(AsyncRelayClient(url, token))  # type: ignore[abstract]  # derived operations
    else:
        from debugrelay.wiring import build_manager

        manager = build_manager(load_settings())
        await manager.start()
        backend = RelayService(manager)
    server = build_server(backend)
    task = asyncio.current_task()
    ending = False

    def on_signal() -> None:
        # the first signal stops serving; cleanup then runs to the end (the MCP client waits 2 s after
        # closing stdin, then sends SIGTERM, then SIGKILL 2 s later: the targets must be gone by then)
        if not ending and task is not None:
            task.cancel()

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal)
    try:
        await server.run_stdio_async()
    except asyncio.CancelledError:
        log.info("stopping on a signal")
        if task is not None:
            task.uncancel()
    finally:
        ending = True
        await backend.close()
        if manager is not None:
            await manager.close()  # ends every target this server started
            await manager.store.close()


def run_stdio(url: str | None = None, token: str | None = None) -> int:
    # stdout carries the protocol: every log line goes to stderr
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    asyncio.run(serve_stdio(url, token))
    return 0


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
