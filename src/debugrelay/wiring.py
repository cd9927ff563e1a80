"""Wiring: the session manager with its store and launchers, as settings ask (used by every entry point)."""

from __future__ import annotations

from debugrelay import inspection
from debugrelay.config import Settings
from debugrelay.launchers import Launcher, LocalLauncher
from debugrelay.sessions import SessionManager
from debugrelay.store import open_store


def build_launchers(settings: Settings) -> dict[str, Launcher]:
    """Local processes always; containers when the docker SDK is there (the engine is reached lazily)."""
    from debugrelay.launchers.docker import DockerLauncher

    return {
        "local": LocalLauncher(
            settings.state_dir,
            pool_size=settings.pool_size,
            launch_timeout=settings.launch_timeout,
            request_timeout=settings.request_timeout,
        ),
        "docker": DockerLauncher(settings, pool_size=settings.docker_pool_size),
    }


def build_manager(settings: Settings) -> SessionManager:
    store = open_store(
        settings.redis_url, output_cap=settings.output_buffer_entries, namespace=settings.redis_namespace
    )
    return SessionManager(settings, store, build_launchers(settings), on_stop=inspection.remember_stop)
