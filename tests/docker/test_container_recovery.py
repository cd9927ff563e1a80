"""Container targets survive a relay killed with SIGKILL: a new relay on the same Redis finds
their containers again, re-sends the breakpoints, and reports the ones that ended meanwhile."""

from __future__ import annotations

from typing import Any

import httpx

from tests.conftest import line_of, ok, target
from tests.redis_server import Cluster

TICK = target("persist_tick.py")
CRASH = target("crash.py")


def launch_in_container(http: httpx.Client, script: str, line: int | None = None) -> str:
    sid: str = ok(http.post("/sessions", json={}), 201)["session_id"]
    if line is not None:
        ok(http.post(f"/sessions/{sid}/breakpoints", json={"source": {"path": script}, "line": line}))
    ok(http.post(f"/sessions/{sid}/launch", json={"script": script, "launcher": "docker"}))
    return sid


def wait(http: httpx.Client, sid: str) -> dict[str, Any]:
    status: dict[str, Any] = ok(http.post(f"/sessions/{sid}/wait", json={"timeout": 60}))
    return status


def test_container_sessions_survive_a_killed_relay(docker_client: Any, cluster: Cluster) -> None:
    tick_line = line_of(TICK, "tick")
    first = cluster.relay()
    paused = launch_in_container(first.http, TICK, tick_line)
    assert wait(first.http, paused)["status"] == "paused"
    crashing = launch_in_container(first.http, CRASH, line_of(CRASH, "raise-here"))
    assert wait(first.http, crashing)["status"] == "paused"
    containers = {sid: ok(first.http.get(f"/sessions/{sid}"))["target"]["container_id"] for sid in (paused, crashing)}

    first.proc.kill()
    first.proc.wait(10)
    # with no debugger attached the paused target runs on: the crashing one ends with its error
    docker_client.containers.get(containers[crashing]).wait(timeout=60)

    second = cluster.relay()
    again = wait(second.http, paused)
    assert again["status"] == "paused" and again["recovered"] is True
    assert again["location"]["file"] == TICK and again["location"]["line"] == tick_line
    assert ok(second.http.get(f"/sessions/{paused}"))["target"]["container_id"] == containers[paused]
    ended = ok(second.http.get(f"/sessions/{crashing}/status"))
    assert ended["status"] == "terminated" and ended["exit_code"] == 1
    ok(second.http.delete(f"/sessions/{paused}"))
    ok(second.http.delete(f"/sessions/{crashing}"))
    for container_id in containers.values():
        assert docker_client.containers.list(all=True, filters={"id": container_id}) == []
