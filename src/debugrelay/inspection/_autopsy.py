"""Exception autopsy: everything about the exception a session is stopped at, in one call.

Reads only: the stack and variables through DAP (what debugpy shows), the exception object through the
read-only probe (type, text without user ``__str__``, where raised, ``__cause__``/``__context__``,
ExceptionGroup members). Every read has a timeout; a part that cannot be read is marked, never fatal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from debugrelay.dap import StackFrame, StackTraceBody, as_body
from debugrelay.errors import InvalidRequest, NoException, RelayError
from debugrelay.models.limits import MAX_FRAMES_SHOWN, MAX_INNER

from ._frames import SourceCache, frame_view, is_chained
from ._probe import ProbeUnavailable, call_probe, dap
from ._render import JUDGED
from ._variables import (
    argument_names,
    children,
    compact,
    expand_one_level,
    gather_limited,
    mark_failed_reprs,
    scope_refs,
)

if TYPE_CHECKING:
    from debugrelay.sessions import Session

MAX_FRAMES = MAX_FRAMES_SHOWN
VARS_PER_FRAME = 50  # locals shown per frame; more are counted and marked
CHILDREN_PER_VAR = 10  # immediate attributes/items shown per expanded variable
CONTEXT_LINES = 2  # source lines shown either side of the line, for the frames with variables


def _check(name: str, value: int, low: int, high: int) -> None:
    if not low <= value <= high:
        raise InvalidRequest(f"{name} must be between {low} and {high}", details={name: value, "min": low, "max": high})


async def autopsy(
    session: Session,
    max_frames: int = 10,
    include_variables_for_frames: int = 1,
    max_inner_depth: int = 5,
) -> dict[str, Any]:
    """The exception bundle: thread, exception (qualified type, message, unhandled, where raised), the top
    ``max_frames`` frames with source, variables of the top ``include_variables_for_frames`` frames expanded
    one level, and the inner exception chain capped at ``max_inner_depth``.

    Raises :class:`NoException` (409) unless the session is stopped at an exception.
    """
    _check("max_frames", max_frames, 1, MAX_FRAMES)
    _check("include_variables_for_frames", include_variables_for_frames, 0, MAX_FRAMES)
    _check("max_inner_depth", max_inner_depth, 0, MAX_INNER)
    session.require_paused()
    stop = session.record.stop
    if stop is None or stop.exception is None:
        raise NoException(
            f"the session is stopped by a {stop.reason if stop else 'pause'}, not at an exception",
            details={"reason": stop.reason if stop else None},
        )
    tid = stop.thread_id
    warnings: list[str] = []
    frames, total = await _real_frames(session, tid, max_frames)
    k = min(include_variables_for_frames, len(frames))
    sources = SourceCache()
    await sources.load(session, frames)
    views = [frame_view(session, i, f, sources, CONTEXT_LINES if i < max(k, 1) else 0) for i, f in enumerate(frames)]
    info = msgspec.to_builtins(stop.exception)
    exception: dict[str, Any] = {
        "type": info.get("type"),
        "message": info.get("message", ""),
        "unhandled": bool(info.get("unhandled")),
        "break_mode": info.get("break_mode"),
    }
    if info.get("location"):
        exception["location"] = info["location"]

    jobs: list[Any] = [_read_exception(session, frames, max_inner_depth)]
    jobs += [_frame_bundle(session, frames[i].id) for i in range(k)]
    detail, *bundles = await gather_limited(jobs, limit=4)

    out: dict[str, Any] = {"thread_id": tid, "exception": exception}
    if isinstance(detail, str):
        warnings.append(f"exception details unavailable: {detail}")
        exception["details_available"] = False
    else:
        _map_paths(session, detail)
        _merge_exception(out, exception, detail)
    for view, bundle in zip(views, bundles, strict=False):
        view.update(bundle)
        if "variables_error" in bundle:
            warnings.append(f"frame {view['index']}: variables unavailable ({bundle['variables_error']})")
    for view in views:
        if view.get("source_available") is False and view["index"] == 0:
            warnings.append("the throwing frame has no readable source (exec'd or generated code)")
    out["frames"] = views
    out["total_frames"] = total
    if total > len(views):
        out["frames_truncated"] = True
    if warnings:
        out["partial"] = True
        out["warnings"] = warnings
    return out


async def _real_frames(session: Session, tid: int, max_frames: int) -> tuple[list[StackFrame], int]:
    """The thread's own frames (debugpy's pseudo-frames of chained tracebacks left out) and their count."""
    _, frames, total = await session.frames(tid, max_frames)
    real = [f for f in frames if not is_chained(f)]
    if len(frames) >= total:
        return real[:max_frames], len(real)
    # the stack is longer than what was fetched: chained pseudo-frames sit at its end
    window = min(64, total - len(frames))
    try:
        args = {"threadId": tid, "startFrame": total - window, "levels": window}
        body = await dap(session, "stackTrace", args)
        chained = sum(1 for f in as_body(body, StackTraceBody).stack_frames if is_chained(f))
    except RelayError:
        chained = 0
    return real[:max_frames], total - chained


async def _read_exception(session: Session, frames: list[StackFrame], depth: int) -> dict[str, Any] | str:
    """The probe's account of the exception object; an error text when it cannot be read."""
    if not frames:
        return "no frame to read the exception from"
    try:
        detail = await call_probe(session, frames[0].id, f"exception({depth}, 10)")
    except ProbeUnavailable as exc:
        return str(exc)
    if detail is None:
        return "debugpy did not expose the exception object in the frame"
    if not isinstance(detail, dict) or "probe_error" in detail:
        return str(detail.get("probe_error") if isinstance(detail, dict) else detail)
    return detail


def _map_paths(session: Session, detail: dict[str, Any]) -> None:
    """The probe reports paths as the target sees them; show them as the user's (container mappings)."""
    where = detail.get("location")
    if isinstance(where, dict) and where.get("file"):
        where["file"] = session.to_local(where["file"])
    for nested in [*detail.get("inner", []), *detail.get("members", [])]:
        if isinstance(nested, dict):
            _map_paths(session, nested)


def _merge_exception(out: dict[str, Any], exception: dict[str, Any], detail: dict[str, Any]) -> None:
    exception["type"] = detail.get("type") or exception["type"]
    if not exception["message"] and detail.get("message"):
        exception["message"] = detail["message"]
    if detail.get("location"):
        exception["location"] = detail["location"]  # where it was raised (innermost traceback entry)
    for key in ("members", "members_total", "members_truncated"):
        if key in detail:
            exception[key] = detail[key]
    inner = detail.get("inner") or []
    if inner:
        out["inner_exceptions"] = inner
    more = detail.get("inner_more")
    if more:
        out["inner_exceptions_more"] = more
        out["inner_exceptions_truncated"] = True


async def _frame_bundle(session: Session, fid: int) -> dict[str, Any]:
    """Arguments and locals of one frame, each expanded one level; errors become markers."""
    try:
        refs = await scope_refs(session, fid)
        ref = refs.get("Locals") or next(iter(refs.values()), 0)
        listing = await children(session, ref) if ref else {"variables": []}
    except RelayError as exc:
        return {"variables_error": exc.message}
    args = await argument_names(session, fid)
    variables = [compact(v) for v in listing["variables"]]
    names = set(args or ())
    arguments = [v for v in variables if v["name"] in names]
    local = [v for v in variables if v["name"] not in names]
    shown = local[:VARS_PER_FRAME]
    expandable = [v for v in [*arguments, *shown] if v.get("type") != "module"]
    await gather_limited(
        [
            *([] if listing.get(JUDGED) else [mark_failed_reprs(session, fid, [*arguments, *shown])]),
            *(expand_one_level(session, v, CHILDREN_PER_VAR) for v in expandable),
        ],
        limit=8,
    )
    out: dict[str, Any] = {}
    if args is None:
        out["arguments_known"] = False
    if arguments:
        out["arguments"] = arguments
    out["locals"] = shown
    if len(local) > len(shown):
        out["locals_total"] = len(local)
        out["locals_truncated"] = True
    return out
