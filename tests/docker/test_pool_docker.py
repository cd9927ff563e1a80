"""Warm containers: after a launch in a folder, the next ones there get a container started ahead."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Relay, Sessions, line_of, ok, target, until

BASIC = target("basic.py")
ASK = target("ask.py")


def docker_pool(api: httpx.Client) -> dict[str, Any]:
    pools: dict[str, Any] = ok(api.get("/pool"))["pools"]
    return pools["docker"]  # type: ignore[no-any-return]


def warm_in(api: httpx.Client, folder: str) -> bool:
    pool = docker_pool(api)
    return any(k["cwd"] == folder and k["ready"] >= pool["size"] for k in pool["keys"]) and not pool["starting"]


def pooled_containers(client: Any, relay: Relay) -> list[Any]:
    instance = ok(relay.http.get("/config"))["instance_id"]
    return client.containers.list(
        all=True, filters={"label": ["debugrelay.pool=true", f"debugrelay.instance={instance}"]}
    )


@pytest.fixture
def pooling(tmp_path: Path, docker_client: Any) -> Iterator[Relay]:
    relay = Relay(tmp_path, env={"DEBUGRELAY_DOCKER_POOL_SIZE": "1", "DEBUGRELAY_POOL_SIZE": "0"})
    try:
        yield relay
    finally:
        relay.stop()


def test_the_next_launch_in_a_folder_gets_a_warm_container(docker_client: Any, pooling: Relay) -> None:
    api, sessions = pooling.http, Sessions(pooling.http)
    folder = str(Path(BASIC).parent)
    try:
        first = sessions.create()
        sessions.launch(first, ASK, launcher="docker")
        ok(api.post(f"/sessions/{first}/input", json={"input": "ada\ngreen\n"}))
        assert sessions.wait(first, timeout=60)["exit_code"] == 0
        assert "pooled" not in ok(api.get(f"/sessions/{first}"))["target"]
        assert docker_pool(api)["cold_starts"] == {"first_in_folder": 1}
        until(lambda: warm_in(api, folder), "a warm container for the folder", seconds=120)

        sid = sessions.create()
        sessions.bp(sid, BASIC, line_of(BASIC, "add-body"))
        sessions.launch(sid, BASIC, launcher="docker", env={"GREETING": "ahoy"}, args=["x"])
        status = sessions.wait(sid, timeout=60)
        assert status["status"] == "paused"
        assert status["location"] == {"file": BASIC, "line": line_of(BASIC, "add-body"), "function": "add"}
        detail = ok(api.get(f"/sessions/{sid}"))
        assert detail["target"]["pooled"] is True
        container = docker_client.containers.get(detail["target"]["container_id"])
        assert container.attrs["Config"]["User"] == "10001:10001"
        binds = [(m["Destination"], m["RW"]) for m in container.attrs["Mounts"] if m["Type"] == "bind"]
        assert binds == [(folder, False)] and container.attrs["HostConfig"]["ReadonlyRootfs"] is True
        whoami = ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "__import__('os').getuid()"}))
        assert whoami["result"] == "10001"

        def renamed() -> bool:
            container.reload()
            return bool(container.name.startswith(f"debugrelay-{sid}-"))

        until(renamed, "the container to be named after its session", seconds=30)
        ok(api.delete(f"/sessions/{sid}/breakpoints/bp_1"))
        ok(api.post(f"/sessions/{sid}/continue"))
        final = sessions.wait(sid, timeout=60)
        assert (final["status"], final["exit_code"]) == ("terminated", 0)
        text = "".join(o["text"] for o in ok(api.get(f"/sessions/{sid}/output", params={"limit": 1000}))["outputs"])
        assert "ahoy stdout" in text
        assert "args ['x']" in text
        ok(api.delete(f"/sessions/{sid}"))
        assert docker_client.containers.list(all=True, filters={"id": container.id}) == []
    finally:
        sessions.cleanup()


def test_no_warm_container_outlives_the_relay(docker_client: Any, pooling: Relay) -> None:
    api, sessions = pooling.http, Sessions(pooling.http)
    folder = str(Path(BASIC).parent)
    sid = sessions.create()
    sessions.launch(sid, BASIC, launcher="docker")
    assert sessions.wait(sid, timeout=60)["status"] == "terminated"
    until(lambda: warm_in(api, folder), "a warm container for the folder", seconds=120)
    assert len(pooled_containers(docker_client, pooling)) == 1
    instance = ok(api.get("/config"))["instance_id"]
    pooling.stop()
    left = docker_client.containers.list(
        all=True, filters={"label": ["debugrelay.pool=true", f"debugrelay.instance={instance}"]}
    )
    assert left == []
