"""The audit trail: every call an agent or person made that changed or evaluated something, with the
credential's name, kept in the state store (so every replica reads the same trail, and it survives a
restart), the newest :data:`AUDIT_KEPT` entries."""

from __future__ import annotations

import asyncio
import logging

import msgspec

from debugrelay.errors import RelayError
from debugrelay.models import AuditEntry, AuditPage
from debugrelay.store import StateStore

log = logging.getLogger(__name__)
AUDIT_KEPT = 10_000  # entries; the oldest are dropped


class Audit:
    """Records into and reads the store's audit trail."""

    def __init__(self, store: StateStore, replica: str, keep: int = AUDIT_KEPT) -> None:
        self.store, self.replica, self.keep = store, replica, keep

    async def record(self, entry: AuditEntry) -> None:
        """Keep ``entry``; a store that cannot take it (even later) costs the entry, never the call."""
        entry.replica = self.replica
        try:
            await self.store.append_audit([msgspec.json.encode(entry)], self.keep)
        except RelayError as exc:
            log.warning("an audit entry was not kept (%s): %s %s", exc.code, entry.who, entry.operation)

    async def page(
        self, *, session_id: str | None = None, who: str | None = None, offset: int = 0, limit: int = 100
    ) -> AuditPage:
        """Entries newest first, those of ``session_id`` and by ``who`` when given; the whole trail (up to
        :data:`AUDIT_KEPT` entries, a few MB) is decoded in a thread, never on the relay's event loop."""
        raw = await self.store.read_audit()
        found = await asyncio.to_thread(_matching, raw, session_id, who)
        shown = found[offset : offset + limit]
        return AuditPage(entries=shown, total=len(found), has_more=offset + len(shown) < len(found), kept=self.keep)


_DECODER = msgspec.json.Decoder(AuditEntry)


def _matching(raw: list[bytes], session_id: str | None, who: str | None) -> list[AuditEntry]:
    found = []
    for item in raw:
        try:
            entry = _DECODER.decode(item)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue  # an entry no relay of this version can read: the others still can
        if (session_id is None or entry.session_id == session_id) and (who is None or entry.who == who):
            found.append(entry)
    return found
