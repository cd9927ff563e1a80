"""Watch expressions' values at the current stop."""

from __future__ import annotations

from typing import TYPE_CHECKING

from debugrelay.errors import RelayError
from debugrelay.models import Watch, WatchValue
from debugrelay.sessions import seals

from ._reads import evaluate

if TYPE_CHECKING:
    from debugrelay.sessions import Session


async def watch_value(session: Session, watch: Watch) -> WatchValue:
    """The watch with its value in the top frame, or why there is none (running, an error)."""
    out = WatchValue(watch_id=watch.id, expression=watch.expression)
    if watch.unsealed:  # read back from the store without the relay's seal: never evaluated
        out.unsealed, out.available, out.error = True, False, "not evaluated: " + seals.UNSEALED_HINT
        return out
    if session.status != "paused":
        out.available = False
        return out
    try:
        result = await evaluate(session, watch.expression, 0, "watch")
    except RelayError as exc:
        out.error = exc.message
        return out
    out.result, out.type = result.result, result.type
    out.variable_reference, out.expandable, out.truncated = (
        result.variable_reference,
        result.expandable,
        result.truncated,
    )
    return out


async def watch_values(session: Session) -> list[WatchValue]:
    return [await watch_value(session, w) for w in session.record.watches]
