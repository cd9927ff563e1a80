"""Wiring: the session manager with its store, launchers, evidence and redaction, as settings ask (used by
every entry point)."""

from __future__ import annotations

import logging

from debugrelay import inspection
from debugrelay.config import Settings, offered_launchers
from debugrelay.dap import orphan_seconds
from debugrelay.evidence import EvidenceHub, with_post_mortem
from debugrelay.launchers import Launcher, LocalLauncher
from debugrelay.redaction import Redactor, install_log_filter, load_patterns
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
            orphan_after=orphan_seconds(settings.session_timeout_minutes),
            workspace=settings.workspace or None,
        )
    if "docker" in offered:
        launchers["docker"] = DockerLauncher(settings, pool_size=settings.docker_pool_size)
    if "kubernetes" in offered:
        from debugrelay.launchers.kubernetes import KubernetesLauncher

        launchers["kubernetes"] = KubernetesLauncher(settings)
    unknown = sorted(set(offered) - {"local", "docker", "kubernetes"})
    if unknown:
        log.warning("DEBUGRELAY_LAUNCHERS names launchers this relay does not have: %s", ", ".join(unknown))
    if settings.allow_root_targets:
        log.warning("DEBUGRELAY_ALLOW_ROOT_TARGETS is on: a launch may run its container as root")
    return launchers


def build_redactor(settings: Settings) -> Redactor | None:
    """The relay's redaction (built-in rules and ``DEBUGRELAY_REDACTION_PATTERNS``), None when it is off.

    Raises :class:`debugrelay.redaction.PatternsError` naming the file, the pattern and the fault.
    """
    if not settings.redaction:
        return None
    return Redactor(load_patterns(settings.redaction_patterns))


def build_manager(settings: Settings) -> SessionManager:
    """The relay: its store (with its evidence namespace), its evidence hub (whose post-mortem hook sees
    every stop), its redaction (also on the relay's logs), all held by one session manager."""
    redactor = build_redactor(settings)
    if redactor is None:
        log.warning("redaction is off (DEBUGRELAY_REDACTION=off): answers carry secrets as the program holds them")
    else:
        install_log_filter(redactor)
    store = open_store(
        settings.redis_url,
        output_cap=settings.output_buffer_entries,
        output_bytes=settings.output_buffer_bytes,
        namespace=settings.redis_namespace,
        state_dir=settings.state_dir,
    )
    evidence = EvidenceHub(store.evidence)
    return SessionManager(
        settings,
        store,
        build_launchers(settings),
        on_stop=with_post_mortem(evidence, inspection.remember_stop),
        evidence=evidence,
        redactor=redactor,
    )
