"""Snapshots of a whole Python process: taken on demand (pausing a running program briefly) or at a crash."""

from __future__ import annotations

import json
import logging
import os
from typing import TYPE_CHECKING, Any

import msgspec

from debugrelay.errors import NotFound
from debugrelay.models import AutopsyException, Snapshot, SnapshotBounds, SnapshotCut, SnapshotSummary, ThreadBrief

from ._collect import BriefPause, evaluate_json

if TYPE_CHECKING:
    from debugrelay.sessions import Session
    from debugrelay.store import EvidenceItem, EvidenceStore

log = logging.getLogger(__name__)
KINDS = ("snapshot", "post_mortem")


async def take(
    session: Session, store: EvidenceStore, bounds: SnapshotBounds, reason: str = "snapshot"
) -> SnapshotSummary:
    """A snapshot of ``session``'s program, kept in ``store``; a running program goes on as it was."""
    program = "paused" if session.status == "paused" else "running"
    opts = json.dumps(msgspec.to_builtins(bounds))
    pause = BriefPause(session)
    async with pause as frame_id:
        data = await evaluate_json(session, frame_id, f"snapshot({opts!r})")
    data["program"] = program
    if program == "running":
        data["paused_ms"] = round(pause.paused_ms, 1)
    if session.record.stop is not None and program == "paused":
        stop = session.record.stop
        data["stop"] = {"reason": stop.reason, "thread_id": stop.thread_id}
    return await keep(session, store, data, reason)


async def keep(session: Session, store: EvidenceStore, data: dict[str, Any], reason: str) -> SnapshotSummary:
    title = f"{reason} of session {session.id}"
    item = await store.add(session.id, reason, json.dumps(data, indent=1, default=str), title)
    if session.metrics is not None:
        session.metrics.kept(item)
    return summary(item, data)


def _brief(thread: dict[str, Any]) -> ThreadBrief:
    frames = thread.get("frames") or []
    top = frames[0] if frames else None
    brief = ThreadBrief(
        name=str(thread.get("name")), ident=int(thread.get("ident") or 0), frames=thread.get("total_frames", 0)
    )
    if top is not None:
        brief.top = f"{os.path.basename(str(top.get('file')))}:{top.get('line')} {top.get('function')}"
    waiting = thread.get("waiting")
    if waiting:
        brief.waiting = f"{waiting.get('kind')}: {waiting.get('in')}"
    brief.holds = [f"{h.get('expression')} ({h.get('lock')})" for h in thread.get("holds") or []]
    waits = thread.get("waits_for")
    if waits:
        brief.waits_for = f"{waits.get('expression')} ({waits.get('lock')})"
    return brief


def summary(item: EvidenceItem, data: dict[str, Any]) -> SnapshotSummary:
    process = dict(data.get("process") or {})
    top = process.pop("gc_top", None)
    if isinstance(top, dict):
        process["gc_top5"] = dict(list(top.items())[:5])
    process.pop("gc_counts", None)
    out = SnapshotSummary(
        snapshot_id=item.id,
        session_id=item.session_id,
        reason=item.kind,
        taken_at=float(data.get("taken_at") or item.created_at),
        program=str(data.get("program", "paused")),
        paused_ms=data.get("paused_ms"),
        threads=[_brief(t) for t in data.get("threads") or []],
        tasks=len(data.get("tasks") or []),
        process=process,
        size_bytes=len(item.text),
        truncated=_cut(data.get("truncated")),
    )
    autopsy = data.get("autopsy")
    if isinstance(autopsy, dict) and isinstance(autopsy.get("exception"), dict):
        out.exception = msgspec.convert(autopsy["exception"], AutopsyException)
    return out


def _cut(given: Any) -> SnapshotCut | None:
    """What the collector said it cut, when it says it in the shape it writes (else nothing is claimed)."""
    try:
        return msgspec.convert(given, SnapshotCut) if isinstance(given, dict) else None
    except msgspec.ValidationError:
        return None


def no_snapshot(snapshot_id: str) -> NotFound:
    return NotFound(
        f"no snapshot '{snapshot_id}' in this session",
        details={"snapshot_id": snapshot_id},
        hint="List the session's snapshots; they go with their session.",
    )


async def load(store: EvidenceStore, session_id: str, snapshot_id: str) -> tuple[EvidenceItem, dict[str, Any]]:
    item = await store.get(snapshot_id)
    if item is None or item.session_id != session_id or item.kind not in KINDS:
        raise no_snapshot(snapshot_id)
    return item, json.loads(item.text)


async def listing(store: EvidenceStore, session_id: str) -> list[SnapshotSummary]:
    found = []
    for evidence_id in await store.ids(session_id):
        item = await store.get(evidence_id)
        if item is not None and item.kind in KINDS:
            found.append(summary(item, json.loads(item.text)))
    return found


def whole(item: EvidenceItem, data: dict[str, Any]) -> Snapshot:
    return Snapshot(snapshot_id=item.id, session_id=item.session_id, reason=item.kind, data=data)
