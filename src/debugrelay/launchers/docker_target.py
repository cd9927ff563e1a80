"""A Docker target: the container a launch runs in, read, written to and removed through the engine."""

from __future__ import annotations

import asyncio
import contextlib
import io
import tarfile
import threading
from collections.abc import Callable
from typing import Any

from debugrelay.errors import LaunchFailed
from debugrelay.models import DockerTargetRecord

from .base import Target


def read_from_container(container: Any, path: str, max_bytes: int) -> bytes | None:
    """``path`` from ``container`` if it is a regular file of at most ``max_bytes``, else None."""
    try:
        stream, stat_ = container.get_archive(path)
        if not stat_ or stat_.get("size", 0) > max_bytes:
            return None
        data = bytearray()
        for chunk in stream:
            data += chunk
            if len(data) > max_bytes + 64 * 1024:  # the tar headers and padding around one file
                return None
    except Exception:  # gone, no such path, or the engine refused
        return None
    with tarfile.open(fileobj=io.BytesIO(bytes(data))) as archive:
        member = archive.next()
        if member is None or not member.isreg() or member.size > max_bytes:
            return None
        fh = archive.extractfile(member)
        return fh.read() if fh is not None else None


class DockerTarget(Target):
    """A container running ``python -m debugpy --listen 0.0.0.0:5678 --wait-for-client ...``."""

    kind = "docker"
    forwards_ports = True

    def __init__(
        self, container: Any, host: str, port: int, mounts: list[tuple[str, str]], *, keeper_secret: str | None = None
    ) -> None:
        self.keeper_secret = keeper_secret
        self.container = container
        self.container_id = container.id
        self.host = host
        self.port = port
        self.mounts = mounts
        self.release: Callable[[], None] | None = None  # removes the target's own network, once
        self._exit: int | None = None
        self._stdin: Any = None
        self._lock = threading.Lock()
        threading.Thread(target=self._watch, name=f"wait-{container.short_id}", daemon=True).start()

    def _watch(self) -> None:
        try:
            result = self.container.wait()
            self._exit = int(result.get("StatusCode", -1))
        except Exception:  # the container was removed under us
            self._exit = -1

    def poll(self) -> int | None:
        return self._exit

    async def read_file(self, path: str, max_bytes: int) -> bytes | None:
        """The file from the container's own filesystem (Docker's archive API: no process is started in
        the container, and a stopped one still answers). A symlink, a device or a FIFO is not a regular
        file in the archive, so nothing outside the file itself is followed or opened."""
        return await asyncio.to_thread(read_from_container, self.container, path, max_bytes)

    async def send_input(self, data: bytes) -> None:
        def write() -> None:
            with self._lock:
                if self._stdin is None:
                    self._stdin = self.container.attach_socket(params={"stdin": 1, "stream": 1})
                sock = getattr(self._stdin, "_sock", self._stdin)
                sock.sendall(data)

        try:
            await asyncio.to_thread(write)
        except OSError as exc:
            raise LaunchFailed(f"the container's stdin is closed: {exc}") from exc

    async def terminate(self) -> int | None:
        def remove() -> None:
            with contextlib.suppress(Exception):
                if self._stdin is not None:
                    self._stdin.close()
            with contextlib.suppress(Exception):
                self.container.reload()
                if self._exit is None and self.container.status == "exited":
                    self._exit = int(self.container.attrs["State"]["ExitCode"])
            with contextlib.suppress(Exception):
                self.container.remove(force=True, v=True)
            release, self.release = self.release, None
            if release is not None:
                release()

        await asyncio.to_thread(remove)
        return self._exit

    def output_tail(self, max_bytes: int = 4096) -> str:
        try:
            logs: bytes = self.container.logs(tail=50)
        except Exception:
            return ""
        return logs.decode("utf-8", "replace")[-max_bytes:]

    def path_mappings(self) -> list[dict[str, str]]:
        return [{"localRoot": local, "remoteRoot": remote} for local, remote in self.mounts if local != remote]

    def describe(self) -> DockerTargetRecord:
        record = self.described_as(DockerTargetRecord)
        record.image = self.container.attrs.get("Config", {}).get("Image")
        return record
