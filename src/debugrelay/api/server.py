"""Health, info, config and shutdown."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time

import debugpy
import msgspec
from litestar import Controller, Response, get, post
from litestar.openapi import ResponseSpec

from debugrelay import __version__, access
from debugrelay.config import PublicSettings
from debugrelay.launchers.remote import debuggable_processes
from debugrelay.models import (
    CredentialsInForce,
    CredentialView,
    Health,
    Info,
    Liveness,
    Processes,
    Readiness,
    ShuttingDown,
)
from debugrelay.store import StateStore

from ._deps import Config, Gate, Manager

EXPOSITION = "text/plain; version=0.0.4"  # Prometheus's text format (Litestar adds the charset)
STORE_CHECK_SECONDS = 0.8  # a probe's store check answers within this (the manifests' probes time out at 2 s)


async def store_answers(store: StateStore) -> bool:
    """Whether the store answers a ping within STORE_CHECK_SECONDS (a hung Redis takes its socket timeout)."""
    try:
        return await asyncio.wait_for(store.ping(), STORE_CHECK_SECONDS)
    except TimeoutError:
        return False


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
        store_ok = await store_answers(manager.store)
        return Health(
            status="ok" if store_ok else "degraded",
            store=manager.store.name,
            store_ok=store_ok,
            unpersisted_writes=manager.store.pending,
            **manager.counts(),
        )

    @get("/livez", summary="Liveness probe: the relay answers (the state store is not asked)")
    async def livez(self) -> Liveness:
        return Liveness(status="ok")

    @get(
        "/readyz",
        summary="Readiness probe: 200 when the state store answered within 0.8 s, else 503",
        responses={503: ResponseSpec(data_container=Readiness, description="the state store did not answer")},
    )
    async def readyz(self, manager: Manager) -> Response[Readiness]:
        store_ok = await store_answers(manager.store)
        ready = Readiness(
            status="ready" if store_ok else "unready",
            store=manager.store.name,
            store_ok=store_ok,
            within=STORE_CHECK_SECONDS,
            unpersisted_writes=manager.store.pending,
        )
        return Response(ready, status_code=200 if store_ok else 503)

    @get(
        "/metrics",
        summary="Prometheus metrics: sessions, launches, launch to first stop, requests, the store's backlog",
        media_type=EXPOSITION,
        include_in_schema=False,  # Prometheus's text, not JSON: documented in the README (Metrics)
    )
    async def metrics(self, manager: Manager) -> Response[bytes]:
        return Response(manager.metrics.exposition(), media_type=EXPOSITION)

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

    @get("/credentials", summary="The credentials in force, without tokens (admins only)")
    async def credentials(self, gate: Gate, manager: Manager) -> CredentialsInForce:
        access.authorize(access.current(), "admin", "list the credentials")
        found = gate.credentials()
        if found is None:
            return CredentialsInForce(credentials=[])
        live: dict[str, int] = {}
        for session in await manager.list_all():
            for name in session.record.counted_against():
                live[name] = live.get(name, 0) + 1
        now = time.time()
        shown = [
            CredentialView(
                name=c.name,
                role=c.role,
                expires=c.expires,
                expired=c.expired(now),
                max_sessions=c.max_sessions,
                requests_per_minute=c.requests_per_minute,
                live_sessions=live.get(c.name, 0),
            )
            for c in sorted(found.names.values(), key=lambda c: c.name)
        ]
        file = gate.file
        return CredentialsInForce(
            credentials=shown,
            file=str(file.path) if file is not None else None,
            problem=file.problem if file is not None else None,
        )

    @get("/processes", summary="The workspace's Python processes an attach may take (admins and agents)")
    async def processes(self, manager: Manager) -> Processes:
        access.authorize(access.current(), "create", "list the processes to attach to")
        found = await asyncio.to_thread(debuggable_processes, manager.settings, inject="local" in manager.launchers)
        answer = msgspec.convert({"processes": found}, Processes)
        seam = manager.redaction  # command lines carry secrets (--db-password=...): redacted like every answer
        return await seam.answer(answer, seam.relay_table, "processes", {}) if seam.enabled else answer

    @post(
        "/shutdown",
        status_code=200,
        summary="Stop the relay: targets end, or are left for the next relay when the store is durable",
    )
    async def shutdown(self, manager: Manager) -> ShuttingDown:
        access.authorize(access.current(), "admin", "stop the relay")  # on a relay without credentials: the token's
        sessions = len(manager.sessions)
        kept = manager.ownership is not None and manager.ownership.keep_targets

        async def stop() -> None:
            await manager.close()
            os.kill(os.getpid(), signal.SIGTERM)

        asyncio.get_running_loop().call_later(0.1, lambda: asyncio.ensure_future(stop()))
        return ShuttingDown(shutting_down=True, sessions=sessions, targets_kept=kept)
