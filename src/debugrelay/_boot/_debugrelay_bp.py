"""A breakpoint's checks in the debugged program, compiled once (stdlib only; on a launched target's path).

debugpy evaluates a breakpoint's condition with ``eval(text, ...)`` on every run of its line, compiling
the text each time: compiling costs by the node, and the relay's additions (the line's runs counted and
reported, the hit count tested after the condition, one hit per execution of a statement spanning lines)
spelled out in the text made each run cost several times what the condition alone does. So the relay
sends only ``_debugrelay_check._SPEC``: one attribute read, cheaper to compile than the shortest
comparison (2.9 against 3.4 us; a call with a string would be 4.3). ``_debugrelay_check`` is the object
this module makes a builtin at start-up (sitecustomize imports it); reading any attribute of it runs the
checks. SPEC is base32 (no padding) of JSON ``[key, condition, hit, first, message]``: ``hit`` ``[op,
number, rest]`` or null, ``first`` ``[file name, line, last line]`` of a statement spanning lines or null,
``message`` a logpoint's f-string source or null; it is decoded and compiled on its first run, then
looked up.

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
_runs: dict[str, list[float]] = sys.__dict__.setdefault("_debugrelay_runs", {})
_hits: dict[str, int] = sys.__dict__.setdefault("_debugrelay_hits", {})
_monotonic = time.monotonic
MARKER = "\x1edebugrelay-runs "  # the relay's RUNS_MARKER: a line it takes out of the output
REPORT_EVERY = 1.0  # seconds between two reports of a line's runs


def _parts(spec: str) -> tuple[Any, ...]:
    encoded = spec[1:]
    key, condition, hit, first, message = json.loads(base64.b32decode(encoded + "=" * (-len(encoded) % 8)))
    code = compile(condition, "<breakpoint condition>", "eval") if condition else None
    says = compile(message, "<logpoint message>", "eval") if message else None
    test = None
    if hit is not None:
        op, number, rest = hit
        test = _hit_test(op, int(number), int(rest or 0))
    found = (key + ":runs", key, code, test, tuple(first) if first else None, says)
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


def _first_entry(first: tuple[str, int, int]) -> bool:
    """False at the second 'line' event CPython fires on the first line of a statement spanning lines (the
    frame comes back to it from the statement's later lines): one execution, one stop."""
    name, line, end = first
    frame = sys._getframe(2)  # past this function and the checks: the condition being evaluated, then up
    while frame is not None and not (frame.f_lineno == line and frame.f_code.co_filename.endswith(name)):
        frame = frame.f_back
    if frame is None:
        return True
    lasti = frame.f_lasti
    return not any(e == lasti and line < (n or 0) <= end for _, e, n in frame.f_code.co_lines())


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
        """Not a statement's second event, the line's run counted, the condition true in the frame debugpy
        evaluates it in, then the hit counted and its condition true: True (a logpoint: its message), else
        False (a logpoint: "").

        Run on every execution of the line: one lookup, one clock read, no call it can do without."""
        runs_key, key, code, test, first, says = _compiled.get(spec) or _parts(spec)
        if first is not None and not _first_entry(first):
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
