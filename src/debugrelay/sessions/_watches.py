"""Watch expressions (spec 5.4): kept with the session, evaluated at the current stop."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from debugrelay.errors import InvalidRequest, NotFound, RelayError
from debugrelay.models import Watch

if TYPE_CHECKING:
    from ._session import Session


def _compiles(expression: str) -> None:
    try:
        compile(expression, "<watch>", "eval")
    except SyntaxError as exc:
        raise InvalidRequest(
            f"watch expression does not compile: SyntaxError: {exc.msg}",
            details={"expression": expression, "offset": exc.offset},
            hint="A watch is one Python expression, e.g. len(items) or user.name.",
        ) from None


async def add(session: Session, expression: str) -> Watch:
    expression = expression.strip()
    if not expression:
        raise InvalidRequest("give the watch 'expression'", hint='e.g. {"expression": "len(items)"}')
    _compiles(expression)
    record = session.record
    watch = Watch(id=f"w{record.next_watch}", expression=expression)
    record.next_watch += 1
    record.watches = [*record.watches, watch]
    await session.save()
    return watch


async def remove(session: Session, watch_id: str) -> None:
    record = session.record
    if not any(w.id == watch_id for w in record.watches):
        raise NotFound(f"no watch '{watch_id}'", details={"watch_id": watch_id}, hint="List the watches.")
    record.watches = [w for w in record.watches if w.id != watch_id]
    await session.save()


async def value(session: Session, watch: Watch) -> dict[str, Any]:
    """The watch with its value in the top frame, or why there is none (running, an error)."""
    out: dict[str, Any] = {"watch_id": watch.id, "expression": watch.expression}
    if session.status != "paused":
        out["available"] = False
        return out
    try:
        result = await session.evaluate(watch.expression, 0, "watch")
    except RelayError as exc:
        out["error"] = exc.message
        return out
    out.update(result)
    return out


async def values(session: Session) -> list[dict[str, Any]]:
    return [await value(session, w) for w in session.record.watches]
