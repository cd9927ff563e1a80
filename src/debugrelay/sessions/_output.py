"""Output of a target: chunks coalesced, cut into one entry per line, then appended to the state store.

A keeper numbers the output events it reads from the program's pipes (``n``); the highest number
written goes to the store with each batch, so a relay that reconnects (this one, or the next after a
crash) tells the keeper where to resume, and an event that comes twice is stored once."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import re
import time
from collections.abc import Callable

from debugrelay.errors import RelayError
from debugrelay.store import StateStore

log = logging.getLogger(__name__)

FLUSH_DELAY = 0.02  # debugpy sends print()'s pieces as separate events: join them
PARTIAL_LINE_AGE = 0.5
_LINE = re.compile(r"[^\n]*\n|[^\n]+")  # lines end at "\n" only: a "\r" progress bar stays one line


class OutputBuffer:
    """Joins consecutive chunks of one stream and writes them out shortly after."""

    def __init__(self, session_id: str, store: StateStore, max_chars: int) -> None:
        self.session_id = session_id
        self.store = store
        self.max_chars = max_chars
        self._pending: list[tuple[str, str, float, int | None]] = []  # stream, text, time, keeper's n
        self._handle: asyncio.TimerHandle | None = None
        self._flushing: asyncio.Task[None] | None = None
        self._writing = asyncio.Lock()  # one write at a time: a failed batch goes back first, in order
        self._failed: tuple[str, list[tuple[str, str, float]], int | None] | None = None  # retried as it was
        self.seen = 0  # the highest keeper number taken (stored, or on its way to the store)
        self._batches = itertools.count(1)
        self.on_written: Callable[[], None] | None = None  # told after each batch is stored

    def add(self, stream: str, text: str, at: float | None = None, n: int | None = None) -> None:
        """Queue ``text`` of ``stream``, written at ``at`` (default: now), the keeper's event ``n``.

        ``console`` is the debugger's own output (a logpoint's message): stored as stdout, but each
        message is whole, so it never joins, nor splits, a line the program is writing in pieces
        (the debugger's messages and the program's pipes reach the relay in no fixed order)."""
        if not text:
            return
        if n is not None:
            if n <= self.seen:
                return  # sent again by a keeper to a relay that had it already
            self.seen = n
        now = time.time()
        if at is not None and 0 < at <= now:  # the keeper's clock; never a time to come (or nonsense)
            now = at
        # the stream's last pending chunk, unfinished: this continues its line, even with the other
        # stream's lines read in between (print() writes a line in pieces; a line stays one entry)
        i = next((i for i in range(len(self._pending) - 1, -1, -1) if self._pending[i][0] == stream), None)
        last = self._pending[i] if i is not None else None
        unfinished = len(last[1]) - last[1].rfind("\n") - 1 if last else 0  # the open line's length, not the read's
        if stream != "console" and last and not last[1].endswith("\n") and unfinished < self.max_chars:
            assert i is not None
            self._pending[i] = (stream, last[1] + text, last[2], max(n or 0, last[3] or 0) or None)
        else:
            self._pending.append((stream, text, now, n))
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
        if not partial_lines:  # from the first young unfinished line on, wait for its end
            now = time.time()
            unfinished = (i for i, (_, text, at, _) in enumerate(batch) if not text.endswith("\n"))
            cut = next((i for i in unfinished if now - batch[i][2] < PARTIAL_LINE_AGE), len(batch))
            batch, self._pending = batch[:cut], batch[cut:]
            if self._pending:
                self._handle = asyncio.get_running_loop().call_later(FLUSH_DELAY, self._schedule)
            if not batch:
                return
        entries: list[tuple[str, str, float]] = []
        for kind, text, at, _ in batch:  # a read of a pipe holds many lines: an entry is a line
            stream = "stdout" if kind == "console" else kind
            for line in _LINE.findall(text):
                for i in range(0, len(line), self.max_chars):
                    entries.append((stream, line[i : i + self.max_chars], at))
        numbers = [n for *_, n in batch if n is not None]
        await self._write(f"{self.session_id}:{next(self._batches)}:{time.time()}", entries, max(numbers, default=None))

    async def _write(self, batch_id: str, entries: list[tuple[str, str, float]], n: int | None) -> bool:
        """Write one batch; on failure keep it, id and all, to be retried before anything newer."""
        try:
            await self.store.append_output(self.session_id, entries, batch_id, n)
        except RelayError as exc:
            log.warning("session %s: output kept for later, store failed: %s", self.session_id, exc.message)
            self._failed = (batch_id, entries, n)
            with contextlib.suppress(RuntimeError):
                self._handle = asyncio.get_running_loop().call_later(1.0, self._schedule)
            return False
        self._failed = None
        if self.on_written is not None:
            self.on_written()
        return True
