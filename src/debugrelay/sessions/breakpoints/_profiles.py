"""Named breakpoint sets: what a profile keeps, and applying one to a session."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import msgspec

from debugrelay.errors import RelayError
from debugrelay.models import BreakpointRecord, BreakpointRequest, SkippedBreakpoint, SkipReason

from ._checks import verify_locally
from ._common import settings_of
from ._operations import add, conflict, same_place
from ._requests import record_from, validate_request

if TYPE_CHECKING:
    from .._files import SourceRoots
    from .._session import Session

log = logging.getLogger(__name__)


def profile_entry(bp: BreakpointRecord, index: int) -> BreakpointRecord:
    """What a profile keeps of a breakpoint: the request, not what a run made of it."""
    return BreakpointRecord(
        id=f"p{index}",
        kind=bp.kind,
        file=bp.file if bp.kind == "line" else None,
        line=bp.line if bp.kind == "line" else None,
        function=bp.function,
        condition=bp.condition,
        hit_condition=bp.hit_condition,
        log_message=bp.log_message,
        enabled=bp.enabled,
    )


def requests_from_saved(
    saved: list[Any], roots: SourceRoots
) -> tuple[list[BreakpointRequest], list[SkippedBreakpoint]]:
    """Saved breakpoints (records or raw dicts) → valid requests, and a warning for each one skipped."""
    reqs: list[BreakpointRequest] = []
    skipped: list[SkippedBreakpoint] = []
    for index, item in enumerate(saved):
        try:
            bp = item if isinstance(item, BreakpointRecord) else msgspec.convert(item, BreakpointRecord)
            req = validate_request(
                BreakpointRequest(
                    file=bp.file if bp.kind == "line" else None,
                    line=bp.line if bp.kind == "line" else None,
                    function=bp.function if bp.kind == "function" else None,
                    condition=bp.condition,
                    hit_condition=bp.hit_condition,
                    log_message=bp.log_message,
                    enabled=bp.enabled,
                )
            )
            probe = record_from(req)
            verify_locally(probe, roots)
            reqs.append(req)
        except (RelayError, msgspec.ValidationError, TypeError) as exc:
            plain = SkipReason(code="invalid_data", message=str(exc))
            error = SkipReason(**exc.to_dict()) if isinstance(exc, RelayError) else plain
            log.warning("skipping saved breakpoint #%d: %s", index, error.message)
            skipped.append(SkippedBreakpoint(index=index, error=error))
    return reqs, skipped


async def apply_saved(session: Session, saved: list[Any]) -> tuple[list[BreakpointRecord], list[SkippedBreakpoint]]:
    """Set a profile's breakpoints; invalid or conflicting entries are skipped with a warning each."""
    reqs, skipped = requests_from_saved(saved, session.source_roots())
    kept: list[BreakpointRequest] = []
    for req in reqs:
        probe = record_from(req)
        same = same_place(session.record.breakpoints, probe)
        if same is not None and settings_of(same) != settings_of(probe):
            skipped.append(SkippedBreakpoint(index=None, error=SkipReason(**conflict(same, probe).to_dict())))
            continue
        kept.append(req)
    created = await add(session, kept) if kept else []
    return created, skipped
