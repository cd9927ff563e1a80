"""Breakpoints as agents ask for them: decoded, validated (conditions compile, hit counts parse)."""

from __future__ import annotations

import ast
import os
import re
from typing import Any

import msgspec

from debugrelay.errors import InvalidCondition, InvalidLine, InvalidRequest, RelayError
from debugrelay.models import BreakpointRecord, BreakpointRequest

from ._common import MAX_LINE

_HINTS = {
    "condition": "The condition must be a Python expression, e.g. 'i > 100'.",
    "hit_condition": "Write the hit condition as '5', '>= 5' or '% 5' (every 5th hit).",
}
LOG_HINT = "Write log_message as an f-string's text: {expression}, {x!r}, {ratio:.2f}; {{ and }} are literal braces."


def compile_expression(text: str, what: str) -> str:
    """The expression as one normalized line (comments dropped); InvalidCondition if it does not compile."""
    hint = _HINTS.get(what, LOG_HINT)
    try:
        tree = ast.parse(text.strip(), f"<{what}>", "eval")
        compile(tree, f"<{what}>", "eval")
    except SyntaxError as exc:
        raise InvalidCondition(
            f"{what} does not compile: SyntaxError: {exc.msg}",
            details={"field": what, what: text, "error": f"SyntaxError: {exc.msg}", "offset": exc.offset},
            hint=hint,
        ) from None
    except ValueError as exc:  # e.g. a NUL byte
        raise InvalidCondition(
            f"{what} does not compile: {exc}", details={"field": what, what: text, "error": str(exc)}, hint=hint
        ) from None
    return ast.unparse(tree)


def log_expression(message: str) -> str | None:
    """A logpoint message as the source of one f-string expression (Python's own rules: ``{x!r}``,
    ``{ratio:.2f}``, ``{{`` for a brace), or None when it is not a valid f-string's text."""
    for quote in ("'", '"', "'''", '"""'):
        source = f"rf{quote}{message}{quote}"
        try:
            tree = ast.parse(source, "<log_message>", "eval")
            compile(tree, "<log_message>", "eval")
        except (SyntaxError, ValueError):
            continue
        if isinstance(tree.body, ast.JoinedStr | ast.Constant):
            return source
    return None


def _fields(message: str) -> list[tuple[int, str | None]]:
    """(offset, text) of each ``{...}`` of a message, nested brackets and strings included; text None
    for a ``{`` never closed."""
    found: list[tuple[int, str | None]] = []
    i, n = 0, len(message)
    while i < n:
        if message.startswith(("{{", "}}"), i):
            i += 2
            continue
        if message[i] != "{":
            i += 1
            continue
        depth, j, quote = 0, i, ""
        while j < n:
            ch = message[j]
            if quote:
                quote = "" if ch == quote else quote
            elif ch in "'\"":
                quote = ch
            elif ch in "{[(":
                depth += 1
            elif ch in "}])":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        found.append((i, message[i + 1 : j] if j < n else None))
        i = j + 1
    return found


def check_log_message(message: str) -> None:
    """A logpoint message must be an f-string's text; the error names the ``{field}`` that is wrong."""
    if log_expression(message) is not None:
        return
    for offset, field in _fields(message):
        if field is None:
            raise InvalidCondition(
                "log_message has an unclosed '{'", details={"field": "log_message", "offset": offset}, hint=LOG_HINT
            )
        if not field.strip():
            raise InvalidCondition(
                "log_message has an empty '{}'", details={"field": "log_message", "offset": offset}, hint=LOG_HINT
            )
        if log_expression("{" + field + "}") is None:
            expr = re.split(r"!(?=[rsa](?::|$))|:(?![^\[\(\{]*[\]\)\}])", field, maxsplit=1)[0]
            error = "the expression does not compile"
            try:
                compile_expression(expr, "log_message")
            except InvalidCondition as exc:
                error = exc.message.removeprefix("log_message does not compile: ")
            else:
                error = "the conversion (!r, !s, !a) or format spec is not valid"
            raise InvalidCondition(
                f"log_message field '{{{field}}}' is not valid: {error}",
                details={"field": "log_message", "log_message": message, "expression": field, "offset": offset},
                hint=LOG_HINT,
            )
    raise InvalidCondition(
        "log_message has an unbalanced '{' or '}'",
        details={"field": "log_message", "log_message": message},
        hint=LOG_HINT,
    )


def pydevd_log_message(message: str) -> str:
    """The message as debugpy's logMessage: the whole f-string as its one ``{expression}``.

    pydevd turns each ``{...}`` into ``%s`` of that text evaluated, so a conversion (``!r``) or a format
    spec would not compile there, and it has no escape for a literal brace; nor does it read quotes when
    it matches braces. The f-string is given whole, or, when its braces would mislead pydevd, as text
    that ``eval`` reads in the same frame.
    """
    source = log_expression(message)
    if source is None:
        return message
    depth = 0
    for ch in source:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            break
    if depth == 0 and not any(q in message for q in "'\""):
        return "{" + source + "}"
    return "{eval(bytes.fromhex(" + repr(source.encode().hex()) + ").decode())}"


_HIT_SIMPLE = re.compile(r"^(==|>=|<=|!=|>|<)?\s*(\d+)$")
_HIT_MODULO = re.compile(r"^%\s*(\d+)(?:\s*==\s*(\d+))?$")


def parse_hit_condition(text: str) -> tuple[str, int, int]:
    """(operator, number, remainder) of a hit condition; InvalidCondition if not understood or never true."""
    expr = text.strip()
    simple, modulo = _HIT_SIMPLE.match(expr), _HIT_MODULO.match(expr)
    if simple:
        op, number = simple.group(1) or "==", int(simple.group(2))
        if (op in ("==", "<=") and number == 0) or (op == "<" and number <= 1):
            raise InvalidCondition(
                f"hit_condition '{text}' can never be true (hits count from 1)", details={"hit_condition": text}
            )
        return op, number, 0
    if modulo:
        number, rest = int(modulo.group(1)), int(modulo.group(2) or 0)
        if number == 0 or rest >= number:
            raise InvalidCondition(
                f"hit_condition '{text}' can never be true",
                details={"hit_condition": text},
                hint="Use '% N' or '% N == R' with 0 <= R < N.",
            )
        return "%", number, rest
    raise InvalidCondition(
        f"hit_condition '{text}' is not understood",
        details={"hit_condition": text},
        hint="Use N or '== N' (the Nth hit), '>= N', '> N', '<= N', '< N', '!= N', or '% N' / '% N == 0' "
        "(every Nth hit).",
    )


def normalize_hit_condition(text: str) -> str:
    """'5', '== 5', '>= 5', '% 5' or '% 5 == 0' → a canonical spelling; raises when not understood."""
    op, number, rest = parse_hit_condition(text)
    if op == "%":
        return f"% {number}" + (f" == {rest}" if rest else "")
    return str(number) if text.strip().isdigit() else f"{op} {number}"


def validate_request(req: BreakpointRequest) -> BreakpointRequest:
    """Raise on input that can never work; nothing is changed when this raises."""
    path = req.source.path if req.source and req.source.path else (req.file or req.path)
    if req.function is not None:
        if not re.fullmatch(r"[\w.<>]+(:[\w.<>]+)?", req.function.strip()):
            raise InvalidRequest(
                f"'{req.function}' is not a function name",
                details={"function": req.function},
                hint="Use name, Class.method or package.module:function.",
            )
        if path or req.line is not None:
            raise InvalidRequest(
                "give either 'function', or 'source.path' and 'line', not both",
                details={"function": req.function, "file": path, "line": req.line},
            )
        req.function = req.function.strip()
    else:
        if not path:
            raise InvalidRequest(
                "a breakpoint needs 'source.path' and 'line', or 'function'",
                hint='e.g. {"source": {"path": "/code/main.py"}, "line": 10}',
            )
        if req.line is None:
            raise InvalidRequest("a line breakpoint needs 'line'", details={"file": path})
        if not 1 <= req.line <= MAX_LINE:
            raise InvalidLine(f"line {req.line} is not a line number", details={"file": path, "line": req.line})
        if "\0" in path:
            raise InvalidRequest("the path contains a NUL character", details={"file": path})
        if not os.path.isabs(path):
            raise InvalidRequest(
                f"breakpoint path '{path}' is not absolute",
                details={"file": path},
                hint="Give the absolute path of the source file.",
            )
        if os.path.isdir(path):
            raise InvalidRequest(f"'{path}' is a directory, not a source file", details={"file": path})
        path = os.path.normpath(path)
    req.condition = req.condition if req.condition and req.condition.strip() else None
    req.hit_condition = req.hit_condition if req.hit_condition and req.hit_condition.strip() else None
    req.log_message = req.log_message or None
    if req.condition:
        compile_expression(req.condition, "condition")
    if req.hit_condition:
        req.hit_condition = normalize_hit_condition(req.hit_condition)
    if req.log_message:
        check_log_message(req.log_message)
    req.file = path
    return req


def parse_requests(body: Any) -> tuple[list[BreakpointRequest], bool]:
    """Accept one breakpoint, a list, or {"breakpoints": [...]}; return (valid requests, was_many)."""
    reqs, many = decode_requests(body)
    return validate_all(reqs), many


def decode_requests(body: Any) -> tuple[list[BreakpointRequest], bool]:
    """Accept one breakpoint, a list, or {"breakpoints": [...]}; return (requests, was_many), unvalidated."""
    if not isinstance(body, list | dict):
        raise InvalidRequest(
            "a breakpoint must be a JSON object, or a list of them", hint='Send {"source": {"path": ...}, "line": N}.'
        )
    many = isinstance(body, list) or "breakpoints" in body
    if isinstance(body, dict) and many and len(body) > 1:
        extra = sorted(k for k in body if k != "breakpoints")
        raise InvalidRequest(
            f"unknown field(s) beside 'breakpoints': {', '.join(extra)}",
            details={"fields": extra},
            hint='Send {"breakpoints": [...]}, a list, or one breakpoint.',
        )
    items = body if isinstance(body, list) else body.get("breakpoints") if many else [body]
    if not isinstance(items, list) or not items:
        raise InvalidRequest("no breakpoint given", hint='Send {"source": {"path": ...}, "line": N}.')
    reqs: list[BreakpointRequest] = []
    for index, item in enumerate(items):
        try:
            reqs.append(msgspec.convert(item, BreakpointRequest))
        except msgspec.ValidationError as exc:
            raise InvalidRequest(
                f"invalid breakpoint{f' #{index + 1}' if many else ''}: {exc}",
                details={"index": index, "validation": str(exc)},
            ) from exc
    return reqs, many


def validate_all(reqs: list[BreakpointRequest]) -> list[BreakpointRequest]:
    """Every request checked (conditions compile, a line or a function given); the first bad one names
    its index and that none was set."""
    if not reqs:
        raise InvalidRequest("no breakpoint given", hint='Send {"source": {"path": ...}, "line": N}.')
    out = []
    for index, req in enumerate(reqs):
        try:
            out.append(validate_request(req))
        except RelayError as exc:
            if len(reqs) > 1:
                exc.details = {"index": index, **exc.details}
                exc.message = f"breakpoint #{index + 1}: {exc.message} (none of the {len(reqs)} was set)"
            raise
    return out


def record_from(req: BreakpointRequest) -> BreakpointRecord:
    return BreakpointRecord(
        id="",
        kind="function" if req.function else "line",
        file=req.file if not req.function else None,
        line=req.line if not req.function else None,
        function=req.function,
        condition=req.condition or None,
        hit_condition=req.hit_condition or None,
        log_message=req.log_message or None,
        enabled=req.enabled,
    )
