"""A file's breakpoints replaced at once (stdlib only; on a launched target's path).

debugpy applies ``setBreakpoints`` by removing the file's breakpoints, then adding each again: a program
running meanwhile saw the file without any, its functions were marked untraced, and a loop's logpoint
went silent for tens of iterations (to the end of the run, when the change came late: a capture point
that reached its last row is removed that way). The program's threads now see the file's breakpoints as
they were until the whole set is in place, then the new set (each file's replaced in one step).
"""

from __future__ import annotations

import threading
from typing import Any

from _debugrelay_patch import when_imported


class _Staging:
    """debugpy's debugger as one ``setBreakpoints`` request sees it: everything as it is, except its
    breakpoints by file and line, which the request changes in a copy. The program's threads keep
    reading the debugger's own (a plain dict: its compiled tracer takes nothing else)."""

    def __init__(self, py_db: Any) -> None:
        object.__setattr__(self, "_py_db", py_db)
        object.__setattr__(self, "breakpoints", dict(py_db.breakpoints))
        object.__setattr__(self, "changed", None)  # None: unchanged; else whether only removals were made

    def on_breakpoints_changed(self, removed: bool = False) -> None:
        """Noted, and told the debugger once the new set is in place (it sets tracing up for what it sees)."""
        object.__setattr__(self, "changed", removed and self.changed is not False)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._py_db, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "breakpoints":
            object.__setattr__(self, name, value)
        else:
            setattr(self._py_db, name, value)


_one_at_a_time = threading.Lock()


def _publish(live: dict[Any, Any], staged: dict[Any, Any]) -> None:
    """``live`` made ``staged``, each file's breakpoints replaced in one step; the dict itself stays (whoever
    holds it sees the change)."""
    for name in [name for name in live if name not in staged]:
        live.pop(name, None)
    for name, lines in staged.items():
        if live.get(name) is not lines:
            live[name] = lines


def replace_at_once(processor: Any) -> None:
    """``setBreakpoints`` applied to a copy of the breakpoints, then published a file at a time."""
    apply = processor.on_setbreakpoints_request

    def on_setbreakpoints_request(self: Any, py_db: Any, request: Any) -> Any:
        if not getattr(py_db, "ready_to_run", False):
            return apply(self, py_db, request)  # configured before the program runs: nothing reads them yet
        with _one_at_a_time:
            staging = _Staging(py_db)
            try:
                return apply(self, staging, request)
            finally:
                _publish(py_db.breakpoints, staging.breakpoints)
                if staging.changed is not None:
                    py_db.on_breakpoints_changed(removed=staging.changed)

    processor.on_setbreakpoints_request = on_setbreakpoints_request


def install() -> None:
    when_imported(
        "_pydevd_bundle.pydevd_process_net_command_json",
        lambda module: replace_at_once(module.PyDevJsonCommandProcessor),
        "a program running while its file's breakpoints change may miss them for a while",
    )
