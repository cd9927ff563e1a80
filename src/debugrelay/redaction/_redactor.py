"""Redacting answers on their way out, and putting secrets back into what an agent sends in."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from typing import Any, Literal

import msgspec

from debugrelay.models import CUT

from ._rules import BUILTIN_RULES, PLACEHOLDER, Rule, secret_expression, secret_name, trivial
from ._table import Placeholders

MIN_CHARS = 6  # the shortest text any rule can match (an email such as a@b.io)
# What one answer has redacted at most: the rules are linear, so this bounds its time (~0.1 s of
# ordinary output, ~1 s of text made to be slow). Pages of program text hold PAGE_MAX_CHARS, well
# within it; past it (an answer that pages nothing), strings are cut with a marker, never passed as they are.
ANSWER_MAX_CHARS = 1024 * 1024
PAGE_MAX_CHARS = ANSWER_MAX_CHARS // 2
OFF_LOOP_CHARS = 32 * 1024  # an answer this large is redacted in a worker thread, off the event loop
_CUT_SEARCH = 1024  # a cut goes back this far to a space or line end, not through a word


class Budget:
    """The characters an answer may still have redacted."""

    def __init__(self, chars: int = ANSWER_MAX_CHARS) -> None:
        self.chars = self.left = chars


def text_size(obj: Any, stop: int) -> int:
    """The characters of the strings in ``obj`` (Structs, dicts, lists), counted up to ``stop``."""
    todo = [obj]
    size = 0
    while todo and size < stop:
        item = todo.pop()
        if isinstance(item, str):
            size += len(item)
        elif isinstance(item, msgspec.Struct):
            todo.extend(getattr(item, f) for f in item.__struct_fields__)
        elif isinstance(item, dict):
            todo.extend(item.values())
        elif isinstance(item, list | tuple):
            todo.extend(item)
    return size


def _cut(s: str, budget: Budget) -> tuple[str, str]:
    """``s`` cut where ``budget`` ends, back to a space or line end (a word cut in two could be a secret
    no rule knows any more: with no space near, nothing of it is kept), and the marker that says so."""
    keep = budget.left
    at = max(s.rfind(" ", max(0, keep - _CUT_SEARCH), keep), s.rfind("\n", max(0, keep - _CUT_SEARCH), keep), 0)
    return s[:at], (
        f"{CUT} {len(s) - at} more chars: one answer is redacted up to {budget.chars} chars; ask for less, "
        "e.g. a smaller page>"
    )


# Fields of the relay's own answers that never carry program data: ids, cursors, clocks, enums.
_OWN_FIELDS = frozenset(
    {"session_id", "breakpoint_id", "watch_id", "cursor", "timestamp", "status", "kind", "type", "state", "mode"}
    | {"reason", "store", "placeholder", "rule", "where", "at", "created_at", "dap_id", "id"}
    # who is calling and whose a session is: the relay's credentials, not the program's data
    | {"created_by", "shared_with", "who", "role", "owner", "caller"}
)
_QUOTED = re.compile(r"([bBuUrRfF]{0,2})(['\"])(.*)\2", re.S)
_NAME_FIELDS = ("value", "result", "children", "items")
_QUOTED_IN_TEXT = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")

SubstituteMode = Literal["expression", "text", "log_message"]


class Redactor:
    """Finds secrets with its rules; ``walk`` redacts every string of an answer against a session's table."""

    def __init__(self, rules: Iterable[Rule] = BUILTIN_RULES) -> None:
        self.rules = tuple(rules)

    # -- text ------------------------------------------------------------------------------------------

    def text(self, s: str, table: Placeholders, where: str, budget: Budget | None = None) -> str:
        """``s`` with every secret in it replaced by its placeholder (and cut where ``budget`` ends)."""
        if len(s) < MIN_CHARS:
            return s
        marker = ""
        if budget is not None:
            if len(s) > budget.left:
                s, marker = _cut(s, budget)
            budget.left -= len(s)
        s = table.hide_known(s)
        lowered = s.lower()
        for rule in self.rules:
            if rule.applies(s, lowered):
                s = self._apply(rule, s, table, where)
        return s + marker

    def stream(
        self,
        texts: list[str],
        table: Placeholders,
        where: str,
        budget: Budget | None = None,
        *,
        before: str = "",
        after: str = "",
    ) -> list[str]:
        """``texts`` (one stream's lines, in order) each redacted, and a known secret written across them
        hidden too (three characters a line, or a write cut in pieces): the lines are searched as one text,
        with what came ``before`` and ``after`` them. The placeholder goes where the secret starts; of the
        lines after, what it covers goes, their line ends stay."""
        out = [self.text(t, table, where, budget) for t in texts]  # first: what the rules find is known next
        starts = [len(before)]
        for t in texts:
            starts.append(starts[-1] + len(t))
        joined = before + "".join(texts) + after
        across = [
            (s, e, p)
            for s, e, p in table.known_spans(joined)
            if s < starts[-1] and e > starts[0] and not _within_one(starts, s, e)
        ]
        if not across:
            return out
        shown: set[int] = set()  # the spans whose placeholder a line holds already
        for i, t in enumerate(texts):
            cuts = []
            for n, (s, e, p) in enumerate(across):
                if s < starts[i + 1] and e > starts[i]:
                    cuts.append((max(s - starts[i], 0), min(e - starts[i], len(t)), "" if n in shown else p))
                    shown.add(n)
            if cuts:
                out[i] = self._cut_across(t, cuts, table, where, budget)
        return out

    def _cut_across(
        self, t: str, cuts: list[tuple[int, int, str]], table: Placeholders, where: str, budget: Budget | None
    ) -> str:
        """Line ``t`` with the parts secrets cover replaced by their placeholder (empty in the lines after
        the one it is in), the line ends they cover kept; the rest redacted as any text."""
        parts: list[str] = []
        pos = 0
        for start, end, placeholder in cuts:
            if start < pos:
                continue
            parts += (self.text(t[pos:start], table, where, budget), placeholder + "\n" * t.count("\n", start, end))
            pos = end
        parts.append(self.text(t[pos:], table, where, budget))
        return "".join(parts)

    def _apply(self, rule: Rule, s: str, table: Placeholders, where: str) -> str:
        parts: list[str] = []
        pos = 0
        for start, end in rule.spans(s):
            found = s[start:end]
            if not found or start < pos or PLACEHOLDER.fullmatch(found):
                continue
            if PLACEHOLDER.search(found):
                # a secret hidden already inside one longer word (``token=pre-<known>-post``): the whole word
                # is the secret, hidden under its real text, else the parts around the placeholder would show;
                # words around a placeholder (``'Bearer [SECRET_1]'``) are not a secret of their own
                revealed = _revealed(found, table)
                if revealed is None or re.search(r"\s", PLACEHOLDER.sub("", found)):
                    continue
                secret = revealed
            elif rule.valid is not None and not rule.valid(found, s, start):
                continue
            else:
                secret = found
            parts += (s[pos:start], table.placeholder(secret, rule.name, rule.prefix, where))
            pos = end
        return "".join(parts) + s[pos:] if parts else s

    def named(self, value: str, table: Placeholders, where: str, budget: Budget | None = None) -> str:
        """The value of something whose name says secret: the whole value (inside its quotes) is hidden;
        a container's repr is searched like any text (its children carry the name on)."""
        v = value.strip()
        if trivial(v) or (v.lstrip("-").isdigit() and len(v) < 4) or PLACEHOLDER.fullmatch(v):
            return value
        quoted = _QUOTED.fullmatch(v)
        if quoted is None and v[:1] in ("'", '"'):  # a repr cut short: its closing quote is gone
            quoted = re.fullmatch(r"([bBuUrRfF]{0,2})(['\"])(.*)()", v, re.S)
        if quoted is not None:
            inner = quoted.group(3)
            if trivial(inner) or PLACEHOLDER.fullmatch(inner):
                return value
            close = quoted.group(2) if v.endswith(quoted.group(2)) and len(v) > 1 else ""
            return (
                f"{quoted.group(1)}{quoted.group(2)}{table.placeholder(inner, 'secret_name', 'SECRET', where)}{close}"
            )
        if " " in v or v[:1] in "<{[(":
            return self.text(value, table, where, budget)
        return table.placeholder(v, "secret_name", "SECRET", where)

    def quoted(self, text: str, table: Placeholders, where: str) -> str:
        """``text`` (an error about a secret-named value) with every quoted string in it hidden whole."""
        return _QUOTED_IN_TEXT.sub(lambda m: self.named(m.group(0), table, where), self.text(text, table, where))

    # -- answers ---------------------------------------------------------------------------------------

    def walk(
        self, obj: Any, table: Placeholders, where: str, *, secret: bool = False, budget: Budget | None = None
    ) -> Any:
        """``obj`` (Structs, dicts, lists, strings) with every string redacted; a new object where
        anything changed, the same one where nothing did (answers may share parts with session state).
        With ``budget``, what is past it is cut with a marker."""
        if isinstance(obj, str):
            return self.named(obj, table, where, budget) if secret else self.text(obj, table, where, budget)
        if isinstance(obj, msgspec.Struct):
            return self._struct(obj, table, where, secret, budget)
        if isinstance(obj, dict):
            return self._dict(obj, table, where, secret, budget)
        if isinstance(obj, list | tuple):
            items = [self.walk(x, table, where, secret=secret, budget=budget) for x in obj]
            if any(a is not b for a, b in zip(items, obj, strict=True)):
                return type(obj)(items)
        return obj

    def _named_here(self, name: Any, expression: Any, secret: bool) -> bool:
        if secret:
            return True
        if isinstance(name, str):
            return secret_name(name)
        return isinstance(expression, str) and secret_expression(expression)

    def _struct(self, obj: msgspec.Struct, table: Placeholders, where: str, secret: bool, budget: Budget | None) -> Any:
        fields = obj.__struct_fields__
        named = self._named_here(
            getattr(obj, "name", None) if "value" in fields or "children" in fields else None,
            getattr(obj, "expression", None),
            secret,
        )
        changes: dict[str, Any] = {}
        for field in fields:
            if field in _OWN_FIELDS:
                continue
            value = getattr(obj, field)
            if not value or isinstance(value, bool | int | float):  # nothing to redact (empty, unset, a number)
                continue
            inner = named if field in _NAME_FIELDS else secret
            new = self.walk(value, table, where, secret=inner, budget=budget)
            if new is not value:
                changes[field] = new
        return msgspec.structs.replace(obj, **changes) if changes else obj

    def _dict(self, obj: dict[Any, Any], table: Placeholders, where: str, secret: bool, budget: Budget | None) -> Any:
        named = (
            self._named_here(obj.get("name"), obj.get("expression"), secret)
            if "name" in obj or "expression" in obj
            else secret
        )
        out: dict[Any, Any] = {}
        changed = False
        for key, value in obj.items():
            if key in _OWN_FIELDS or not value or isinstance(value, bool | int | float):
                out[key] = value
                continue
            inner = named if key in _NAME_FIELDS else secret or (isinstance(key, str) and secret_name(key))
            new = self.walk(value, table, where, secret=inner, budget=budget)
            changed = changed or new is not value
            out[key] = new
        return out if changed else obj

    # -- inputs ----------------------------------------------------------------------------------------

    def substitute(self, text: str, table: Placeholders, mode: SubstituteMode = "expression") -> str:
        """``text`` with this session's placeholders put back: as the text inside a string literal (or
        in plain text), as a string literal where an expression has a bare placeholder."""
        if "[" not in text or not table.by_placeholder:
            return text
        raw = _raw_spans(text, mode)

        def put_back(m: re.Match[str]) -> str:
            entry = table.by_placeholder.get(m.group(0))
            if entry is None:
                return m.group(0)
            if any(a <= m.start() and m.end() <= b for a, b in raw):
                return entry.value
            quote = '"' if "'" in entry.value and '"' not in entry.value else "'"
            return f"{quote}{entry.value}{quote}"

        return PLACEHOLDER.sub(put_back, text)


def _within_one(starts: list[int], s: int, e: int) -> bool:
    """Whether ``[s, e)`` of the joined text lies inside one of the lines (``starts``: where each begins)."""
    i = bisect.bisect_right(starts, s) - 1
    return 0 <= i < len(starts) - 1 and e <= starts[i + 1]


def _revealed(text: str, table: Placeholders) -> str | None:
    """``text`` with this session's placeholders put back as the values they stand for; None when one
    of them is not the session's (text that only looks like a placeholder is left as it is)."""
    unknown = False

    def put_back(m: re.Match[str]) -> str:
        nonlocal unknown
        entry = table.by_placeholder.get(m.group(0))
        unknown = unknown or entry is None
        return entry.value if entry is not None else m.group(0)

    found = PLACEHOLDER.sub(put_back, text)
    return None if unknown else found


def _raw_spans(text: str, mode: SubstituteMode) -> list[tuple[int, int]]:
    """Where a placeholder stands for text rather than a value: inside string literals of an
    expression, everywhere in plain text, outside the ``{expressions}`` of a logpoint message."""
    if mode == "text":
        return [(0, len(text))]
    if mode == "expression":
        return _string_spans(text, 0, len(text))
    spans: list[tuple[int, int]] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "{":
            if depth == 0:
                spans.append((start, i))
                start = i + 1
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                spans += _string_spans(text, start, i)
                start = i + 1
    spans.append((start, len(text)) if depth == 0 else (len(text), len(text)))
    return spans


def _string_spans(expr: str, i: int, n: int) -> list[tuple[int, int]]:
    """The insides of the string literals of a Python expression between ``i`` and ``n``."""
    spans: list[tuple[int, int]] = []
    while i < n:
        ch = expr[i]
        if ch in "'\"":
            quote = expr[i : i + 3] if expr[i : i + 3] in ("'''", '"""') else ch
            j = i + len(quote)
            while j < n and not expr.startswith(quote, j):
                j += 2 if expr[j] == "\\" else 1
            spans.append((i + len(quote), min(j, n)))
            i = j + len(quote)
        elif ch == "#":
            break
        else:
            i += 1
    return spans
