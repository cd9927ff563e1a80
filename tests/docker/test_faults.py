"""Real faults on real components: a target's container killed under a session, and a Docker engine
that refuses the relay's calls."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Relay, Sessions, error_of, line_of, ok, target
from tests.redis_server import poll

TICK = target("persist_tick.py")
BASIC = target("basic.py")


def made_for(engine: Any, sid: str) -> list[str]:
    """Containers, networks and volumes the session's target had (volumes: by the containers' mounts)."""
    label = {"label": f"debugrelay.session={sid}"}
    found = [f"container {c.name}" for c in engine.containers.list(all=True, filters=label)]
    found += [f"network {n.name}" for n in engine.networks.list(filters=label)]
    return found


def test_a_killed_target_container_ends_its_session_with_the_reason_and_leaves_nothing(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    sid, _ = sessions.start_at(TICK, "tick", launcher="docker")
    containers = docker_client.containers.list(filters={"label": f"debugrelay.session={sid}"})
    assert len(containers) == 1
    volumes = [m["Name"] for m in containers[0].attrs["Mounts"] if m["Type"] == "volume"]

    containers[0].kill(signal="SIGKILL")  # the OOM killer, or someone's `docker kill`

    def ended_now() -> Any:
        status = ok(api.get(f"/sessions/{sid}/status"))
        return status if status["status"] != "paused" else None

    ended = poll(ended_now, what="the session told of its target's end")
    assert ended["status"] == "terminated", ended
    assert ended["exit_code"] == 137, ended  # 128 + SIGKILL: the container was killed
    assert ended.get("reason") == "target_exited", ended
    assert "SIGKILL" in ended["description"], ended  # and why

    ok(api.delete(f"/sessions/{sid}"))
    poll(lambda: not made_for(docker_client, sid), what="the target's container and network removed")
    names = {v.name for v in docker_client.volumes.list()}
    assert not names & set(volumes), volumes


@pytest.fixture
def refusing_engine(tmp_path: Path) -> Iterator[str]:
    """A Docker socket that refuses every connection (bound, never listening)."""
    path = tmp_path / "docker.sock"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    try:
        yield f"unix://{path}"
    finally:
        sock.close()


def test_a_docker_engine_that_refuses_is_a_clear_error_and_the_relay_stays_up(
    tmp_path: Path, refusing_engine: str
) -> None:
    relay = Relay(tmp_path, env={"DOCKER_HOST": refusing_engine, "DEBUGRELAY_LAUNCHERS": "local,docker"})
    try:
        http = relay.http
        sid = ok(http.post("/sessions", json={}), 201)["session_id"]
        refused = http.post(f"/sessions/{sid}/launch", json={"script": BASIC, "launcher": "docker"})
        err = error_of(refused, 503, "docker_unavailable")
        assert "Docker engine" in err["message"] and err["hint"]
        failed = ok(http.get(f"/sessions/{sid}/status"))
        assert failed["status"] == "failed" and failed["error"]["code"] == "docker_unavailable", failed

        assert ok(http.get("/health"))["status"] == "ok"  # the relay stays up; the session launches locally
        ok(
            http.post(
                f"/sessions/{sid}/breakpoints", json={"source": {"path": BASIC}, "line": line_of(BASIC, "loop-body")}
            )
        )
        ok(http.post(f"/sessions/{sid}/launch", json={"script": BASIC}))
        assert ok(http.post(f"/sessions/{sid}/wait", json={"timeout": 30}))["status"] == "paused"
        ok(http.delete(f"/sessions/{sid}"))
    finally:
        relay.stop()
