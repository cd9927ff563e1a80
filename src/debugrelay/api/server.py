"""Health, info, config and shutdown."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

import debugpy
import msgspec
from litestar import Controller, get, post

from debugrelay import __version__
from debugrelay.config import PublicSettings
from debugrelay.launchers.remote import debuggable_processes
from debugrelay.models import Health, Info, Processes, ShuttingDown

from ._deps import Config, Manager

CAPABILITIES = [
    "launch",
    "attach",
    "line_breakpoints",
    "conditional_breakpoints",
    "hit_count_breakpoints",
    "logpoints",
    "function_breakpoints",
    "exception_breakpoints",
    "step",
    "pause",
    "wait",
    "threads",
    "stacktrace",
    "scopes",
    "variables",
    "evaluate",
    "set_variable",
    "completions",
    "source",
    "output",
    "stdin",
    "restart",
    "detach",
]


class ServerController(Controller):
    tags = ["server"]  # noqa: RUF012

    @get("/health", summary="Liveness and store reachability")
    async def health(self, manager: Manager) -> Health:
        store_ok = await manager.store.ping()
        return Health(
            status="ok" if store_ok else "degraded",
            store=manager.store.name,
            store_ok=store_ok,
            unpersisted_writes=manager.store.pending,
            **manager.counts(),
        )

    @get("/info", summary="Version and capabilities")
    async def info(self, manager: Manager) -> Info:
        return Info(
            name="debugrelay",
            version=__version__,
            debugpy=debugpy.__version__,
            python=sys.version.split()[0],
            launchers=sorted(manager.launchers),
            store=manager.store.name,
            durable=manager.store.durable,
            capabilities=CAPABILITIES,
            redaction="on" if manager.settings.redaction else "off",
        )

    @get("/config", summary="Settings in force (secrets hidden)")
    async def config(self, settings: Config) -> PublicSettings:
        return settings.public()

    @get("/processes", summary="Local Python processes that can be attached to")
    async def processes(self) -> Processes:
        return msgspec.convert({"processes": await asyncio.to_thread(debuggable_processes)}, Processes)

    @post(
        "/shutdown",
        status_code=200,
        summary="Stop the relay: targets end, or are left for the next relay when the store is durable",
    )
    async def shutdown(self, manager: Manager) -> ShuttingDown:
        sessions = len(manager.sessions)
        kept = manager.ownership is not None and manager.ownership.keep_targets

        async def stop() -> None:
            await manager.close()
            os.kill(os.getpid(), signal.SIGTERM)

        asyncio.get_running_loop().call_later(0.1, lambda: asyncio.ensure_future(stop()))
        return ShuttingDown(shutting_down=True, sessions=sessions, targets_kept=kept)
