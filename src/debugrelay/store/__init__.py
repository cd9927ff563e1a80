"""State stores: Redis (the source of truth) and an in-memory twin, each with its evidence namespace."""

from pathlib import Path

from ._deferred import WriteBehind, begin_tracking, tracking_writes, unpersisted
from .base import OUTPUT_BYTES, Lease, OutputPage, StateStore, timestamp
from .evidence import (
    MAX_BYTES_PER_SESSION,
    MAX_ITEM_BYTES,
    MAX_ITEMS_PER_SESSION,
    EvidenceItem,
    EvidenceStore,
    FileEvidence,
    MemoryEvidence,
    check_id,
    no_evidence,
)
from .memory import MemoryStore

__all__ = [
    "MAX_BYTES_PER_SESSION",
    "MAX_ITEMS_PER_SESSION",
    "MAX_ITEM_BYTES",
    "OUTPUT_BYTES",
    "EvidenceItem",
    "EvidenceStore",
    "FileEvidence",
    "Lease",
    "MemoryEvidence",
    "MemoryStore",
    "OutputPage",
    "StateStore",
    "WriteBehind",
    "begin_tracking",
    "check_id",
    "no_evidence",
    "open_store",
    "timestamp",
    "tracking_writes",
    "unpersisted",
]


def open_store(
    redis_url: str | None,
    *,
    output_cap: int = 10_000,
    output_bytes: int = OUTPUT_BYTES,
    namespace: str = "debugrelay",
    state_dir: str = "",
) -> StateStore:
    """The Redis store when a URL is configured (its writes kept through an outage), else the in-memory one
    (its evidence in files under ``state_dir`` when there is one)."""
    if redis_url:
        from .redis import RedisStore

        return WriteBehind(
            RedisStore.with_url(
                redis_url, output_cap=output_cap, output_bytes=output_bytes, namespace=namespace or "debugrelay"
            )
        )
    evidence_dir = Path(state_dir) / "evidence" if state_dir else None
    return MemoryStore(output_cap=output_cap, output_bytes=output_bytes, evidence_dir=evidence_dir)
