"""A launch's settings are for its run only in a container target too: a launch that said
``stop_on_exception: "none"`` leaves the next one on the default (a test run stops at its failure)."""

from __future__ import annotations

from typing import Any

import httpx

from tests.conftest import Sessions, line_of, ok
from tests.integration.test_fresh_launches import UNITS, run_of


def test_a_container_launch_that_said_none_leaves_the_next_on_the_default(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    units = {"module": "unittest", "args": ["check_units"], "launcher": "docker"}
    sid = sessions.create()
    assert run_of(sessions, sid, **units, stop_on_exception="none")["status"] == "terminated"
    stop = run_of(sessions, sid, **units)
    assert (stop["status"], stop["reason"]) == ("paused", "exception"), stop
    assert stop["location"]["line"] == line_of(UNITS, "unit-assert")
    assert not ok(api.get(f"/sessions/{sid}/exception-breakpoints")).get("carries_over")
