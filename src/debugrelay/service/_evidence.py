"""Evidence of a session: snapshots, the post-mortem, capture points, evidence pages and their analysis
(seed 002)."""

from __future__ import annotations

import asyncio

from debugrelay import access, evidence
from debugrelay.errors import InvalidRequest, InvalidState, NotFound
from debugrelay.evidence import snapshots
from debugrelay.evidence._analyze import DETECTORS, analyze
from debugrelay.models import (
    Analysis,
    CaptureList,
    CapturePoint,
    CaptureRequest,
    CaptureTable,
    EvidencePage,
    Snapshot,
    SnapshotBounds,
    SnapshotList,
    SnapshotSummary,
)
from debugrelay.models.limits import MAX_PAGE
from debugrelay.redaction import PAGE_MAX_CHARS, secret_expression, secret_name

from ._core import ServiceCore, check_length, check_page


class EvidenceOps(ServiceCore):
    """The evidence operations."""

    # -- evidence: snapshots, post-mortem, capture points, analysis (seed 002) ---------------------------

    async def take_snapshot(self, session_id: str, bounds: SnapshotBounds | None = None) -> SnapshotSummary:
        """Every thread's stack with locals, tasks, locks and process facts; a running program is paused
        for the read and resumed as it was."""
        session = self._get(session_id)
        hub = self.manager.evidence
        async with session.lock:
            return await snapshots.take(session, hub.store, bounds or SnapshotBounds())

    async def snapshots(self, session_id: str) -> SnapshotList:
        self._get(session_id)
        found = await snapshots.listing(self.manager.evidence.store, session_id)
        return SnapshotList(snapshots=found, total=len(found))

    async def snapshot(self, session_id: str, snapshot_id: str) -> Snapshot:
        """A whole snapshot ("post_mortem" is the latest post-mortem of the session)."""
        self._get(session_id)
        store = self.manager.evidence.store
        if snapshot_id == "post_mortem":
            return await self._post_mortem(session_id)
        evidence.check_id(snapshot_id)
        item, data = await snapshots.load(store, session_id, snapshot_id)
        return snapshots.whole(item, data)

    async def _post_mortem(self, session_id: str) -> Snapshot:
        found = await self._find_post_mortem(session_id)
        if found is not None:
            return found
        raise NotFound(
            "this session has no post-mortem snapshot",
            details={"session_id": session_id},
            hint="One is taken when the program stops at an uncaught exception: launch with "
            "stop_on_exception 'uncaught' (or set that exception breakpoint).",
        )

    async def add_capture(self, session_id: str, request: CaptureRequest) -> CapturePoint:
        """A capture point: rows of values at a line, without pausing the program."""
        session = self._get(session_id)
        return await self.manager.evidence.captures.add(session, request)

    async def captures(self, session_id: str) -> CaptureList:
        return CaptureList(captures=self.manager.evidence.captures.listing(self._get(session_id)))

    async def capture_table(self, session_id: str, capture_id: str, start: int = 0, count: int = 100) -> CaptureTable:
        check_page(start, count)
        found = await self.manager.evidence.captures.table(self._get(session_id), capture_id, start, count)
        await self._hide_secret_columns(session_id, found)
        return found

    async def _hide_secret_columns(self, session_id: str, found: CaptureTable) -> None:
        """A row is a list, so a column named like a secret (``password``) is hidden here, cell by cell;
        the answer's own redaction then sees every other string."""
        seam = self.manager.redaction
        if seam.redactor is None:
            return
        secret = [i for i, c in enumerate(found.columns) if secret_name(c) or secret_expression(c)]
        if not secret:
            return
        placeholders = await seam.table(session_id)
        for row in found.rows:
            for i in secret:
                if row[i] is not None and not isinstance(row[i], bool | int | float):
                    row[i] = seam.redactor.walk(row[i], placeholders, "capture_table", secret=True)
        await seam.persist(session_id, placeholders)

    async def remove_capture(self, session_id: str, capture_id: str) -> CapturePoint:
        return await self.manager.evidence.captures.remove(self._get(session_id), capture_id)

    async def evidence(
        self, evidence_id: str, *, offset: int = 0, limit: int = 200, grep: str | None = None
    ) -> EvidencePage:
        """An evidence item's lines, paged (or the lines matching ``grep``), redacted as its session's."""
        evidence.check_id(evidence_id)
        item = await self.manager.evidence.store.get(evidence_id)
        if item is None:
            raise evidence.no_evidence(evidence_id)
        caller = access.current()
        if caller is not None:  # found by its id alone: its session decides who may read it
            held = self.manager.sessions.get(item.session_id)
            record = held.record if held is not None else await self.manager.store.get_session(item.session_id)
            if record is not None:
                access.authorize(
                    caller, "read", "read evidence", created_by=record.created_by, shares=record.shared_with
                )
        return await self.session_evidence(item.session_id, evidence_id, offset=offset, limit=limit, grep=grep)

    async def session_evidence(
        self, session_id: str, evidence_id: str, *, offset: int = 0, limit: int = 200, grep: str | None = None
    ) -> EvidencePage:
        evidence.check_id(evidence_id)
        if offset < 0 or not 1 <= limit <= MAX_PAGE:
            raise InvalidRequest(
                f"offset must be >= 0 and limit between 1 and {MAX_PAGE}", details={"offset": offset, "limit": limit}
            )
        check_length("grep", grep, evidence.GREP_MAX_CHARS)
        item = await self.manager.evidence.store.get(evidence_id)
        if item is None or item.session_id != session_id:
            raise evidence.no_evidence(evidence_id)
        pattern = evidence.compile_grep(grep) if grep else None
        # up to 16 MiB searched in linear time, off the loop; the page is no more than redaction covers
        found = await asyncio.to_thread(evidence.grep_lines, item.text, pattern, offset, limit, PAGE_MAX_CHARS)
        return EvidencePage(
            evidence_id=evidence_id,
            kind=item.kind,
            title=item.title,
            total_lines=found.total_lines,
            offset=offset,
            lines=found.lines,
            has_more=offset + len(found.lines) < found.selected,
            matches=found.matches,
        )

    async def analyze(
        self, session_id: str, snapshot_ids: list[str] | None = None, *, take: int = 0, interval: float = 1.0
    ) -> Analysis:
        """Known patterns over the given snapshots (or, with ``take``, 1-2 new ones ``interval`` s apart;
        with neither, the session's last two)."""
        session = self._get(session_id)
        hub = self.manager.evidence
        if not 0 <= take <= 2 or not 0 <= interval <= 30:
            raise InvalidRequest(
                "take must be 0, 1 or 2 and interval between 0 and 30 seconds",
                details={"take": take, "interval": interval},
            )
        ids = list(snapshot_ids or [])
        if len(ids) > 2:
            raise InvalidRequest("analyze compares at most two snapshots", details={"snapshot_ids": ids})
        for sid in ids:
            evidence.check_id(sid)
        for n in range(take):
            if n:
                await asyncio.sleep(interval)  # the second snapshot is taken this long after the first
            async with session.lock:
                ids.append((await snapshots.take(session, hub.store, SnapshotBounds())).snapshot_id)
        if not ids:
            ids = [s.snapshot_id for s in await snapshots.listing(hub.store, session_id)][-2:]
        if not ids:
            raise InvalidState(
                "no snapshot to analyze",
                details={"session_id": session_id},
                hint="Take a snapshot first, or pass take=1 (take=2 to compare two, for leaks and busy loops).",
            )
        found = [await snapshots.load(hub.store, session_id, sid) for sid in ids]
        found.sort(key=lambda pair: float(pair[1].get("taken_at") or pair[0].created_at))
        matches = analyze([(item.id, data) for item, data in found])
        out = Analysis(
            session_id=session_id, snapshots=[i.id for i, _ in found], matches=matches, checked=list(DETECTORS)
        )
        if len(found) < 2:
            out.note = "one snapshot: leak, busy loop and exception storm need two (take=2)"
        return out
