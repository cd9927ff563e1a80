"""Secrets a session has seen, found again anywhere and in the common encodings of them.

A value given a placeholder is looked for in every later text as it is and as base64 (standard and
URL-safe, with or without padding, at any of the three alignments inside a longer base64 string), hex,
reversed, in any letter case, with a separator between its letters (``h-u-n-t-e-r``, ``list(s)``),
URL-encoded, escaped (``ascii()``, JSON, a bytes repr, every character as ``\\xNN`` or ``\\uNNNN``) and as
the list of its ``ord()``s or bytes; base64 and hex also of it upper- or lower-cased and reversed.

Two views of a text are searched, each with Aho-Corasick automata (linear in the text whatever the
number of secrets): the text lowercased, index for index, and its skeleton, the same with everything
but letters and digits left out, where joined letters and lists of numbers read as one word. A value
or a joined form must stand apart (no letter or digit glued to it); base64 and hex are found inside
longer runs too, where they are long enough not to occur by chance.
"""

from __future__ import annotations

import base64
import bisect
import json
import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple
from urllib.parse import quote, quote_plus

from ahocorasick_rs import AhoCorasick, MatchKind

KNOWN_MIN_CHARS = 6  # a secret this long is hidden wherever it appears again, whatever the context
ENCODED_MAX = 256  # secrets per session whose encodings are looked for too (each adds ~12 needles)
ENCODED_MAX_CHARS = 1024  # and only up to this long (a longer value is looked for as it is)
BASE64_MIN = 7  # base64 characters that depend on the secret alone: ~36 bits, letter case ignored
LEVEL_MAX = 1024  # needles per automaton: a new secret never costs a build bigger than this
PREFIX_MAX = 128  # an automaton holds at most this much of a needle; the rest is checked where it matches

_SKELETON_DROP = re.compile(r"[\W_]+")
_SKELETON_RUN = re.compile(r"[^\W_]+")


class Needle(NamedTuple):
    text: str
    placeholder: str
    apart: bool  # must not be glued to a letter or digit on either side
    value: str  # the secret it finds


def fold(text: str) -> str:
    """``text`` lowercased, index for index (the few characters whose lowercase is longer stay)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def skeleton(folded: str) -> str:
    return _SKELETON_DROP.sub("", folded)


def _base64_cores(data: bytes) -> Iterator[str]:
    """The base64 characters that only ``data`` decides, at each alignment it can have in a longer
    string, in the standard and URL-safe alphabets (padding and the edge characters left out)."""
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + data).decode()
        core = encoded[-(-8 * shift // 6) : 8 * (shift + len(data)) // 6]
        if len(core) >= BASE64_MIN:
            yield core
            yield core.replace("+", "-").replace("/", "_")


def _variants(value: str) -> list[str]:
    """The value as it is, upper- and lower-cased, and each of those reversed (each once)."""
    cased = [value, value.upper(), value.lower()]
    return list(dict.fromkeys([*cased, *(v[::-1] for v in cased)]))


def needles(value: str, placeholder: str, *, encoded: bool) -> tuple[list[Needle], list[Needle]]:
    """What to look for, in the folded text and in the skeleton, to find ``value`` again."""
    flat: dict[str, bool] = {fold(value): True}
    skel: dict[str, bool] = {}
    if encoded:
        data = value.encode("utf-8", "surrogatepass")
        flat[fold(value[::-1])] = True
        for form in (quote(value, safe=""), quote_plus(value), ascii(value)[1:-1], json.dumps(value)[1:-1]):
            flat.setdefault(fold(form), True)
            skel.setdefault(skeleton(fold(form)), True)
        flat.setdefault(fold(repr(data)[2:-1]), True)
        for variant in _variants(value):  # base64 and hex of the value, upper- or lower-cased, reversed
            raw = variant.encode("utf-8", "surrogatepass")
            for core in _base64_cores(raw):
                flat[fold(core)] = False
            skel[raw.hex()] = False  # with or without separators (bytes.hex(':')): the skeleton is the same
        skel[skeleton(fold(value))] = True
        skel[skeleton(fold(value[::-1]))] = True
        skel["".join(map(str, map(ord, value)))] = True
        skel["".join(map(str, data))] = True
        skel["".join(f"x{b:02x}" for b in data)] = True  # every byte escaped: \x54\x72...
        skel["".join(f"u{ord(c):04x}" if ord(c) <= 0xFFFF else f"u{ord(c):08x}" for c in value)] = True  # \u0054
    return (
        [Needle(t, placeholder, apart, value) for t, apart in flat.items() if len(t) >= KNOWN_MIN_CHARS],
        [Needle(t, placeholder, apart, value) for t, apart in skel.items() if len(t) >= KNOWN_MIN_CHARS],
    )


class _Automata:
    """Needles in Aho-Corasick automata of doubling size: adding costs a small build, searching one
    pass per automaton (a few, and one more per LEVEL_MAX needles)."""

    def __init__(self) -> None:
        self.levels: list[tuple[list[Needle], AhoCorasick]] = []

    def add(self, found: list[Needle]) -> None:
        for i in range(0, len(found), LEVEL_MAX):
            self.levels.append(_build(found[i : i + LEVEL_MAX]))
            while len(self.levels) > 1:
                (older, _), (newer, _) = self.levels[-2], self.levels[-1]
                if len(older) > len(newer) or len(older) + len(newer) > LEVEL_MAX:
                    break
                del self.levels[-2:]
                self.levels.append(_build(older + newer))

    def find(self, text: str) -> Iterator[tuple[Needle, int, int]]:
        for found, automaton in self.levels:
            for i, start, end in automaton.find_matches_as_indexes(text):
                yield found[i], start, end


def _build(found: list[Needle]) -> tuple[list[Needle], AhoCorasick]:
    return found, AhoCorasick([n.text for n in found], matchkind=MatchKind.LeftmostLongest)


class KnownSecrets:
    """The secrets of one table, and where they (or their encodings) are in a text."""

    def __init__(self) -> None:
        self.flat = _Automata()
        self.skel = _Automata()
        self.count = 0
        self._pending: tuple[list[Needle], list[Needle]] = ([], [])
        # needles of PREFIX_MAX characters or more, by view and prefix, longest first
        self._long: dict[tuple[int, str], list[Needle]] = {}
        self._exact: dict[str, str] = {}  # value -> placeholder: found as it is, a value has its own

    def add(self, value: str, placeholder: str) -> None:
        if len(value) < KNOWN_MIN_CHARS:
            return
        encoded = self.count < ENCODED_MAX and len(value) <= ENCODED_MAX_CHARS
        self.count += 1
        self._exact[value] = placeholder
        for view, found in enumerate(needles(value, placeholder, encoded=encoded)):
            for needle in found:
                if len(needle.text) >= PREFIX_MAX:
                    prefix = needle.text[:PREFIX_MAX]
                    same = self._long.setdefault((view, prefix), [])
                    same.append(needle)
                    same.sort(key=lambda n: len(n.text), reverse=True)
                    needle = needle._replace(text=prefix)  # noqa: PLW2901 - what the automaton holds
                self._pending[view].append(needle)

    def hide(self, text: str) -> str:
        """``text`` with every known secret, and every encoding of one, replaced by its placeholder."""
        spans = self.find(text)
        return _replace(text, spans) if spans else text

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """Where in ``text`` a known secret or an encoding of one is: (start, end, placeholder), in order,
        overlapping finds made one (named by each secret's placeholder)."""
        return _merged(text, self.find(text))

    def find(self, text: str) -> list[tuple[int, int, Needle]]:
        """Every find of a needle in ``text`` that stands as its needle must."""
        if self._pending[0] or self._pending[1]:
            (flat, skel), self._pending = self._pending, ([], [])
            self.flat.add(flat)
            self.skel.add(skel)
        if not self.flat.levels or len(text) < KNOWN_MIN_CHARS:
            return []
        folded = fold(text)
        spans = [(s, e, n) for n, s, e in self._whole(0, folded, self.flat) if not n.apart or _apart(text, s, e)]
        if self.skel.levels:
            bare, starts = _skeleton_chunks(folded)
            found = list(self._whole(1, bare, self.skel))
            if found:
                where = _skeleton_map(folded, starts, [p for _, s, e in found for p in (s, e - 1)])
                for n, s, e in found:
                    start, end = where[s], where[e - 1] + 1
                    if not n.apart or _apart(text, start, end):
                        spans.append((start, end, n))
        for i, (s, e, n) in enumerate(spans):
            exact = self._exact.get(text[s:e]) if text[s:e] != n.value else None
            if exact is not None:  # 'ABC123' known too, found by the needle of 'abc123'
                spans[i] = (s, e, n._replace(placeholder=exact, value=text[s:e]))
        return spans

    def _whole(self, view: int, text: str, automata: _Automata) -> Iterator[tuple[Needle, int, int]]:
        """The automata's matches, a long needle's only where the whole of it is."""
        for needle, start, end in automata.find(text):
            if end - start < PREFIX_MAX:
                yield needle, start, end
                continue
            for whole in self._long.get((view, text[start:end]), ()):
                if text.startswith(whole.text, start):
                    yield whole, start, start + len(whole.text)
                    break


_ESCAPE_BEFORE = re.compile(r"(?:%[0-9A-Fa-f]{2}|\\x[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})\Z")


def _apart(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is not part of a longer word: an edge that is no letter or digit
    cannot be glued to one, and an escape before it (``%3A``, ``\\xe9``) is no word either."""
    glued = start > 0 and text[start].isalnum() and text[start - 1].isalnum()
    if glued and _ESCAPE_BEFORE.search(text, max(0, start - 10), start) is None:
        return False
    return not (end < len(text) and text[end - 1].isalnum() and text[end].isalnum())


_CHUNK = 2048  # the skeleton is made per chunk of the text: a match is mapped back within its chunk only


def _skeleton_chunks(folded: str) -> tuple[str, list[int]]:
    """The skeleton of ``folded`` and, per chunk of ``_CHUNK`` characters, where its skeleton starts."""
    parts = [skeleton(folded[i : i + _CHUNK]) for i in range(0, len(folded), _CHUNK)]
    starts = [0]
    for part in parts[:-1]:
        starts.append(starts[-1] + len(part))
    return "".join(parts), starts


def _skeleton_map(folded: str, starts: list[int], positions: Iterable[int]) -> dict[int, int]:
    """For positions in the skeleton of ``folded``, the index of that character in ``folded`` (the
    chunks that hold one are read, once each)."""
    wanted = sorted(set(positions))
    out: dict[int, int] = {}
    i = 0
    while i < len(wanted):
        chunk, before = bisect.bisect_right(starts, wanted[i]) - 1, i
        seen = starts[chunk]
        for run in _SKELETON_RUN.finditer(folded, chunk * _CHUNK, (chunk + 1) * _CHUNK):
            size = run.end() - run.start()
            while i < len(wanted) and wanted[i] < seen + size:
                out[wanted[i]] = run.start() + wanted[i] - seen
                i += 1
            if i == len(wanted) or bisect.bisect_right(starts, wanted[i]) - 1 != chunk:
                break
            seen += size
        i += i == before  # a position past the skeleton: never, but never a loop either
    return out


def _merged(text: str, spans: list[tuple[int, int, Needle]]) -> list[tuple[int, int, str]]:
    """The spans in order, one placeholder text each. A span inside another goes with it (of two alike,
    the secret written exactly so wins over one that differs in case); spans that overlap become one,
    naming each secret."""
    if not spans:
        return []
    spans.sort(key=lambda x: (x[0], -x[1], text[x[0] : x[1]] != x[2].value))
    out: list[tuple[int, int, str]] = []
    start, end, names = spans[0][0], spans[0][1], [spans[0][2].placeholder]
    for s, e, n in spans[1:]:
        if s < end:
            if e > end and n.placeholder not in names:
                names.append(n.placeholder)
            end = max(end, e)
            continue
        out.append((start, end, "".join(names)))
        start, end, names = s, e, [n.placeholder]
    out.append((start, end, "".join(names)))
    return out


def _replace(text: str, spans: list[tuple[int, int, Needle]]) -> str:
    """Each span replaced by its placeholder (see ``_merged``)."""
    parts: list[str] = []
    pos = 0
    for start, end, names in _merged(text, spans):
        parts += (text[pos:start], names)
        pos = end
    parts.append(text[pos:])
    return "".join(parts)
