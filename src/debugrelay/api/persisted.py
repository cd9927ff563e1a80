"""Answers to changes the state store could not record yet say so: ``"persisted": false`` and a header.

The rule itself lives in :mod:`debugrelay.store` (``WriteBehind``); this adapter only presents it.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response
from litestar.datastructures import ResponseHeader

from debugrelay.store import begin_tracking, unpersisted

PERSISTED_HEADER = "X-Debugrelay-Persisted"

STORE_OUTAGE_RULE = (
    "While the state store (Redis) is unreachable, reads of a session the relay holds are answered from "
    "memory. A change to such a session (breakpoints, continue and steps, launch, delete, watches, options) "
    'is made and answered as usual, plus "persisted": false in the body and the header '
    f"{PERSISTED_HEADER}: false; the relay writes it to the store as soon as the store answers again "
    "(GET /health counts the writes waiting in unpersisted_writes). A relay that dies before then loses them. "
    "What needs the store first (creating a session, listing sessions) is refused with 503 store_unavailable "
    "and changes nothing."
)

PERSISTED_DOC = ResponseHeader(
    name=PERSISTED_HEADER,
    description=(
        "'false' when the change was made (in the target and in the relay's memory) while the state store "
        'was unreachable: the body then carries "persisted": false, and the change is written to the store '
        "as soon as it answers again. A relay that dies before then loses it."
    ),
    documentation_only=True,
)


READS = frozenset({"evaluate", "completions", "object-inspect"})  # POSTs that change no stored state


async def track(request: Request[Any, Any, Any]) -> None:
    """Before a handler: collect the writes it makes that the store cannot take now; a change to a
    session (any method but GET, but for the reads in READS) also asks whether that session has changes
    waiting: a step's new stop, saved as it arrives, is one."""
    if request.method in ("GET", "HEAD", "OPTIONS") or request.url.path.rsplit("/", 1)[-1] in READS:
        begin_tracking()
        return
    begin_tracking(request.app.state.manager.store, request.path_params.get("session_id"))


async def mark(response: Response[Any]) -> Response[Any]:
    """After a handler: an answer to a change not yet persisted says so."""
    if not unpersisted():
        return response
    response.headers[PERSISTED_HEADER] = "false"
    content = response.content
    if isinstance(content, msgspec.Struct):
        content = msgspec.to_builtins(content)
    if isinstance(content, dict):
        response.content = {**content, "persisted": False}
    return response
