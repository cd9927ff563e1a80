"""The warm pool of containers: per key (image, interpreter, folder and mounts, limits, ...), see
:mod:`.pool` for what a warm target is and when a launch gets one."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from debugrelay.dap import DapClient, new_secret
from debugrelay.models import DockerTargetRecord, LaunchRequest

from .container import SESSION
from .docker import DEBUG_PORT, with_keeper
from .docker_target import DockerTarget
from .pool import (
    MAX_KEYS,
    POOL_MARK,
    POOL_MODULE,
    WarmPool,
    cold_reason,
    connect_initialized,
    shielded_start,
    spec_line,
)

if TYPE_CHECKING:
    from .docker import DockerLauncher


class PooledDockerTarget(DockerTarget):
    """A container that was started warm behind its keeper; its stdin attached and the DAP connection
    open already."""

    client: DapClient | None = None

    def take_connection(self) -> DapClient | None:
        client, self.client = self.client, None
        return client

    def attach_stdin(self) -> None:
        with self._lock:
            if self._stdin is None:
                self._stdin = self.container.attach_socket(params={"stdin": 1, "stream": 1})

    def write_stdin(self, data: bytes) -> None:
        self.attach_stdin()
        with self._lock:
            getattr(self._stdin, "_sock", self._stdin).sendall(data)

    def describe(self) -> DockerTargetRecord:
        record = super().describe()
        record.pooled = True
        return record


class ContainerPool:
    """Warm containers per key (image, interpreter, folder and mounts, limits, ...): see the module doc."""

    def __init__(
        self, launcher: DockerLauncher, size: int, *, launch_timeout: float = 20.0, request_timeout: float = 10.0
    ) -> None:
        self.launcher = launcher
        self.launch_timeout = launch_timeout
        self.request_timeout = request_timeout
        self._plans: dict[Hashable, tuple[dict[str, Any], list[tuple[str, str]], bool]] = {}
        self.pool: WarmPool[PooledDockerTarget] = WarmPool(
            "docker", size, spawn=self._spawn, alive=self._alive, discard=self._discard, max_keys=MAX_KEYS
        )

    @staticmethod
    def key_of(kwargs: dict[str, Any]) -> str:
        """Everything a container is created with except its command, environment, name and labels."""
        fixed = {k: v for k, v in kwargs.items() if k not in ("command", "environment", "name", "labels")}
        fixed["python"] = kwargs["command"][0]
        return json.dumps(fixed, sort_keys=True, default=str)

    async def acquire(
        self,
        spec: LaunchRequest,
        *,
        session_id: str,
        kwargs: dict[str, Any],
        base_env: dict[str, str],
        mounts: list[tuple[str, str]],
        with_debugpy: bool,
        again: bool = False,
    ) -> PooledDockerTarget | None:
        """A warm container now running ``spec``, or None (with the reason counted, once a launch) for a cold
        start."""
        reason = cold_reason(spec, base_env, kwargs["environment"])
        key = self.key_of(kwargs)
        target = self.pool.take(key) if reason is None else None
        if target is None:
            if not again:
                self.pool.note_cold(reason or ("empty" if key in self.pool.warm_keys() else "first_in_folder"))
            return None
        line = spec_line(spec, kwargs["working_dir"], base_env, kwargs["environment"])
        await asyncio.to_thread(target.write_stdin, line)
        self.pool.background(asyncio.to_thread(_rename, target, session_id))
        return target

    def keep_warm_for(
        self,
        spec: LaunchRequest,
        *,
        kwargs: dict[str, Any],
        base_env: dict[str, str],
        mounts: list[tuple[str, str]],
        with_debugpy: bool,
    ) -> None:
        """After a cold launch: keep containers like its one warm, if its launches can be pooled."""
        if cold_reason(spec, base_env, kwargs["environment"]) is not None:
            return
        python = kwargs["command"][0]
        pooled = {
            **kwargs,
            "command": [
                python,
                "-Xfrozen_modules=off",
                "-m",
                POOL_MODULE,
                "--listen",
                f"0.0.0.0:{DEBUG_PORT}",
                *POOL_MARK,
            ],
            "environment": base_env,
            "labels": {**kwargs["labels"], SESSION: "pool", "debugrelay.pool": "true"},
        }
        key = self.key_of(kwargs)
        self._plans[key] = (pooled, mounts, with_debugpy)
        self.pool.keep_warm(key)

    async def _spawn(self, key: Hashable) -> PooledDockerTarget:
        kwargs, mounts, with_debugpy = self._plans[key]
        secret = new_secret()
        kwargs = with_keeper(
            {**kwargs, "name": f"debugrelay-pool-{os.urandom(4).hex()}"}, secret, self.launcher.settings
        )
        started = await shielded_start(
            asyncio.to_thread(self.launcher._run, kwargs, mounts, with_debugpy, PooledDockerTarget), _terminate
        )
        assert isinstance(started, PooledDockerTarget)
        target = started
        target.keeper_secret = secret
        try:
            await asyncio.to_thread(target.attach_stdin)
            target.client = await connect_initialized(
                target.host,
                target.port,
                secret=secret,
                ended=lambda: target.poll() is not None,
                within=self.launch_timeout,
                request_timeout=self.request_timeout,
                name=f"dap-pool-{target.container.short_id}",
            )
        except BaseException:
            await asyncio.shield(target.terminate())
            raise
        return target

    @staticmethod
    def _alive(target: PooledDockerTarget) -> bool:
        client = target.client
        return target.poll() is None and client is not None and not client.closed.is_set()

    @staticmethod
    async def _discard(target: PooledDockerTarget) -> None:
        client = target.take_connection()
        if client is not None:
            await client.close()
        await target.terminate()

    def stats(self) -> dict[str, Any]:
        keys = []
        for key in self.pool.warm_keys():
            kwargs = self._plans[key][0] if key in self._plans else {}
            keys.append({"image": kwargs.get("image"), "cwd": kwargs.get("working_dir"), "ready": self.pool.ready(key)})
        return {**self.pool.stats(), "keys": keys}

    async def close(self) -> None:
        await self.pool.close()


async def _terminate(target: DockerTarget) -> None:
    await target.terminate()


def _rename(target: DockerTarget, session_id: str) -> None:
    """Name a handed-out container after its session (relays find a pooled one's session by its name)."""
    target.container.rename(f"debugrelay-{session_id}-{os.urandom(2).hex()}")
