"""State stores: Redis (the source of truth) and an in-memory twin."""

from ._deferred import WriteBehind, begin_tracking, tracking_writes, unpersisted
from .base import OUTPUT_BYTES, Lease, OutputPage, StateStore, timestamp
from .memory import MemoryStore

__all__ = [
    "OUTPUT_BYTES",
    "Lease",
    "MemoryStore",
    "OutputPage",
    "StateStore",
    "WriteBehind",
    "begin_tracking",
    "open_store",
    "timestamp",
    "tracking_writes",
    "unpersisted",
]


def open_store(
    redis_url: str | None, *, output_cap: int = 10_000, output_bytes: int = OUTPUT_BYTES, namespace: str = "debugrelay"
) -> StateStore:
    """The Redis store when a URL is configured (its writes kept through an outage), else the in-memory one."""
    if redis_url:
        from .redis import RedisStore

        return WriteBehind(
            RedisStore.with_url(
                redis_url, output_cap=output_cap, output_bytes=output_bytes, namespace=namespace or "debugrelay"
            )
        )
    return MemoryStore(output_cap=output_cap, output_bytes=output_bytes)
