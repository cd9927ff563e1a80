"""Wiring: the session manager with its store and launchers, as settings ask (used by every entry point)."""

from __future__ import annotations

import logging

from debugrelay import inspection
from debugrelay.config import Settings, offered_launchers
from debugrelay.launchers import Launcher, LocalLauncher
from debugrelay.sessions import SessionManager
from debugrelay.store import open_store

log = logging.getLogger("debugrelay")


def build_launchers(settings: Settings) -> dict[str, Launcher]:
    """The launchers ``DEBUGRELAY_LAUNCHERS`` offers (the Docker engine is reached lazily)."""
    from debugrelay.launchers.docker import DockerLauncher

    offered = offered_launchers(settings)
    launchers: dict[str, Launcher] = {}
    if "local" in offered:
        launchers["local"] = LocalLauncher(
            settings.state_dir,
            pool_size=settings.pool_size,
            launch_timeout=settings.launch_timeout,
            request_timeout=settings.request_timeout,
        )
    if "docker" in offered:
        launchers["docker"] = DockerLauncher(settings, pool_size=settings.docker_pool_size)
    unknown = sorted(set(offered) - {"local", "docker"})
    if unknown:
        log.warning("DEBUGRELAY_LAUNCHERS names launchers this relay does not have: %s", ", ".join(unknown))
    if settings.allow_root_targets:
        log.warning("DEBUGRELAY_ALLOW_ROOT_TARGETS is on: a launch may run its container as root")
    return launchers


def build_manager(settings: Settings) -> SessionManager:
    store = open_store(
        settings.redis_url, output_cap=settings.output_buffer_entries, namespace=settings.redis_namespace
    )
    return SessionManager(settings, store, build_launchers(settings), on_stop=inspection.remember_stop)
