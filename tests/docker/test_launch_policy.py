"""A launch must not reach the host: every refusal of the operator's policy answers a clear error
naming the setting, and nothing is started. Targets cannot reach each other's debugger."""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from debugrelay.launchers.policy import SCAN_ENTRIES
from tests.conftest import Relay, Sessions, error_of, line_of, ok, target

BASIC = target("basic.py")
REACH = target("reach.py")


class Workspace:
    """A relay offering only containers, its workspace in a temporary folder, and what it started."""

    def __init__(self, tmp: Path, client: Any) -> None:
        self.root = tmp / "workspace"
        self.project = self.root / "project"
        self.project.mkdir(parents=True)
        self.script = str(self.project / "basic.py")
        shutil.copy(BASIC, self.script)
        self.outside = tmp / "outside"
        self.outside.mkdir()
        (self.outside / "secret.py").write_text("print('not yours')\n")
        self.relay = Relay(
            tmp,
            env={
                "DEBUGRELAY_WORKSPACE": str(self.root),
                # the socket's folder is a root here only to show that no root makes the socket mountable
                "DEBUGRELAY_ALLOWED_ROOTS": "/var/run",
                "DEBUGRELAY_LAUNCHERS": "docker",
                "DEBUGRELAY_DOCKER_MEMORY": "256m",
                "DEBUGRELAY_DOCKER_PIDS": "128",
            },
        )
        self.api = self.relay.http
        self.sessions = Sessions(self.api)
        self.client = client
        self.instance = ok(self.api.get("/config"))["instance_id"]

    def started(self) -> list[Any]:
        """Containers and networks this relay created (any state)."""
        label = f"debugrelay.instance={self.instance}"
        return [
            *self.client.containers.list(all=True, filters={"label": label}),
            *self.client.networks.list(filters={"label": label}),
        ]

    def refused(self, launch: dict[str, Any], setting: str, status: int = 403) -> dict[str, Any]:
        sid = self.sessions.create()
        err = error_of(self.api.post(f"/sessions/{sid}/launch", json={"script": self.script, **launch}), status)
        if status == 403:
            assert err["code"] == "refused" and setting in err["details"]["setting"], err
        assert setting in err["message"] + err["hint"] + str(err["details"]), err
        assert ok(self.api.get(f"/sessions/{sid}/status"))["status"] == "created"  # the session is unchanged
        assert self.started() == [], "a refused launch started something"
        return err


@pytest.fixture
def ws(tmp_path: Path, docker_client: Any) -> Iterator[Workspace]:
    space = Workspace(tmp_path, docker_client)
    try:
        yield space
    finally:
        space.sessions.cleanup()
        space.relay.stop()


def test_the_launch_that_reached_the_hosts_etc_is_refused(ws: Workspace) -> None:
    err = ws.refused(
        {"image": "debugrelay/base:bookworm", "mounts": {"/etc": "/hostetc"}, "writable": True},
        "DEBUGRELAY_WRITABLE_ROOTS",
    )
    assert "writable" in err["message"]
    err = ws.refused({"image": "debugrelay/base:bookworm", "mounts": {"/etc": "/hostetc"}}, "DEBUGRELAY_ALLOWED_ROOTS")
    assert err["details"]["path"] == "/etc" and err["details"]["field"] == "mounts"


def test_host_folders_outside_the_roots_are_refused(ws: Workspace) -> None:
    ws.refused({"cwd": "/etc"}, "DEBUGRELAY_ALLOWED_ROOTS")
    ws.refused({"mounts": {str(ws.outside): "/data"}}, "DEBUGRELAY_ALLOWED_ROOTS")
    ws.refused({"pythonpath": [str(ws.outside)]}, "DEBUGRELAY_ALLOWED_ROOTS")
    sid = ws.sessions.create()
    err = error_of(ws.api.post(f"/sessions/{sid}/launch", json={"script": str(ws.outside / "secret.py")}), 403)
    assert err["details"]["field"] == "script"
    assert ws.started() == []


def test_a_symlink_in_the_workspace_does_not_lead_out_of_it(ws: Workspace) -> None:
    (ws.project / "data").symlink_to("/etc")
    (ws.project / "up").symlink_to(ws.outside)
    err = ws.refused({"mounts": {str(ws.project / "data"): "/data"}}, "DEBUGRELAY_ALLOWED_ROOTS")
    assert err["details"]["resolved"] == "/etc"
    ws.refused({"cwd": str(ws.project / "up")}, "DEBUGRELAY_ALLOWED_ROOTS")


def test_dot_dot_tricks_are_resolved_before_the_check(ws: Workspace) -> None:
    err = ws.refused({"cwd": f"{ws.project}/../../outside"}, "DEBUGRELAY_ALLOWED_ROOTS")
    assert err["details"]["resolved"] == str(ws.outside.resolve())
    ws.refused({"mounts": {f"{ws.root}/../../../../../etc": "/etc2"}}, "DEBUGRELAY_ALLOWED_ROOTS")


def test_the_docker_socket_is_never_mountable(ws: Workspace) -> None:
    for socket_path in ("/var/run/docker.sock", "/var/run"):
        err = ws.refused({"mounts": {socket_path: "/var/run/docker.sock"}}, "none")
        assert "socket" in err["message"]


def test_a_folder_holding_a_socket_or_a_fifo_is_never_mounted(ws: Workspace) -> None:
    """A socket or a FIFO reaches the process behind it through any bind mount, read-only too: a
    mounted folder holding one, at any depth, is refused with its path; one the target cannot reach
    (in a folder only root may enter) is no reason to refuse."""
    shared = ws.root / "shared"
    deep = shared / "run" / "deep"
    deep.mkdir(parents=True)
    agent = socket.socket(socket.AF_UNIX)
    folder = os.open(deep, os.O_RDONLY | os.O_DIRECTORY)
    try:  # a socket path is bound to 108 bytes: reach the test's deep folder through a short name
        agent.bind(f"/proc/self/fd/{folder}/agent.sock")
    finally:
        os.close(folder)
    agent.listen()
    try:
        for field, launch in (
            ("mounts", {"mounts": {str(shared): "/data"}}),
            ("pythonpath", {"pythonpath": [str(shared)]}),
            ("cwd", {"cwd": str(shared)}),
        ):
            err = ws.refused(launch, "none")
            assert err["details"]["field"] == field and err["details"]["found"] == str(deep / "agent.sock"), err
            assert "socket" in err["message"] and str(deep / "agent.sock") in err["message"]
            assert "Mount a folder without it" in err["hint"]
    finally:
        agent.close()
    (deep / "agent.sock").unlink()
    os.mkfifo(deep / "commands")
    err = ws.refused({"mounts": {str(shared): "/data"}}, "none")
    assert "FIFO" in err["message"] and err["details"]["found"] == str(deep / "commands")
    err = ws.refused({"mounts": {str(deep / "commands"): "/commands"}}, "none")
    assert "is a FIFO" in err["message"]

    # a tree too big to search is refused rather than half-searched
    crowd = ws.root / "crowd" / "files"
    crowd.mkdir(parents=True)
    for n in range(SCAN_ENTRIES + 1):
        (crowd / str(n)).touch()
    err = ws.refused({"mounts": {str(ws.root / "crowd"): "/data"}}, "none")
    assert err["details"]["limit"] == SCAN_ENTRIES and "too many to check" in err["message"]
    shutil.rmtree(ws.root / "crowd")

    # the same folder, its FIFO now in a folder only root may enter: the target (uid 10001) cannot reach it
    closed = shared / "closed"
    closed.mkdir(mode=0o700)
    os.chown(closed, 0, 0)
    (deep / "commands").rename(closed / "commands")
    sid = ws.sessions.create()
    ws.sessions.launch(sid, ws.script, mounts={str(shared): "/data"})
    assert ws.sessions.wait(sid, timeout=60)["exit_code"] == 0


def test_root_images_off_the_list_writable_and_limits_are_refused(ws: Workspace) -> None:
    ws.refused({"root": True}, "DEBUGRELAY_ALLOW_ROOT_TARGETS")
    ws.refused({"image": "debugrelay/relay:latest"}, "DEBUGRELAY_ALLOWED_IMAGES")
    ws.refused({"writable": True}, "DEBUGRELAY_WRITABLE_ROOTS")
    err = ws.refused({"limits": {"memory": "64g", "cpus": 2, "pids": 1_000_000}}, "DEBUGRELAY_DOCKER_MEMORY")
    assert err["details"]["ceiling"] == "256m"
    ws.refused({"limits": {"cpus": 2}}, "DEBUGRELAY_DOCKER_CPUS")
    ws.refused({"limits": {"pids": 1_000_000}}, "DEBUGRELAY_DOCKER_PIDS")


def test_the_local_launcher_is_refused_when_not_offered(ws: Workspace) -> None:
    err = ws.refused({"launcher": "local"}, "DEBUGRELAY_LAUNCHERS")
    assert err["details"]["available"] == ["docker"]
    # attaching by PID injects code beside the relay: the same local capability
    err = error_of(ws.api.post("/sessions", json={"mode": "attach", "pid": 1}), 403, "refused")
    assert err["details"]["setting"] == "DEBUGRELAY_LAUNCHERS"


def test_sources_outside_the_roots_are_not_served(ws: Workspace) -> None:
    sid = ws.sessions.create()
    error_of(ws.api.get(f"/sessions/{sid}/source", params={"path": "/proc/self/environ"}), 403, "refused")
    assert "print" in ok(ws.api.get(f"/sessions/{sid}/source", params={"path": ws.script}))["content"]


def test_a_launch_inside_the_workspace_still_works_with_lower_limits(ws: Workspace) -> None:
    sid = ws.sessions.create()
    ws.sessions.bp(sid, ws.script, line_of(ws.script, "add-body"))
    ws.sessions.launch(sid, ws.script, limits={"memory": "128m", "pids": 64})
    assert ws.sessions.wait(sid, timeout=60)["status"] == "paused"
    container = ws.client.containers.get(ok(ws.api.get(f"/sessions/{sid}"))["target"]["container_id"])
    assert container.attrs["HostConfig"]["Memory"] == 128 * 1024**2 and container.attrs["HostConfig"]["PidsLimit"] == 64
    ok(ws.api.delete(f"/sessions/{sid}"))
    assert ws.started() == []  # the container and its network are gone with the session


def _connect_errno(host: str, port: int) -> str:
    """An expression the target evaluates: 0 if it could open a TCP connection to host:port, else an errno."""
    return (
        f"(lambda s: (s.settimeout(2), s.connect_ex(({host!r}, {port})), s.close())[1])(__import__('socket').socket())"
    )


def test_one_target_cannot_reach_another_targets_debugger(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    first = sessions.create()
    sessions.bp(first, BASIC, line_of(BASIC, "add-body"))
    sessions.launch(first, BASIC, launcher="docker")
    second = sessions.create()
    sessions.bp(second, BASIC, line_of(BASIC, "add-body"))
    sessions.launch(second, BASIC, launcher="docker")
    assert sessions.wait(first, timeout=60)["status"] == "paused"
    assert sessions.wait(second, timeout=60)["status"] == "paused"
    other = ok(api.get(f"/sessions/{second}"))["target"]
    containers = [
        docker_client.containers.get(ok(api.get(f"/sessions/{s}"))["target"]["container_id"]) for s in (first, second)
    ]
    networks = [set(c.attrs["NetworkSettings"]["Networks"]) for c in containers]
    assert networks[0].isdisjoint(networks[1]) and "debugrelay-targets" not in networks[0] | networks[1]
    # the relay drives both; the first target cannot even open a TCP connection to the second's debugpy
    reach = ok(api.post(f"/sessions/{first}/evaluate", json={"expression": _connect_errno(other["host"], 5678)}))
    assert reach["result"] != "0", reach
    # nor anything outside its network (no egress)
    egress = ok(api.post(f"/sessions/{first}/evaluate", json={"expression": _connect_errno("1.1.1.1", 80)}))
    assert egress["result"] != "0", egress


def test_a_target_gets_nothing_from_the_relays_api_through_its_network(docker_client: Any, tmp_path: Path) -> None:
    """A relay listening on every address is reachable from a target's bridge: the connection is
    closed before a byte of it is read, while the relay goes on driving the target."""
    relay = Relay(
        tmp_path,
        env={"DEBUGRELAY_TOKEN": "a-token-for-this-test", "DEBUGRELAY_LAUNCHERS": "docker"},
        args=["--host", "0.0.0.0"],
    )
    sessions = Sessions(relay.http)
    try:
        sid = sessions.create()
        sessions.bp(sid, REACH, line_of(REACH, "probe-here"))
        sessions.launch(sid, REACH, launcher="docker")
        assert sessions.wait(sid, timeout=60)["status"] == "paused"
        request = b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"
        probe = f"reach(gateway(), {relay.port}, {request!r})"
        answer = ok(relay.http.post(f"/sessions/{sid}/evaluate", json={"expression": probe}))["result"]
        assert "HTTP" not in answer, answer
        assert relay.http.get("/health").status_code == 200  # a client on the machine still gets in
        ok(relay.http.post(f"/sessions/{sid}/continue"))
        assert sessions.wait(sid, timeout=60)["exit_code"] == 0
    finally:
        sessions.cleanup()
        relay.stop()
