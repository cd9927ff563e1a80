"""Every debug target in its own container: the user's paths, limits, output, stdin, lifecycle,
and attaching to a debugpy someone else started in a container."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Relay, Sessions, line_of, ok, output_text, target

BASIC = target("basic.py")
ASK = target("ask.py")
CRASH = target("crash.py")
EXAMPLE_APP = str(Path(__file__).resolve().parents[2] / "docker" / "example_app" / "app.py")


def managed(client: Any, session_id: str) -> list[Any]:
    return client.containers.list(all=True, filters={"label": f"debugrelay.session={session_id}"})


def test_breakpoints_frames_and_sources_speak_the_users_paths(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    sid = sessions.create()
    sessions.bp(sid, BASIC, line_of(BASIC, "add-body"))
    sessions.launch(sid, BASIC, launcher="docker", env={"GREETING": "ahoy"})
    status = sessions.wait(sid, timeout=60)
    assert status["status"] == "paused"
    assert status["location"] == {"file": BASIC, "line": line_of(BASIC, "add-body"), "function": "add"}
    frames = ok(api.get(f"/sessions/{sid}/stacktrace"))["frames"]
    assert [f["file"] for f in frames[:3]] == [BASIC] * 3
    src = ok(
        api.get(
            f"/sessions/{sid}/source",
            params={"path": frames[0]["file"], "start": frames[0]["line"], "end": frames[0]["line"]},
        )
    )
    assert "result = a + b" in src["content"]
    local = {v["name"]: v["value"] for v in ok(api.get(f"/sessions/{sid}/frames/0/variables"))["variables"]}
    assert local == {"a": "0", "b": "3"}
    assert ok(api.post(f"/sessions/{sid}/step-out"))["location"]["function"] == "average"
    ok(api.delete(f"/sessions/{sid}/breakpoints/bp_1"))
    ok(api.post(f"/sessions/{sid}/continue"))
    final = sessions.wait(sid, timeout=60)
    assert final["status"] == "terminated" and final["exit_code"] == 0
    assert "ahoy stdout" in output_text(api, sid)


def test_container_is_isolated_limited_and_labelled(docker_client: Any, api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.bp(sid, BASIC, line_of(BASIC, "add-body"))
    sessions.launch(sid, BASIC, launcher="docker", limits={"memory": "256m", "cpus": 0.5, "pids": 64})
    sessions.wait(sid, timeout=60)
    detail = ok(api.get(f"/sessions/{sid}"))
    container = docker_client.containers.get(detail["target"]["container_id"])
    host = container.attrs["HostConfig"]
    assert container.labels["debugrelay.session"] == sid
    assert host["Memory"] == 256 * 1024 * 1024 and host["NanoCpus"] == 500_000_000 and host["PidsLimit"] == 64
    assert host["Privileged"] is False and "no-new-privileges" in host["SecurityOpt"]
    assert container.attrs["Config"]["User"] == "10001:10001"
    assert host["ReadonlyRootfs"] is True and set(host["Tmpfs"]) == {"/tmp", "/home/debuggee"}
    binds = [(m["Destination"], m["RW"]) for m in container.attrs["Mounts"] if m["Type"] == "bind"]
    assert binds == [(str(Path(BASIC).parent), False)]
    networks = container.attrs["NetworkSettings"]["Networks"]
    assert list(networks) == [container.labels["debugrelay.network"]]
    assert docker_client.networks.get(next(iter(networks))).attrs["Internal"] is True
    assert not any(container.attrs["NetworkSettings"]["Ports"].values())  # nothing published on the host
    os_ = "__import__('os')"
    probe = (
        f"({os_}.getuid(), {os_}.environ['HOME'], {os_}.access('/usr', {os_}.W_OK), {os_}.access('/tmp', {os_}.W_OK))"
    )
    whoami = ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": probe}))
    assert whoami["result"] == "(10001, '/home/debuggee', False, True)"


def test_deleting_the_session_removes_its_container(docker_client: Any, api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.bp(sid, BASIC, line_of(BASIC, "add-body"))
    sessions.launch(sid, BASIC, launcher="docker")
    sessions.wait(sid, timeout=60)
    assert len(managed(docker_client, sid)) == 1
    ok(api.delete(f"/sessions/{sid}"))
    assert managed(docker_client, sid) == []


def test_exit_code_stdin_and_crash(docker_client: Any, api: httpx.Client, sessions: Sessions) -> None:
    asking = sessions.create()
    sessions.launch(asking, ASK, launcher="docker")
    ok(api.post(f"/sessions/{asking}/input", json={"input": "ada\ngreen\n"}))
    done = sessions.wait(asking, timeout=60)
    assert done["status"] == "terminated" and done["exit_code"] == 0
    assert "got ada green" in output_text(api, asking)
    crashing = sessions.create()
    sessions.launch(crashing, CRASH, launcher="docker")
    crashed = sessions.wait(crashing, timeout=60)
    assert crashed["status"] == "terminated" and crashed["exit_code"] == 1
    assert "ValueError" in output_text(api, crashing)


def test_users_own_image_without_debugpy_gets_it_injected(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    plain = "debugrelay/base:bookworm"  # Debian's python3, no debugpy: a stand-in for "your image"
    try:
        docker_client.images.get(plain)
    except Exception:
        pytest.skip(f"{plain} is not built")
    sid = sessions.create()
    sessions.bp(sid, BASIC, line_of(BASIC, "add-body"))
    sessions.launch(sid, BASIC, launcher="docker", image=plain)
    status = sessions.wait(sid, timeout=60)
    assert status["status"] == "paused" and status["location"]["file"] == BASIC


def test_missing_image_is_a_clear_error(docker_client: Any, api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    missing = "debugrelay/target:not-built"  # allowed by the image list, absent from the engine
    resp = api.post(f"/sessions/{sid}/launch", json={"script": BASIC, "launcher": "docker", "image": missing})
    assert resp.status_code == 400 and resp.json()["error"]["code"] == "launch_failed"
    assert managed(docker_client, sid) == []


@pytest.fixture
def example_app(docker_client: Any) -> Iterator[tuple[str, int]]:
    try:
        docker_client.images.get("debugrelay/example-app:latest")
    except Exception:
        pytest.skip("debugrelay/example-app is not built")
    container = docker_client.containers.run(
        "debugrelay/example-app:latest",
        detach=True,
        ports={"5678/tcp": ("127.0.0.1", None)},
        environment={"ORDER_INTERVAL": "0.05"},
        labels={"debugrelay.test": "example"},
    )
    try:
        container.reload()
        port = int(container.attrs["NetworkSettings"]["Ports"]["5678/tcp"][0]["HostPort"])
        yield container.id, port
    finally:
        container.remove(force=True)


def test_attach_to_a_containerized_app_with_path_mappings_then_detach(
    docker_client: Any, example_app: tuple[str, int], api: httpx.Client, sessions: Sessions
) -> None:
    container_id, port = example_app
    local_root = str(Path(EXAMPLE_APP).parent)
    created = api.post(
        "/sessions",
        json={
            "mode": "attach",
            "host": "127.0.0.1",
            "port": port,
            "path_mappings": [{"local_root": local_root, "remote_root": "/app"}],
        },
    )
    sid = ok(created, 201)["session_id"]
    sessions.created.append(sid)
    line = next(
        n for n, text in enumerate(Path(EXAMPLE_APP).read_text().splitlines(), 1) if "discount = DISCOUNTS.get" in text
    )
    assert sessions.bp(sid, EXAMPLE_APP, line)["verified"] is True
    status = sessions.wait(sid, timeout=60)
    assert status["status"] == "paused"
    assert status["location"]["file"] == EXAMPLE_APP and status["location"]["function"] == "process_order"
    ok(api.post(f"/sessions/{sid}/detach"))
    assert docker_client.containers.get(container_id).status == "running"


def test_a_new_relay_removes_containers_of_sessions_that_are_gone(docker_client: Any, tmp_path: Path) -> None:
    orphan = docker_client.containers.create(
        "debugrelay/target:latest",
        command=["sleep", "600"],
        labels={
            "debugrelay.managed": "true",
            "debugrelay.session": "sess_gone",
            "debugrelay.store": f"memory:{os.uname().nodename}-999999",
            "debugrelay.instance": f"{os.uname().nodename}-999999",
        },
    )
    relay = Relay(tmp_path)
    try:
        remaining = docker_client.containers.list(all=True, filters={"id": orphan.id})
        assert remaining == []
    finally:
        relay.stop()
        if docker_client.containers.list(all=True, filters={"id": orphan.id}):
            orphan.remove(force=True)
