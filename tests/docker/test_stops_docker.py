"""A stop changes nothing the program can see in a container target too (Python 3.13: ``sys.monitoring``):
values read leave no exception, warning or extra call in it, a snapshot and a capture point run none of
its code, its sockets, imports and sys stay as they were, a line with a comprehension stops once per
execution, a runaway recursion in a test pauses in the test."""

from __future__ import annotations

from typing import Any

import httpx

from tests.conftest import Sessions
from tests.integration.test_stops_leave_no_trace import (
    SNAPSHOT,
    STATE,
    VALUES,
    evidence_then_end,
    lines_then_end,
    plain_run,
    read_values_then_end,
    runaway_stop,
    state_after_a_stop,
)


def test_values_read_at_a_stop_leave_no_trace_in_a_container_program(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    plain = plain_run(VALUES)
    assert read_values_then_end(api, sessions, launcher="docker") == (plain.stdout, plain.stderr)


def test_a_stop_leaves_a_container_programs_sockets_imports_and_sys_as_they_were(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    assert state_after_a_stop(api, sessions, launcher="docker") == plain_run(STATE).stdout


def test_a_snapshot_and_a_capture_point_run_none_of_a_container_programs_code(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    assert evidence_then_end(api, sessions, launcher="docker") == plain_run(SNAPSHOT).stdout


def test_a_line_with_a_comprehension_stops_once_per_execution_in_a_container(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    lines_then_end(api, sessions, launcher="docker")


def test_a_runaway_recursion_in_a_test_stops_in_the_test_in_a_container(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    runaway_stop(api, sessions, {"module": "unittest", "args": ["check_runaway"], "launcher": "docker"})
