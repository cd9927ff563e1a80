"""object_inspect: one object walked to a depth inside the target, read-only."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from debugrelay.errors import DepthExceeded, InvalidReference, Unsupported
from debugrelay.models import ObjectInspection

from ._probe import ProbeUnavailable, call_probe

if TYPE_CHECKING:
    from debugrelay.sessions import Session

MIN_DEPTH, MAX_DEPTH = 1, 10
MAX_ITEMS = 100  # fields or items per object
MAX_NODES = 2000  # objects per answer; past it the walk stops and says truncated


async def object_inspect(
    session: Session,
    object_ref: str,
    *,
    depth: int = 1,
    frame_index: int = 0,
    thread_id: int | None = None,
    max_items: int = MAX_ITEMS,
) -> ObjectInspection:
    """``{id, type, size, value, fields|items, is_none, has_circular_ref, truncated}`` of ``object_ref``.

    ``object_ref`` is an expression in the frame (a variable name, ``self.repo``, ``items[0]``) or a
    ``variable_reference`` from a variables listing. Fields are read through C-level descriptors, values of
    non-builtin objects are shown by type and address: no user ``__repr__`` or property runs.
    """
    if not MIN_DEPTH <= depth <= MAX_DEPTH:
        raise DepthExceeded(
            f"depth {depth} is outside {MIN_DEPTH}..{MAX_DEPTH}",
            details={"depth": depth, "min": MIN_DEPTH, "max": MAX_DEPTH},
        )
    session.require_paused()
    expression = object_ref.strip()
    fid: int | None = None
    if expression.isdigit():
        meta = session.ref_meta(int(expression))
        if meta is None or not meta.evaluate_name:
            raise InvalidReference(
                f"variable reference {expression} is not known at this stop",
                details={"object_ref": object_ref},
            )
        expression, fid = meta.evaluate_name, meta.frame_id
    try:
        compile(expression, "<object_ref>", "eval")
    except (SyntaxError, ValueError) as exc:
        raise InvalidReference(
            f"'{object_ref}' is not an expression: {exc.msg if isinstance(exc, SyntaxError) else exc}",
            details={"object_ref": object_ref},
            hint="Give a variable name or an expression such as self.repo or items[0].",
        ) from None
    if fid is None:
        fid = await session.frame_id(frame_index, thread_id)
    call = f"inspect(lambda: ({expression}), {depth}, {max_items}, {MAX_NODES}, {expression!r})"
    try:
        result = await call_probe(session, fid, call, session.settings.request_timeout)
    except ProbeUnavailable as exc:
        raise Unsupported(
            f"object_inspect cannot read the target: {exc}",
            hint="Targets launched by the relay carry its helper; attached ones need _debugrelay_probe on "
            "their path. Listing variables by path (expand) works without it.",
        ) from exc
    if not isinstance(result, dict):
        raise InvalidReference(f"cannot inspect '{object_ref}'", details={"object_ref": object_ref})
    if "error" in result:
        raise InvalidReference(
            f"cannot resolve '{object_ref}': {result['error']}",
            details={"object_ref": object_ref, "frame_index": frame_index},
        )
    if "probe_error" in result:
        raise Unsupported(f"object_inspect failed in the target: {result['probe_error']}")
    return msgspec.convert(result, ObjectInspection)
