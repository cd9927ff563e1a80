"""The agent's trail: the last calls made on each session, for a person watching (``/ui``).

Kept by the session manager in this relay's memory only, :data:`TRAIL_LENGTH` calls per session; the
service records into it (``debugrelay.service._trail``)."""

from __future__ import annotations

import collections
from collections.abc import Mapping

import msgspec

from ._feed import ChangeFeed

TRAIL_LENGTH = 30


class TrailEntry(msgspec.Struct, kw_only=True):
    at: float
    call: str  # what the agent sent: HTTP method and path, or the MCP tool
    operation: str
    detail: str = ""  # the operation's main arguments
    result: str = ""
    ok: bool = True
    who: str | None = None  # the caller's credential
    role: str | None = None
    audited: bool = False  # a change or an evaluation: also kept in the audit trail


class Trail:
    """The last calls of each session of one relay; ``held``: its sessions (the manager's)."""

    def __init__(self, held: Mapping[str, object], feed: ChangeFeed) -> None:
        self.held = held
        self.feed = feed
        self.calls: dict[str, collections.deque[TrailEntry]] = {}

    def add(self, session_id: str, entry: TrailEntry) -> None:
        self.calls.setdefault(session_id, collections.deque(maxlen=TRAIL_LENGTH)).append(entry)
        if len(self.calls) > 2 * len(self.held) + 16:
            for gone in [s for s in self.calls if s not in self.held]:
                del self.calls[gone]
        self.feed.bump(session_id)

    def entries(self, session_id: str) -> list[TrailEntry]:
        """Oldest first."""
        return list(self.calls.get(session_id, ()))
