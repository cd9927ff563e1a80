"""Every debug target in its own container: the user's paths, limits, output, stdin, lifecycle,
and attaching to a debugpy someone else started in a container."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Relay, Sessions, line_of, ok, output_text, target
from tests.integration.test_host_files import HostFiles

BASIC = target("basic.py")
ASK = target("ask.py")
CRASH = target("crash.py")
JSON_DEFAULT = target("json_default.py")
EXAMPLE_APP = str(Path(__file__).resolve().parents[2] / "docker" / "example_app" / "app.py")


def managed(client: Any, session_id: str) -> list[Any]:
    return client.containers.list(all=True, filters={"label": f"debugrelay.session={session_id}"})


def test_breakpoints_frames_and_sources_speak_the_users_paths(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    sid = sessions.create()
    sessions.bp(sid, BASIC, line_of(BASIC, "add-body"))
    launched = sessions.launch(sid, BASIC, launcher="docker", env={"GREETING": "ahoy"})
    status = sessions.wait(sid, timeout=60)
    assert status["status"] == "paused"
    assert status["location"] == {"file": BASIC, "line": line_of(BASIC, "add-body"), "function": "add"}
    # which Python runs it: the image's, not the relay's (its keeper, on the same interpreter, says)
    (container,) = managed(docker_client, sid)
    theirs = container.exec_run(["python", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
    assert launched["python"] == theirs.output.decode().strip(), launched
    assert "interpreter" not in launched, launched  # the checkout's .venv is the host's: never the container's
    assert ok(api.get(f"/sessions/{sid}"))["python"] == launched["python"]
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


def test_sources_of_a_container_target_are_read_through_the_container(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    sid = sessions.create()
    sessions.bp(sid, JSON_DEFAULT, line_of(JSON_DEFAULT, "encode-body"))
    sessions.launch(sid, JSON_DEFAULT, launcher="docker")
    assert sessions.wait(sid, timeout=60)["status"] == "paused"
    frames = ok(api.get(f"/sessions/{sid}/stacktrace", params={"levels": 20}))["frames"]
    library = next(f for f in frames if f["file"] != JSON_DEFAULT and f["file"].endswith("/json/encoder.py"))
    # the target image's Python library: the container's file, whatever the relay's disk holds there
    src = ok(
        api.get(
            f"/sessions/{sid}/source",
            params={"path": library["file"], "start": library["line"], "end": library["line"]},
        )
    )
    (container,) = managed(docker_client, sid)
    theirs = container.exec_run(["cat", library["file"]]).output.decode().splitlines()
    assert src["total_lines"] == len(theirs)
    assert src["content"] == theirs[library["line"] - 1] + "\n"
    # the program's own file, as the container sees it (its folder is mounted there)
    mine = ok(api.get(f"/sessions/{sid}/source", params={"path": JSON_DEFAULT}))
    assert "encode-body" in mine["content"]
    # a file that is the container's but not the session's is refused, as on the relay's disk
    for path in ("/etc/passwd", "/proc/self/environ", "/usr/lib/python3.13/../../../etc/shadow"):
        refused = api.get(f"/sessions/{sid}/source", params={"path": path})
        assert refused.status_code in (403, 404), refused.text
        assert "root:" not in refused.text
    ok(api.post(f"/sessions/{sid}/continue"))
    assert sessions.wait(sid, timeout=60)["exit_code"] == 0
    assert "12.5" in output_text(api, sid)


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
    assert missing in resp.json()["error"]["message"] and "make images" in resp.json()["error"]["hint"]
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
        container.remove(force=True, v=True)


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
            orphan.remove(force=True, v=True)


PRIVATE_SCRIPT = "import os\nprint('ran as uid', os.getuid())\n"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def private(tmp_path: Path) -> Iterator[Path]:
    """A fresh folder inside the relay's allowed roots (the repository), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix=".private-", dir=REPO))
    try:
        yield folder / "inner"
    finally:
        shutil.rmtree(folder)


def test_a_script_in_a_private_folder_runs_as_the_folders_owner_not_root(
    docker_client: Any, api: httpx.Client, sessions: Sessions, private: Path
) -> None:
    """A folder of mode 0700 (what `mktemp -d` makes) owned by a user: the target reads it as that user."""
    private.mkdir()
    (private / "job.py").write_text(PRIVATE_SCRIPT)
    (private / "job.py").chmod(0o600)
    os.chown(private / "job.py", 1000, 1000)
    os.chown(private, 1000, 1000)
    private.chmod(0o700)
    sid = sessions.create()
    sessions.launch(sid, str(private / "job.py"), launcher="docker")
    done = sessions.wait(sid, timeout=60)
    assert done["status"] == "terminated" and done["exit_code"] == 0, (done, output_text(api, sid))
    assert "ran as uid 1000" in output_text(api, sid)


def test_a_script_in_a_private_folder_of_root_fails_at_launch_with_the_fix(
    docker_client: Any, api: httpx.Client, sessions: Sessions, private: Path
) -> None:
    """Targets never run as root: a 0700 folder only root can read is refused before anything starts."""
    private.mkdir()
    (private / "job.py").write_text(PRIVATE_SCRIPT)
    os.chown(private, 0, 0)
    private.chmod(0o700)
    sid = sessions.create()
    response = api.post(f"/sessions/{sid}/launch", json={"script": str(private / "job.py"), "launcher": "docker"})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert "cannot read the folder" in error["message"]
    assert "0700" in error["message"]
    assert "chmod o+rx" in error["hint"]
    assert managed(docker_client, sid) == []
    assert ok(api.get(f"/sessions/{sid}/status"))["status"] == "created"


def test_a_statement_over_several_lines_stops_once_per_execution_in_a_container(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    multi = target("multiline.py")
    sid = sessions.create()
    sessions.bp(sid, multi, line_of(multi, "multi-line-call"))
    sessions.launch(sid, multi, launcher="docker")
    seen = []
    status = sessions.wait(sid, timeout=60)
    while status["status"] == "paused":
        seen.append(ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "i"}))["result"])
        ok(api.post(f"/sessions/{sid}/continue"))
        status = sessions.wait(sid, timeout=60)
    assert seen == ["0", "1", "2"]
    assert status["exit_code"] == 0


def test_a_container_program_cannot_make_the_relay_show_host_files(docker_client: Any, tmp_path: Path) -> None:
    # the frames name a file of the relay's host the container does not have, and the relay's environment
    host = HostFiles(tmp_path)
    try:
        host.shows_no_host_file(launcher="docker", stop_on_exception="uncaught")
    finally:
        host.stop()


def test_a_target_whose_network_goes_silent_ends_the_run_and_says_so(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    """A container's network can go with it before its last bytes or its connection's end reach the relay
    (the container stops, a node is lost): the relay probes a silent connection and ends the run, it never
    shows it running forever."""
    sid = sessions.create()
    sessions.launch(sid, target("loop.py"), launcher="docker")
    container = docker_client.containers.get(ok(api.get(f"/sessions/{sid}"))["target"]["container_id"])
    for network in list(container.attrs["NetworkSettings"]["Networks"]):
        docker_client.networks.get(network).disconnect(container, force=True)
    status = sessions.wait(sid, 120)  # the probes' bound: 10 s idle, then 3 probes 5 s apart
    assert status["status"] == "terminated" and "debug connection was lost" in status["description"], status
