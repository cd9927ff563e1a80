"""Test runs under debugrelay: a failing test pauses in its own frame, with its locals alive.

pytest and unittest catch every failure, so debugpy never sees one unhandled. With
``DEBUGRELAY_TEST_STOPS`` set (the relay sets it for test runs), :func:`install` registers the
pytest plugin (``_debugrelay_pytest``) and hooks unittest's result, which hand each failure to
debugpy as an unhandled exception: it pauses when the session stops on uncaught exceptions, in the
innermost frame of the test's own code, like ``pdb.post_mortem``. Skips, expected failures and the
runner's final ``SystemExit`` never pause.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import types
from typing import Any

from _debugrelay_uncaught import _is_debugger

ENV = "DEBUGRELAY_TEST_STOPS"
_BOOT = os.path.dirname(os.path.abspath(__file__))


def _library_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths.get(k, "") for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return tuple(os.path.join(os.path.abspath(r), "") for r in roots if r) + (os.path.join(_BOOT, ""),)


def _is_library(filename: str) -> bool:
    """Not the program's own code: the standard library, installed packages, the relay's start-up files,
    and the debugger (its compiled tracer names a file that is not on disk, where a ``RecursionError``
    that overflowed it is raised)."""
    if filename.startswith("<") or _is_debugger(filename):
        return True
    path = os.path.abspath(filename)
    sep = os.sep
    if f"{sep}site-packages{sep}" in path or f"{sep}dist-packages{sep}" in path:
        return True
    return path.startswith(_library_roots())


def own_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The traceback cut after the innermost frame of the program's own code (all of it if none is)."""
    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    own = [i for i, e in enumerate(entries) if not _is_library(e.tb_frame.f_code.co_filename)]
    if not own:
        return entries[0] if entries else None
    cut: types.TracebackType | None = None
    for e in reversed(entries[: own[-1] + 1]):
        cut = types.TracebackType(cut, e.tb_frame, e.tb_lasti, e.tb_lineno)
    return cut


def stop_at(exc_info: tuple[Any, Any, Any]) -> None:
    """Pause the debugger on a caught failure as if it were unhandled (no-op without a client)."""
    try:
        import debugpy
    except ImportError:
        return
    if not debugpy.is_client_connected():
        return
    tb = own_traceback(exc_info[2])
    if tb is None:
        return
    arg = (exc_info[0], exc_info[1], tb)
    trigger = getattr(debugpy, "trigger_exception_handler", None)
    if trigger is not None:
        trigger(arg, as_uncaught=True)
        return
    # debugpy before 1.8.22: the same call pydevd makes for an unhandled exception
    import threading

    import pydevd
    from _pydevd_bundle.pydevd_breakpoints import stop_on_unhandled_exception

    debugger = pydevd.get_global_debugger()
    if debugger is not None:
        thread = threading.current_thread()
        stop_on_unhandled_exception(debugger, thread, debugger.set_additional_thread_info(thread), arg)


def runner_exit_is_not_a_stop() -> None:
    """The runner's closing ``sys.exit(code)`` reports the result: it never pauses."""
    try:
        import pydevd
    except ImportError:
        return
    debugger = pydevd.get_global_debugger()
    if debugger is not None and hasattr(debugger, "set_break_on_system_exit"):
        debugger.set_break_on_system_exit(set(), [])
    elif debugger is not None:
        debugger.set_ignore_system_exit_codes([None, 0, 1, 2, 3, 4, 5])


def _install_unittest() -> None:
    import unittest

    result = unittest.TestResult
    if getattr(result, "_debugrelay", False):
        return

    def wrap(original: Any) -> Any:
        def hooked(self: Any, test: Any, err: Any) -> Any:
            if err is not None:
                stop_at(err)
            return original(self, test, err)

        return hooked

    result.addFailure = wrap(result.addFailure)  # type: ignore[method-assign]
    result.addError = wrap(result.addError)  # type: ignore[method-assign]
    result._debugrelay = True  # type: ignore[attr-defined]
    run_tests = unittest.TestProgram.runTests

    def hooked_run(self: Any) -> Any:
        runner_exit_is_not_a_stop()
        return run_tests(self)

    unittest.TestProgram.runTests = hooked_run  # type: ignore[method-assign]


def install() -> None:
    """Hook pytest (through ``PYTEST_PLUGINS``) and unittest, when the relay asked for it."""
    if not os.environ.get(ENV):
        return
    plugins = [p for p in os.environ.get("PYTEST_PLUGINS", "").split(",") if p.strip()]
    if "_debugrelay_pytest" not in plugins:
        os.environ["PYTEST_PLUGINS"] = ",".join([*plugins, "_debugrelay_pytest"])
    try:
        _install_unittest()
    except Exception as exc:  # a hook never keeps the program from running
        print(f"debugrelay: unittest failures will not pause: {exc!r}", file=sys.stderr)
