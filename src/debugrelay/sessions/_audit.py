"""The audit trail: every call an agent or person made that changed or evaluated something, with the
credential's name, kept in the state store (so every replica reads the same trail, and it survives a
restart): the newest :data:`AUDIT_KEPT` entries, and each credential's newest tenth of that whatever the
others did since.

A refused or failed call changed nothing, and anyone can make thousands: a credential's first
:data:`REFUSALS_KEPT` of a minute are kept one by one, the rest summed up in one entry (``count``)
written when the minute ends, so refusals never flush the trail.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec

from debugrelay.errors import RelayError
from debugrelay.models import AuditEntry, AuditPage
from debugrelay.store import StateStore

log = logging.getLogger(__name__)
AUDIT_KEPT = 10_000  # entries; the oldest are dropped (DEBUGRELAY_AUDIT_ENTRIES)
EACH_SHARE = 10  # each credential's newest 1/EACH_SHARE of that are kept, whatever the others did since
REFUSALS_KEPT = 10  # a credential's refused or failed calls kept one by one in a window; the rest summed up
WINDOW = 60.0  # seconds


@dataclass
class _Refusals:
    """A credential's refused or failed calls in one window: how many were kept, and those summed up since."""

    start: float
    kept: int = 0
    first: AuditEntry | None = None  # the first summed up
    last: float = 0.0
    count: int = 0
    operations: collections.Counter[str] = field(default_factory=collections.Counter)
    errors: collections.Counter[str] = field(default_factory=collections.Counter)
    calls: collections.Counter[str] = field(default_factory=collections.Counter)
    sessions: set[str | None] = field(default_factory=set)

    def add(self, entry: AuditEntry) -> None:
        if self.first is None:
            self.first = entry
        self.last = entry.at
        self.count += 1
        self.operations[entry.operation] += 1
        self.errors[entry.result.partition(":")[0] or "failed"] += 1
        self.calls[entry.call] += 1
        self.sessions.add(entry.session_id)

    def summary(self) -> AuditEntry | None:
        """The calls summed up since the last summary, as one entry (None: none), and a fresh count."""
        first = self.first
        if first is None:
            return None
        entry = AuditEntry(
            at=first.at,
            until=self.last,
            who=first.who,
            role=first.role,
            session_id=first.session_id if len(self.sessions) == 1 else None,
            call=self.calls.most_common(1)[0][0] + (" and others" if len(self.calls) > 1 else ""),
            operation=self.operations.most_common(1)[0][0],
            detail=_counted(self.operations),
            result=_counted(self.errors),
            ok=False,
            count=self.count,
            replica=first.replica,
        )
        self.first, self.count = None, 0
        for counter in (self.operations, self.errors, self.calls):
            counter.clear()
        self.sessions.clear()
        return entry


def _counted(counter: collections.Counter[str], limit: int = 80) -> str:
    text = ", ".join(f"{name}: {n}" for name, n in counter.most_common())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Audit:
    """Records into and reads the store's audit trail."""

    def __init__(
        self, store: StateStore, replica: str, keep: int = AUDIT_KEPT, clock: Callable[[], float] = time.time
    ) -> None:
        self.store, self.replica, self.clock = store, replica, clock
        self.keep = max(EACH_SHARE, keep)
        self.keep_each = self.keep // EACH_SHARE
        self._refusals: dict[str, _Refusals] = {}  # by credential name ('' without credentials)
        self._timers: set[asyncio.TimerHandle] = set()
        self._writing: set[asyncio.Task[None]] = set()

    async def record(self, entry: AuditEntry) -> None:
        """Keep ``entry`` (a refused or failed one past the window's first few: counted into a summary); a
        store that cannot take it (even later) costs the entry, never the call."""
        entry.replica = self.replica
        due = self._summaries(entry.at)
        if entry.ok or self._kept_alone(entry):
            due.append(entry)
        await self._write(due)

    def _kept_alone(self, entry: AuditEntry) -> bool:
        key = entry.who or ""
        window = self._refusals.get(key)
        if window is None:
            window = self._refusals[key] = _Refusals(entry.at)
        if window.kept < REFUSALS_KEPT:
            window.kept += 1
            return True
        if window.first is None:  # the first summed up: its summary is written when the window ends
            self._later(window.start + WINDOW - self.clock())
        window.add(entry)
        return False

    def _later(self, delay: float) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        handle: asyncio.TimerHandle

        def due() -> None:
            self._timers.discard(handle)
            task = loop.create_task(self.flush(ended_only=True))
            self._writing.add(task)
            task.add_done_callback(self._writing.discard)

        handle = loop.call_later(max(0.0, delay) + 0.01, due)
        self._timers.add(handle)

    def _summaries(self, now: float, *, ended_only: bool = True) -> list[AuditEntry]:
        """The summaries of windows ended by ``now`` (or of every window), those windows forgotten."""
        out = []
        for key, window in list(self._refusals.items()):
            ended = now - window.start >= WINDOW
            if ended or not ended_only:
                summary = window.summary()
                if summary is not None:
                    out.append(summary)
            if ended:
                del self._refusals[key]
        return out

    async def flush(self, *, ended_only: bool = False) -> None:
        """Write the summaries of refusals counted so far (of ended windows only, with ``ended_only``)."""
        await self._write(self._summaries(self.clock(), ended_only=ended_only))

    async def close(self) -> None:
        """Write every summary still counting; no timer of this trail fires after."""
        for handle in self._timers:
            handle.cancel()
        self._timers.clear()
        await self.flush()

    async def _write(self, entries: list[AuditEntry]) -> None:
        if not entries:
            return
        try:
            await self.store.append_audit([(e.who, msgspec.json.encode(e)) for e in entries], self.keep, self.keep_each)
        except RelayError as exc:
            for entry in entries:
                log.warning("an audit entry was not kept (%s): %s %s", exc.code, entry.who, entry.operation)

    async def page(
        self, *, session_id: str | None = None, who: str | None = None, offset: int = 0, limit: int = 100
    ) -> AuditPage:
        """Entries newest first, those of ``session_id`` and by ``who`` when given (refusals counted so far
        written first); the whole trail (a few MB) is decoded in a thread, never on the relay's event loop."""
        await self.flush()
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
    found.sort(key=lambda e: e.at, reverse=True)
    return found
