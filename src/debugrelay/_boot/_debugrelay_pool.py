"""A warm debug target: an interpreter that has imported debugpy and listens before it knows what to run.

debugrelay keeps a few of these ready (``python -m _debugrelay_pool --listen HOST:PORT``, behind a
keeper like every launched target) so that a launch skips interpreter start-up and the debugpy import
(~0.4 s). When a session launches, the
relay writes one line of JSON to this process's stdin: the working directory, environment,
``sys.argv``, the extra ``PYTHONPATH`` entries and the script or module. The program is then set up
exactly as ``python -m debugpy --listen ... --wait-for-client <script|-m module> args`` would set
it up, waits until the relay's breakpoints are in place (``configurationDone``), and runs as
``__main__``. EOF before a spec (the relay went away) ends the process quietly. A local pooled
target's keeper attached before the launch was known: the launch's ``just_my_code`` is applied
here, once debugpy has its configuration.

The spec line is read byte by byte from the file descriptor, so nothing after it is buffered
away from the program's own ``sys.stdin``.
"""

from __future__ import annotations

import os
import sys
from typing import Any


def _read_spec() -> dict[str, Any] | None:
    """One line from fd 0, unbuffered; None on EOF."""
    data = bytearray()
    while True:
        try:
            byte = os.read(0, 1)
        except InterruptedError:
            continue
        if not byte:
            return None
        if byte == b"\n":
            break
        data += byte
    import json

    spec: dict[str, Any] = json.loads(data.decode("utf-8"))
    return spec


def _preload() -> list[Any]:
    """``--preload pytest``: pytest itself imported ahead, so that a test run taking this target starts with
    its largest import done. Its plugins are not: pytest rewrites their asserts as it imports them, and one
    imported before would run unrewritten (and pytest warn of it, a change the program could see). Returns
    the warnings the import gave, for the run's output (shown as the run starts, where they would have been)."""
    at = sys.argv.index("--preload") if "--preload" in sys.argv else -1
    if at < 0 or sys.argv[at + 1 : at + 2] != ["pytest"]:
        return []
    import warnings

    with warnings.catch_warnings(record=True) as given:
        try:
            import pytest  # noqa: F401
        except Exception:  # no pytest here: the run says so itself
            return list(given)
    return list(given)


def _show(given: list[Any]) -> None:
    import warnings

    for w in given:
        warnings.showwarning(w.message, w.category, w.filename, w.lineno, w.file, w.line)


def _listen_address() -> tuple[str, int]:
    for i, arg in enumerate(sys.argv[:-1]):
        if arg == "--listen":
            host, _, port = sys.argv[i + 1].rpartition(":")
            return host or "127.0.0.1", int(port)
    raise SystemExit("usage: python -m _debugrelay_pool --listen HOST:PORT [--role NAME] [--preload pytest]")


def _wait_for_client(spec: dict[str, Any]) -> None:
    """debugpy's ``wait_for_client``, then the launch's ``just_my_code`` (the attach came before the launch)."""
    import debugpy

    debugpy.wait_for_client()
    if spec.get("just_my_code") is not None:
        import pydevd

        debugger = pydevd.get_global_debugger()
        if debugger is not None:
            debugger.set_use_libraries_filter(bool(spec["just_my_code"]))


def _trace_from_env(given: str | None) -> None:
    """The launch's traces (this interpreter started before they were known)."""
    if not given:
        return
    import json

    try:
        import _debugrelay_trace

        for spec in json.loads(given):
            _debugrelay_trace.add(json.dumps(spec))
    except Exception as exc:  # a hook never keeps the program from running
        print("debugrelay: function traces not installed: %r" % (exc,), file=sys.stderr)


def _set_up(spec: dict[str, Any]) -> None:
    """The launch's folder and environment, its test stops and traces. The relay may have set its exception
    filters by now ('raised': every raise in code it traces): nothing here raises, not even the KeyError
    that ``os.environ.get`` and ``pop`` raise and catch for a missing name."""
    os.chdir(spec["cwd"])
    env = dict(os.environ)
    os.environ.update(spec["env"])
    env.update(spec["env"])
    for name in spec.get("unset") or []:
        if name in env:
            del os.environ[name]
            del env[name]
    os.environ["DEBUGPY_RUNNING"] = "true"
    if env.get("DEBUGRELAY_TEST_STOPS"):
        import _debugrelay_tests

        _debugrelay_tests.install()
    _trace_from_env(env.get("DEBUGRELAY_TRACES"))


def main() -> int:  # noqa: PLR0915
    address = _listen_address()
    held = _preload()  # before the debugger: imports run untraced
    import debugpy
    import debugpy.server.api  # puts the vendored pydevd on sys.path
    from _pydevd_bundle import pydevd_dont_trace_files

    # this file is debugger plumbing, like debugpy's own CLI: never shown in stacks, never stepped into
    pydevd_dont_trace_files.DONT_TRACE[os.path.basename(__file__)] = pydevd_dont_trace_files.PYDEV_FILE
    debugpy.configure(subProcess=False)
    debugpy.listen(address)

    spec = _read_spec()
    if spec is None:
        return 0
    _show(held)

    from _pydevd_bundle import pydevd_runpy as runpy

    _set_up(spec)
    # sys.path as `python -m debugpy` has it: [cwd, PYTHONPATH..., ...], then the script's folder first
    sys.path[0] = os.getcwd()
    boot = os.path.dirname(os.path.abspath(__file__))
    at = next((i + 1 for i, p in enumerate(sys.path) if os.path.abspath(p or ".") == boot), 1)
    sys.path[at:at] = [os.path.abspath(p) for p in spec.get("pythonpath") or []]
    import importlib.util

    importlib.invalidate_caches()

    module = spec.get("module")
    args = list(spec.get("args") or [])
    if module:
        sys.path.insert(0, "")
        argv_0 = sys.argv[0]
        try:
            found = importlib.util.find_spec(module)
            if found is not None and found.origin:
                argv_0 = found.origin
        except Exception:
            pass
        sys.argv[:] = [argv_0, *args]
        _wait_for_client(spec)
        # a fresh __main__ like `python -m`, not this module's namespace
        import types

        main_module = types.ModuleType("__main__")
        main_module.__dict__["__builtins__"] = __builtins__
        sys.modules["__main__"] = main_module
        runpy._run_module_as_main(module, alter_argv=True)
    else:
        script = spec["script"]
        sys.argv[:] = [script, *args]
        if os.path.isfile(script):
            sys.path.insert(0, os.path.dirname(script))
        _wait_for_client(spec)
        runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
