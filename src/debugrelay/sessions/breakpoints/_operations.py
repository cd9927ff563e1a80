"""Adding, changing, removing and listing a session's breakpoints (under the session lock)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

import msgspec

from debugrelay.errors import BreakpointNotFound, InvalidLine, InvalidRequest, RelayError, Unsealed
from debugrelay.models import BreakpointRecord, BreakpointRequest, BreakpointUpdate, SessionRecord

from ._checks import resolve_function, verify_locally
from ._common import (
    HOT_RUNS_PER_SECOND,
    LISTING_LOCK_WAIT,
    MAX_LINE,
    BreakpointExists,
    is_pending_file,
    is_runtime_note,
    settings_of,
)
from ._requests import (
    check_log_message,
    compile_expression,
    normalize_hit_condition,
    record_from,
)
from ._sync import ensure_watcher, recheck_pending, sync_changed

if TYPE_CHECKING:
    from .._files import SourceRoots
    from .._session import Session


def _new_id(record: SessionRecord) -> str:
    bp_id = f"bp_{record.next_breakpoint}"
    record.next_breakpoint += 1
    return bp_id


def same_place(existing: list[BreakpointRecord], bp: BreakpointRecord) -> BreakpointRecord | None:
    for other in existing:
        if other.internal or other is bp or other.kind != bp.kind:
            continue
        if bp.kind == "line" and other.file == bp.file and other.line == bp.line:
            return other
        if bp.kind == "function" and other.function == bp.function:
            return other
    return None


def conflict(existing: BreakpointRecord, bp: BreakpointRecord) -> BreakpointExists:
    where = f"{bp.file}:{bp.line}" if bp.kind == "line" else f"function '{bp.function}'"
    return BreakpointExists(
        f"{existing.id or 'another breakpoint in this request'} is already set at {where} with other settings",
        details={"breakpoint_id": existing.id, "file": bp.file, "line": bp.line, "function": bp.function},
    )


async def add(session: Session, requests: list[BreakpointRequest]) -> list[BreakpointRecord]:
    """Set breakpoints all-or-nothing; an identical breakpoint already set is returned as it is."""
    record = session.record
    # reading sources and looking function names up can take long: off the event loop
    result, new = await asyncio.to_thread(_plan, record, requests, session.source_roots())
    before, next_id = list(record.breakpoints), record.next_breakpoint
    for bp in new:
        bp.id = _new_id(record)
    record.breakpoints = [*record.breakpoints, *new]
    try:
        await sync_changed(session, new)
    except BaseException:
        record.breakpoints, record.next_breakpoint = before, next_id
        with contextlib.suppress(RelayError):
            await sync_changed(session, new)
        raise
    await session.save()
    ensure_watcher(session)
    return result


def _plan(
    record: SessionRecord, requests: list[BreakpointRequest], roots: SourceRoots
) -> tuple[list[BreakpointRecord], list[BreakpointRecord]]:
    """(what each request answers, the breakpoints to add): checked against the source; raises before
    anything changes."""
    result: list[BreakpointRecord] = []
    new: list[BreakpointRecord] = []
    for index, req in enumerate(requests):
        bp = record_from(req)
        try:
            verify_locally(bp, roots)
        except RelayError as exc:
            if len(requests) > 1:
                exc.details = {"index": index, **exc.details}
                exc.message = f"breakpoint #{index + 1}: {exc.message} (none of the {len(requests)} was set)"
            raise
        same = same_place([*record.breakpoints, *new], bp)
        if same is not None:
            if settings_of(same) != settings_of(bp):
                raise conflict(same, bp)
            result.append(same)
            continue
        new.append(bp)
        result.append(bp)
    for bp in new:
        if bp.kind == "function":
            resolve_function(record, bp, roots)
    return result, new


def find(record: SessionRecord, bp_id: str) -> BreakpointRecord:
    for bp in record.breakpoints:
        if bp.id == bp_id and not bp.internal:
            return bp
    raise BreakpointNotFound(f"no breakpoint '{bp_id}' in session {record.id}", details={"breakpoint_id": bp_id})


def drop_captures(record: SessionRecord) -> None:
    """The run ended: capture points end with it, their logpoints are not set again in the next run."""
    record.breakpoints = [b for b in record.breakpoints if b.capture is None]


async def remove(session: Session, bp_id: str) -> BreakpointRecord:
    bp = find(session.record, bp_id)
    before = list(session.record.breakpoints)
    session.record.breakpoints = [b for b in session.record.breakpoints if b is not bp]
    try:
        await sync_changed(session, [bp])
    except BaseException:
        session.record.breakpoints = before
        raise
    await session.save()
    return bp


async def remove_all(session: Session) -> list[BreakpointRecord]:
    """Every breakpoint of the session removed at once (one sync per file), its capture points kept."""
    before = list(session.record.breakpoints)
    gone = [b for b in before if b.capture is None]
    if not gone:
        return []
    session.record.breakpoints = [b for b in before if b.capture is not None]
    try:
        await sync_changed(session, gone)
    except BaseException:
        session.record.breakpoints = before
        raise
    await session.save()
    return gone


async def update(session: Session, bp_id: str, change: BreakpointUpdate) -> BreakpointRecord:
    """Change condition, hit condition, log message, enabled or line; all-or-nothing."""
    bp = find(session.record, bp_id)
    if bp.unsealed:  # its code was not sealed by this relay: only removing it is allowed
        raise Unsealed(
            f"breakpoint {bp_id} was read back from the state store unsealed: it is never sent to the target",
            details={"breakpoint_id": bp_id},
        )
    new = msgspec.structs.replace(bp)
    if change.condition is not None:
        new.condition = change.condition if change.condition.strip() else None
        if new.condition:
            compile_expression(new.condition, "condition")
    if change.hit_condition is not None:
        text = change.hit_condition
        new.hit_condition = normalize_hit_condition(text) if text.strip() else None
    if change.log_message is not None:
        new.log_message = change.log_message or None
        if new.log_message:
            check_log_message(new.log_message)
    if change.enabled is not None:
        new.enabled = change.enabled
    if change.line is not None:
        if bp.kind != "line":
            raise InvalidRequest(
                "only line breakpoints can move to another line",
                details={"breakpoint_id": bp_id},
                hint="Delete it and set a line breakpoint instead.",
            )
        if not 1 <= change.line <= MAX_LINE:
            raise InvalidLine(f"line {change.line} is not a line number", details={"line": change.line})
        new.line = change.line
        verify_locally(new, session.source_roots())
        same = same_place(session.record.breakpoints, new)
        if same is not None and same is not bp:
            raise conflict(same, new)
    changed_test = (new.condition, new.hit_condition) != (bp.condition, bp.hit_condition)
    if changed_test and is_runtime_note(new.message):
        new.message = None
    old = msgspec.structs.replace(bp)
    _copy_into(bp, new)
    try:
        await sync_changed(session, [bp, old])
    except BaseException:
        _copy_into(bp, old)
        with contextlib.suppress(RelayError):
            await sync_changed(session, [bp])
        raise
    await session.save()
    return bp


def _copy_into(target: BreakpointRecord, source: BreakpointRecord) -> None:
    for name in target.__struct_fields__:
        setattr(target, name, getattr(source, name))


async def listing(session: Session) -> list[BreakpointRecord]:
    """The session's breakpoints, after re-checking pending ones (a missing file may have appeared)."""
    if any(is_pending_file(b) for b in session.record.breakpoints):
        try:
            await asyncio.wait_for(session.lock.acquire(), LISTING_LOCK_WAIT)
        except TimeoutError:  # a long launch holds it; it re-checks pending breakpoints itself
            return [b for b in session.record.breakpoints if b.shown]
        try:
            await recheck_pending(session)
        finally:
            session.lock.release()
    return [b for b in session.record.breakpoints if b.shown]


def never_hit(bp: BreakpointRecord, ended: bool) -> bool:
    """Verified, enabled, not a logpoint, and the run that has ended never paused on it."""
    ran_through = bp.verified and bp.enabled and not bp.log_message and not bp.internal
    return ended and ran_through and bp.hit_count == 0


def view(bp: BreakpointRecord, ended: bool = False) -> dict[str, Any]:
    """The API's shape of a breakpoint: ``breakpoint_id``, ``verified`` and ``hit_count`` always present."""
    data = msgspec.to_builtins(bp)
    data.pop("dap_id", None)
    data.pop("internal", None)
    data.pop("capture", None)
    out = {
        "breakpoint_id": data.pop("id"),
        "kind": bp.kind,
        "verified": bp.verified,
        "enabled": bp.enabled,
        "hit_count": bp.hit_count,
    }
    out.update(data)
    if never_hit(bp, ended):
        out["never_hit"] = True
    rate = bp.runs_per_second
    if rate is not None and rate >= HOT_RUNS_PER_SECOND:
        out["slow"] = (
            f"its line runs {rate:,.0f} times a second, each run evaluating the "
            f"{'condition' if bp.condition else 'hit count'} in the debugger: the program runs far slower. "
            "A breakpoint on a line that runs less often avoids it."
        )
    return out
