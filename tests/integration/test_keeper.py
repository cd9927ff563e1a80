"""A keeper beside every launched target: a paused program stays paused while no relay runs, stops
and output meanwhile are kept, only the relay gets in, and the exit code of a target that ended
meanwhile is known. Real relay processes killed with SIGKILL, real Redis, real debugpy."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from debugrelay.dap import DapClient
from tests.conftest import Relay, free_port, line_of, ok, refused_port, target
from tests.redis_server import Cluster, poll

pytestmark = [pytest.mark.integration, pytest.mark.slow]

COUNT = target("keeper_count.py")
COUNT_LINE = line_of(COUNT, "count")
GATE = target("keeper_gate.py")
GATE_LINE = line_of(GATE, "stop here")
SNOOP = target("keeper_snoop.py")


def launched(
    http: httpx.Client, script: str, args: list[str], line: int | None = None, *, pool: bool = False, **bp: Any
) -> str:
    sid: str = ok(http.post("/sessions", json={}), 201)["session_id"]
    if line is not None:
        body = {"source": {"path": script}, "line": line, **bp}
        ok(http.post(f"/sessions/{sid}/breakpoints", json=body))
    ok(http.post(f"/sessions/{sid}/launch", json={"script": script, "args": args, "pool": pool}))
    return sid


def pool_ready(http: httpx.Client) -> bool:
    local = ok(http.get("/pool"))["pools"]["local"]
    return bool(local["ready"] >= 1)


def wait(http: httpx.Client, sid: str) -> dict[str, Any]:
    status: dict[str, Any] = ok(http.post(f"/sessions/{sid}/wait", json={"timeout": 30}))
    return status


def evaluate(http: httpx.Client, sid: str, expression: str) -> str:
    result: str = ok(http.post(f"/sessions/{sid}/evaluate", json={"expression": expression}))["result"]
    return result


def stdout(http: httpx.Client, sid: str) -> str:
    entries: list[dict[str, Any]] = []
    since = None
    while True:
        page = ok(http.get(f"/sessions/{sid}/output", params={"limit": 1000, **({"since": since} if since else {})}))
        entries += page["outputs"]
        since = page["cursor"]
        if not page["has_more"]:
            return "".join(e["text"] for e in entries if e["type"] == "stdout")


def stored(cluster: Cluster, sid: str) -> dict[str, Any]:
    client = cluster.redis()
    try:
        record: dict[str, Any] = json.loads(client.hget(f"{cluster.namespace}:sessions", sid))  # type: ignore[arg-type]
    finally:
        client.close()
    return record


def stored_output(cluster: Cluster, sid: str) -> str:
    client = cluster.redis()
    try:
        entries = client.xrange(f"{cluster.namespace}:output:{sid}")
    finally:
        client.close()
    return "".join(json.dumps({k.decode(): v.decode() for k, v in fields.items()}) for _, fields in entries)


def kill(relay: Any) -> None:
    relay.proc.kill()  # kill -9: nothing of the relay runs its shutdown
    relay.proc.wait(10)


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.mark.parametrize("start", ["cold", "warm"])
def test_a_paused_target_stays_paused_through_a_relay_kill(cluster: Cluster, start: str) -> None:
    first = cluster.relay()
    if start == "warm":
        poll(lambda: pool_ready(first.http), timeout=60, what="a warm target in the pool")
    sid = launched(first.http, COUNT, ["0"], COUNT_LINE, pool=start == "warm", condition="i == 5")
    status = wait(first.http, sid)
    assert status["status"] == "paused" and status["location"]["line"] == COUNT_LINE
    assert evaluate(first.http, sid, "i") == "5"
    detail = ok(first.http.get(f"/sessions/{sid}"))
    assert detail["survives_relay_restart"] is True
    assert detail["target"].get("pooled", False) is (start == "warm")
    pid = detail["target"]["pid"]

    kill(first)
    assert not gone(pid)

    second = cluster.relay()
    again = wait(second.http, sid)
    assert again["status"] == "paused" and again["recovered"] is True
    assert again["location"]["line"] == COUNT_LINE and again["reason"] == "breakpoint"
    assert evaluate(second.http, sid, "i") == "5"
    assert evaluate(second.http, sid, "square") == "16"  # the line has not run yet
    notes = ok(second.http.get(f"/sessions/{sid}"))["notes"]
    assert any("still paused" in note for note in notes)

    ok(second.http.post(f"/sessions/{sid}/continue"))
    ended = wait(second.http, sid)
    assert ended["status"] == "terminated" and ended["exit_code"] == 0
    printed = stdout(second.http, sid)
    assert printed.endswith("".join(f"i {n}\n" for n in range(6, 21)) + "done\n")  # went on from i == 5
    assert printed.count("i 6\n") == 1


def test_a_stop_while_no_relay_runs_is_reported_with_the_output_meanwhile(cluster: Cluster, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    first = cluster.relay()
    sid = launched(first.http, GATE, [str(gate), "0"], GATE_LINE)
    poll(lambda: "waiting" in stored_output(cluster, sid), what="the first line saved")
    status_file = Path(stored(cluster, sid)["target"]["status_file"])

    kill(first)
    gate.touch()

    def stopped_detached() -> bool:
        try:
            return bool(json.loads(status_file.read_text()).get("paused_while_detached"))
        except (OSError, ValueError):
            return False

    poll(stopped_detached, what="the keeper seeing the stop")

    second = cluster.relay()
    status = wait(second.http, sid)
    assert status["status"] == "paused" and status["reason"] == "breakpoint"
    assert status["location"]["file"] == GATE and status["location"]["line"] == GATE_LINE
    notes = ok(second.http.get(f"/sessions/{sid}"))["notes"]
    assert any("stopped while no relay was attached" in note for note in notes), notes
    assert stdout(second.http, sid) == "waiting\n" + "".join(f"line {n}\n" for n in range(1, 6))

    ok(second.http.post(f"/sessions/{sid}/continue"))
    assert wait(second.http, sid)["status"] == "terminated"
    assert stdout(second.http, sid).endswith("line 5\nafter\n")


def test_a_stranger_without_the_secret_is_refused(cluster: Cluster) -> None:
    relay = cluster.relay()
    sid = launched(relay.http, COUNT, ["0"], COUNT_LINE, condition="i == 5")
    assert wait(relay.http, sid)["status"] == "paused"
    detail = ok(relay.http.get(f"/sessions/{sid}"))
    port = detail["target"]["port"]
    secret = stored(cluster, sid)["keeper_secret"]
    assert secret and len(secret) >= 32

    # a raw DAP client that sends a request instead of the proof, and a wrong proof
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.recv(100)
        body = json.dumps({"seq": 1, "type": "request", "command": "continue", "arguments": {"threadId": 1}})
        sock.sendall(f"Content-Length: {len(body)}\r\n\r\n{body}".encode())
        assert sock.recv(100) == b""
    import asyncio

    with pytest.raises(ConnectionError):
        asyncio.run(DapClient.connect("127.0.0.1", port, secret="0" * 64))

    # nothing changed: still paused at i == 5, still driven by the relay
    assert wait(relay.http, sid)["status"] == "paused"
    assert evaluate(relay.http, sid, "i") == "5"
    log = Path(detail["target"]["log"]).read_text()
    assert log.count("refused a connection") == 2
    ok(relay.http.post(f"/sessions/{sid}/continue"))
    assert wait(relay.http, sid)["exit_code"] == 0

    # the secret is never shown
    shown = [
        relay.http.get(f"/sessions/{sid}").text,
        relay.http.get("/sessions").text,
        relay.http.get(f"/sessions/{sid}/export").text,
        relay.http.get("/config").text,
        relay.log.read_text(),
    ]
    assert not any(secret in text for text in shown)


@pytest.mark.parametrize("launcher", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_the_debuggee_cannot_read_its_keepers_secret(relay: Any, launcher: str) -> None:
    if launcher == "docker":
        from tests.integration.test_output import docker_ready

        if not docker_ready():
            pytest.skip("no Docker engine or no target image here")
    sid: str = ok(relay.http.post("/sessions", json={}), 201)["session_id"]
    ok(relay.http.post(f"/sessions/{sid}/launch", json={"script": SNOOP, "launcher": launcher, "pool": False}))
    assert wait(relay.http, sid)["status"] == "terminated"
    printed = stdout(relay.http, sid)
    assert "has the secret" not in printed, printed
    if launcher == "docker":  # a non-root debuggee: the keeper's /proc files are closed to it
        assert printed == "environ refused PermissionError\ncmdline has no secret\n"
    else:  # the relay's own user, even root: the secret came on a pipe, never in an environment
        assert printed.splitlines()[0] in ("environ has no secret", "environ refused PermissionError")
    ok(relay.http.delete(f"/sessions/{sid}"))


def test_a_target_that_ends_while_no_relay_runs_keeps_its_exit_code(cluster: Cluster, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    first = cluster.relay()
    sid = launched(first.http, GATE, [str(gate), "3"])
    poll(lambda: "waiting" in stored_output(cluster, sid), what="the first line saved")
    keeper = ok(first.http.get(f"/sessions/{sid}"))["target"]["pid"]
    debuggee = psutil.Process(keeper).children()[0].pid

    kill(first)
    gate.touch()
    poll(lambda: gone(debuggee), what="the target ending")
    assert not gone(keeper)  # it waits for a relay to take the end of the output

    second = cluster.relay()
    status = wait(second.http, sid)
    assert status["status"] == "terminated" and status["reason"] == "target_exited"
    assert status["exit_code"] == 3
    assert stdout(second.http, sid) == "waiting\n" + "".join(f"line {n}\n" for n in range(1, 6)) + "after\n"
    poll(lambda: gone(keeper), what="the keeper ending once its output was taken")


def test_attach_sessions_are_held_by_a_keeper_where_the_relay_keeps_local_processes(cluster: Cluster) -> None:
    """An attach is held by a keeper beside the relay (the local launcher's), as a launch is, and says so;
    a relay that keeps no local process holds an attach itself, and says that it does not survive."""
    from tests.integration.test_mcp import debugpy_listening, kill_debugpy

    relay = cluster.relay()
    launched_sid = launched(relay.http, COUNT, ["0"], COUNT_LINE, condition="i == 5")
    assert wait(relay.http, launched_sid)["status"] == "paused"
    assert ok(relay.http.get(f"/sessions/{launched_sid}"))["survives_relay_restart"] is True

    port = free_port()
    proc = debugpy_listening(port)
    try:
        sid: str = ok(relay.http.post("/sessions", json={}), 201)["session_id"]
        assert "survives_relay_restart" not in ok(relay.http.get(f"/sessions/{sid}"))  # nothing runs yet
        ok(relay.http.post(f"/sessions/{sid}/attach", json={"port": port}))
        detail = ok(relay.http.get(f"/sessions/{sid}"))
        assert detail["survives_relay_restart"] is True and detail["target"]["port"] == port
        assert stored(cluster, sid)["keeper_secret"]  # what the next relay proves itself to the keeper with
        ok(relay.http.post(f"/sessions/{sid}/detach"))
    finally:
        ok(relay.http.delete(f"/sessions/{sid}"))
        kill_debugpy(proc, port)

    no_local = cluster.relay(DEBUGRELAY_LAUNCHERS="docker")
    port = free_port()
    proc = debugpy_listening(port)
    try:
        sid = ok(no_local.http.post("/sessions", json={}), 201)["session_id"]
        ok(no_local.http.post(f"/sessions/{sid}/attach", json={"port": port}))
        assert ok(no_local.http.get(f"/sessions/{sid}"))["survives_relay_restart"] is False
        assert "keeper_secret" not in stored(cluster, sid)
    finally:
        ok(no_local.http.delete(f"/sessions/{sid}"))
        kill_debugpy(proc, port)


def test_an_attach_to_a_port_nothing_listens_on_fails_clearly_and_leaves_no_keeper(
    api: httpx.Client, relay: Relay
) -> None:
    sid: str = ok(api.post("/sessions", json={}), 201)["session_id"]
    try:
        with refused_port() as port:
            response = api.post(f"/sessions/{sid}/attach", json={"port": port})
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["code"] == "launch_failed" and f"cannot reach debugpy at 127.0.0.1:{port}" in error["message"]
        assert "debugpy --listen" in error["hint"]
        keepers = [
            p
            for p in psutil.process_iter(["cmdline"])
            if f"127.0.0.1:{port}" in " ".join(p.info["cmdline"] or []) and p.status() != psutil.STATUS_ZOMBIE
        ]
        assert keepers == []
    finally:
        api.delete(f"/sessions/{sid}")
