"""In-memory state store: the embedded default and the unit tests' twin. Lost on restart."""

from __future__ import annotations

import itertools
from collections import deque

from debugrelay.models import BreakpointRecord, OutputEntry, SessionRecord

from .base import OutputPage, StateStore, bad_cursor, timestamp


class _Stream:
    def __init__(self, cap: int) -> None:
        self.entries: deque[OutputEntry] = deque(maxlen=cap)
        self.seq = itertools.count(1)
        self.dropped = 0


class MemoryStore(StateStore):
    name = "memory"
    durable = False

    def __init__(self, output_cap: int = 10_000) -> None:
        self.output_cap = output_cap
        self._sessions: dict[str, bytes] = {}
        self._streams: dict[str, _Stream] = {}
        self._profiles: dict[str, list[BreakpointRecord]] = {}

    async def save_session(self, record: SessionRecord) -> None:
        import msgspec

        self._sessions[record.id] = msgspec.json.encode(record)

    async def get_session(self, session_id: str) -> SessionRecord | None:
        import msgspec

        raw = self._sessions.get(session_id)
        return None if raw is None else msgspec.json.decode(raw, type=SessionRecord)

    async def list_sessions(self) -> list[SessionRecord]:
        return [r for sid in list(self._sessions) if (r := await self.get_session(sid)) is not None]

    async def delete_session(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)
        self._streams.pop(session_id, None)

    async def append_output(self, session_id: str, entries: list[tuple[str, str, float]]) -> None:
        stream = self._streams.setdefault(session_id, _Stream(self.output_cap))
        for kind, text, at in entries:
            if len(stream.entries) == stream.entries.maxlen:
                stream.dropped += 1
            stream.entries.append(
                OutputEntry(type=kind, text=text, timestamp=timestamp(at), cursor=str(next(stream.seq)))
            )

    async def read_output(self, session_id: str, since: str | None, limit: int) -> OutputPage:
        if since and not since.isdigit():
            raise bad_cursor(since)
        stream = self._streams.get(session_id)
        if stream is None or not stream.entries:
            return OutputPage([], since or "0", False)
        after = int(since) if since else 0
        first = int(stream.entries[0].cursor)
        dropped = max(0, first - after - 1)
        selected = [e for e in stream.entries if int(e.cursor) > after]
        page = selected[:limit]
        cursor = page[-1].cursor if page else str(max(after, first - 1))
        return OutputPage(page, cursor, len(selected) > limit, dropped, len(stream.entries))

    async def clear_output(self, session_id: str) -> None:
        stream = self._streams.get(session_id)
        if stream is not None:
            stream.entries.clear()

    async def save_profile(self, name: str, breakpoints: list[BreakpointRecord]) -> None:
        self._profiles[name] = list(breakpoints)

    async def get_profile(self, name: str) -> list[BreakpointRecord] | None:
        return self._profiles.get(name)

    async def list_profiles(self) -> dict[str, list[BreakpointRecord]]:
        return dict(self._profiles)
