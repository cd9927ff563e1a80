"""Capture points: at a line, record expressions (or every local) on each hit without pausing the program.

A capture point is a debugpy logpoint whose message calls the snapshot collector's ``row``: debugpy
evaluates it in the frame and prints one line, which the relay takes out of the output stream and
keeps as a row. The hit limit and the expiry remove the logpoint; rows past the limit are not kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from debugrelay.errors import InvalidRequest, NotFound, RelayError
from debugrelay.models import CapturePoint, CaptureRequest, CaptureTable
from debugrelay.sessions import CAPTURE_MARK, BreakpointRequest, breakpoints

from ._collect import BriefPause, evaluate_json, installed_expression

if TYPE_CHECKING:
    from debugrelay.sessions import Session

    from ._hub import EvidenceHub

log = logging.getLogger(__name__)
MARK = CAPTURE_MARK
MAX_CAPTURES_PER_SESSION = 20
ROW_BYTES = 8192  # one row's values, rendered (a longer row keeps its columns' names and is marked)
PAGE_ROWS = 100


@dataclass
class Capture:
    point: CapturePoint
    session_id: str
    breakpoint_id: str | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    dropped: int = 0
    timer: asyncio.TimerHandle | None = None


def _no_capture(capture_id: str) -> NotFound:
    return NotFound(
        f"no capture point '{capture_id}' in this session",
        details={"capture_id": capture_id},
        hint="List the session's capture points.",
    )


class Captures:
    """The capture points of one relay's sessions (rows kept in memory; a long table goes to evidence)."""

    def __init__(self, hub: EvidenceHub) -> None:
        self.hub = hub
        self.by_session: dict[str, dict[str, Capture]] = {}
        self._filters: dict[str, Any] = {}

    def forget(self, session_id: str) -> None:
        for cap in self.by_session.pop(session_id, {}).values():
            if cap.timer is not None:
                cap.timer.cancel()
        self._filters.pop(session_id, None)

    def _listen(self, session: Session) -> None:
        """Take the capture rows out of the session's output events (once per session object)."""
        take = self._filters.get(session.id)
        if take is not None and take in session.event_filters:
            return

        def take_row(event: str, body: Any) -> bool:
            if event != "output" or not isinstance(body, dict):
                return False
            text = body.get("output")
            if not isinstance(text, str) or not text.startswith(MARK):
                return False
            self._row(session, text)
            return True

        self._filters[session.id] = take_row
        session.event_filters.append(take_row)

    def _row(self, session: Session, text: str) -> None:
        head, _, payload = text.partition("] ")
        cap = self.by_session.get(session.id, {}).get(head[len(MARK) :])
        if cap is None:
            return
        point = cap.point
        if point.state != "active" or point.hits >= point.hit_limit:
            cap.dropped += 1
            return
        try:
            row = json.loads(payload)
        except ValueError:
            row = {"error": payload.strip()[:300]}
        point.hits += 1
        cap.rows.append(row)
        if point.hits >= point.hit_limit:
            point.state = "done"
            point.message = f"hit limit {point.hit_limit} reached: the logpoint is removed"
            session.spawn(self._remove_breakpoint(session, cap))

    async def _remove_breakpoint(self, session: Session, cap: Capture) -> None:
        bp_id, cap.breakpoint_id = cap.breakpoint_id, None
        if bp_id is None:
            return
        with contextlib.suppress(RelayError):
            async with session.lock:
                await breakpoints.remove(session, bp_id)

    def _expire(self, session: Session, cap: Capture) -> None:
        if cap.point.state == "active":
            cap.point.state = "expired"
            cap.point.message = "expired: the logpoint is removed"
            session.spawn(self._remove_breakpoint(session, cap))

    async def add(self, session: Session, req: CaptureRequest) -> CapturePoint:
        mine = self.by_session.setdefault(session.id, {})
        live = [c for c in mine.values() if c.point.state == "active"]
        if len(live) >= MAX_CAPTURES_PER_SESSION:
            raise InvalidRequest(
                f"the session has {len(live)} active capture points; at most {MAX_CAPTURES_PER_SESSION}",
                details={"max": MAX_CAPTURES_PER_SESSION},
                hint="Remove a capture point you no longer need.",
            )
        for expr in req.expressions:
            if expr != "locals":
                breakpoints.compile_expression(expr, "expression")
        capture_id = "cp-" + secrets.token_hex(4)
        spec = {"expressions": req.expressions, "max_bytes": ROW_BYTES, "items": 25, "chars": 256, "depth": 3}
        call = f"{installed_expression()}.row(locals(), globals(), '{json.dumps(spec).encode().hex()}')"
        message = f"{MARK}{capture_id}] {{{call}}}"
        request = BreakpointRequest(file=req.file, line=req.line, condition=req.condition, log_message=message)
        checked = breakpoints.validate_all([request])
        if session.status in ("running", "paused"):
            async with BriefPause(session) as frame_id:  # the collector must be in the target before a hit
                await evaluate_json(session, frame_id, "row({}, {}, '7b7d')")
        self._listen(session)
        async with session.lock:
            created = await breakpoints.add(session, checked)
        bp = created[0]
        bp.capture = capture_id  # the capture point's: listed as one, not as a breakpoint
        point = CapturePoint(
            capture_id=capture_id,
            file=bp.file or req.file,
            line=bp.line or req.line,
            expressions=list(req.expressions),
            condition=req.condition,
            hit_limit=req.hit_limit,
            state="active",
            verified=bp.verified,
            expires_at=time.time() + req.expires_in_seconds,
            message=bp.message,
        )
        cap = Capture(point=point, session_id=session.id, breakpoint_id=bp.id)
        cap.timer = asyncio.get_running_loop().call_later(req.expires_in_seconds, self._expire, session, cap)
        mine[capture_id] = cap
        return point

    def get(self, session: Session, capture_id: str) -> Capture:
        cap = self.by_session.get(session.id, {}).get(capture_id)
        if cap is None:
            raise _no_capture(capture_id)
        if cap.point.state == "active" and session.status in ("terminated", "failed"):
            cap.point.state = "ended"
            cap.point.message = "the program ended"
        return cap

    def listing(self, session: Session) -> list[CapturePoint]:
        return [self.get(session, cid).point for cid in self.by_session.get(session.id, {})]

    async def remove(self, session: Session, capture_id: str) -> CapturePoint:
        cap = self.get(session, capture_id)
        if cap.timer is not None:
            cap.timer.cancel()
        if cap.point.state == "active":
            cap.point.state = "removed"
        await self._remove_breakpoint(session, cap)
        del self.by_session[session.id][capture_id]
        return cap.point

    async def table(self, session: Session, capture_id: str, start: int = 0, count: int = PAGE_ROWS) -> CaptureTable:
        """Rows ``start``.. as a table; a table longer than one page is kept whole as evidence too."""
        cap = self.get(session, capture_id)
        columns = ["t", "thread"]
        for row in cap.rows:
            for name in row.get("values", {}):
                if name not in columns:
                    columns.append(name)
        if any("error" in row for row in cap.rows):
            columns.append("error")
        page = cap.rows[start : start + count]
        rows = [
            [
                round(r.get("t", 0.0), 4)
                if c == "t"
                else r.get(c)
                if c in ("thread", "error")
                else r.get("values", {}).get(c)
                for c in columns
            ]
            for r in page
        ]
        out = CaptureTable(capture=cap.point, columns=columns, rows=rows, total=len(cap.rows), start=start)
        if start + count < len(cap.rows):
            out.has_more = True
            whole = "\n".join(json.dumps(r, default=str) for r in cap.rows)
            item = await self.hub.store.add(session.id, "capture", whole, f"capture {capture_id} rows")
            if session.metrics is not None:
                session.metrics.kept(item)
            out.evidence_id = item.id
        if cap.dropped:
            out.capture.message = (out.capture.message or "") + f" ({cap.dropped} later hits not kept)"
        return out
