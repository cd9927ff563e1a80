"""A container target whose relay never comes back ends: its keeper (the container's main process) ends
the program once no relay has been connected for the session's timeout, and the container stops. It is
not removed (the launcher does not run it with auto-remove: a relay that comes back reads its exit code
and its log; the store's next relay removes it)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import line_of, ok, target
from tests.redis_server import Cluster

pytestmark = [pytest.mark.integration, pytest.mark.slow]

COUNT = target("keeper_count.py")
REASON = "no relay for 6 s: the session's timeout; ending the program"
BOUND = 120  # a bound on waiting for the end, not a speed check


def test_a_container_whose_relay_never_returns_stops_after_the_sessions_timeout(
    docker_client: Any, cluster: Cluster
) -> None:
    relay = cluster.relay(DEBUGRELAY_POOL_SIZE="0")
    sid: str = ok(relay.http.post("/sessions", json={"timeout_minutes": 0.1}), 201)["session_id"]
    bp = {"source": {"path": COUNT}, "line": line_of(COUNT, "count"), "condition": "i == 5"}
    ok(relay.http.post(f"/sessions/{sid}/breakpoints", json=bp))
    ok(relay.http.post(f"/sessions/{sid}/launch", json={"script": COUNT, "launcher": "docker", "args": ["0"]}))
    status = ok(relay.http.post(f"/sessions/{sid}/wait", json={"timeout": 60}))
    assert status["status"] == "paused"
    container = docker_client.containers.get(ok(relay.http.get(f"/sessions/{sid}"))["target"]["container_id"])
    assert "--orphan-after" in container.attrs["Config"]["Cmd"]

    relay.proc.kill()
    relay.proc.wait(10)
    ended = container.wait(timeout=BOUND)

    assert ended["StatusCode"] == 128 + 15  # the program ended by SIGTERM, the keeper with its code
    logs = container.logs().decode(errors="replace")
    assert REASON in logs, logs
    assert "i 5\n" in logs and "i 6\n" not in logs  # ended where it was paused
    container.reload()
    assert container.status == "exited"  # kept for a relay that comes back: the cluster's teardown removes it
