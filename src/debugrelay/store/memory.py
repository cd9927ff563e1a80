"""In-memory state store: the embedded default and the unit tests' twin. Lost on restart."""

from __future__ import annotations

import collections
import itertools
import shutil
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from debugrelay.models import OutputEntry, SessionRecord, StoredProfile

from .base import AUDIT_NAMES, OUTPUT_BYTES, AuditItem, Lease, OutputPage, StateStore, bad_cursor, timestamp
from .evidence import EvidenceStore, FileEvidence, MemoryEvidence


class _Stream:
    def __init__(self) -> None:
        self.entries: deque[OutputEntry] = deque()
        self.size = 0  # UTF-8 bytes of the entries' text
        self.seq = itertools.count(1)
        self.dropped = 0
        self.last_batch: str | None = None
        self.keeper_seq = 0


class MemoryStore(StateStore):
    """Everything in this process; evidence in files under ``evidence_dir`` when one is given (big values
    stay out of memory). The folder starts empty: the sessions it held died with the relay that kept them."""

    name = "memory"
    durable = False

    def __init__(
        self, output_cap: int = 10_000, output_bytes: int = OUTPUT_BYTES, *, evidence_dir: str | Path | None = None
    ) -> None:
        self._evidence: EvidenceStore = MemoryEvidence()
        if evidence_dir:
            shutil.rmtree(evidence_dir, ignore_errors=True)
            self._evidence = FileEvidence(evidence_dir)
        self.output_cap = output_cap
        self.output_bytes = output_bytes
        self._sessions: dict[str, bytes] = {}
        self._activity: dict[str, float] = {}
        self._streams: dict[str, _Stream] = {}
        self._profiles: dict[str, StoredProfile] = {}
        self._leases: dict[str, tuple[str, str, float]] = {}  # id → (owner, url, monotonic deadline)
        self._instances: dict[str, tuple[dict[str, Any], float]] = {}
        self._redactions: dict[str, dict[str, bytes]] = {}
        self._calls: dict[str, bytes] = {}
        self._audit: collections.deque[bytes] = collections.deque()
        self._audit_of: dict[str, collections.deque[bytes]] = {}  # each credential's own, the last to write last

    async def save_session(self, record: SessionRecord) -> None:
        self._sessions[record.id] = msgspec.json.encode(record)

    async def save_within(self, record: SessionRecord, limits: Sequence[tuple[str, int]]) -> tuple[str, int] | None:
        # no await between the count and the save: one step on this event loop
        held = dict.fromkeys((name for name, _ in limits), 0)
        for sid, raw in self._sessions.items():
            if sid != record.id:
                for name in msgspec.json.decode(raw, type=SessionRecord).counted_against():
                    if name in held:
                        held[name] += 1
        for name, limit in limits:
            if held[name] >= limit:
                return name, held[name]
        self._sessions[record.id] = msgspec.json.encode(record)
        return None

    async def get_session(self, session_id: str) -> SessionRecord | None:
        raw = self._sessions.get(session_id)
        if raw is None:
            return None
        record = msgspec.json.decode(raw, type=SessionRecord)
        record.last_activity = max(record.last_activity, self._activity.get(session_id, 0.0))
        return record

    async def list_sessions(self) -> list[SessionRecord]:
        return [r for sid in list(self._sessions) if (r := await self.get_session(sid)) is not None]

    async def delete_session(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)
        self._streams.pop(session_id, None)
        self._activity.pop(session_id, None)
        self._leases.pop(session_id, None)
        self._redactions.pop(session_id, None)
        self._calls.pop(session_id, None)
        await self._evidence.drop_session(session_id)

    @property
    def evidence(self) -> EvidenceStore:
        return self._evidence

    async def save_activity(self, activity: dict[str, float]) -> None:
        self._activity.update(activity)

    async def append_output(
        self,
        session_id: str,
        entries: list[tuple[str, str, float]],
        batch_id: str | None = None,
        seq: int | None = None,
    ) -> None:
        stream = self._streams.setdefault(session_id, _Stream())
        if batch_id is not None and batch_id == stream.last_batch:
            return
        stream.last_batch = batch_id
        stream.keeper_seq = max(stream.keeper_seq, seq or 0)
        for kind, text, at in entries:
            stream.entries.append(
                OutputEntry(type=kind, text=text, timestamp=timestamp(at), cursor=str(next(stream.seq)))
            )
            stream.size += len(text.encode())
        # the oldest go first, never the newest
        while len(stream.entries) > 1 and (len(stream.entries) > self.output_cap or stream.size > self.output_bytes):
            stream.size -= len(stream.entries.popleft().text.encode())
            stream.dropped += 1

    async def output_seq(self, session_id: str) -> int:
        stream = self._streams.get(session_id)
        return stream.keeper_seq if stream is not None else 0

    async def read_output(self, session_id: str, since: str | None, limit: int, *, newest: bool = False) -> OutputPage:
        if since and not since.isdigit():
            raise bad_cursor(since)
        stream = self._streams.get(session_id)
        if stream is None or not stream.entries:
            return OutputPage([], since or "0", False)
        after = int(since) if since else 0
        first = int(stream.entries[0].cursor)
        dropped = max(0, first - after - 1)
        selected = [e for e in stream.entries if int(e.cursor) > after]
        page = selected[-limit:] if newest else selected[:limit]
        cursor = page[-1].cursor if page else str(max(after, first - 1))
        if newest:
            return OutputPage(page, cursor, False, dropped, len(stream.entries), skipped=len(selected) - len(page))
        return OutputPage(page, cursor, len(selected) > limit, dropped, len(stream.entries))

    async def output_before(self, session_id: str, cursor: str, limit: int) -> list[OutputEntry]:
        stream = self._streams.get(session_id)
        if stream is None or not cursor.isdigit():
            return []
        upto = int(cursor)
        return [e for e in stream.entries if int(e.cursor) <= upto][-limit:]

    async def clear_output(self, session_id: str) -> None:
        stream = self._streams.get(session_id)
        if stream is not None:
            stream.entries.clear()
            stream.size = 0

    async def add_redactions(self, session_id: str, entries: dict[str, bytes]) -> None:
        self._redactions.setdefault(session_id, {}).update(entries)

    async def get_redactions(self, session_id: str) -> dict[str, bytes]:
        return dict(self._redactions.get(session_id, {}))

    async def append_audit(self, entries: list[AuditItem], keep: int, keep_each: int) -> None:
        for who, entry in entries:
            self._audit.append(entry)
            if who is not None:
                own = self._audit_of.pop(who, None) or collections.deque()
                own.append(entry)
                while len(own) > keep_each:
                    own.popleft()
                self._audit_of[who] = own  # the last to write, last
        while len(self._audit) > keep:
            self._audit.popleft()
        while len(self._audit_of) > AUDIT_NAMES:
            del self._audit_of[next(iter(self._audit_of))]

    async def read_audit(self) -> list[bytes]:
        return list(dict.fromkeys(itertools.chain(self._audit, *self._audit_of.values())))

    async def save_traced_calls(self, session_id: str, data: bytes) -> None:
        self._calls[session_id] = data

    async def get_traced_calls(self, session_id: str) -> bytes | None:
        return self._calls.get(session_id)

    async def save_profile(self, name: str, profile: StoredProfile) -> None:
        self._profiles[name] = msgspec.structs.replace(profile, breakpoints=list(profile.breakpoints))

    async def get_profile(self, name: str) -> StoredProfile | None:
        return self._profiles.get(name)

    async def list_profiles(self) -> dict[str, StoredProfile]:
        return dict(self._profiles)

    # -- leases: the same rules as the Redis scripts -------------------------------------------

    def _live_lease(self, session_id: str) -> Lease | None:
        held = self._leases.get(session_id)
        if held is None:
            return None
        owner, url, deadline = held
        left = deadline - time.monotonic()
        if left <= 0:
            del self._leases[session_id]
            return None
        return Lease(owner, url, left)

    async def claim_lease(
        self, session_id: str, owner: str, url: str, ttl: float, *, replace: str | None = None
    ) -> Lease:
        held = self._live_lease(session_id)
        if held is not None and held.owner not in (owner, replace):
            return held
        self._leases[session_id] = (owner, url, time.monotonic() + ttl)
        return Lease(owner, url, ttl)

    async def renew_leases(self, session_ids: list[str], owner: str, url: str, ttl: float) -> list[str]:
        lost = []
        for sid in session_ids:
            if (await self.claim_lease(sid, owner, url, ttl)).owner != owner:
                lost.append(sid)
        return lost

    async def release_lease(self, session_id: str, owner: str) -> None:
        held = self._live_lease(session_id)
        if held is not None and held.owner == owner:
            del self._leases[session_id]

    async def get_leases(self, session_ids: list[str]) -> dict[str, Lease]:
        return {sid: lease for sid in session_ids if (lease := self._live_lease(sid)) is not None}

    async def register_instance(self, instance_id: str, info: dict[str, Any], ttl: float) -> None:
        self._instances[instance_id] = (dict(info), time.monotonic() + ttl)

    async def list_instances(self) -> dict[str, dict[str, Any]]:
        now = time.monotonic()
        return {k: info for k, (info, deadline) in self._instances.items() if deadline > now}
