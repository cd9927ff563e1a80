"""Container targets survive a relay killed with SIGKILL: a new relay on the same Redis finds
their containers again, reconnects to their keepers (a paused program is still paused where it
was), and reports the ones that ended meanwhile with their exit code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from tests.conftest import line_of, ok, target
from tests.integration.test_keeper import stored_output
from tests.redis_server import Cluster, poll

TICK = target("persist_tick.py")
CRASH = target("crash.py")
COUNT = target("keeper_count.py")
GATE = target("keeper_gate.py")


def launch_in_container(
    http: httpx.Client,
    script: str,
    line: int | None = None,
    args: list[str] | None = None,
    *,
    pool: bool = False,
    **bp: Any,
) -> str:
    sid: str = ok(http.post("/sessions", json={}), 201)["session_id"]
    if line is not None:
        ok(http.post(f"/sessions/{sid}/breakpoints", json={"source": {"path": script}, "line": line, **bp}))
    launch = {"script": script, "launcher": "docker", "args": args or [], "pool": pool}
    ok(http.post(f"/sessions/{sid}/launch", json=launch))
    return sid


def evaluate(http: httpx.Client, sid: str, expression: str) -> str:
    result: str = ok(http.post(f"/sessions/{sid}/evaluate", json={"expression": expression}))["result"]
    return result


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

    second = cluster.relay()
    again: dict[str, Any] = {}
    for sid, line in ((paused, tick_line), (crashing, line_of(CRASH, "raise-here"))):
        again = wait(second.http, sid)  # the keeper kept both where they were
        assert again["status"] == "paused" and again["recovered"] is True
        assert again["location"]["line"] == line
    assert ok(second.http.get(f"/sessions/{paused}"))["target"]["container_id"] == containers[paused]
    assert evaluate(second.http, crashing, "text") == "'1'"
    ended = again
    for _ in range(5):  # the breakpoint is on a line the program runs three times
        ok(second.http.post(f"/sessions/{crashing}/continue"))
        ended = wait(second.http, crashing)
        if ended["status"] != "paused":
            break
    assert ended["status"] == "terminated" and ended["exit_code"] == 1
    ok(second.http.delete(f"/sessions/{paused}"))
    ok(second.http.delete(f"/sessions/{crashing}"))
    for container_id in containers.values():
        assert docker_client.containers.list(all=True, filters={"id": container_id}) == []


def test_a_container_paused_at_a_conditional_breakpoint_stays_paused(docker_client: Any, cluster: Cluster) -> None:
    line = line_of(COUNT, "count")
    first = cluster.relay()
    sid = launch_in_container(first.http, COUNT, line, ["0"], condition="i == 5")
    assert wait(first.http, sid)["status"] == "paused"
    assert evaluate(first.http, sid, "i") == "5"
    detail = ok(first.http.get(f"/sessions/{sid}"))
    assert detail["survives_relay_restart"] is True

    first.proc.kill()
    first.proc.wait(10)
    assert docker_client.containers.get(detail["target"]["container_id"]).status == "running"

    second = cluster.relay()
    again = wait(second.http, sid)
    assert again["status"] == "paused" and again["location"]["line"] == line
    assert evaluate(second.http, sid, "i") == "5"
    ok(second.http.post(f"/sessions/{sid}/continue"))
    ended = wait(second.http, sid)
    assert ended["status"] == "terminated" and ended["exit_code"] == 0
    ok(second.http.delete(f"/sessions/{sid}"))


def test_a_warm_container_stays_paused_through_a_relay_kill(docker_client: Any, cluster: Cluster) -> None:
    line = line_of(COUNT, "count")
    first = cluster.relay(DEBUGRELAY_DOCKER_POOL_SIZE="1", DEBUGRELAY_POOL_SIZE="0")
    cold = launch_in_container(first.http, COUNT, pool=True)  # the first launch in a folder makes it warm
    assert wait(first.http, cold)["exit_code"] == 0

    def warm_ready() -> bool:
        pool = ok(first.http.get("/pool"))["pools"]["docker"]
        return any(k["ready"] >= 1 for k in pool["keys"]) and not pool["starting"]

    poll(warm_ready, timeout=120, what="a warm container")
    sid = launch_in_container(first.http, COUNT, line, ["0"], pool=True, condition="i == 5")
    assert wait(first.http, sid)["status"] == "paused"
    assert evaluate(first.http, sid, "i") == "5"
    detail = ok(first.http.get(f"/sessions/{sid}"))
    assert detail["target"]["pooled"] is True and detail["survives_relay_restart"] is True
    container = docker_client.containers.get(detail["target"]["container_id"])
    assert container.attrs["Config"]["User"] == "10001:10001"
    assert container.attrs["HostConfig"]["ReadonlyRootfs"] is True

    first.proc.kill()
    first.proc.wait(10)

    second = cluster.relay(DEBUGRELAY_POOL_SIZE="0")
    again = wait(second.http, sid)
    assert again["status"] == "paused" and again["recovered"] is True
    assert again["location"]["line"] == line
    assert evaluate(second.http, sid, "i") == "5"
    ok(second.http.post(f"/sessions/{sid}/continue"))
    ended = wait(second.http, sid)
    assert ended["status"] == "terminated" and ended["exit_code"] == 0
    ok(second.http.delete(f"/sessions/{sid}"))
    ok(second.http.delete(f"/sessions/{cold}"))
    assert docker_client.containers.list(all=True, filters={"id": container.id}) == []


def test_a_container_that_ends_while_no_relay_runs_keeps_its_exit_code(
    docker_client: Any, cluster: Cluster, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # the target runs as another user
    gate = shared / "gate"
    cluster.env["DEBUGRELAY_ALLOWED_ROOTS"] = str(shared)  # the gate folder, mounted into the target
    first = cluster.relay()
    sid: str = ok(first.http.post("/sessions", json={}), 201)["session_id"]
    launch = {
        "script": GATE,
        "args": [str(gate), "3"],
        "launcher": "docker",
        "pool": False,
        "mounts": {str(shared): str(shared)},
    }
    ok(first.http.post(f"/sessions/{sid}/launch", json=launch))
    poll(lambda: "waiting" in stored_output(cluster, sid), what="the first line saved")
    container = ok(first.http.get(f"/sessions/{sid}"))["target"]["container_id"]

    first.proc.kill()
    first.proc.wait(10)
    gate.touch()
    docker_client.containers.get(container).wait(timeout=60)

    second = cluster.relay()
    status = ok(second.http.get(f"/sessions/{sid}/status"))
    assert status["status"] == "terminated" and status["exit_code"] == 3
    ok(second.http.delete(f"/sessions/{sid}"))
