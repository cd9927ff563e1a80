"""Session export, import and clone (spec 5.1, 5.7): what to run and where to stop, as a document."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from debugrelay.errors import InvalidRequest, RelayError
from debugrelay.models import FORMAT, BreakpointRecord, SessionDocument, SessionRecord
from debugrelay.models.limits import MAX_NAME
from debugrelay.store import timestamp

from . import breakpoints as bps
from ._seals import set_launch
from ._session import Session
from ._views import MASK

if TYPE_CHECKING:
    from ._manager import SessionManager

CLONED = " (clone)"
_BP_FIELDS = ("kind", "file", "line", "function", "condition", "hit_condition", "log_message", "enabled")


def export(record: SessionRecord, *, reveal_env: bool = False) -> dict[str, Any]:
    """A session's configuration: launch spec, breakpoints as asked for, exception filters, name, timeout.

    Environment values are masked unless ``reveal_env`` (they often hold secrets)."""
    doc: dict[str, Any] = {
        "format": FORMAT,
        "name": record.name[:MAX_NAME] if record.name else record.name,  # a record from before names were bounded
        "timeout_minutes": record.timeout_minutes,
        "mode": record.mode,
        "breakpoints": [_breakpoint(b) for b in record.breakpoints if b.shown and not b.unsealed],
        "source_session_id": record.id,
        "exported_at": timestamp(),
    }
    if record.launch is not None:
        doc["launch"] = _set(msgspec.to_builtins(record.launch))
        if doc["launch"].get("env") and not reveal_env:
            doc["launch"]["env"] = dict.fromkeys(doc["launch"]["env"], MASK)
    if record.attach is not None:
        doc["attach"] = _set(msgspec.to_builtins(record.attach))
    if record.exception_setting is not None:  # the session's own; a launch's stop_on_exception is in its launch
        doc["exception_filters"] = _set(msgspec.to_builtins(record.exception_setting)) or None
    return {k: v for k, v in doc.items() if v is not None}


def _set(data: dict[str, Any]) -> dict[str, Any]:
    """Only what was given: an import fills in the defaults."""
    return {k: v for k, v in data.items() if v is not None and v not in ([], {})}


def _breakpoint(bp: BreakpointRecord) -> dict[str, Any]:
    data = msgspec.to_builtins(bp)
    out = {k: data[k] for k in _BP_FIELDS if data.get(k) is not None}
    out.setdefault("enabled", True)
    if bp.kind == "function":
        out.pop("file", None)
        out.pop("line", None)
    return out


async def import_session(
    manager: SessionManager, doc: SessionDocument, *, name: str | None = None
) -> tuple[Session, dict[str, Any]]:
    """A new session from ``doc``: breakpoints set (invalid ones skipped with a reason), exception
    filters set, the spec kept; launched or attached when ``doc.start``. Returns (session, report)."""
    if doc.format != FORMAT:
        raise InvalidRequest(
            f"unknown export format '{doc.format}'",
            details={"format": doc.format},
            hint=f"Send a document made by a session export (format {FORMAT}).",
        )
    masked = sorted(k for k, v in (doc.launch.env if doc.launch else {}).items() if v == MASK)
    if masked:
        raise InvalidRequest(
            f"the document's environment values are masked ({', '.join(masked)})",
            details={"env": masked},
            hint="Export with reveal_env=true to carry them, or give the values.",
        )
    if doc.launch is not None and bool(doc.launch.script) == bool(doc.launch.module):
        raise InvalidRequest(
            "the document's launch gives exactly one of 'script' or 'module'",
            details={"script": doc.launch.script, "module": doc.launch.module},
            hint="Send a document made by a session export, or fix its 'launch'.",
        )
    if doc.start and (doc.launch if doc.mode == "launch" else doc.attach) is None:
        raise InvalidRequest(f"'start' needs the document's '{doc.mode}' spec", details={"mode": doc.mode})
    session = await manager.create(name=name if name is not None else doc.name, timeout_minutes=doc.timeout_minutes)
    report: dict[str, Any] = {}
    try:
        record = session.record
        record.mode = doc.mode
        set_launch(session.keys, record, doc.launch)
        record.attach = doc.attach
        if doc.exception_filters is not None:
            await bps.set_exception_filters(
                session, list(doc.exception_filters.filters), doc.exception_filters.exception_types
            )
        saved = [{**bp, "id": f"i{i}"} for i, bp in enumerate(doc.breakpoints, 1)]
        async with session.lock:
            created, skipped = await bps.apply_saved(session, saved)
        await session.save()
    except BaseException:
        await manager.delete(session.id)
        raise
    report["breakpoints_set"] = len(created)
    if skipped:
        report["skipped"] = skipped
        report["warning"] = f"{len(skipped)} breakpoint(s) could not be set and were skipped"
    if doc.start:
        try:
            if doc.mode == "launch" and doc.launch is not None:
                await session.launch(doc.launch)
            elif doc.attach is not None:
                await session.attach(doc.attach)
        except RelayError as exc:
            report["start_error"] = exc.to_dict()  # the session exists, with its breakpoints
    return session, report


async def clone(
    manager: SessionManager, source: Session, *, name: str | None = None, start: bool = False
) -> tuple[Session, dict[str, Any]]:
    """A new session with the same spec, breakpoints, exception filters and timeout."""
    doc = msgspec.convert({**export(source.record, reveal_env=True), "start": start}, SessionDocument)
    return await import_session(manager, doc, name=name if name is not None else clone_name(source.record))


def clone_name(record: SessionRecord) -> str:
    """``<name> (clone)``, within the bound on names: a long name is cut short (``…``) to leave room."""
    base = record.name or record.id
    if len(base) + len(CLONED) > MAX_NAME:
        base = base[: MAX_NAME - len(CLONED) - 1] + "…"
    return base + CLONED
