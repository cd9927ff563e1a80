"""What a debug target does with an exception nothing caught: the program's own traceback, and a pause
at a runaway recursion.

Printed tracebacks start at the program's first frame: the frames that started it (``runpy``,
debugpy's command line, the warm pool) are the relay's, not the program's.

A ``RecursionError`` overflows debugpy's tracer too (it runs on the same stack, one call deeper than
the program), and a tracer that raises is switched off by Python: the debugger never sees the
exception and the program ends without a stop. By the time ``sys.excepthook`` (or
``threading.excepthook``) runs, the stack has unwound and the traceback still holds every frame; the
hook hands it to debugpy as an unhandled exception, so the session pauses in the innermost frame of
the program's own code, as it would for any other uncaught exception.
"""

from __future__ import annotations

import os
import sys
import threading
import types
from typing import Any

_BOOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "")
_STARTUP_FILES = ("runpy.py", "pydevd_runpy.py", "<frozen runpy>")


def _is_startup(filename: str) -> bool:
    if filename == "<frozen runpy>" or filename.startswith(_BOOT):
        return True
    path = os.path.abspath(filename)
    base = os.path.basename(path)
    return base in _STARTUP_FILES or f"{os.sep}debugpy{os.sep}" in path


def program_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` without its leading start-up frames (all of it when nothing else is left)."""
    first = tb
    while first is not None and _is_startup(first.tb_frame.f_code.co_filename):
        first = first.tb_next
    return first if first is not None else tb


def tracer_overflowed(exc: BaseException | None, tb: types.TracebackType | None) -> bool:
    """A RecursionError raised inside debugpy's own tracer (its innermost frame is the debugger's)."""
    if not isinstance(exc, RecursionError) or tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return _is_debugger(tb.tb_frame.f_code.co_filename)


def _is_debugger(filename: str) -> bool:
    return "pydevd" in filename or f"{os.sep}debugpy{os.sep}" in filename


def _without_debugger_tail(tb: types.TracebackType) -> types.TracebackType | None:
    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next  # type: ignore[assignment]
    while entries and _is_debugger(entries[-1].tb_frame.f_code.co_filename):
        entries.pop()
    cut: types.TracebackType | None = None
    for e in reversed(entries):
        cut = types.TracebackType(cut, e.tb_frame, e.tb_lasti, e.tb_lineno)
    return cut


def _pause_at(exc_type: Any, exc: Any, tb: Any) -> None:
    try:
        import _debugrelay_tests

        _debugrelay_tests.stop_at((exc_type, exc, _without_debugger_tail(tb)))
    except Exception as err:  # the hook never keeps the traceback from being printed
        print(f"debugrelay: cannot pause at the RecursionError: {err!r}", file=sys.stderr)


def install() -> None:
    """Wrap ``sys.excepthook`` and ``threading.excepthook`` (once)."""
    if getattr(sys.excepthook, "_debugrelay", False):
        return
    previous = sys.excepthook

    def excepthook(exc_type: Any, exc: Any, tb: Any) -> None:
        if tracer_overflowed(exc, tb):
            _pause_at(exc_type, exc, tb)
        tb = program_traceback(tb)
        if isinstance(exc, BaseException):
            exc.__traceback__ = tb  # Python's own hook prints the exception's traceback, not its argument
        previous(exc_type, exc, tb)

    excepthook._debugrelay = True  # type: ignore[attr-defined]
    sys.excepthook = excepthook
    previous_thread_hook = threading.excepthook

    def thread_hook(args: Any) -> None:
        if tracer_overflowed(args.exc_value, args.exc_traceback):
            _pause_at(args.exc_type, args.exc_value, args.exc_traceback)
        previous_thread_hook(args)

    threading.excepthook = thread_hook
