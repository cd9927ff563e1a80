"""One relay's evidence: its store (the state store's evidence namespace), the capture points of its
sessions, the post-mortem hook."""

from __future__ import annotations

import collections
import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import msgspec

from debugrelay import inspection
from debugrelay.errors import RelayError
from debugrelay.models import SnapshotBounds

from ._collect import evaluate_json
from ._snapshots import keep

if TYPE_CHECKING:
    from debugrelay.models import Stop
    from debugrelay.sessions import Session
    from debugrelay.store import EvidenceStore

    from ._captures import Captures

log = logging.getLogger(__name__)
POST_MORTEM_FRAMES = 20
MAX_POST_MORTEMS = 5  # per session and relay


class EvidenceHub:
    """What a relay keeps of its sessions' programs: built once with the relay, given to its session manager."""

    def __init__(self, store: EvidenceStore) -> None:
        self.store = store
        self._captures: Captures | None = None
        self.post_mortems: collections.Counter[str] = collections.Counter()

    @property
    def captures(self) -> Captures:
        if self._captures is None:
            from ._captures import Captures

            self._captures = Captures(self)
        return self._captures

    def forget(self, session_id: str) -> None:
        """The session is gone: its capture points and counts go (the store drops its items with its record)."""
        self.post_mortems.pop(session_id, None)
        if self._captures is not None:
            self._captures.forget(session_id)


StopHook = Callable[["Session", "Stop", list[Any]], Awaitable[None]]


def with_post_mortem(hub: EvidenceHub, inner: StopHook | None) -> StopHook:
    """``inner`` (the inspection's stop hook), then, at an uncaught exception, a post-mortem snapshot
    with the autopsy kept in ``hub``, taken while the program is still paused (a resume waits for it)."""

    async def on_stop(session: Session, stop: Stop, frames: list[Any]) -> None:
        if inner is not None:
            await inner(session, stop, frames)
        exc = stop.exception
        if exc is None or not exc.unhandled or exc.type.rsplit(".", 1)[-1] == "SystemExit":
            return  # sys.exit() with a code is how a program ends, not a crash
        hub.post_mortems[session.id] += 1
        if hub.post_mortems[session.id] > MAX_POST_MORTEMS:
            # a program that keeps crashing threads would pay a snapshot each time; the first ones tell
            log.info(
                "session %s: post-mortem %d not taken (the first %d are kept)",
                session.id,
                hub.post_mortems[session.id],
                MAX_POST_MORTEMS,
            )
            return
        try:
            await post_mortem(session, hub.store)
        except RelayError as err:
            log.warning("no post-mortem snapshot of session %s: %s", session.id, err.message)

    return on_stop


async def post_mortem(session: Session, store: EvidenceStore) -> None:
    """A snapshot of the paused program with its autopsy, kept in ``store`` as the session's post-mortem."""
    opts = json.dumps(msgspec.to_builtins(SnapshotBounds()))
    data = await evaluate_json(session, await session.frame_id(0), f"snapshot({opts!r})")
    data["program"] = "paused"
    try:
        data["autopsy"] = await inspection.autopsy(session, POST_MORTEM_FRAMES, 3, 5)
    except RelayError as err:
        data["autopsy"] = {"error": err.message}
    stop = session.record.stop
    if stop is not None:
        data["stop"] = {"reason": stop.reason, "thread_id": stop.thread_id}
        names = [t.name for t in stop.threads if t.thread_id == stop.thread_id and t.name]
        if names:
            data["stop"]["thread_name"] = names[0]
    await keep(session, store, data, "post_mortem")
