"""The tools served on stdio (``debugrelay mcp``)."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import signal
import sys
from typing import TYPE_CHECKING, Any, cast

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

from debugrelay.config import load_settings
from debugrelay.service import DebugService
from debugrelay.service._asking import ask_from

from ._toolset import build_server

if TYPE_CHECKING:
    from debugrelay.sessions import SessionManager

log = logging.getLogger("debugrelay.mcp")


# what a client asks before it uses the debugger: answered while the embedded relay still starts
WITHOUT_RELAY = frozenset({"initialize", "ping", "tools/list", "prompts/list", "resources/list", "server/discover"})


class EmbeddedRelay:
    """The relay's services in this process, loaded and started once the client has its ``initialize``
    answer: the first answer waits for nothing it does not need; a request that uses the relay waits for it.
    Until then it stands in for the relay's service (the tools hold it as their backend)."""

    def __init__(self) -> None:
        self.manager: SessionManager | None = None
        self.service: DebugService | None = None
        self._starting: asyncio.Future[None] | None = None

    def __getattr__(self, name: str) -> Any:
        """The relay's service's operations, once it has started (the gate lets no call through before)."""
        service = self.__dict__.get("service")
        if service is None:
            raise AttributeError(f"the relay has not started: no {name!r} yet")
        return getattr(service, name)

    def get(self) -> SessionManager:
        if self.manager is None:
            raise RuntimeError("the relay has not started")
        return self.manager

    def start(self) -> asyncio.Future[None]:
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._start())
        return self._starting

    async def _start(self) -> None:
        # its modules load in a thread: the event loop meanwhile writes the answers it has
        wiring, relay = await asyncio.to_thread(
            lambda: (importlib.import_module("debugrelay.wiring"), importlib.import_module("debugrelay.service._relay"))
        )
        manager = wiring.build_manager(load_settings())
        await manager.start()
        self.manager = manager
        self.service = relay.RelayService(self.get)

    async def gate(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """MCP middleware: ``initialize`` starts the relay once answered; other requests that use it wait."""
        if ctx.method == "initialize":
            answer = await call_next(ctx)
            asyncio.get_running_loop().call_soon(self.start)
            return answer
        if ctx.method not in WITHOUT_RELAY:
            await asyncio.shield(self.start())
        return await call_next(ctx)

    async def close(self) -> None:
        """End every target this relay started (a start under way is waited for: it may have started some)."""
        if self._starting is not None:
            with contextlib.suppress(Exception):
                await self._starting
        if self.service is not None:
            await self.service.close()
        if self.manager is not None:
            await self.manager.close()
            await self.manager.store.close()


async def serve_stdio(url: str | None = None, token: str | None = None) -> None:
    """Serve the tools on stdin/stdout until the client closes them (or SIGTERM).

    Without ``url`` the relay's services run in this process (local targets, in-memory state unless
    DEBUGRELAY_REDIS_URL is set), started after the first answer; with it every tool is forwarded to the
    relay at ``url``.
    """
    embedded: EmbeddedRelay | None = None
    backend: DebugService
    if url:
        from debugrelay.client import AsyncRelayClient, RemoteService

        backend = RemoteService(AsyncRelayClient(url, token))  # type: ignore[abstract]  # derived operations
    else:
        embedded = EmbeddedRelay()
        backend = cast("DebugService", embedded)  # the relay's service, once started
        ask_from(os.getcwd())  # the agent's relative paths start where it started this server, as over --url
    server = build_server(backend)
    if embedded is not None:
        server.middleware.append(embedded.gate)
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
        if embedded is not None:
            await embedded.close()  # ends every target this server started
        else:
            await backend.close()


def run_stdio(url: str | None = None, token: str | None = None) -> int:
    # stdout carries the protocol: every log line goes to stderr
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    asyncio.run(serve_stdio(url, token))
    return 0
