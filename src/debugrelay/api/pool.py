"""The warm pools: how many targets are ready, starting, handed out, and why launches started cold."""

from __future__ import annotations

import msgspec
from litestar import Controller, get

from debugrelay.models import Pools

from ._deps import Manager


class PoolController(Controller):
    tags = ["server"]  # noqa: RUF012

    @get("/pool", summary="Warm pools per launcher: ready, starting, handed out, cold starts by reason")
    async def pool(self, manager: Manager) -> Pools:
        pools = {name: launcher.pool_status() for name, launcher in sorted(manager.launchers.items())}
        found = {name: status for name, status in pools.items() if status is not None}
        return msgspec.convert({"pools": found}, Pools)
