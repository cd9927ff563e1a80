"""Output of a target: chunks coalesced into entries, then appended to the state store."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Callable

from debugrelay.errors import RelayError
from debugrelay.store import StateStore

log = logging.getLogger(__name__)

FLUSH_DELAY = 0.02  # debugpy sends print()'s pieces as separate events: join them
PARTIAL_LINE_AGE = 0.5


class OutputBuffer:
    """Joins consecutive chunks of one stream and writes them out shortly after."""

    def __init__(self, session_id: str, store: StateStore, max_chars: int) -> None:
        self.session_id = session_id
        self.store = store
        self.max_chars = max_chars
        self._pending: list[tuple[str, str, float]] = []
        self._handle: asyncio.TimerHandle | None = None
        self._flushing: asyncio.Task[None] | None = None
        self._writing = asyncio.Lock()  # one write at a time: a failed batch goes back first, in order
        self._failed: tuple[str, list[tuple[str, str, float]]] | None = None  # retried as it was
        self._batches = itertools.count(1)
        self.on_written: Callable[[], None] | None = None  # told after each batch is stored

    def add(self, stream: str, text: str) -> None:
        if not text:
            return
        now = time.time()
        last = self._pending[-1] if self._pending else None
        if last and last[0] == stream and not last[1].endswith("\n") and len(last[1]) < self.max_chars:
            self._pending[-1] = (stream, last[1] + text, last[2])
        else:
            self._pending.append((stream, text, now))
        if self._handle is None:
            loop = asyncio.get_running_loop()
            self._handle = loop.call_later(FLUSH_DELAY, self._schedule)

    def _schedule(self) -> None:
        self._handle = None
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.create_task(self.flush(partial_lines=False))

    async def flush(self, *, partial_lines: bool = True) -> None:
        """Write what is pending; kept for a later try when the store is unreachable.

        A timer flush holds back a young unfinished line (print() sends its pieces separately)
        so that one line stays one entry; an explicit flush, or a line older than
        PARTIAL_LINE_AGE, writes it as it is (a prompt without a newline must still show).
        """
        async with self._writing:
            await self._flush(partial_lines)

    async def _flush(self, partial_lines: bool) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if self._failed is not None and not await self._write(*self._failed):
            return
        if not self._pending:
            return
        batch, self._pending = self._pending, []
        last = batch[-1]
        if not partial_lines and not last[1].endswith("\n") and time.time() - last[2] < PARTIAL_LINE_AGE:
            self._pending = [batch.pop()]
            self._handle = asyncio.get_running_loop().call_later(FLUSH_DELAY, self._schedule)
            if not batch:
                return
        entries: list[tuple[str, str, float]] = []
        for stream, text, at in batch:
            for i in range(0, len(text), self.max_chars):
                entries.append((stream, text[i : i + self.max_chars], at))
        await self._write(f"{self.session_id}:{next(self._batches)}:{time.time()}", entries)

    async def _write(self, batch_id: str, entries: list[tuple[str, str, float]]) -> bool:
        """Write one batch; on failure keep it, id and all, to be retried before anything newer."""
        try:
            await self.store.append_output(self.session_id, entries, batch_id)
        except RelayError as exc:
            log.warning("session %s: output kept for later, store failed: %s", self.session_id, exc.message)
            self._failed = (batch_id, entries)
            with contextlib.suppress(RuntimeError):
                self._handle = asyncio.get_running_loop().call_later(1.0, self._schedule)
            return False
        self._failed = None
        if self.on_written is not None:
            self.on_written()
        return True
