"""SessionManager: creates, finds and ends sessions; expires idle ones."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import secrets
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from debugrelay import access
from debugrelay.config import Settings
from debugrelay.errors import InvalidRequest, RelayError, SessionNotFound, TooManySessions
from debugrelay.launchers import Launcher
from debugrelay.metrics import Metrics
from debugrelay.models import AttachSpec, SessionRecord
from debugrelay.redaction import RedactionSeam, Redactor
from debugrelay.store import StateStore
from debugrelay.trust import RelayKeys

from . import _seals as seals
from ._audit import Audit
from ._feed import ChangeFeed
from ._session import ACTIVE, Session, StopHook
from ._trail import Trail

if TYPE_CHECKING:
    from debugrelay.evidence import EvidenceHub

    from ._leases import Ownership

log = logging.getLogger(__name__)


_LOOKING: ContextVar[bool] = ContextVar("debugrelay_looking", default=False)


class SessionManager:
    """The one entry point of the domain for the API, the MCP server and the CLI's embedded mode.

    It holds what is one per relay and shared by every service over it: the store, the launchers, the
    sessions, their evidence (``evidence``), their redaction (``redaction``) and the agent's trail.
    ``evidence`` defaults to a hub over the store's evidence namespace, ``redactor`` to what the settings ask.
    """

    def __init__(
        self,
        settings: Settings,
        store: StateStore,
        launchers: dict[str, Launcher],
        *,
        on_stop: StopHook | None = None,
        keys: RelayKeys | None = None,
        evidence: EvidenceHub | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        self.settings = settings
        # what this relay seals stored targets with and proves itself to its replicas with
        self.keys = keys or RelayKeys.for_settings(settings, durable=store.durable)
        self.store = store
        self.launchers = launchers
        self.on_stop = on_stop  # told of every stop of every session (the inspection keeps a stop's locals)
        self.sessions: dict[str, Session] = {}
        self.open_waits: collections.Counter[str] = collections.Counter()  # long-polls open, per session
        self._reaper: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._creating = 0  # creates under way, not yet in ``sessions``
        # the credentials in force by name, on a team's relay (the HTTP app sets it); None: no credentials file
        self.directory: Callable[[str], access.Caller | None] | None = None
        self.started_at = time.time()
        self.ownership: Ownership | None = None  # leases, recovery and takeover: a durable store only
        self.feed = ChangeFeed()  # bumped on every change a live view shows
        self.metrics = Metrics()  # what /metrics answers of this relay
        self.metrics.watch(self.sessions.values, lambda: self.store.pending)
        self.trail = Trail(self.sessions, self.feed)
        self.audit = Audit(store, settings.instance_id, settings.audit_entries)
        if redactor is None:
            self.redaction = RedactionSeam.from_settings(settings, store, self.sessions)
        else:
            self.redaction = RedactionSeam(redactor, store, self.sessions)
        if evidence is None:
            from debugrelay.evidence import EvidenceHub  # evidence builds on sessions: imported once they are

            evidence = EvidenceHub(store.evidence)
        self.evidence = evidence

    def new_session(self, record: SessionRecord) -> Session:
        """A Session object for ``record`` (not yet registered here); the code it holds without this relay's
        seal (read back from the store) is marked unsealed: shown, never run."""
        seals.check_code(self.keys, record)
        session = Session(
            record,
            store=self.store,
            settings=self.settings,
            launchers=self.launchers,
            on_stop=self.on_stop,
            keys=self.keys,
        )
        session.feed = self.feed
        session.metrics = self.metrics
        return session

    async def start(self) -> None:
        self._reaper = asyncio.create_task(self._reap_loop(), name="session-reaper")
        if self.store.durable:
            from ._leases import Ownership

            self.ownership = Ownership(self)
            await self.ownership.start()

    async def remove_orphans(self) -> None:
        """Remove targets (containers) whose sessions are in no store: left by a relay that died."""
        try:
            keep = {r.id for r in await self.store.list_sessions()} | set(self.sessions)
        except Exception:
            log.warning("could not list sessions; orphaned targets are left alone for now")
            return
        for launcher in self.launchers.values():
            with contextlib.suppress(Exception):
                await launcher.remove_orphans(keep)

    async def close(self) -> None:
        """End every session's target (relay shutdown), or with a durable store and
        keep_targets_on_shutdown, leave them running for the next relay."""
        self.feed.close()
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
        if self.ownership is not None:
            await self.ownership.handover()
        await asyncio.gather(*(s.close() for s in list(self.sessions.values())), return_exceptions=True)
        await self.audit.close()  # refusals summed up so far are kept
        if self.ownership is not None:
            await self.ownership.close()
        for launcher in self.launchers.values():
            with contextlib.suppress(Exception):
                await launcher.close()

    async def create(
        self,
        *,
        name: str | None = None,
        timeout_minutes: float | None = None,
        attach: AttachSpec | None = None,
    ) -> Session:
        live = sum(1 for s in self.sessions.values() if s.status != "terminated")
        if live + self._creating >= self.settings.max_sessions:  # creates under way count: they await below
            raise TooManySessions(f"the relay holds {self.settings.max_sessions} sessions already")
        if timeout_minutes is not None and timeout_minutes <= 0:
            raise InvalidRequest("timeout_minutes must be > 0", details={"timeout_minutes": timeout_minutes})
        caller = access.current()
        now = time.time()
        record = SessionRecord(
            id=f"sess_{secrets.token_hex(6)}",
            name=name,
            created_at=now,
            last_activity=now,
            timeout_minutes=timeout_minutes or self.settings.session_timeout_minutes,
            owner=self.settings.instance_id,
            created_by=caller.name if caller is not None else None,
            made_by=caller.name if caller is not None else None,
            mode="attach" if attach else "launch",
        )
        session = self.new_session(record)
        self._creating += 1
        try:
            if self.ownership is not None:
                await self.ownership.claim(record.id)  # before the record exists: nobody else adopts it
            if caller is not None and caller.max_sessions:
                await self.save_within(record, caller.name, caller.max_sessions, new=True)
            else:
                await session.save()
            self.sessions[record.id] = session
        finally:
            self._creating -= 1
        self.poke()
        self.feed.bump(record.id)
        if attach is not None:
            try:
                await session.attach(attach)
            except Exception:
                await self.delete(record.id)
                raise
        return session

    async def save_within(
        self, record: SessionRecord, name: str, limit: int, *, role: str = "caller", new: bool = False
    ) -> None:
        """Save ``record`` unless credential ``name`` holds ``limit`` live sessions already, counted in the
        store in the same step as the save (every replica's, parallel requests too); else
        :class:`TooManySessions` naming it as ``role`` in its details, nothing saved (and a ``new`` session's
        lease given up)."""
        seals.seal_code(self.keys, record)
        over = await self.store.save_within(record, [(name, limit)])
        if over is None:
            return
        if new and self.ownership is not None:
            with contextlib.suppress(RelayError):
                await self.store.release_lease(record.id, self.settings.instance_id)
        raise TooManySessions(
            f"'{name}' holds {over[1]} live sessions, its limit",
            details={"limit": "max_sessions", role: name, "max_sessions": limit, "retry_after": 10},
            hint="Delete a session you no longer need (GET /sessions lists yours), or ask for a higher limit.",
        )

    def get(self, session_id: str) -> Session:
        """The session; asking for it is activity (its idle deadline moves), unless :meth:`looking`."""
        session = self.sessions.get(session_id)
        if session is None:
            raise SessionNotFound(f"no session '{session_id}'", details={"id": session_id})
        if not _LOOKING.get():
            session.touch()
        return session

    @staticmethod
    @contextlib.contextmanager
    def looking() -> Iterator[None]:
        """Reads made inside (this task's) are a person looking: they leave every idle deadline as it was."""
        token = _LOOKING.set(True)
        try:
            yield
        finally:
            _LOOKING.reset(token)

    def local_sessions(self) -> list[Session]:
        """The sessions this relay holds, oldest first."""
        return sorted(self.sessions.values(), key=lambda s: s.record.created_at)

    async def list_all(self) -> list[Session]:
        """Every session in the store, also those other relay replicas own (as stored)."""
        return await self.ownership.list_all() if self.ownership is not None else self.local_sessions()

    async def delete(self, session_id: str) -> None:
        session = self.sessions.get(session_id)
        if session is None:
            raise SessionNotFound(f"no session '{session_id}'", details={"id": session_id})
        await session.close()
        self.sessions.pop(session_id, None)
        self.feed.bump(session_id)
        await self.store.delete_session(session_id)
        self._deleted(session_id)

    def _deleted(self, session_id: str) -> None:
        """What the relay kept of a session besides the store (which forgot it with its record) goes too."""
        self.evidence.forget(session_id)
        self.redaction.forget(session_id)

    # -- idle timeout ------------------------------------------------------------------------

    def expires_in(self, session: Session) -> float:
        return session.record.last_activity + session.record.timeout_minutes * 60 - time.time()

    def poke(self) -> None:
        """Deadlines changed (a session was created or its timeout set): re-plan the reaper."""
        self._wake.set()

    async def _reap_loop(self) -> None:
        while True:
            await self.reap()
            nearest = min((self.expires_in(s) for s in self.sessions.values()), default=60.0)
            self._wake.clear()
            # asyncio.timeout, not wait_for: Python 3.11's wait_for can lose a cancel that arrives as it
            # cancels its inner wait, and the relay's shutdown would then wait on this task for good
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(0.05, min(60.0, nearest + 0.01))):
                    await self._wake.wait()

    async def reap(self) -> list[str]:
        """End and forget sessions idle past their timeout; return their ids."""
        expired = [s for s in list(self.sessions.values()) if self.expires_in(s) <= 0]
        for session in expired:
            log.info("session %s expired after %.1f idle minutes", session.id, session.record.timeout_minutes)
            session.record.reason = "timeout"
            with contextlib.suppress(Exception):
                await session.close()
            self.sessions.pop(session.id, None)
            self.feed.bump(session.id)
            with contextlib.suppress(Exception):
                await self.store.delete_session(session.id)
            self._deleted(session.id)
        return [s.id for s in expired]

    def counts(self) -> dict[str, Any]:
        active = sum(1 for s in self.sessions.values() if s.status in ACTIVE)
        return {"sessions": len(self.sessions), "active": active}
