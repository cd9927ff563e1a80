"""What the container launchers (Docker, Kubernetes) share: where the boot files go, the target's
environment and home, the keeper in front of debugpy, and the store a target belongs to.

A container target's main process is its keeper, listening where the relay reaches it; debugpy and
the program run behind it on the container's loopback (:data:`INNER_PORT`). debugrelay's start-up
hooks (and debugpy, where the image lacks it) are put at :data:`BOOT`, first on the target's
``PYTHONPATH``.
"""

from __future__ import annotations

import hashlib
import os

from debugrelay.config import Settings
from debugrelay.dap import KEEPER_FILE, keeper_command, orphan_seconds

# What marks a container or pod as a relay's target: its session, and the store whose relays may reap it
MANAGED = "debugrelay.managed"
SESSION = "debugrelay.session"
STORE = "debugrelay.store"
INSTANCE = "debugrelay.instance"  # the relay that started it (a Docker label, a pod's annotation)

BOOT = "/opt/debugrelay"
INNER_PORT = 5679  # debugpy, on the container's loopback, behind the keeper
HOME = "/home/debuggee"  # the target image's user's home; a tmpfs (an emptyDir) in every target


def store_identity(settings: Settings) -> str:
    """Which state store a relay's targets belong to (their labels): only that store's relays reap them.

    A hash: labels are readable by anyone who can list containers or pods, a Redis URL may carry a password."""
    if settings.redis_url:
        namespace = getattr(settings, "redis_namespace", "debugrelay")
        digest = hashlib.sha256(f"{settings.redis_url}\0{namespace}".encode()).hexdigest()[:24]
        return f"redis:{digest}"
    return f"memory:{settings.instance_id}"


def target_labels(session_id: str, store: str) -> dict[str, str]:
    """The labels every target container or pod carries (``store``: :func:`store_identity`)."""
    return {MANAGED: "true", SESSION: session_id, STORE: store}


def target_env(env: dict[str, str], pythonpath: list[str]) -> dict[str, str]:
    """A container target's environment (the image's own is added by the engine)."""
    return {
        **env,
        "PYTHONPATH": os.pathsep.join([BOOT, *pythonpath, *([env["PYTHONPATH"]] if "PYTHONPATH" in env else [])]),
        "PYTHONUNBUFFERED": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        **({} if "HOME" in env else {"HOME": HOME}),
    }


def target_home(env: dict[str, str]) -> str:
    """Where the target's writable home is mounted: its ``HOME`` when that is an absolute path other than /."""
    home = env.get("HOME", "")
    return home if home.startswith("/") and home != "/" else HOME


def keeper_in_container(
    python: list[str], *, listen: str, debuggee: list[str], orphan_after: float | None = None
) -> list[str]:
    """A container's main process: the keeper listening on ``listen``, ``debuggee`` (debugpy listening on
    the loopback's :data:`INNER_PORT`) behind it. With ``orphan_after`` (seconds, :func:`orphan_after`)
    the keeper ends the program, and so the container or pod, once no relay has been connected that long."""
    return keeper_command(
        python,
        listen=listen,
        connect=f"127.0.0.1:{INNER_PORT}",
        status_file=None,
        keeper=f"{BOOT}/{KEEPER_FILE}",
        debuggee=debuggee,
        orphan_after=orphan_after,
    )


def orphan_after(settings: Settings) -> float:
    """The deadline a keeper starts with: the relay's session timeout (the session's own, when it has
    one, is told by its relay once connected)."""
    return orphan_seconds(settings.session_timeout_minutes)
