"""Watch expressions (spec 5.4): kept with the session, evaluated at the current stop."""

from __future__ import annotations

from typing import TYPE_CHECKING

from debugrelay.errors import InvalidRequest, NotFound
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
    taken = {w.id for w in record.watches}  # a counter read back from the store may name one again
    while f"w{record.next_watch}" in taken:
        record.next_watch += 1
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
