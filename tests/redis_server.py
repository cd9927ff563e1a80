"""A real Redis for the persistence tests: redis-server on a free port, AOF in a temp dir."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
import redis

from tests.conftest import Relay, free_port


class RedisServer:
    """``redis-server`` with an append-only file, stoppable and restartable on the same port and dir."""

    def __init__(self, workdir: Path) -> None:
        installed = Path("/usr/bin/redis-server")
        binary = shutil.which("redis-server") or (str(installed) if installed.exists() else None)
        if binary is None:
            pytest.skip("redis-server is not installed (make system-deps)")
        self.binary = binary
        self.dir = workdir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        log = (self.dir / "redis.log").open("ab")
        self.proc = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.dir),
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
                "--daemonize",
                "no",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        client = self.client()
        deadline = time.monotonic() + 20
        while True:
            try:
                if client.ping():
                    break
            except (redis.ConnectionError, redis.BusyLoadingError):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    log_text = (self.dir / "redis.log").read_text()
                    raise RuntimeError(f"redis-server did not start: {log_text}") from None
                time.sleep(0.02)
        client.close()

    def stop(self) -> None:
        """A clean shutdown (SIGTERM): Redis fsyncs its AOF and exits."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(20)
        self.proc = None

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url, socket_timeout=5)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


def remove_container(container_id: str) -> None:
    """A container target a test left (a paused one behind its keeper never ends by itself)."""
    with contextlib.suppress(Exception):
        import docker

        engine = docker.from_env()
        try:
            engine.containers.get(container_id).remove(force=True)
        finally:
            engine.close()


def kill_targets_of(client: redis.Redis, namespace: str) -> None:
    """End every target the sessions in ``namespace`` name (and their debugpy adapters), by PID or
    container id.

    With a durable store, targets outlive relays by design, so the tests end them here.
    """
    from debugrelay.launchers import kill_tree
    from debugrelay.launchers.orphan import OrphanTarget

    for raw in client.hvals(f"{namespace}:sessions"):
        with contextlib.suppress(ValueError, TypeError, AttributeError, psutil.Error):
            described = json.loads(raw).get("target") or {}
            if described.get("container_id"):
                remove_container(described["container_id"])
                continue
            target = OrphanTarget.find(described)  # the same pid *and* debugpy port, or nothing
            if target is not None:
                kill_tree(target.proc.pid)
            adapter = described.get("adapter_pid")
            is_adapter = (
                isinstance(adapter, int)
                and psutil.pid_exists(adapter)
                and "debugpy" in " ".join(psutil.Process(adapter).cmdline())
            )
            if is_adapter:
                kill_tree(adapter)


class Cluster:
    """Relays sharing one Redis namespace, and everything they started, ended at teardown."""

    def __init__(self, tmp: Path, server: RedisServer, **env: str) -> None:
        self.tmp = tmp
        self.server = server
        self.namespace = f"t{uuid.uuid4().hex[:10]}"
        self.env = {"DEBUGRELAY_REDIS_URL": server.url, "DEBUGRELAY_REDIS_NAMESPACE": self.namespace, **env}
        self.relays: list[Relay] = []

    def relay(self, **env: str) -> Relay:
        relay = Relay(self.tmp, env={**self.env, **env})
        self.relays.append(relay)
        return relay

    def redis(self) -> redis.Redis:
        return self.server.client()

    def close(self) -> None:
        for relay in self.relays:
            relay.http.close()
            if relay.proc.poll() is None:
                relay.proc.kill()
                relay.proc.wait(10)
        if self.server.proc is not None:
            client = self.redis()
            try:
                kill_targets_of(client, self.namespace)
                keys = list(client.scan_iter(match=f"{self.namespace}:*"))
                if keys:
                    client.delete(*keys)
            finally:
                client.close()


@pytest.fixture
def cluster(tmp_path: Path, redis_server: RedisServer) -> Iterator[Cluster]:
    group = Cluster(tmp_path, redis_server)
    yield group
    group.close()


def poll(fn: Any, *, timeout: float = 30.0, what: str = "condition") -> Any:
    """Call ``fn`` until it returns something truthy, within a bounded deadline."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(0.05)
    raise AssertionError(f"{what} not reached in {timeout}s (last: {last!r})")
