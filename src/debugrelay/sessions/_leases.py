"""Session ownership between relay replicas sharing one durable store.

Every session has one owning relay, which holds its lease (a key with a TTL, default 10 s) and
renews it every TTL/3. Another replica forwards requests for the session to the owner's advertised
URL while the lease lives, and takes the session over (re-attaching to its target) once the lease
has expired, or at once when the owner is known to be gone (nothing listens at its address any
more, or the address is our own: a restarted relay). Each renewal also sweeps the store for
sessions nobody owns, which is how a restarted relay recovers its sessions.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import psutil

from debugrelay.errors import RelayError, StoreUnavailable
from debugrelay.models import SessionRecord
from debugrelay.store import Lease

from . import _recovery as recovery
from ._session import ACTIVE, Session

if TYPE_CHECKING:
    from ._manager import SessionManager

log = logging.getLogger(__name__)

ADOPT_CONCURRENCY = 16
GONE_CACHE = 2.0  # seconds an "owner gone" probe is trusted


class OwnerUnavailable(RelayError):
    code = "owner_unavailable"
    status = 503
    default_hint = "The relay owning this session does not answer; retry after details.retry_after seconds."


class Ownership:
    """This relay's share of the sessions: leases, recovery and takeover, where to forward requests."""

    def __init__(self, manager: SessionManager) -> None:
        settings = manager.settings
        self.manager = manager
        self.store = manager.store
        self.me = settings.instance_id
        self.url = settings.advertise_url.rstrip("/")
        self.ttl = max(1.0, settings.lease_ttl)
        self.every = self.ttl / 3
        keep = settings.keep_targets_on_shutdown
        self.keep_targets = self.store.durable if keep is None else keep
        self._task: asyncio.Task[None] | None = None
        self._adopting: dict[str, asyncio.Task[Session | None]] = {}
        self._activity: dict[str, float] = {}
        self._gone: dict[str, tuple[bool, float]] = {}
        self._store_ok = True
        self._closed = False
        self.recovery: dict[str, Any] = {"state": "pending"}

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name="session-leases")

    async def _loop(self) -> None:
        first = True
        while True:
            try:
                if first:
                    await self.store.check()
                    await self.recover()
                    first = False
                else:
                    await self.tick()
                if not self._store_ok:
                    log.info("state store reachable again")
                self._store_ok = True
            except StoreUnavailable as exc:
                if self._store_ok:
                    log.warning("state store unreachable, sessions go on from memory: %s", exc.message)
                self._store_ok = False
            except Exception:
                log.exception("lease renewal failed")
            await asyncio.sleep(self.every)

    async def recover(self) -> None:
        """At start: take over every session nobody owns (re-attaching to live targets)."""
        began = time.time()
        self.recovery = {"state": "running", "began_at": began}
        adopted = await self.tick()
        done = time.time()
        counts: dict[str, int] = {}
        for session in adopted:
            key = "reattached" if session.status in ACTIVE else session.status
            counts[key] = counts.get(key, 0) + 1
        process_start = psutil.Process().create_time()
        self.recovery = {
            "state": "done",
            "began_at": began,
            "finished_at": done,
            "seconds": round(done - began, 3),
            "seconds_since_process_start": round(done - process_start, 3),
            "adopted": len(adopted),
            **counts,
        }
        if adopted:
            log.info("recovered %d session(s) in %.2fs: %s", len(adopted), done - began, counts)

    async def tick(self) -> list[Session]:
        """Renew our leases, announce this replica, save idle deadlines, adopt what nobody owns."""
        local = dict(self.manager.sessions)
        lost = await self.store.renew_leases(list(local), self.me, self.url, self.ttl)
        for sid in lost:
            await self.drop(sid)
        await self.store.write_through(set(lost))  # what changed while the store was down
        await self._save_activity()
        await self.store.register_instance(
            self.me,
            {
                "url": self.url,
                "pid": psutil.Process().pid,
                "sessions": len(self.manager.sessions),
                "started_at": self.manager.started_at,
            },
            self.ttl,
        )
        return await self.sweep()

    async def sweep(self) -> list[Session]:
        records = await self.store.list_sessions()
        others = [r for r in records if r.id not in self.manager.sessions and r.id not in self._adopting]
        if not others:
            return []
        leases = await self.store.get_leases([r.id for r in others])
        wanted: list[tuple[SessionRecord, str | None]] = []
        for record in others:
            lease = leases.get(record.id)
            if lease is None or lease.owner == self.me:
                wanted.append((record, None))
            elif await self.owner_gone(lease):
                wanted.append((record, lease.owner))
        if not wanted:
            return []
        gate = asyncio.Semaphore(ADOPT_CONCURRENCY)

        async def one(record: SessionRecord, replace: str | None) -> Session | None:
            async with gate:
                try:
                    return await self.take(record.id, replace=replace)
                except RelayError as exc:
                    log.warning("session %s: not taken over: %s", record.id, exc.message)
                    return None

        found = await asyncio.gather(*(one(r, o) for r, o in wanted))
        return [s for s in found if s is not None]

    async def handover(self) -> None:
        """Graceful shutdown: stop renewing; with keep_targets, detach from every target (leaving
        it running) and give the leases up so the next relay takes the sessions over at once."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._closed:
            return
        if not self.keep_targets:
            await asyncio.gather(
                *(s.terminate("relay_shutdown") for s in list(self.manager.sessions.values()) if s.status in ACTIVE),
                return_exceptions=True,
            )
            return
        sessions = list(self.manager.sessions.values())
        self.manager.sessions.clear()
        releases = (recovery.release(s, save=True) for s in sessions)
        live = await asyncio.gather(*releases, return_exceptions=True)
        with contextlib.suppress(RelayError):
            await self._save_activity(sessions)
        if any(x is True for x in live):
            await asyncio.sleep(recovery.HANDOVER_GAP)
        for session in sessions:
            with contextlib.suppress(RelayError):
                await self.store.release_lease(session.id, self.me)
        if sessions:
            log.info("left %d session(s) to the next relay (targets keep running)", len(sessions))

    async def close(self) -> None:
        """After the manager ended its sessions: give up what is left (ended sessions' leases)."""
        if self._closed:
            return
        self._closed = True
        for sid in list(self.manager.sessions):
            with contextlib.suppress(RelayError):
                await self.store.release_lease(sid, self.me)

    # -- ownership -------------------------------------------------------------------------

    async def claim(self, session_id: str) -> None:
        """A new session is ours from the start."""
        await self.store.claim_lease(session_id, self.me, self.url, self.ttl)

    async def take(self, session_id: str, *, replace: str | None = None) -> Session | None:
        """Take a stored session over (once, however many ask at the same time); None if another won."""
        task = self._adopting.get(session_id)
        if task is None:
            task = asyncio.create_task(self._take(session_id, replace), name=f"adopt-{session_id}")
            self._adopting[session_id] = task
            task.add_done_callback(lambda _: self._adopting.pop(session_id, None))
        return await asyncio.shield(task)

    async def _take(self, session_id: str, replace: str | None) -> Session | None:
        if session_id in self.manager.sessions:
            return self.manager.sessions[session_id]
        lease = await self.store.claim_lease(session_id, self.me, self.url, self.ttl, replace=replace)
        if lease.owner != self.me:
            return None
        record = await self.store.get_session(session_id)  # read after claiming: the last owner's last word
        if record is None:
            await self.store.release_lease(session_id, self.me)
            return None
        try:
            return await recovery.adopt(self.manager, record)
        except recovery.TargetBusy:
            await self.store.release_lease(session_id, self.me)
            raise

    async def drop(self, session_id: str) -> None:
        """Another replica owns the session now: let go of it here, leaving its target alone."""
        session = self.manager.sessions.pop(session_id, None)
        if session is not None:
            log.warning("session %s: lease lost to another relay; detaching here", session_id)
            await recovery.release(session, save=False)

    async def locate(self, session_id: str) -> Lease | None:
        """The owner's lease when a request for ``session_id`` must go there; None to serve it here
        (ours, taken over just now, or unknown: the handler answers 404)."""
        if session_id in self.manager.sessions or self.store.pending_for(session_id):
            return None  # ours, or deleted here while the store was down: served (404) here
        pending = self._adopting.get(session_id)
        if pending is not None:
            await asyncio.shield(pending)
            if session_id in self.manager.sessions:
                return None
        lease = (await self.store.get_leases([session_id])).get(session_id)
        if lease is not None and lease.owner != self.me and not await self.owner_gone(lease):
            return lease
        if await self.store.get_session(session_id) is None:
            return None
        if await self.take(session_id, replace=lease.owner if lease else None) is not None:
            return None
        lease = (await self.store.get_leases([session_id])).get(session_id)
        if lease is not None and lease.owner != self.me:
            return lease
        raise OwnerUnavailable(
            f"session '{session_id}' is changing hands",
            details={"id": session_id, "retry_after": 1},
            hint="Retry in a second.",
        )

    async def owner_gone(self, lease: Lease) -> bool:
        """Whether the owner is certainly gone: it advertised our own address (we replaced it), or
        nothing listens at its address. An owner that does not answer may be alive: wait for its lease."""
        url = lease.url.rstrip("/")
        if not url:
            return False
        if url == self.url:
            return True
        cached = self._gone.get(url)
        if cached is not None and time.monotonic() - cached[1] < GONE_CACHE:
            return cached[0]
        parts = urlsplit(url)
        gone = False
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
            _, writer = await asyncio.wait_for(asyncio.open_connection(parts.hostname, port), 1.0)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
        except ConnectionRefusedError:
            gone = True
        except (OSError, TimeoutError, ValueError):
            gone = False
        self._gone[url] = (gone, time.monotonic())
        return gone

    # -- views -----------------------------------------------------------------------------

    async def list_all(self) -> list[Session]:
        """Every session in the store: ours live, the others' as stored (read-only views)."""
        records = await self.store.list_sessions()
        out = dict(self.manager.sessions)
        for record in records:
            if record.id not in out:
                out[record.id] = self.manager.new_session(record)
        return sorted(out.values(), key=lambda s: s.record.created_at)

    async def _save_activity(self, sessions: list[Session] | None = None) -> None:
        changed = {
            s.id: s.record.last_activity
            for s in (sessions if sessions is not None else list(self.manager.sessions.values()))
            if s.record.last_activity > self._activity.get(s.id, 0.0)
        }
        if changed:
            await self.store.save_activity(changed)
            self._activity.update(changed)

    def info(self) -> dict[str, Any]:
        return {
            "instance_id": self.me,
            "advertise_url": self.url,
            "lease_ttl": self.ttl,
            "keep_targets_on_shutdown": self.keep_targets,
            "store_ok": self._store_ok,
            "sessions_owned": len(self.manager.sessions),
            "recovery": self.recovery,
        }
