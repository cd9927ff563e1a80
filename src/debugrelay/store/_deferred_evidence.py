"""Evidence while the durable store is down: kept in memory within bounds, written through when it is back.

A snapshot or a post-mortem is taken once (a crash does not happen again on request), so an item the
store cannot take is kept here, readable by its id, and the answer says it is not persisted yet, as for
any other write (:mod:`._deferred`). Within bounds: each session's own (``MAX_ITEMS_PER_SESSION``,
``MAX_BYTES_PER_SESSION``) and :data:`MAX_KEPT_BYTES` over all sessions; an item past the latter is
refused with :class:`StoreUnavailable` and nothing is kept. A relay that dies before the store is back
loses what was kept here.
"""

from __future__ import annotations

from collections.abc import Callable

from debugrelay.errors import StoreUnavailable

from .evidence import EvidenceItem, EvidenceStore, MemoryEvidence

MAX_KEPT_BYTES = 64 * 1024 * 1024  # evidence text waiting for the store, over all sessions


class DeferredEvidence(EvidenceStore):
    """The evidence namespace of a :class:`WriteBehind` store (see the module)."""

    def __init__(self, inner: EvidenceStore, gone: Callable[[str], bool], note: Callable[[str], None]) -> None:
        self.inner = inner
        self.name = inner.name
        self.kept = MemoryEvidence()
        self.dropped: set[str] = set()  # sessions whose evidence the store still holds, to drop
        self._gone = gone  # sessions deleted while the store was down
        self._note = note

    @property
    def pending(self) -> int:
        return len(self.kept.items) + len(self.dropped)

    def pending_for(self, session_id: str) -> bool:
        return session_id in self.dropped or any(i.session_id == session_id for i in self.kept.items.values())

    def forget(self, session_id: str) -> None:
        """The session is deleted: what waits of its evidence goes (the store's copy goes with its record)."""
        self.dropped.discard(session_id)
        for evidence_id in [k for k, i in self.kept.items.items() if i.session_id == session_id]:
            del self.kept.items[evidence_id]

    async def write_through(self) -> int:
        """Drop, then write, what waits, oldest first; raises :class:`StoreUnavailable` (keeping the rest)."""
        done = 0
        for sid in sorted(self.dropped):
            await self.inner.drop_session(sid)
            self.dropped.discard(sid)
            done += 1
        for item in list(self.kept.items.values()):
            await self.inner.put(item)
            self.kept.items.pop(item.id, None)
            done += 1
        return done

    async def put(self, item: EvidenceItem) -> None:
        if not await self.kept.ids(item.session_id):  # nothing of the session waits: the order holds
            try:
                await self.inner.put(item)
            except StoreUnavailable:
                pass
            else:
                return
        kept = sum(len(i.text) for i in self.kept.items.values())
        if kept + len(item.text) > MAX_KEPT_BYTES:
            raise StoreUnavailable(
                "the state store is unreachable and the evidence waiting for it is at its bound",
                details={"store": self.name, "kept_bytes": kept, "max_kept_bytes": MAX_KEPT_BYTES},
            )
        await self.kept.put(item)
        self._note("evidence")

    async def get(self, evidence_id: str) -> EvidenceItem | None:
        found = self.kept.items.get(evidence_id)
        if found is not None:
            return found
        found = await self.inner.get(evidence_id)
        if found is None or found.session_id in self.dropped or self._gone(found.session_id):
            return None
        return found

    async def ids(self, session_id: str) -> list[str]:
        stored = [] if session_id in self.dropped or self._gone(session_id) else await self.inner.ids(session_id)
        return [*stored, *await self.kept.ids(session_id)]

    async def drop_session(self, session_id: str) -> None:
        self.forget(session_id)
        try:
            await self.inner.drop_session(session_id)
        except StoreUnavailable:
            self.dropped.add(session_id)
            self._note("evidence")
