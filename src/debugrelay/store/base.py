"""State store ABC: sessions, output streams and breakpoint profiles."""

from __future__ import annotations

import abc
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from debugrelay.errors import InvalidRequest
from debugrelay.models import BreakpointRecord, OutputEntry, SessionRecord


def bad_cursor(since: str) -> InvalidRequest:
    return InvalidRequest(
        f"'{since}' is not an output cursor", details={"since": since},
        hint="Pass the 'cursor' of a previous /output answer, or omit 'since' to read from the start.",
    )


def timestamp(at: float | None = None) -> str:
    """ISO-8601 UTC with milliseconds, for output ordering."""
    moment = datetime.fromtimestamp(at if at is not None else time.time(), UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class OutputPage:
    entries: list[OutputEntry]
    cursor: str
    has_more: bool
    dropped: int = 0
    total: int = 0
    notes: list[str] = field(default_factory=list)


class StateStore(abc.ABC):
    """Where sessions live. Redis is the source of truth; the memory twin serves the embedded default."""

    name: str = "abstract"
    durable: bool = False

    @abc.abstractmethod
    async def save_session(self, record: SessionRecord) -> None:
        """Create or replace a session record."""

    @abc.abstractmethod
    async def get_session(self, session_id: str) -> SessionRecord | None:
        """The record, or None when unknown (or unreadable)."""

    @abc.abstractmethod
    async def list_sessions(self) -> list[SessionRecord]:
        """Every readable session record; unreadable ones are skipped with a warning."""

    @abc.abstractmethod
    async def delete_session(self, session_id: str) -> None:
        """Forget a session and its output."""

    @abc.abstractmethod
    async def append_output(self, session_id: str, entries: list[tuple[str, str, float]]) -> None:
        """Append (stream, text, time) entries; the oldest are dropped past the cap."""

    @abc.abstractmethod
    async def read_output(self, session_id: str, since: str | None, limit: int) -> OutputPage:
        """Entries after cursor ``since`` (from the start when None), at most ``limit``."""

    @abc.abstractmethod
    async def clear_output(self, session_id: str) -> None:
        """Drop a session's output."""

    @abc.abstractmethod
    async def save_profile(self, name: str, breakpoints: list[BreakpointRecord]) -> None:
        """Store a named breakpoint set."""

    @abc.abstractmethod
    async def get_profile(self, name: str) -> list[BreakpointRecord] | None:
        """A named breakpoint set, or None."""

    @abc.abstractmethod
    async def list_profiles(self) -> dict[str, list[BreakpointRecord]]:
        """All named breakpoint sets."""

    async def ping(self) -> bool:
        return True

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""
