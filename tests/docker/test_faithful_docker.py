"""The promise in a container target too (Python 3.13: ``sys.monitoring``): a program under the debugger,
with stops, evaluations, a snapshot, traces, logpoints and capture points, prints and exits as it would
without it."""

from __future__ import annotations

from typing import Any

import httpx

from tests.conftest import Sessions
from tests.integration.test_faithful import LEDGER, debugged_ledger
from tests.integration.test_stops_leave_no_trace import plain_run


def test_a_container_program_prints_and_exits_as_it_would_without_the_debugger(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    plain = plain_run(LEDGER)
    assert debugged_ledger(api, sessions, launcher="docker") == (plain.stdout, plain.stderr, plain.returncode)
