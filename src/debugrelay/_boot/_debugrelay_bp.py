"""A breakpoint's checks in the debugged program, compiled once (stdlib only; on a launched target's path).

debugpy evaluates a breakpoint's condition with ``eval(text, ...)`` on every run of its line, compiling
the text each time: compiling costs by the node, and the relay's additions (the line's runs counted and
reported, the hit count tested after the condition, one hit per execution of a statement spanning lines)
spelled out in the text made each run cost several times what the condition alone does. So the relay
sends only ``_debugrelay_check._SPEC``: one attribute read, cheaper to compile than the shortest
comparison (2.9 against 3.4 us; a call with a string would be 4.3). ``_debugrelay_check`` is the object
this module makes a builtin at start-up (sitecustomize imports it); reading any attribute of it runs the
checks. SPEC is base32 (no padding) of JSON ``[key, condition, hit, first, message, inner]``: ``hit``
``[op, number, rest]`` or null, ``first`` ``[file name, line, last line]`` of a statement spanning lines or
null, ``message`` a logpoint's f-string source or null, ``inner`` ``[file name, line]`` of a line holding a
comprehension or generator expression or null; it is decoded and compiled on its first run, then looked
up.

A logpoint's message is where debugpy is sent the attribute (it has no condition then): debugpy
evaluates a logpoint's message on every run of the line, whatever its condition, and prints it unless
it is empty. The attribute gives the message when the checks pass, else "" (nothing printed): a message
(a capture point's row of values, say) is only made when it is printed.
"""

from __future__ import annotations

import base64
import builtins
import json
import sys
import time
from typing import Any

_compiled: dict[str, tuple[Any, ...]] = {}
_runs: dict[str, list[float]] = {}
_hits: dict[str, int] = {}  # the relay reads a counted breakpoint's hits here at its stops
_monotonic = time.monotonic
MARKER = "\x1edebugrelay-runs "  # the relay's RUNS_MARKER: a line it takes out of the output
REPORT_EVERY = 1.0  # seconds between two reports of a line's runs


def _parts(spec: str) -> tuple[Any, ...]:
    encoded = spec[1:]
    fields = json.loads(base64.b32decode(encoded + "=" * (-len(encoded) % 8)))
    key, condition, hit, first, message = fields[:5]
    inner = fields[5] if len(fields) > 5 else None
    code = compile(condition, "<breakpoint condition>", "eval") if condition else None
    says = compile(message, "<logpoint message>", "eval") if message else None
    test = None
    if hit is not None:
        op, number, rest = hit
        test = _hit_test(op, int(number), int(rest or 0))
    found = (key + ":runs", key, code, test, tuple(first) if first else None, says, tuple(inner) if inner else None)
    _compiled[spec] = found
    return found


def _hit_test(op: str, number: int, rest: int) -> Any:
    if op == "%":
        return lambda n: n % number == rest
    return {
        "==": lambda n: n == number,
        "!=": lambda n: n != number,
        ">=": lambda n: n >= number,
        ">": lambda n: n > number,
        "<=": lambda n: n <= number,
        "<": lambda n: n < number,
    }[op]


def _at_line(name: str, line: int) -> Any:
    """The program's frame at the breakpoint's line (the innermost running it), else None."""
    frame = sys._getframe(2)  # past this function and the checks: the condition being evaluated, then up
    while frame is not None and not (frame.f_lineno == line and frame.f_code.co_filename.endswith(name)):
        frame = frame.f_back
    return frame


def _first_entry(frame: Any, first: tuple[str, int, int]) -> bool:
    """False at the second 'line' event CPython fires on the first line of a statement spanning lines (the
    frame comes back to it from the statement's later lines): one execution, one stop."""
    _, line, end = first
    if frame is None:
        return True
    lasti = frame.f_lasti
    return not any(e == lasti and line < (n or 0) <= end for _, e, n in frame.f_code.co_lines())


COMPREHENSIONS = ("<genexpr>", "<listcomp>", "<setcomp>", "<dictcomp>")


def _inside(frame: Any, line: int) -> bool:
    """True in the frame of a comprehension or generator expression at a line the code around it runs too:
    that execution of the line is the outer frame's, which stopped there once (Python 3.12+ runs a list,
    set or dict comprehension in the outer frame; 3.11 in one of its own, with an event per item)."""
    if frame is None or frame.f_code.co_name not in COMPREHENSIONS:
        return False
    code = frame.f_code
    outer = frame.f_back
    while outer is not None and not any(c is code for c in outer.f_code.co_consts):
        outer = outer.f_back
    lines = getattr(outer.f_code, "co_lines", None) if outer is not None else None
    if lines is None:  # a generator run after the frame that made it returned, or Python < 3.10
        return line == code.co_firstlineno
    return any(n == line for _, _, n in lines())


def _report(runs_key: str, key: str, state: list[float], now: float) -> None:
    """The line's runs and hits so far, to the relay through the debugger's console channel (about once
    a second while the line runs)."""
    try:
        import pydevd  # type: ignore[import-not-found]

        db = pydevd.get_global_debugger()
        rate = (state[0] - state[2]) / (now - state[1])
        text = "%s%s %d %d %.1f\n" % (MARKER, runs_key, state[0], _hits.get(key, 0), rate)  # noqa: UP031
        db.writer.add_command(db.cmd_factory.make_console_message(text))
    except Exception:
        pass
    state[1], state[2] = now, state[0]


class Checks:
    """``_debugrelay_check``: reading its attribute ``_SPEC`` runs that breakpoint's checks and gives
    whether the program stops there."""

    __slots__ = ()

    def __getattribute__(self, spec: str) -> bool | str:
        """Not a statement's second event nor a comprehension's own at a line its outer frame runs, the
        line's run counted, the condition true in the frame debugpy evaluates it in, then the hit counted and
        its condition true: True (a logpoint: its message), else False (a logpoint: "").

        Run on every execution of the line: one lookup, one clock read, no call it can do without."""
        runs_key, key, code, test, first, says, inner = _compiled.get(spec) or _parts(spec)
        if first is not None or inner is not None:
            name, line = (first or inner)[:2]
            frame = _at_line(name, line)
            if (first is not None and not _first_entry(frame, first)) or (inner is not None and _inside(frame, line)):
                return False if says is None else ""
        if code is not None or test is not None:
            now = _monotonic()
            state = _runs.get(runs_key)
            if state is None:
                state = _runs[runs_key] = [0, now, 0]
            state[0] += 1
            if now - state[1] >= REPORT_EVERY:
                _report(runs_key, key, state, now)
            # debugpy's eval of this attribute: the program frame's globals and locals
            frame = sys._getframe(1)
            if code is not None and not eval(code, frame.f_globals, frame.f_locals):  # noqa: S307 (the agent's condition, as debugpy runs it)
                return False if says is None else ""
            if test is not None:
                hits = _hits[key] = _hits.get(key, 0) + 1
                if not test(hits):
                    return False if says is None else ""
        if says is None:
            return True
        frame = sys._getframe(1)
        return str(eval(says, frame.f_globals, frame.f_locals))  # noqa: S307 (the agent's message)


def install() -> None:
    """``_debugrelay_check`` among the builtins: the name a breakpoint's condition reads."""
    builtins.__dict__.setdefault("_debugrelay_check", Checks())
