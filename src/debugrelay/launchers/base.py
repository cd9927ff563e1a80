"""Launcher and Target ABCs: where a debug target runs and how it is ended."""

from __future__ import annotations

import abc
from typing import Any

from debugrelay.models import LaunchRequest


class Target(abc.ABC):
    """A started debug target with debugpy listening at ``host:port``."""

    kind: str = "abstract"
    host: str
    port: int
    pid: int | None = None
    container_id: str | None = None

    @abc.abstractmethod
    def poll(self) -> int | None:
        """The exit code if the target has ended, else None. Never blocks."""

    @abc.abstractmethod
    async def send_input(self, data: bytes) -> None:
        """Write ``data`` to the target's stdin."""

    @abc.abstractmethod
    async def terminate(self) -> int | None:
        """End the target and everything it started; return its exit code when known."""

    def on_attached(self) -> None:  # noqa: B027 - optional hook
        """Called once the relay's DAP connection is up (e.g. to note the adapter's PID)."""

    def output_tail(self, max_bytes: int = 4096) -> str:
        """The last raw output the target wrote outside the debugger, for failure reports."""
        return ""

    def to_local_path(self, path: str) -> str:
        """Map a path as the target sees it to the user's path."""
        return path

    def to_remote_path(self, path: str) -> str:
        """Map a user's path to the path the target sees."""
        return path

    def describe(self) -> dict[str, Any]:
        """What a relay needs to find this target again (kept in the state store)."""
        return {"kind": self.kind, "host": self.host, "port": self.port, "pid": self.pid,
                "container_id": self.container_id}


class Launcher(abc.ABC):
    """Starts targets of one kind (local process, container, ...)."""

    name: str = "abstract"

    @abc.abstractmethod
    async def start(self, spec: LaunchRequest, *, session_id: str) -> Target:
        """Start ``spec`` with debugpy listening and waiting for a client; return at once."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release what the launcher holds (pools, clients)."""
