"""A real Redis for the store and recovery tests: the project's own Redis image through testcontainers
where a Docker engine and the image exist (as compose runs it), else the local redis-server; AOF on."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import secrets
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import psutil
import pytest
import redis

from tests.conftest import Relay, end_tree, free_port

REDIS_IMAGE = "debugrelay/redis:latest"
LABEL = "debugrelay.test"  # every container the tests start carries it: `docker ps -a -f label=debugrelay.test`


class Redis(Protocol):
    """What the tests do to their Redis, whichever runs it."""

    url: str

    @property
    def running(self) -> bool: ...
    def start(self) -> None: ...
    def stop(self) -> None: ...
    def pause(self) -> None: ...
    def unpause(self) -> None: ...
    def remove(self) -> None: ...
    def client(self) -> redis.Redis: ...


def _wait_ping(client: redis.Redis, alive: Any, log: Any) -> None:
    deadline = time.monotonic() + 30
    try:
        while True:
            try:
                if client.ping():
                    return
            except (redis.ConnectionError, redis.BusyLoadingError, redis.TimeoutError):
                if not alive() or time.monotonic() > deadline:
                    raise RuntimeError(f"Redis did not start: {log()}") from None
                time.sleep(0.02)
    finally:
        client.close()


@functools.cache
def docker_engine() -> Any:
    """A Docker client when an engine answers here, else None."""
    try:
        import docker

        engine = docker.from_env()
        engine.ping()
    except Exception:
        return None
    return engine


@functools.cache
def redis_backend() -> str:
    """Which Redis the tests run: ``container`` (the project's image) or ``local`` (redis-server)."""
    if os.environ.get("DEBUGRELAY_TEST_REDIS") == "local":
        return "local"
    engine = docker_engine()
    if engine is None:
        return "local"
    try:
        engine.images.get(REDIS_IMAGE)
    except Exception:
        return "local"
    return "container"


def describe_redis() -> str:
    if redis_backend() == "container":
        return f"redis: {REDIS_IMAGE} through testcontainers"
    why = "no Docker engine" if docker_engine() is None else f"{REDIS_IMAGE} not built (make images)"
    return f"redis: local redis-server ({why})"


class RedisContainer:
    """The project's Redis image (AOF on its /data volume) under testcontainers, on a fixed loopback port
    so a stopped and started container answers where the relay looks for it."""

    def __init__(self) -> None:
        os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")  # Ryuk's image cannot be pulled here
        from testcontainers.core.container import DockerContainer

        self.port = free_port()
        password = secrets.token_hex(16)  # as compose runs it: a password, protected mode then allows the port
        self.url = f"redis://:{password}@127.0.0.1:{self.port}/0"
        self.container = (
            DockerContainer(REDIS_IMAGE)
            .with_command(
                f"redis-server --appendonly yes --appendfsync always --save '' --bind 0.0.0.0 --dir /data "
                f"--requirepass {password}"
            )
            .with_kwargs(labels={LABEL: "redis"})
        )
        self.container.ports = {6379: ("127.0.0.1", self.port)}  # type: ignore[dict-item]
        self.container.start()
        self.id: str = self.container.get_wrapped_container().id
        try:
            self._wait()
        except BaseException:
            self.remove()
            raise

    def _engine_container(self) -> Any:
        return docker_engine().containers.get(self.id)

    def _wait(self) -> None:
        def alive() -> bool:
            return bool(self._engine_container().status == "running")

        def log() -> str:
            return str(self._engine_container().logs()[-2000:])

        _wait_ping(self.client(), alive, log)

    @property
    def running(self) -> bool:
        try:
            return bool(self._engine_container().status in ("running", "paused"))
        except Exception:
            return False

    def start(self) -> None:
        self._engine_container().start()
        self._wait()

    def stop(self) -> None:
        """``docker stop``: Redis fsyncs its AOF and exits; the container and its volume stay."""
        self._engine_container().stop(timeout=20)

    def pause(self) -> None:
        self._engine_container().pause()

    def unpause(self) -> None:
        container = self._engine_container()
        if container.status == "paused":
            container.unpause()

    def remove(self) -> None:
        with contextlib.suppress(Exception):
            self._engine_container().remove(force=True, v=True)  # its /data volume too

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url, socket_timeout=5)


def start_redis(workdir: Path) -> Redis:
    """A fresh Redis for a test or a test session: a container where possible, else redis-server."""
    if redis_backend() == "container":
        return RedisContainer()
    return RedisServer(workdir)


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
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            self.proc.wait(20)
        self.proc = None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def pause(self) -> None:
        """Frozen (SIGSTOP): connections are accepted, nothing is answered."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def unpause(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)

    def remove(self) -> None:
        self.stop()

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url, socket_timeout=5)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Redis]:
    server = start_redis(tmp_path_factory.mktemp("redis"))
    yield server
    server.remove()


def remove_container(container_id: str) -> None:
    """A container target a test left (a paused one behind its keeper never ends by itself)."""
    with contextlib.suppress(Exception):
        import docker

        engine = docker.from_env()
        try:
            engine.containers.get(container_id).remove(force=True, v=True)
        finally:
            engine.close()


def kill_targets_of(client: redis.Redis, namespace: str) -> None:
    """End every target the sessions in ``namespace`` name (and their debugpy adapters), by PID or
    container id.

    With a durable store, targets outlive relays by design, so the tests end them here.
    """
    import msgspec

    from debugrelay.launchers import kill_tree
    from debugrelay.launchers.orphan import OrphanTarget
    from debugrelay.models import TargetRecord

    for raw in client.hvals(f"{namespace}:sessions"):
        with contextlib.suppress(ValueError, TypeError, AttributeError, psutil.Error):
            described = json.loads(raw).get("target") or {}
            if described.get("container_id"):
                remove_container(described["container_id"])
                continue
            record = msgspec.convert(described, TargetRecord)
            target = OrphanTarget.find(record)  # the same pid *and* debugpy port, or nothing
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


def remove_store_targets(redis_url: str, namespace: str) -> None:
    """Every container and network the relays of one store started (warm pools' too), by the store's label:
    a relay killed on purpose leaves them for the next relay, and no next relay comes after a test."""
    from debugrelay.config import Settings
    from debugrelay.launchers.container import store_identity

    label = {"label": f"debugrelay.store={store_identity(Settings(redis_url=redis_url, redis_namespace=namespace))}"}
    with contextlib.suppress(Exception):
        import docker

        engine = docker.from_env()
        try:
            for container in engine.containers.list(all=True, filters=label):
                with contextlib.suppress(Exception):
                    container.remove(force=True, v=True)
            for network in engine.networks.list(filters=label):
                with contextlib.suppress(Exception):
                    network.remove()
        finally:
            engine.close()


class Cluster:
    """Relays sharing one Redis namespace, and everything they started, ended at teardown."""

    def __init__(self, tmp: Path, server: Redis, **env: str) -> None:
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
        # a relay killed keeps its warm targets (keepers outlive relays by design): the test's own, ended here
        state = str(self.tmp / "state")
        for proc in psutil.process_iter(["pid", "cmdline"]):
            if proc.pid != os.getpid() and any(state in part for part in proc.info["cmdline"] or []):
                end_tree(proc.pid)
        remove_store_targets(self.server.url, self.namespace)
        if self.server.running:
            client = self.redis()
            try:
                kill_targets_of(client, self.namespace)
                keys = list(client.scan_iter(match=f"{self.namespace}:*"))
                if keys:
                    client.delete(*keys)
            finally:
                client.close()


@pytest.fixture
def cluster(tmp_path: Path, redis_server: Redis) -> Iterator[Cluster]:
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


@contextlib.contextmanager
def host_redis(workdir: Path, *args: str) -> Iterator[str]:
    """A ``redis-server`` on this host as an operator ran it (``args``: its bind, protected mode,
    password), without persistence; yields its URL on loopback, without a password."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (make system-deps)")
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    with (workdir / f"redis-{port}.log").open("wb") as log:
        proc = subprocess.Popen(
            [binary, "--port", str(port), "--dir", str(workdir), "--save", "", "--appendonly", "no", *args],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        password = args[args.index("--requirepass") + 1] if "--requirepass" in args else None
        client = redis.Redis.from_url(url, password=password, socket_timeout=5)
        _wait_ping(client, lambda: proc.poll() is None, (workdir / f"redis-{port}.log").read_text)
        yield url
    finally:
        proc.terminate()
        proc.wait(20)
