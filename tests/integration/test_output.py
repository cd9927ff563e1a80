"""Every byte a program prints reaches the agent (seed 004 AC-OH-1/2): the output a session serves is
the program's real stdout and stderr, complete and in order, its last line included, on every launcher
(a cold local process, a warm one from the pool, a container). Real relays, real debugpy targets."""

from __future__ import annotations

import re
import shutil
from importlib import metadata
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from tests.conftest import Relay, Sessions, line_of, ok, target, until
from tests.integration.test_keeper import stored_output
from tests.integration.test_mcp import http_agent
from tests.integration.test_stops_leave_no_trace import PYTHONS, python_of
from tests.redis_server import Cluster, poll

pytestmark = pytest.mark.integration

LINES = target("out_lines.py")
CHARS = target("out_chars.py")
MIXED = target("out_mixed.py")
ORDER = target("out_order.py")
EXIT = target("out_exit.py")
PAUSED = target("out_paused.py")
PAUSED_STOP = line_of(PAUSED, "stop here")
OUTRUN = target("outrun")
GATED = target("out_gated.py")


def docker_ready() -> bool:
    try:
        import docker

        client = docker.from_env()
        try:
            client.images.get("debugrelay/target:latest")
        finally:
            client.close()
    except Exception:
        return False
    return True


@pytest.fixture(params=["local", "warm", pytest.param("docker", marks=[pytest.mark.docker, pytest.mark.slow])])
def launcher(request: pytest.FixtureRequest, api: httpx.Client) -> dict[str, Any]:
    """What a launch adds to run on each launcher: a cold local process, a warm one, a container."""
    if request.param == "docker":
        if not docker_ready():
            pytest.skip("no Docker engine or no target image here")
        return {"launcher": "docker"}
    if request.param == "warm":
        until(lambda: plain_script_targets(api) >= 1, "a warm target in the pool", 60)
        return {"launcher": "local", "pool": True}
    return {"launcher": "local", "pool": False}


def entries(api: httpx.Client, sid: str) -> list[dict[str, Any]]:
    """Every output entry of the session, all pages."""
    found: list[dict[str, Any]] = []
    since = None
    while True:
        page = ok(api.get(f"/sessions/{sid}/output", params={"limit": 1000, **({"since": since} if since else {})}))
        assert not page.get("dropped"), page
        found += page["outputs"]
        since = page["cursor"]
        if not page["has_more"]:
            return found


def text_of(api: httpx.Client, sid: str, stream: str = "stdout") -> str:
    return "".join(e["text"] for e in entries(api, sid) if e["type"] == stream)


WARM_RUNS: dict[str, bool] = {}  # session -> whether its run took a warm target


def plain_script_targets(api: httpx.Client) -> int:
    """Warm targets of the relay's own Python a script can take (not those that imported pytest already)."""
    pool = ok(api.get("/pool"))["pools"]["local"]
    ready: int = pool["interpreters"].get(pool["python"], 0)
    return ready


def run_to_end(api: httpx.Client, sessions: Sessions, script: str, opts: dict[str, Any], **launch: Any) -> str:
    sid = sessions.create()
    if opts.get("pool"):  # each run takes a warm target: the pool refills in the background meanwhile
        until(lambda: ok(api.get("/pool"))["pools"]["local"]["ready"] >= 1, "a warm target in the pool", 60)
    sessions.launch(sid, script, **opts, **launch)
    WARM_RUNS[sid] = ok(api.get(f"/sessions/{sid}"))["target"].get("pooled") is True
    ended = sessions.wait(sid, timeout=120)
    assert ended["status"] == "terminated", ended
    return sid


def test_3000_lines_and_the_last_one_ten_runs_in_a_row(
    api: httpx.Client, sessions: Sessions, launcher: dict[str, Any]
) -> None:
    expected = [f"line {n}" for n in range(3000)] + ["DONE-END"]
    warm = 0
    for _ in range(10):
        sid = run_to_end(api, sessions, LINES, launcher)
        warm += WARM_RUNS.pop(sid)
        assert text_of(api, sid).splitlines() == expected
        read_again = text_of(api, sid).splitlines()  # the answer does not change once the run has ended
        assert read_again == expected
        ok(api.delete(f"/sessions/{sid}"))
        sessions.created.remove(sid)
    if launcher.get("pool"):  # warm targets served the runs (one may start cold while a busy pool refills)
        assert warm >= 5, warm


def test_a_flood_of_single_flushed_characters(api: httpx.Client, sessions: Sessions, launcher: dict[str, Any]) -> None:
    sid = run_to_end(api, sessions, CHARS, launcher)
    assert text_of(api, sid) == "abcdefghij" * 1200 + "\nLAST-LINE\n"


def test_stdout_and_stderr_interleaved_each_whole_and_in_order(
    api: httpx.Client, sessions: Sessions, launcher: dict[str, Any]
) -> None:
    sid = run_to_end(api, sessions, MIXED, launcher)
    assert text_of(api, sid, "stdout").splitlines() == [f"out {n}" for n in range(500)] + ["OUT-END"]
    assert text_of(api, sid, "stderr").splitlines() == [f"err {n}" for n in range(500)] + ["ERR-END"]
    stamps = [e["timestamp"] for e in entries(api, sid)]
    assert stamps == sorted(stamps)  # each entry keeps when it was written, in the order served


def in_written_order(api: httpx.Client, sid: str) -> list[tuple[str, str]]:
    """The session's output as (stream, line), the 3,000 characters left out."""
    return [(e["type"], e["text"].strip()) for e in entries(api, sid) if e["text"].strip("x\n")]


WRITTEN = [("stderr", "WARNING: written before the rest"), ("stdout", "OUT-LAST")]


def test_output_keeps_the_order_it_was_written_in_across_stdout_and_stderr(
    api: httpx.Client, sessions: Sessions, launcher: dict[str, Any]
) -> None:
    for _ in range(3):
        sid = run_to_end(api, sessions, ORDER, launcher)
        assert in_written_order(api, sid) == WRITTEN
        assert text_of(api, sid).startswith("x" * 3000 + "\nOUT-LAST")


@pytest.mark.parametrize("python", PYTHONS)
def test_output_order_across_streams_on_each_python(api: httpx.Client, sessions: Sessions, python: str) -> None:
    sid = run_to_end(api, sessions, ORDER, {"launcher": "local", "pool": False}, **python_of(python))
    assert in_written_order(api, sid) == WRITTEN
    # what a child process writes on the file descriptors it shares keeps its place too
    sid = run_to_end(api, sessions, ORDER, {"launcher": "local", "pool": False}, args=["child"], **python_of(python))
    assert in_written_order(api, sid) == [("stderr", "CHILD-ERR"), *WRITTEN]


def test_os_exit_right_after_writing_loses_nothing(
    api: httpx.Client, sessions: Sessions, launcher: dict[str, Any]
) -> None:
    sid = run_to_end(api, sessions, EXIT, launcher)
    assert ok(api.get(f"/sessions/{sid}/status"))["exit_code"] == 7
    assert text_of(api, sid).splitlines() == [f"row {n}" for n in range(2000)] + ["LAST-ROW"]


def assert_pytest_ran_to_its_summary(api: httpx.Client, sid: str) -> None:
    lines = text_of(api, sid).rstrip("\n").splitlines()
    assert len([line for line in lines if " PASSED " in line]) == 600, text_of(api, sid, "stderr")[-2000:]
    assert re.fullmatch(r"=+ 600 passed.* in [\d.]+s.* =+", lines[-1]), lines[-3:]


@pytest.mark.parametrize("pool", [False, True], ids=["local", "warm"])
def test_pytests_closing_line_of_a_real_run(api: httpx.Client, sessions: Sessions, pool: bool) -> None:
    if pool:
        until(lambda: ok(api.get("/pool"))["pools"]["local"]["ready"] >= 1, "a warm target in the pool", 60)
    opts = {"launcher": "local", "pool": pool}
    sid = run_to_end(api, sessions, "", opts, module="pytest", args=["-v", "check_many.py"], cwd=OUTRUN)
    assert_pytest_ran_to_its_summary(api, sid)


@pytest.mark.docker
@pytest.mark.slow
def test_pytests_closing_line_of_a_real_run_in_a_container(tmp_path: Path) -> None:
    if not docker_ready():
        pytest.skip("no Docker engine or no target image here")
    # the target image has no pytest: the host's (pure Python) goes in through a folder on the path
    site = tmp_path / "site"
    for name in ("pytest", "pluggy", "iniconfig", "packaging", "pygments"):
        for file in metadata.distribution(name).files or []:
            source = Path(str(file.locate()))
            if source.is_file() and "__pycache__" not in file.parts and ".." not in file.parts:
                (site / file).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(source, site / file)
    for path in (tmp_path, *site.rglob("*")):
        path.chmod(0o755 if path.is_dir() else 0o644)
    relay = Relay(tmp_path, env={"DEBUGRELAY_ALLOWED_ROOTS": str(tmp_path)})
    try:
        made = Sessions(relay.http)
        opts = {"launcher": "docker", "pythonpath": [str(site)]}
        sid = run_to_end(relay.http, made, "", opts, module="pytest", args=["-v", "check_many.py"], cwd=OUTRUN)
        assert_pytest_ran_to_its_summary(relay.http, sid)
        ok(relay.http.delete(f"/sessions/{sid}"))
    finally:
        relay.stop()


def test_output_written_while_paused_and_after_continue(
    api: httpx.Client, sessions: Sessions, launcher: dict[str, Any]
) -> None:
    sid = sessions.create()
    sessions.bp(sid, PAUSED, PAUSED_STOP)
    sessions.launch(sid, PAUSED, **launcher)
    stop = sessions.wait(sid, timeout=120)
    assert stop["status"] == "paused" and stop["location"]["line"] == PAUSED_STOP
    # the worker thread goes on printing while the main thread is paused: it shows while still paused
    until(lambda: "while paused 4" in text_of(api, sid), "the lines printed while paused")
    assert ok(api.get(f"/sessions/{sid}/status"))["status"] == "paused"
    ok(api.post(f"/sessions/{sid}/continue"))
    assert sessions.wait(sid, timeout=120)["status"] == "terminated"
    assert text_of(api, sid).splitlines() == [
        "before the stop",
        *(f"while paused {n}" for n in range(5)),
        "after continue",
        "MAIN-END",
    ]


async def test_mcp_and_the_cli_read_the_same_complete_stream(relay: Relay, tmp_path: Path) -> None:
    from tests.integration.test_cli import Cli

    async with http_agent(relay) as agent:
        end = await agent.call("debug_launch", script=LINES, args=["3000"])
        assert end["status"] == "terminated", end
        assert end["output"].rstrip("\n").endswith("line 2999\nDONE-END"), end["output"][-200:]
        sid = end["session_id"]
    cli = Cli(relay)
    printed = cli("output", sid, "--limit", "5000")
    assert "".join(o["text"] for o in printed["outputs"]).splitlines()[-2:] == ["line 2999", "DONE-END"]
    relay.http.delete(f"/sessions/{sid}")


# -- a relay killed with SIGKILL mid-run: the keeper keeps what the program writes meanwhile ------------


@pytest.fixture(params=["local", pytest.param("docker", marks=[pytest.mark.docker])])
def gated(request: pytest.FixtureRequest, tmp_path: Path, cluster: Cluster) -> tuple[Path, dict[str, Any]]:
    """A gate file the target can see, and the launch that runs out_gated.py on each launcher."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # a container target runs as another user
    gate = shared / "gate"
    launch: dict[str, Any] = {"script": GATED, "args": [str(gate)], "launcher": request.param, "pool": False}
    if request.param == "docker":
        if not docker_ready():
            pytest.skip("no Docker engine or no target image here")
        cluster.env["DEBUGRELAY_ALLOWED_ROOTS"] = str(shared)
        launch["mounts"] = {str(shared): str(shared)}
    return gate, launch


def ticks_then_end(text: str) -> int:
    """The number of ticks, checked to be 0, 1, 2, ... with none missing or doubled, and the last line."""
    lines = text.splitlines()
    assert lines[-1] == "DONE-END", lines[-3:]
    assert lines[:-1] == [f"tick {n}" for n in range(len(lines) - 1)]
    return len(lines) - 1


def test_output_goes_on_through_a_relay_killed_mid_run(cluster: Cluster, gated: tuple[Path, dict[str, Any]]) -> None:
    gate, launch = gated
    first = cluster.relay()
    sid: str = ok(first.http.post("/sessions", json={}), 201)["session_id"]
    ok(first.http.post(f"/sessions/{sid}/launch", json=launch))
    poll(lambda: "tick 20" in stored_output(cluster, sid), what="output saved by the first relay")
    first.proc.kill()
    first.proc.wait(10)

    second = cluster.relay()
    poll(lambda: ok(second.http.get(f"/sessions/{sid}"))["recovered"], what="the session taken over")
    gate.touch()
    ended = ok(second.http.post(f"/sessions/{sid}/wait", json={"timeout": 60}))
    assert ended["status"] == "terminated" and ended["exit_code"] == 0
    assert ticks_then_end(text_of(second.http, sid)) > 20
    ok(second.http.delete(f"/sessions/{sid}"))


def test_the_output_of_a_run_that_ended_while_no_relay_ran(
    cluster: Cluster, gated: tuple[Path, dict[str, Any]]
) -> None:
    gate, launch = gated
    first = cluster.relay()
    sid: str = ok(first.http.post("/sessions", json={}), 201)["session_id"]
    ok(first.http.post(f"/sessions/{sid}/launch", json=launch))
    poll(lambda: "tick 20" in stored_output(cluster, sid), what="output saved by the first relay")
    target = ok(first.http.get(f"/sessions/{sid}"))["target"]
    first.proc.kill()
    first.proc.wait(10)
    gate.touch()
    poll(lambda: debuggee_ended(target), what="the program's end")

    second = cluster.relay()  # its keeper kept the end of the output for the next relay
    ended = ok(second.http.post(f"/sessions/{sid}/wait", json={"timeout": 60}))
    assert ended["status"] == "terminated" and ended["exit_code"] == 0
    assert ticks_then_end(text_of(second.http, sid)) > 20
    ok(second.http.delete(f"/sessions/{sid}"))


def debuggee_ended(target: dict[str, Any]) -> bool:
    """Only the keeper is left of the target (the program it started has exited)."""
    if target.get("container_id"):
        import docker

        client = docker.from_env()
        try:
            rows = client.containers.get(target["container_id"]).top()["Processes"] or []
        finally:
            client.close()
        return all(any(mark in " ".join(row) for mark in ("_debugrelay_keeper", "debugpy/adapter")) for row in rows)
    return not psutil.Process(target["pid"]).children()


def test_the_answer_that_says_the_program_ended_carries_its_new_output_once(
    relay: Relay, api: httpx.Client, sessions: Sessions
) -> None:
    """HTTP and the CLI as MCP: the end's answer has what the program printed since the last answer, and
    the next step; a second answer repeats none of it."""
    from tests.integration.test_cli import Cli

    script = target("basic.py")
    sid = sessions.create()
    bp = sessions.bp(sid, script, line_of(script, "loop-body"))
    sessions.launch(sid, script, args=["x"])
    assert sessions.wait(sid)["status"] == "paused"
    ok(api.delete(f"/sessions/{sid}/breakpoints/{bp['breakpoint_id']}"))
    end = ok(api.post(f"/sessions/{sid}/continue", json={"wait": 30}))
    assert end["status"] == "terminated", end
    assert "mean 4.0 args ['x']\n" in end["output"] and "[stderr] warn stderr\n" in end["output"], end
    assert "output" in end["hint"] and "launch" in end["hint"]
    assert "output" not in ok(api.post(f"/sessions/{sid}/wait", json={"timeout": 1}))  # said once

    cli = Cli(relay)
    launched = cli("launch", script, "y")
    done = launched if launched["status"] == "terminated" else cli("wait", launched["session_id"])
    assert "mean 4.0 args ['y']\n" in done["output"] and "hint" not in done, done  # all it printed is here
