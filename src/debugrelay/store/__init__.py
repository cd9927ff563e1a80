"""State stores: Redis (the source of truth) and an in-memory twin."""

from .base import Lease, OutputPage, StateStore, timestamp
from .memory import MemoryStore

__all__ = ["Lease", "MemoryStore", "OutputPage", "StateStore", "open_store", "timestamp"]


def open_store(redis_url: str | None, *, output_cap: int = 10_000, namespace: str = "debugrelay") -> StateStore:
    """The Redis store when a URL is configured, else the in-memory one."""
    if redis_url:
        from .redis import RedisStore

        return RedisStore.with_url(redis_url, output_cap=output_cap, namespace=namespace or "debugrelay")
    return MemoryStore(output_cap=output_cap)
