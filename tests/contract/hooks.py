"""schemathesis hooks for the relay's contract run: generated bodies never reach this machine's processes.

An attach by ``pid`` injects debugpy into that process and an attach by ``port`` speaks DAP to whatever
listens there; generated values could name real ones. They are pointed at a pid that cannot exist and a
port nothing listens on: the relay answers its usual refusal, and nothing outside the run is touched.
"""

from __future__ import annotations

from typing import Any

import schemathesis

NO_PID = 1 << 22  # pids are below pid_max, which is at most 2**22
NO_PORT = 1  # tcpmux: nothing listens there


def _defuse(body: Any) -> Any:
    if isinstance(body, dict):
        if isinstance(body.get("pid"), int):
            body["pid"] = NO_PID
        if isinstance(body.get("port"), int):
            body["port"] = NO_PORT
        if isinstance(body.get("attach"), dict):
            _defuse(body["attach"])
    return body


@schemathesis.hook
def map_body(context: Any, body: Any) -> Any:
    return _defuse(body)


@schemathesis.hook
def map_case(context: Any, case: Any) -> Any:
    """Every phase's cases: the coverage phase (boundary values such as pid 1, this machine's init)
    applies ``map_case`` but not ``map_body``."""
    case.body = _defuse(case.body)
    return case
