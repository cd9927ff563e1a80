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


def _real(value: Any, top: int) -> bool:
    """A value the relay would act on: an int in range (out of range, it is a case's invalid part, refused
    before anything is reached, and must stay so)."""
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= top


def _defuse(body: Any) -> Any:
    if isinstance(body, dict):
        if _real(body.get("pid"), NO_PID):
            body["pid"] = NO_PID
        if _real(body.get("port"), 65535):
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
    _defuse(case.body)  # in place: setting ``case.body`` marks the case changed (a null body stops being one)
    return case
