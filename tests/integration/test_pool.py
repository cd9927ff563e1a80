"""The warm pool: a launch gets a pre-started interpreter that behaves exactly like a cold one."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from debugrelay.dap import DapClient
from tests.conftest import Relay, Sessions, ok, target, until

pytestmark = pytest.mark.integration

PROGRAM = """\
import json, os, sys  # first-line
import helper
answer = input()
print(json.dumps({
    "argv": sys.argv, "cwd": os.getcwd(), "path0": sys.path[0], "path1": sys.path[1], "name": __name__,
    "file": __file__, "env": os.environ.get("POOL_TEST"), "helper": helper.VALUE, "answer": answer,
    "extra": os.environ.get("PYTHONPATH", "").split(os.pathsep)[1:], "lib": __import__("libmod").WHERE,
    "main": sys.modules["__main__"].__dict__.get("answer"),
}))
sys.stderr.write("to stderr\\n")
sys.exit(3)
"""


def pool(api: httpx.Client) -> dict[str, Any]:
    pools: dict[str, Any] = ok(api.get("/pool"))["pools"]
    return pools


def full(api: httpx.Client) -> dict[str, Any] | None:
    local: dict[str, Any] = pool(api)["local"]
    return local if local["ready"] == local["size"] and not local["starting"] else None


def output_of(api: httpx.Client, sid: str) -> dict[str, str]:
    outputs = ok(api.get(f"/sessions/{sid}/output", params={"limit": 10000}))["outputs"]
    return {kind: "".join(o["text"] for o in outputs if o["type"] == kind) for kind in ("stdout", "stderr")}


def pooled_processes(relay: Relay) -> list[psutil.Process]:
    """The relay's warm interpreters not handed out yet (children of the relay running the pool program)."""
    return [p for p in psutil.Process(relay.proc.pid).children() if "_debugrelay_pool" in " ".join(p.cmdline())]


def debugpy_port(cmdline: list[str]) -> str:
    """The port debugpy listens on behind a keeper (the last ``--listen`` of the keeper's command line)."""
    return [arg for i, arg in enumerate(cmdline) if i and cmdline[i - 1] == "--listen"][-1].rsplit(":", 1)[1]


@pytest.fixture
def program(tmp_path: Path) -> Path:
    app = tmp_path / "app"
    lib = tmp_path / "lib"
    app.mkdir()
    lib.mkdir()
    (app / "helper.py").write_text("VALUE = 'from cwd'\n")
    (lib / "libmod.py").write_text("WHERE = 'lib'\n")
    script = app / "main.py"
    script.write_text(PROGRAM)
    return script


@pytest.fixture
def warm(api: httpx.Client) -> httpx.Client:
    until(lambda: full(api), "the pool to be full", seconds=180)
    return api


def run_program(api: httpx.Client, sessions: Sessions, script: Path, **launch: Any) -> tuple[dict[str, Any], str]:
    sid = sessions.create()
    bp = sessions.bp(sid, str(script), 1)
    sessions.launch(
        sid,
        str(script),
        args=["one", "two words"],
        env={"POOL_TEST": "yes"},
        cwd=str(script.parent),
        pythonpath=[str(script.parent.parent / "lib")],
        **launch,
    )
    paused = sessions.wait(sid)
    assert paused["status"] == "paused"
    assert paused["location"]["line"] == 1
    assert paused["breakpoint_ids"] == [bp["breakpoint_id"]]
    detail = ok(api.get(f"/sessions/{sid}"))
    ok(api.post(f"/sessions/{sid}/input", json={"input": "forty-two\n"}))
    ok(api.post(f"/sessions/{sid}/continue"))
    done = sessions.wait(sid)
    assert done["status"] == "terminated", done
    assert done["exit_code"] == 3
    out = output_of(api, sid)
    assert out["stderr"] == "to stderr\n"
    return {**json.loads(out["stdout"]), "pooled": detail["target"].get("pooled", False)}, sid


def test_a_warm_target_behaves_like_a_cold_one(warm: httpx.Client, sessions: Sessions, program: Path) -> None:
    before = pool(warm)["local"]
    hot, _ = run_program(warm, sessions, program)
    cold, _ = run_program(warm, sessions, program, pool=False)
    assert hot.pop("pooled") is True
    assert cold.pop("pooled") is False
    assert hot == cold
    assert hot["argv"] == [str(program), "one", "two words"]
    assert (hot["cwd"], hot["path0"], hot["path1"]) == (str(program.parent),) * 3
    assert (hot["name"], hot["file"], hot["main"]) == ("__main__", str(program), "forty-two")
    assert (hot["env"], hot["helper"], hot["lib"]) == ("yes", "from cwd", "lib")
    after = pool(warm)["local"]
    assert after["handed_out"] == before["handed_out"] + 1
    assert after["cold_starts"].get("opted_out", 0) == before["cold_starts"].get("opted_out", 0) + 1


def test_the_first_line_stops_and_the_stack_shows_only_the_program(warm: httpx.Client, sessions: Sessions) -> None:
    basic = target("basic.py")
    sid = sessions.create()
    sessions.launch(sid, basic, stop_on_entry=True)
    status = sessions.wait(sid)
    assert (status["status"], status["reason"]) == ("paused", "entry")
    assert ok(warm.get(f"/sessions/{sid}"))["target"]["pooled"] is True
    frames = ok(warm.get(f"/sessions/{sid}/stacktrace"))["frames"]
    assert [f["file"] for f in frames] == [basic]  # nothing of the pooled program shows


def strangers_knock(port: int) -> None:
    """A DAP client that skips the keeper's proof, and one with a wrong proof: both are shut out."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        assert sock.recv(100).startswith(b"DEBUGRELAY-KEEPER/1 ")
        body = json.dumps({"seq": 1, "type": "request", "command": "initialize", "arguments": {"adapterID": "x"}})
        sock.sendall(f"Content-Length: {len(body)}\r\n\r\n{body}".encode())
        assert sock.recv(100) == b""
    with pytest.raises(ConnectionError):
        asyncio.run(DapClient.connect("127.0.0.1", port, secret="0" * 64))


def test_only_the_relay_gets_into_a_warm_target(relay: Relay, warm: httpx.Client, sessions: Sessions) -> None:
    # one still in the pool: its keeper listens, and lets nobody in but the relay that made it
    keeper = pooled_processes(relay)[0]
    cmdline = keeper.cmdline()
    strangers_knock(int(cmdline[cmdline.index("--listen") + 1].rsplit(":", 1)[1]))

    basic = target("basic.py")
    sid = sessions.create()
    sessions.launch(sid, basic, stop_on_entry=True)
    assert sessions.wait(sid)["status"] == "paused"
    detail = ok(warm.get(f"/sessions/{sid}"))
    assert detail["target"]["pooled"] is True
    assert detail["survives_relay_restart"] is True
    strangers_knock(detail["target"]["port"])

    # nothing changed: still paused at its first line, still driven by the relay
    frames = ok(warm.get(f"/sessions/{sid}/stacktrace"))["frames"]
    assert [f["file"] for f in frames] == [basic]
    assert Path(detail["target"]["log"]).read_text().count("refused a connection") >= 2
    ok(warm.post(f"/sessions/{sid}/continue"))
    assert sessions.wait(sid)["exit_code"] == 0
    assert "secret" not in json.dumps(detail)


async def _second_client(port: int) -> str:
    """A second DAP client on the machine going straight for debugpy's loopback port: what attach answers."""
    from debugrelay.dap import INITIALIZE_ARGS
    from debugrelay.errors import RelayError

    client = await DapClient.connect("127.0.0.1", port, timeout=5.0, request_timeout=10.0, name="stranger")
    try:
        await client.request("initialize", INITIALIZE_ARGS)
        try:
            await client.request("attach", {"justMyCode": False})
        except RelayError as exc:
            return exc.message
        return "attached"
    finally:
        await client.close()


def second_client(port: int) -> str:
    try:
        return asyncio.run(_second_client(port))
    except (OSError, ConnectionError) as exc:
        return f"not reached: {exc}"


def test_no_second_client_takes_debugpy_in_a_waiting_warm_target(
    relay: Relay, warm: httpx.Client, sessions: Sessions, program: Path
) -> None:
    # a warm target waits, perhaps for minutes, for a launch: its debugpy already has its one client
    keeper = pooled_processes(relay)[0]
    answer = second_client(int(debugpy_port(keeper.cmdline())))
    assert "already being debugged" in answer
    # the pool's targets still serve launches as before, the one knocked on included
    for _ in range(len(pooled_processes(relay))):
        info, _sid = run_program(warm, sessions, program)
        assert info["answer"] == "forty-two"


def test_no_second_client_takes_debugpy_in_a_cold_target(warm: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.launch(sid, target("basic.py"), stop_on_entry=True, pool=False)
    assert sessions.wait(sid)["status"] == "paused"
    detail = ok(warm.get(f"/sessions/{sid}"))
    assert "pooled" not in detail["target"]
    assert "already being debugged" in second_client(detail["target"]["debugpy_port"])
    # still the relay's: paused where it was, and it runs to its end when told
    assert ok(warm.get(f"/sessions/{sid}/stacktrace"))["frames"][0]["line"] == 1
    ok(warm.post(f"/sessions/{sid}/continue"))
    assert sessions.wait(sid)["exit_code"] == 0


def test_a_module_runs_as_main_from_a_warm_target(warm: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    folder = str(Path(target("multi.py")).parent)
    ok(warm.post(f"/sessions/{sid}/launch", json={"module": "pkg.helpers", "cwd": folder}))
    assert sessions.wait(sid)["exit_code"] == 0
    assert ok(warm.get(f"/sessions/{sid}"))["target"]["pooled"] is True


def test_the_pool_refills_after_a_hand_out(warm: httpx.Client, sessions: Sessions) -> None:
    before = pool(warm)["local"]
    sid = sessions.create()
    sessions.launch(sid, target("basic.py"))
    assert ok(warm.get(f"/sessions/{sid}"))["target"]["pooled"] is True
    refilled = until(lambda: full(warm), "the pool to refill", seconds=60)
    assert refilled["started"] == before["started"] + 1
    assert refilled["handed_out"] == before["handed_out"] + 1


@pytest.mark.parametrize(
    ("launch", "reason"),
    [
        ({"env": {"PYTHONHASHSEED": "7"}}, "startup_env"),
        ({"env": {"LC_ALL": "C.UTF-8"}}, "startup_env"),
        ({"debug_subprocesses": True}, "debug_subprocesses"),
        ({"pool": False}, "opted_out"),
    ],
)
def test_a_launch_that_needs_a_cold_start_gets_one(
    warm: httpx.Client, sessions: Sessions, launch: dict[str, Any], reason: str
) -> None:
    before = pool(warm)["local"]
    sid = sessions.create()
    sessions.launch(sid, target("basic.py"), **launch)
    assert sessions.wait(sid)["exit_code"] == 0
    assert "pooled" not in ok(warm.get(f"/sessions/{sid}"))["target"]
    after = pool(warm)["local"]
    assert after["cold_starts"][reason] == before["cold_starts"].get(reason, 0) + 1
    assert after["handed_out"] == before["handed_out"]


def test_startup_environment_reaches_a_cold_target(warm: httpx.Client, sessions: Sessions, tmp_path: Path) -> None:
    script = tmp_path / "hashseed.py"
    script.write_text("import sys\nprint('flags', sys.flags.hash_randomization, hash('abc'))\n")
    runs = []
    for _ in range(2):
        sid = sessions.create()
        sessions.launch(sid, str(script), env={"PYTHONHASHSEED": "0"})
        assert sessions.wait(sid)["exit_code"] == 0
        runs.append(output_of(warm, sid)["stdout"])
    assert runs[0] == runs[1]
    assert runs[0].startswith("flags 0 ")


def test_pool_size_zero_disables_the_pool(tmp_path: Path) -> None:
    relay = Relay(tmp_path, env={"DEBUGRELAY_POOL_SIZE": "0"})
    try:
        assert "local" not in ok(relay.http.get("/pool"))["pools"]
        assert pooled_processes(relay) == []
    finally:
        relay.stop()


@pytest.mark.parametrize("how", ["shutdown", "kill -9"])
def test_no_pooled_process_outlives_the_relay(tmp_path: Path, how: str) -> None:
    relay = Relay(tmp_path, env={"DEBUGRELAY_POOL_SIZE": "3"})
    try:
        until(lambda: full(relay.http), "the pool to be full", seconds=180)
        keepers = pooled_processes(relay)
        assert len(keepers) == 3
        # each keeper holds one warm interpreter (and, as their subreaper, the debugpy adapter it started)
        interpreters = [
            c for keeper in keepers for c in keeper.children() if "_debugrelay_pool" in " ".join(c.cmdline())
        ]
        assert len(interpreters) == 3
        warm = [*keepers, *interpreters]
        ports = [debugpy_port(keeper.cmdline()) for keeper in keepers]
        adapters = [
            p
            for p in psutil.process_iter(["cmdline"])
            if any("debugpy/adapter" in c for c in p.info["cmdline"] or [])
            and any(f"--port {port}" in " ".join(p.info["cmdline"]) for port in ports)
        ]
        assert len(adapters) == 3
        if how == "shutdown":
            relay.stop()
        else:  # the relay cannot clean up: each warm interpreter reads EOF on its stdin and ends itself
            relay.proc.send_signal(signal.SIGKILL)
            relay.proc.wait(10)
        _, alive = psutil.wait_procs([*warm, *adapters], timeout=30)
        assert [p for p in alive if p.status() != psutil.STATUS_ZOMBIE] == []
    finally:
        relay.stop()


def test_a_test_run_on_the_projects_own_interpreter_runs_warm_from_its_relaunch(
    api: httpx.Client, sessions: Sessions, tmp_path: Path
) -> None:
    """The first launch on an interpreter other than the relay's starts cold; from then on the pool keeps
    targets of that interpreter warm, so the relaunch (the agent's next try) starts in one."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    libraries = next(venv.glob("lib/python*/site-packages"))
    (libraries / "relay_libs.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")  # its pytest: the relay's
    (tmp_path / "test_price.py").write_text("def test_price():\n    assert 2 + 2 == 5\n")
    sid = sessions.create()
    launch = {"test": "test_price.py::test_price", "cwd": str(tmp_path), "python": python}
    ok(api.post(f"/sessions/{sid}/launch", json=launch))
    first = sessions.wait(sid)
    assert first["status"] == "paused" and first["location"]["function"] == "test_price", first
    assert not ok(api.get(f"/sessions/{sid}"))["target"].get("pooled")

    def warm() -> int:  # its warm targets: with pytest imported, as this is a test run
        return int((pool(api)["local"].get("interpreters") or {}).get(f"{python} (pytest)", 0))

    until(warm, "a warm target of that interpreter")
    handed_out = pool(api)["local"]["handed_out"]
    ok(api.post(f"/sessions/{sid}/launch", json=launch))  # again: the program is ended and runs anew
    again = sessions.wait(sid)
    assert again["status"] == "paused" and again["location"]["function"] == "test_price", again
    assert ok(api.get(f"/sessions/{sid}"))["target"].get("pooled") is True
    assert pool(api)["local"]["handed_out"] == handed_out + 1


def test_a_test_run_takes_a_warm_target_with_pytest_already_imported(
    api: httpx.Client, sessions: Sessions, tmp_path: Path
) -> None:
    """Once a test run used an interpreter, the pool keeps targets of it with pytest and its plugins imported
    (most of a short test run's time): the next test run starts in one and runs as a cold one would."""
    (tmp_path / "test_price.py").write_text("def test_price():\n    assert 2 + 2 == 5\n")
    launch = {"test": "test_price.py::test_price", "cwd": str(tmp_path)}
    preloaded = f"{sys.executable} (pytest)"
    sid = sessions.create()
    ok(api.post(f"/sessions/{sid}/launch", json=launch))
    assert sessions.wait(sid)["status"] == "paused"
    until(lambda: (pool(api)["local"].get("interpreters") or {}).get(preloaded), "a warm target with pytest imported")
    again = sessions.create()
    ok(api.post(f"/sessions/{again}/launch", json=launch))
    stop = sessions.wait(again)
    assert stop["status"] == "paused" and stop["location"]["function"] == "test_price", stop
    assert ok(api.get(f"/sessions/{again}"))["target"].get("pooled") is True
    printed = output_of(api, again)["stdout"]
    assert "test session starts" in printed and "plugins:" in printed, printed  # pytest's own start, as cold
