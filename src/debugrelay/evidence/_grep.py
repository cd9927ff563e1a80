"""Searching an evidence item's lines with a pattern an agent sent.

The pattern runs in RE2, whose time is linear in the text whatever the pattern: Python's ``re``
backtracks for ever on ``(a|a)*b`` and holds the GIL while it does, so no thread saves the relay.
Syntax RE2 does not have (backreferences, lookarounds) is refused, never handed to ``re``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import re2

from debugrelay.errors import InvalidRequest

GREP_MAX_CHARS = 200
GREP_HINT = (
    "grep is an RE2 regular expression (Python's syntax without backreferences such as \\1 or (?P=name), "
    "lookarounds such as (?=...) or (?<!...), atomic groups or possessive quantifiers; write \\z for \\Z). "
    "A plain word finds most lines."
)


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False  # a refused pattern is the agent's answer, not a line on the relay's stderr
    return options


_OPTIONS = _options()


def compile_grep(grep: str) -> Any:
    """``grep`` compiled by RE2, or InvalidRequest saying what RE2 does not accept in it."""
    try:
        return re2.compile(grep, _OPTIONS)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else "not a regular expression"
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise InvalidRequest(
            f"grep is not a regular expression RE2 accepts: {reason}", details={"grep": grep}, hint=GREP_HINT
        ) from None


@dataclass
class Found:
    """One page of an item's lines: with a pattern, the matching ones, numbered."""

    total_lines: int
    lines: list[str]
    selected: int  # lines to page through: all of them, or the matching ones
    matches: int | None


def grep_lines(text: str, pattern: Any, offset: int, limit: int, max_chars: int) -> Found:
    """Lines ``offset``.. of ``text`` (or of its lines matching ``pattern``, numbered): at most ``limit``
    of them and, past the first, at most ``max_chars`` characters in all (the rest is the next page)."""
    lines = text.splitlines()
    if pattern is None:
        return Found(len(lines), _page(lines[offset : offset + limit], max_chars), len(lines), None)
    search = pattern.search
    hits = [n for n, line in enumerate(lines) if search(line) is not None]
    page = _page((f"{n + 1}: {lines[n]}" for n in hits[offset : offset + limit]), max_chars)
    return Found(len(lines), page, len(hits), len(hits))


def _page(lines: Iterable[str], max_chars: int) -> list[str]:
    page: list[str] = []
    size = 0
    for line in lines:
        if page and size + len(line) > max_chars:
            break
        page.append(line)
        size += len(line)
    return page
