"""State store ABC: sessions, output streams, evidence, placeholders, breakpoint profiles and the owners' leases."""

from __future__ import annotations

import abc
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from debugrelay.errors import InvalidRequest
from debugrelay.models import OutputEntry, SessionRecord, StoredProfile

from .evidence import EvidenceStore

OUTPUT_BYTES = 8 * 1024 * 1024  # a session's output kept, in UTF-8 bytes (DEBUGRELAY_OUTPUT_BUFFER_BYTES)
AUDIT_NAMES = 1000  # credentials whose own newest audit entries are kept
AuditItem = tuple[str | None, bytes]  # an encoded audit entry and its credential's name (None: no credentials)


def bad_cursor(since: str) -> InvalidRequest:
    return InvalidRequest(
        f"'{since}' is not an output cursor",
        details={"since": since},
        hint="Pass the 'cursor' of a previous output answer, or omit 'since' to read from the start.",
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
    skipped: int = 0  # with ``newest``: entries after the cursor left out for newer ones (-1: some)


@dataclass(frozen=True)
class Lease:
    """Who carries a session on: the owning relay, where it answers, and how long the lease has left."""

    owner: str
    url: str
    expires_in: float


class StateStore(abc.ABC):
    """Where sessions live. Redis is the source of truth; the memory twin serves the embedded default.

    Session ownership: every session has one owning relay, which holds a lease with a TTL and renews
    it. Another relay forwards requests to the owner while the lease lives and takes the session
    over once it has expired.
    """

    name: str = "abstract"
    durable: bool = False

    # -- sessions --------------------------------------------------------------------------

    @abc.abstractmethod
    async def save_session(self, record: SessionRecord) -> None:
        """Create or replace a session record."""

    @abc.abstractmethod
    async def get_session(self, session_id: str) -> SessionRecord | None:
        """The record, or None when unknown (or unreadable)."""

    @abc.abstractmethod
    async def list_sessions(self) -> list[SessionRecord]:
        """Every readable session record; unreadable or foreign ones are skipped with a warning."""

    @abc.abstractmethod
    async def save_within(self, record: SessionRecord, limits: Sequence[tuple[str, int]]) -> tuple[str, int] | None:
        """Create or replace ``record`` unless a credential of ``limits`` (name, max_sessions) holds its
        limit already: the live sessions counted against it (:meth:`SessionRecord.counted_against`), this
        one aside. None when saved; else that credential's name and count, and nothing is saved. The check
        and the save are one step for every replica sharing the store: parallel creates never pass a limit."""

    @abc.abstractmethod
    async def delete_session(self, session_id: str) -> None:
        """Forget a session, its output, its activity mark, its lease, its placeholders and its evidence."""

    @abc.abstractmethod
    async def save_activity(self, activity: dict[str, float]) -> None:
        """Record sessions' last activity (their idle deadlines) without rewriting their records.

        Records read back carry the later of their own ``last_activity`` and this one.
        """

    # -- output ----------------------------------------------------------------------------

    @abc.abstractmethod
    async def append_output(
        self,
        session_id: str,
        entries: list[tuple[str, str, float]],
        batch_id: str | None = None,
        seq: int | None = None,
    ) -> None:
        """Append (stream, text, time) entries; the oldest are dropped past the caps.

        All or nothing. With a ``batch_id``, appending the same batch again (a retry after an answer
        was lost) writes nothing: output is never doubled. ``seq``: the keeper's number of the last
        output event in the batch, kept as :meth:`output_seq` (never lowered, not cleared).
        """

    @abc.abstractmethod
    async def output_seq(self, session_id: str) -> int:
        """The keeper's number of the last output event stored for the session (0: none)."""

    @abc.abstractmethod
    async def read_output(self, session_id: str, since: str | None, limit: int, *, newest: bool = False) -> OutputPage:
        """Entries after cursor ``since`` (from the start when None), at most ``limit``: the first of them,
        or with ``newest`` the last (the page then ends the output; ``skipped`` counts those left out)."""

    @abc.abstractmethod
    async def output_before(self, session_id: str, cursor: str, limit: int) -> list[OutputEntry]:
        """The last ``limit`` entries up to and including cursor ``cursor``, oldest first (what came before
        a page: redaction reads a secret written across lines with it)."""

    @abc.abstractmethod
    async def clear_output(self, session_id: str) -> None:
        """Drop a session's output."""

    # -- evidence ----------------------------------------------------------------------------

    @property
    @abc.abstractmethod
    def evidence(self) -> EvidenceStore:
        """The evidence namespace: large values kept whole per session, bounded, gone with the session."""

    # -- redaction placeholders ------------------------------------------------------------

    @abc.abstractmethod
    async def add_redactions(self, session_id: str, entries: dict[str, bytes]) -> None:
        """Add placeholder entries (placeholder → encoded entry) to a session's table; gone with the session."""

    @abc.abstractmethod
    async def get_redactions(self, session_id: str) -> dict[str, bytes]:
        """A session's placeholder table (placeholder → encoded entry); empty when none."""

    # -- the audit trail ---------------------------------------------------------------------

    @abc.abstractmethod
    async def append_audit(self, entries: list[AuditItem], keep: int, keep_each: int) -> None:
        """Add encoded audit entries, each with its credential's name (oldest first). The newest ``keep``
        are kept, and each credential's newest ``keep_each`` whatever came after them (of
        :data:`AUDIT_NAMES` credentials at most, those that wrote last)."""

    @abc.abstractmethod
    async def read_audit(self) -> list[bytes]:
        """Every kept audit entry once, in no particular order."""

    # -- traced calls ---------------------------------------------------------------------------

    @abc.abstractmethod
    async def save_traced_calls(self, session_id: str, data: bytes) -> None:
        """Keep the session's traced calls (one JSON document, replaced whole; gone with the session)."""

    @abc.abstractmethod
    async def get_traced_calls(self, session_id: str) -> bytes | None:
        """The session's traced calls as last kept, or None."""

    # -- breakpoint profiles -----------------------------------------------------------------

    @abc.abstractmethod
    async def save_profile(self, name: str, profile: StoredProfile) -> None:
        """Store a named breakpoint set (replacing one of that name)."""

    @abc.abstractmethod
    async def get_profile(self, name: str) -> StoredProfile | None:
        """A named breakpoint set, or None."""

    @abc.abstractmethod
    async def list_profiles(self) -> dict[str, StoredProfile]:
        """All named breakpoint sets."""

    # -- leases and replicas -----------------------------------------------------------------

    @abc.abstractmethod
    async def claim_lease(
        self, session_id: str, owner: str, url: str, ttl: float, *, replace: str | None = None
    ) -> Lease:
        """Take (or extend) the lease unless another owner holds a live one; return the lease in force.

        ``replace`` names an owner known to be gone whose live lease may be taken too.
        """

    @abc.abstractmethod
    async def renew_leases(self, session_ids: list[str], owner: str, url: str, ttl: float) -> list[str]:
        """Extend ``owner``'s leases (re-taking expired ones); return the ids another owner holds now."""

    @abc.abstractmethod
    async def release_lease(self, session_id: str, owner: str) -> None:
        """Give a lease up, if ``owner`` still holds it."""

    @abc.abstractmethod
    async def get_leases(self, session_ids: list[str]) -> dict[str, Lease]:
        """The live leases among ``session_ids`` (expired or unreadable ones are absent)."""

    @abc.abstractmethod
    async def register_instance(self, instance_id: str, info: dict[str, Any], ttl: float) -> None:
        """Announce a relay replica (its URL, start time, load) for ``ttl`` seconds."""

    @abc.abstractmethod
    async def list_instances(self) -> dict[str, dict[str, Any]]:
        """The replicas that announced themselves recently."""

    # -- health ----------------------------------------------------------------------------

    async def check(self) -> list[str]:
        """Set aside what would stop the store from working (AC-PE-4); return a warning per fix."""
        return []

    async def ping(self) -> bool:
        return True

    @property
    def pending(self) -> int:
        """Writes applied while the store was down and not yet written (none here)."""
        return 0

    def pending_for(self, session_id: str) -> bool:
        """Whether a change to ``session_id`` waits for the store (never here)."""
        return False

    async def write_through(self, skip: set[str] | frozenset[str] = frozenset()) -> int:
        """Write what was applied while the store was down (none here); return how many writes."""
        return 0

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""
