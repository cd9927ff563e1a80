"""Where a value came from: the writes the traced calls recorded of a name (a local, ``obj.attr``, ``d['k']``),
newest first; and, where none was recorded, the functions of a source file that write it (what to trace)."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

_HEAD = re.compile(r"^[A-Za-z_][A-Za-z_0-9]*")


def _tail(name: str) -> str | None:
    """``.total`` of ``basket.total``, ``['k']`` of ``d['k']``; None for a bare name."""
    head = _HEAD.match(name)
    if head is None or head.end() == len(name):
        return None
    return name[head.end() :]


def names_it(key: str, expression: str) -> bool:
    """Whether a recorded write's ``key`` (``self.total``, ``arr[2]``, ``total``) wrote ``expression``: the same
    name, or the same attribute or item of whatever object (``basket.total`` is ``self.total`` in a method)."""
    if key == expression:
        return True
    tail = _tail(expression)
    return tail is not None and _tail(key) == tail


def _events(events: Iterable[Any], iteration: int | None = None) -> Iterator[tuple[int, str, str, dict[str, Any]]]:
    """(line, name, value, how) of each write in ``events``, in the order they ran."""
    for event in events:
        if not isinstance(event, dict):
            continue
        changed = event.get("changed")
        if isinstance(changed, dict):
            for name, value in changed.items():
                how = {"iteration": iteration} if iteration is not None else {}
                yield int(event.get("line") or 0), str(name), str(value), how
        if "loop" not in event:
            continue
        for stat in event.get("lines") or []:  # the loop's last write of each line: the newest it kept
            last = stat.get("last") if isinstance(stat, dict) else None
            if isinstance(last, dict):
                for name, value in last.items():
                    yield int(stat.get("line") or 0), str(name), str(value), {"times": int(stat.get("count") or 0)}
        for kept in [*(event.get("other") or []), *(event.get("far") or [])]:
            number = kept.get("iteration") or (kept.get("iterations") or [None])[0]
            yield from _events(kept.get("run") or [], number)


def writes_of(calls: list[dict[str, Any]], expression: str) -> list[dict[str, Any]]:
    """The recorded writes of ``expression`` in ``calls`` (oldest first), newest first."""
    found: list[dict[str, Any]] = []
    for call in calls:
        for line, name, value, how in _events(call.get("events") or []):
            if names_it(name, expression):
                found.append(
                    {
                        "call_id": str(call.get("call_id")),
                        "function": str(call.get("function") or ""),
                        "line": line,
                        "name": name,
                        "value": value,
                        **how,
                    }
                )
    found.reverse()
    return found


def writers_in(source: str, expression: str) -> list[tuple[str, int]]:
    """The functions of ``source`` (a module's text) that assign ``expression``'s attribute or item (of any
    object), or the bare name: (qualified name, line of the first such write)."""
    tail = _tail(expression)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found: dict[str, int] = {}

    def wrote(target: ast.expr) -> bool:
        if tail is None:
            return isinstance(target, ast.Name) and target.id == expression
        if isinstance(target, ast.Attribute):
            return tail == "." + target.attr
        if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
            return tail == f"[{target.slice.value!r}]"
        return False

    def visit(node: ast.AST, scope: list[str], in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                visit(child, [*scope, child.name], not isinstance(child, ast.ClassDef))
                continue
            targets: list[ast.expr] = []
            if isinstance(child, ast.Assign):
                targets = [t for group in child.targets for t in _flat(group)]
            elif isinstance(child, ast.AugAssign | ast.AnnAssign):
                targets = [child.target]
            if in_function and any(wrote(t) for t in targets):
                found.setdefault(".".join(scope), getattr(child, "lineno", 0))
            visit(child, scope, in_function)

    visit(tree, [], False)
    return sorted(found.items(), key=lambda kv: kv[1])


def _flat(target: ast.expr) -> list[ast.expr]:
    if isinstance(target, ast.Tuple | ast.List):
        return [t for item in target.elts for t in _flat(item)]
    return [target]


def events_with(events: list[dict[str, Any]], line: int | None, match: str | None) -> list[dict[str, Any]]:
    """The events of a call's run on ``line`` and holding ``match`` in what they wrote (a folded loop: its
    line's counts and the kept iterations that pass, or the loop whole for a text found in it)."""
    out = []
    for event in events:
        if "loop" in event:
            kept = _loop_with(event, line, match)
            if kept is not None:
                out.append(kept)
            continue
        if line is not None and event.get("line") != line:
            continue
        if match is not None and match not in json.dumps(event.get("changed") or {}):
            continue
        out.append(event)
    return out


def _loop_with(loop: dict[str, Any], line: int | None, match: str | None) -> dict[str, Any] | None:
    if match is not None and match not in json.dumps(loop):
        return None
    if line is None:
        return loop
    lines = [s for s in loop.get("lines") or [] if isinstance(s, dict) and s.get("line") == line]
    if not lines:
        return None
    narrowed = {k: v for k, v in loop.items() if k not in ("lines", "usual", "other", "far")}
    narrowed["lines"] = lines
    for key in ("other", "far"):
        kept = [
            {**k, "run": events_with(k.get("run") or [], line, match)}
            for k in loop.get(key) or []
            if isinstance(k, dict) and events_with(k.get("run") or [], line, match)
        ]
        if kept:
            narrowed[key] = kept
    return narrowed
