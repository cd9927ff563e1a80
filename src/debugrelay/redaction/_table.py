"""Stable placeholders: one table per session maps each secret seen to ``[PREFIX_N]`` and back."""

from __future__ import annotations

import threading
import time

import msgspec

from ._known import KNOWN_MIN_CHARS, KnownSecrets

MAX_PLACEHOLDERS = 10_000  # per session; past it a secret is still hidden, as an unnumbered [PREFIX]

__all__ = ["KNOWN_MIN_CHARS", "MAX_PLACEHOLDERS", "Entry", "Placeholders"]


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Entry(msgspec.Struct, kw_only=True):
    """One secret of a session: its placeholder, the rule that found it, where and when it was first seen."""

    placeholder: str
    rule: str
    value: str
    where: str
    at: str


class Placeholders:
    """A session's table: the same value always gets the same placeholder; ``pending`` lists the
    entries not yet written to the store. Safe to share between the event loop and a worker thread
    that redacts a large answer."""

    def __init__(self, entries: list[Entry] | None = None) -> None:
        self.by_value: dict[str, Entry] = {}
        self.by_placeholder: dict[str, Entry] = {}
        self.counters: dict[str, int] = {}
        self.pending: list[Entry] = []
        self.overflow = 0
        self._known = KnownSecrets()
        self._lock = threading.RLock()
        for entry in entries or []:
            self._add(entry)
        self.pending.clear()

    def __len__(self) -> int:
        return len(self.by_placeholder)

    def _add(self, entry: Entry) -> None:
        if entry.value not in self.by_value:
            self.by_value[entry.value] = entry
            self._known.add(entry.value, entry.placeholder)
        self.by_placeholder[entry.placeholder] = entry
        prefix, _, number = entry.placeholder[1:-1].rpartition("_")
        if number.isdigit():
            self.counters[prefix] = max(self.counters.get(prefix, 0), int(number))
        self.pending.append(entry)

    def placeholder(self, value: str, rule: str, prefix: str, where: str) -> str:
        """The placeholder of ``value``, made on first sight."""
        found = self.by_value.get(value)
        if found is not None:
            return found.placeholder
        with self._lock:
            found = self.by_value.get(value)
            if found is not None:
                return found.placeholder
            if len(self.by_placeholder) >= MAX_PLACEHOLDERS:
                self.overflow += 1
                return f"[{prefix}]"
            number = self.counters.get(prefix, 0) + 1
            entry = Entry(placeholder=f"[{prefix}_{number}]", rule=rule, value=value, where=where, at=_now())
            self._add(entry)
            return entry.placeholder

    def hide_known(self, text: str) -> str:
        """``text`` with every secret seen before (``KNOWN_MIN_CHARS`` or longer), and the common
        encodings of it, replaced where it is not part of a longer word (see ``_known``)."""
        with self._lock:
            return self._known.hide(text)

    def known_spans(self, text: str) -> list[tuple[int, int, str]]:
        """Where in ``text`` a secret seen before (or an encoding of one) is: (start, end, placeholder)."""
        with self._lock:
            return self._known.spans(text)

    def entries(self) -> list[Entry]:
        """The entries in the order made (a copy: another thread may be adding)."""
        with self._lock:
            return list(self.by_placeholder.values())

    def put_back(self, entries: list[Entry]) -> None:
        """Entries taken but not stored: first in line for the next write."""
        with self._lock:
            self.pending[:0] = entries

    def take_pending(self) -> list[Entry]:
        with self._lock:
            out, self.pending = self.pending, []
            return out
