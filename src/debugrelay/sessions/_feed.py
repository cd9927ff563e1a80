"""A relay-wide change counter: whoever shows sessions live (``/ui``) sleeps on it instead of polling.

Every session change that a person watching would see (a stop, a step, an end, output written, a call
recorded in the agent's trail, a session created or gone) bumps the counter and wakes the sleepers.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

MAX_TRACKED = 4096  # sessions whose last change is remembered; the oldest are forgotten past it


class ChangeFeed:
    """A version number bumped on every change, per session and overall."""

    def __init__(self) -> None:
        self.version = 0
        self.of: dict[str, int] = {}  # session id -> version of its last change
        self.closed = False
        self._event = asyncio.Event()

    def bump(self, session_id: str | None = None) -> None:
        self.version += 1
        if session_id is not None:
            self.of.pop(session_id, None)
            self.of[session_id] = self.version
            if len(self.of) > MAX_TRACKED:
                del self.of[next(iter(self.of))]
        event, self._event = self._event, asyncio.Event()
        event.set()

    def close(self) -> None:
        """Wake every sleeper for good: the relay is stopping."""
        self.closed = True
        self.bump()

    async def wait(self, since: int, session_id: str | None = None, timeout: float = 30.0) -> int:
        """The version once something newer than ``since`` changed (of ``session_id`` when given), the feed
        closed or ``timeout`` passed; the caller compares it with ``since``."""
        deadline = time.monotonic() + timeout
        while not self.closed:
            seen = self.version if session_id is None else self.of.get(session_id, 0)
            if seen > since:
                return seen
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            event = self._event
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), remaining)
        return self.version if session_id is None else self.of.get(session_id, 0)
