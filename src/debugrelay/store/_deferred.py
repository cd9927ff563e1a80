"""The one rule for writes while the durable store is down: applied, answered as not yet persisted,
written through when the store is back.

A change the relay makes (a breakpoint set, a step, a launch, a watch, an option, a deleted session)
has happened in the target and in memory by the time its record is saved; answering "failed" then
would be a lie. So a save or delete that finds the store unreachable is kept here (the newest state
per session wins), the call that made it is told through :func:`tracking_writes`, and
:meth:`WriteBehind.write_through` writes everything kept once the store answers again. A relay that
dies before then loses what was kept: that is what ``persisted: false`` warns of.

What needs the store before anything can change (a new session claims its lease first) is not
deferred: the store's error reaches the caller and nothing is created. Evidence is kept within bounds
(:mod:`._deferred_evidence`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import msgspec

from debugrelay.errors import StoreUnavailable
from debugrelay.models import OutputEntry, SessionRecord, StoredProfile

from ._deferred_evidence import DeferredEvidence
from .base import AuditItem, Lease, OutputPage, StateStore

log = logging.getLogger(__name__)


@dataclass
class _Tracking:
    found: list[str] = field(default_factory=list)  # kinds of writes kept for later
    store: StateStore | None = None
    session_id: str | None = None  # the session a request changes: changes it set off may wait too


_kept: ContextVar[_Tracking | None] = ContextVar("debugrelay_unpersisted", default=None)


@contextlib.contextmanager
def tracking_writes(store: StateStore | None = None, session_id: str | None = None) -> Iterator[_Tracking]:
    """Collect, for the work done inside, what was applied but could not be persisted yet."""
    token = _kept.set(tracking := _Tracking(store=store, session_id=session_id))
    try:
        yield tracking
    finally:
        _kept.reset(token)


def begin_tracking(store: StateStore | None = None, session_id: str | None = None) -> None:
    """Collect, from here to the end of this task (one request), what could not be persisted yet."""
    _kept.set(_Tracking(store=store, session_id=session_id))


def unpersisted(session_id: str | None = None) -> bool:
    """Whether the current task made a change the store could not take yet, or its session (or
    ``session_id``) still has changes waiting for the store (a stop its step set off, say)."""
    tracking = _kept.get()
    if tracking is None:
        return False
    session_id = session_id or tracking.session_id
    waiting = tracking.store is not None and session_id is not None and tracking.store.pending_for(session_id)
    return bool(tracking.found) or waiting


def _note(what: str) -> None:
    tracking = _kept.get()
    if tracking is not None:
        tracking.found.append(what)


class WriteBehind(StateStore):
    """A durable store whose session, profile and evidence writes outlive an outage of it (see the module)."""

    def __init__(self, inner: StateStore) -> None:
        self.inner = inner
        self.name = inner.name
        self.durable = inner.durable
        self._saves: dict[str, SessionRecord] = {}
        self._deletes: set[str] = set()
        self._profiles: dict[str, StoredProfile] = {}
        self._cleared: set[str] = set()
        self._redactions: dict[str, dict[str, bytes]] = {}
        self._calls: dict[str, bytes] = {}
        self._audit: list[AuditItem] = []  # audit entries the store could not take yet, oldest first
        self._audit_keep = (0, 0)
        self._evidence = DeferredEvidence(inner.evidence, self._deletes.__contains__, _note)

    @property
    def evidence(self) -> DeferredEvidence:
        return self._evidence

    @property
    def pending(self) -> int:
        """How many writes wait for the store."""
        kept = len(self._saves) + len(self._deletes) + len(self._profiles) + len(self._cleared) + len(self._redactions)
        kept += len(self._calls) + (1 if self._audit else 0)
        return kept + self._evidence.pending

    def pending_for(self, session_id: str) -> bool:
        return (
            session_id in self._saves
            or session_id in self._deletes
            or session_id in self._cleared
            or session_id in self._redactions
            or session_id in self._calls
            or self._evidence.pending_for(session_id)
        )

    async def write_through(self, skip: set[str] | frozenset[str] = frozenset()) -> int:
        """Write what was kept, oldest kind first; ``skip``: sessions another relay owns now. Raises
        :class:`StoreUnavailable` (keeping the rest) when the store is still down; returns how many."""
        done = 0
        for sid in sorted(self._deletes):
            await self.inner.delete_session(sid)
            self._deletes.discard(sid)
            done += 1
        for sid in sorted(self._saves):
            record = self._saves[sid]
            if sid not in skip:
                await self.inner.save_session(record)
                done += 1
            if self._saves.get(sid) is record:  # not replaced meanwhile
                del self._saves[sid]
        for sid in sorted(self._cleared):
            await self.inner.clear_output(sid)
            self._cleared.discard(sid)
            done += 1
        for sid in sorted(self._redactions):
            entries = self._redactions[sid]
            if sid not in skip:
                await self.inner.add_redactions(sid, entries)
                done += 1
            if self._redactions.get(sid) is entries:
                del self._redactions[sid]
        for sid in sorted(self._calls):
            data = self._calls[sid]
            if sid not in skip:
                await self.inner.save_traced_calls(sid, data)
                done += 1
            if self._calls.get(sid) is data:
                del self._calls[sid]
        if self._audit:
            waiting = self._audit
            await self.inner.append_audit(waiting, *self._audit_keep)
            self._audit = self._audit[len(waiting) :]
            done += 1
        for name in sorted(self._profiles):
            saved = self._profiles[name]
            await self.inner.save_profile(name, saved)
            if self._profiles.get(name) is saved:
                del self._profiles[name]
            done += 1
        done += await self._evidence.write_through()
        if done:
            log.info("state store back: %d write(s) made during the outage written through", done)
        return done

    # -- the deferred writes -----------------------------------------------------------------------

    async def save_session(self, record: SessionRecord) -> None:
        if record.id in self._saves:  # an older state waits: keep the order, the newest wins
            self._saves[record.id] = _as_saved(record)
            _note("session")
            return
        try:
            await self.inner.save_session(record)
        except StoreUnavailable:
            self._saves[record.id] = _as_saved(record)
            _note("session")

    async def save_within(self, record: SessionRecord, limits: Sequence[tuple[str, int]]) -> tuple[str, int] | None:
        # a limit is checked where every replica counts: not deferred, the store's error reaches the caller
        over = await self.inner.save_within(record, limits)
        if over is None and self._saves.get(record.id) is not None:
            del self._saves[record.id]  # an older state of it waited: this one is newer, and stored
        return over

    async def delete_session(self, session_id: str) -> None:
        self._saves.pop(session_id, None)
        self._redactions.pop(session_id, None)
        self._calls.pop(session_id, None)
        self._cleared.discard(session_id)
        self._evidence.forget(session_id)
        try:
            await self.inner.delete_session(session_id)
        except StoreUnavailable:
            self._deletes.add(session_id)
            _note("delete")

    async def clear_output(self, session_id: str) -> None:
        try:
            await self.inner.clear_output(session_id)
        except StoreUnavailable:
            self._cleared.add(session_id)
            _note("output")

    async def save_profile(self, name: str, profile: StoredProfile) -> None:
        if name in self._profiles:
            self._profiles[name] = profile
            _note("profile")
            return
        try:
            await self.inner.save_profile(name, profile)
        except StoreUnavailable:
            self._profiles[name] = profile
            _note("profile")

    async def append_audit(self, entries: list[AuditItem], keep: int, keep_each: int) -> None:
        # kept like the rest, but not the caller's change: an answer is not marked unpersisted for it
        self._audit_keep = (keep, keep_each)
        if self._audit:  # older entries wait: keep the order
            self._audit = [*self._audit, *entries][-keep:]
            return
        try:
            await self.inner.append_audit(entries, keep, keep_each)
        except StoreUnavailable:
            self._audit = entries[-keep:]

    async def read_audit(self) -> list[bytes]:
        return [*(entry for _, entry in self._audit), *await self.inner.read_audit()]

    async def save_traced_calls(self, session_id: str, data: bytes) -> None:
        if session_id in self._calls:
            self._calls[session_id] = data
            _note("calls")
            return
        try:
            await self.inner.save_traced_calls(session_id, data)
        except StoreUnavailable:
            self._calls[session_id] = data
            _note("calls")

    async def add_redactions(self, session_id: str, entries: dict[str, bytes]) -> None:
        if session_id in self._redactions:
            self._redactions[session_id] = {**self._redactions[session_id], **entries}
            _note("redactions")
            return
        try:
            await self.inner.add_redactions(session_id, entries)
        except StoreUnavailable:
            self._redactions[session_id] = dict(entries)
            _note("redactions")

    # -- reads see what is kept ---------------------------------------------------------------------

    async def get_session(self, session_id: str) -> SessionRecord | None:
        if session_id in self._deletes:
            return None
        if session_id in self._saves:
            return self._saves[session_id]
        return await self.inner.get_session(session_id)

    async def list_sessions(self) -> list[SessionRecord]:
        found = {r.id: r for r in await self.inner.list_sessions() if r.id not in self._deletes}
        return [*found.values(), *(r for sid, r in self._saves.items() if sid not in found)]

    async def get_profile(self, name: str) -> StoredProfile | None:
        if name in self._profiles:
            return self._profiles[name]
        return await self.inner.get_profile(name)

    async def list_profiles(self) -> dict[str, StoredProfile]:
        return {**await self.inner.list_profiles(), **self._profiles}

    async def get_traced_calls(self, session_id: str) -> bytes | None:
        if session_id in self._deletes:
            return None
        if session_id in self._calls:
            return self._calls[session_id]
        return await self.inner.get_traced_calls(session_id)

    async def get_redactions(self, session_id: str) -> dict[str, bytes]:
        if session_id in self._deletes:
            return {}
        return {**await self.inner.get_redactions(session_id), **self._redactions.get(session_id, {})}

    async def read_output(self, session_id: str, since: str | None, limit: int, *, newest: bool = False) -> OutputPage:
        return await self.inner.read_output(session_id, since, limit, newest=newest)

    async def output_before(self, session_id: str, cursor: str, limit: int) -> list[OutputEntry]:
        return await self.inner.output_before(session_id, cursor, limit)

    # -- the rest goes straight to the store (the output buffer and the leases retry on their own) ---

    async def save_activity(self, activity: dict[str, float]) -> None:
        await self.inner.save_activity(activity)

    async def append_output(
        self,
        session_id: str,
        entries: list[tuple[str, str, float]],
        batch_id: str | None = None,
        seq: int | None = None,
    ) -> None:
        await self.inner.append_output(session_id, entries, batch_id, seq)

    async def output_seq(self, session_id: str) -> int:
        return await self.inner.output_seq(session_id)

    async def claim_lease(
        self, session_id: str, owner: str, url: str, ttl: float, *, replace: str | None = None
    ) -> Lease:
        return await self.inner.claim_lease(session_id, owner, url, ttl, replace=replace)

    async def renew_leases(self, session_ids: list[str], owner: str, url: str, ttl: float) -> list[str]:
        return await self.inner.renew_leases(session_ids, owner, url, ttl)

    async def release_lease(self, session_id: str, owner: str) -> None:
        await self.inner.release_lease(session_id, owner)

    async def get_leases(self, session_ids: list[str]) -> dict[str, Lease]:
        return await self.inner.get_leases(session_ids)

    async def register_instance(self, instance_id: str, info: dict[str, Any], ttl: float) -> None:
        await self.inner.register_instance(instance_id, info, ttl)

    async def list_instances(self) -> dict[str, dict[str, Any]]:
        return await self.inner.list_instances()

    async def check(self) -> list[str]:
        return await self.inner.check()

    async def ping(self) -> bool:
        return await self.inner.ping()

    async def close(self) -> None:
        await self.inner.close()


def _as_saved(record: SessionRecord) -> SessionRecord:
    """``record`` as it is now: what is written through later is the state that was saved, its seals over the
    very values they seal (the session goes on changing its record meanwhile)."""
    return msgspec.json.decode(msgspec.json.encode(record), type=SessionRecord)
