"""Programs that start processes (seed 004 §4.5, §8.2): never a hang, whatever their breakpoints; with child
debugging on, every Python child is debugged in the same session (its stops shown one at a time, read and
continued like the program's own); with it off, the children that run undebugged are named. Real programs,
real debugpy, local targets (the container ones are in tests/docker)."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from tests.conftest import Relay, Sessions, free_port, line_of, ok, output_text, target, until
from tests.redis_server import Cluster, poll

pytestmark = pytest.mark.integration

POOL = target("proc_pool.py")
EXECUTOR = target("proc_executor.py")
FORK = target("proc_fork.py")
RUN = target("proc_run.py")
CHILD = target("proc_child.py")
RAISE = target("proc_raise.py")
GATE = target("proc_gate.py")
SHELL = target("proc_shell.py")
XDIST = target("xdist_suite")
WSGI = target("wsgi_app.py")
GUARDED = target("proc_guarded.py")
FORGED = str(Path(__file__).parent / "forged_pydevd.py")


def run_with_a_breakpoint_in_the_child(
    api: httpx.Client, sessions: Sessions, script: str, where: str, marker: str, **launch: Any
) -> dict[str, Any]:
    sid = sessions.create()
    sessions.bp(sid, where, line_of(where, marker))
    sessions.launch(sid, script, pool=False, **launch)
    ended: dict[str, Any] = sessions.wait(sid, timeout=120)
    ended["output"] = output_text(api, sid, "stdout")
    return ended


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_a_pool_with_a_breakpoint_in_its_worker_runs_to_its_end(
    api: httpx.Client, sessions: Sessions, method: str
) -> None:
    ended = run_with_a_breakpoint_in_the_child(api, sessions, POOL, POOL, "worker-line", args=[method])
    assert ended["status"] == "terminated" and ended["exit_code"] == 0, ended
    assert ended["output"] == "squares [0, 1, 4, 9]\nPOOL-END\n"


def test_a_process_pool_executor_with_a_breakpoint_in_its_worker_runs_to_its_end(
    api: httpx.Client, sessions: Sessions
) -> None:
    ended = run_with_a_breakpoint_in_the_child(api, sessions, EXECUTOR, EXECUTOR, "worker-line")
    assert ended["status"] == "terminated" and ended["exit_code"] == 0, ended
    assert ended["output"] == "cubes [0, 1, 8, 27]\nEXECUTOR-END\n"


def test_a_forked_child_with_a_breakpoint_runs_to_its_end(api: httpx.Client, sessions: Sessions) -> None:
    ended = run_with_a_breakpoint_in_the_child(api, sessions, FORK, FORK, "child-line")
    assert ended["status"] == "terminated" and ended["exit_code"] == 0, ended
    assert ended["output"] == "child 42\nparent saw 0\n"


def test_a_python_child_started_by_subprocess_runs_to_its_end(api: httpx.Client, sessions: Sessions) -> None:
    ended = run_with_a_breakpoint_in_the_child(api, sessions, RUN, CHILD, "child-line")
    assert ended["status"] == "terminated" and ended["exit_code"] == 0, ended
    assert ok(api.get("/health"))["status"] == "ok"
    assert ended["output"] == "child squared 49\nRUN-END 0\n"


# -- child debugging on: one session, every Python process ------------------------------------------


def stops_until_the_end(api: httpx.Client, sessions: Sessions, sid: str, expression: str) -> list[dict[str, Any]]:
    """Every stop of the run, each read (``expression`` in its top frame) and continued, until the end."""
    seen: list[dict[str, Any]] = []
    while True:
        status = sessions.wait(sid, timeout=120)
        if status["status"] != "paused":
            assert status["status"] == "terminated", status
            seen.append(status)
            return seen
        status["value"] = ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": expression}))["result"]
        seen.append(status)
        ok(api.post(f"/sessions/{sid}/continue"))


@pytest.mark.parametrize(
    ("script", "args", "printed"),
    [
        (POOL, ["fork"], "squares [0, 1, 4, 9]\nPOOL-END\n"),
        (POOL, ["spawn"], "squares [0, 1, 4, 9]\nPOOL-END\n"),
        (EXECUTOR, [], "cubes [0, 1, 8, 27]\nEXECUTOR-END\n"),
        (RUN, [], "child squared 49\nRUN-END 0\n"),
    ],
)
def test_with_child_debugging_on_and_nothing_to_stop_at_a_program_runs_to_its_end(
    api: httpx.Client, sessions: Sessions, script: str, args: list[str], printed: str
) -> None:
    sid = sessions.create()
    ok(api.post(f"/sessions/{sid}/exception-breakpoints", json={"filters": []}))  # no breakpoint of any kind
    sessions.launch(sid, script, args=args, debug_subprocesses=True)
    ended = sessions.wait(sid, timeout=120)
    assert ended["status"] == "terminated" and ended["exit_code"] == 0, ended
    assert output_text(api, sid, "stdout").endswith(printed)
    children = [p for p in ok(api.get(f"/sessions/{sid}/processes"))["processes"] if not p.get("root")]
    assert children and all(p.get("debugged", True) for p in children), children  # debugged, not skipped


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_a_breakpoint_in_a_pool_worker_stops_in_each_worker_process(
    api: httpx.Client, sessions: Sessions, method: str
) -> None:
    sid = sessions.create()
    sessions.bp(sid, POOL, line_of(POOL, "worker-line"))
    sessions.launch(sid, POOL, args=[method], debug_subprocesses=True)
    *stops, end = stops_until_the_end(api, sessions, sid, "(n, n * n, __import__('os').getpid())")
    assert end["exit_code"] == 0
    root = ok(api.get(f"/sessions/{sid}/processes"))["processes"][0]
    assert root["root"] is True
    inputs = sorted(eval(s["value"])[0] for s in stops)  # the program's own values, read in each worker
    assert inputs == [0, 1, 2, 3]
    for stop in stops:
        n, result, pid = eval(stop["value"])
        assert result == n * n and stop["process"] == pid != root["pid"]
        assert stop["location"]["line"] == line_of(POOL, "worker-line") and stop["location"]["function"] == "square"
    workers = {s["process"] for s in stops}
    listed = ok(api.get(f"/sessions/{sid}/processes"))["processes"]
    assert workers <= {p["pid"] for p in listed if p.get("debugged", True) and not p.get("root")}
    assert output_text(api, sid, "stdout").endswith("squares [0, 1, 4, 9]\nPOOL-END\n")


def test_a_process_pool_executor_worker_stops_and_reads(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.bp(sid, EXECUTOR, line_of(EXECUTOR, "worker-line"))
    sessions.launch(sid, EXECUTOR, debug_subprocesses=True)
    *stops, end = stops_until_the_end(api, sessions, sid, "n * n * n")
    assert end["exit_code"] == 0 and len(stops) == 4
    assert sorted(int(s["value"]) for s in stops) == [0, 1, 8, 27]
    assert output_text(api, sid, "stdout").endswith("cubes [0, 1, 8, 27]\nEXECUTOR-END\n")


def test_a_python_child_of_subprocess_run_stops_at_its_breakpoint(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.bp(sid, CHILD, line_of(CHILD, "child-line"))
    sessions.launch(sid, RUN, debug_subprocesses=True)
    stop = sessions.wait(sid, timeout=120)
    assert stop["status"] == "paused" and stop["location"]["file"] == CHILD, stop
    assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "n"}))["result"] == "7"
    frames = ok(api.get(f"/sessions/{sid}/stacktrace"))["frames"]
    assert frames[0]["file"] == CHILD
    ok(api.post(f"/sessions/{sid}/continue"))
    end = sessions.wait(sid, timeout=120)
    assert end["status"] == "terminated" and end["exit_code"] == 0, end
    assert output_text(api, sid, "stdout") == "child squared 49\nRUN-END 0\n"


def test_an_os_fork_child_stops_and_the_parent_waits_for_it(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.bp(sid, FORK, line_of(FORK, "child-line"))
    sessions.launch(sid, FORK, debug_subprocesses=True)
    stop = sessions.wait(sid, timeout=120)
    assert stop["status"] == "paused" and stop["location"]["line"] == line_of(FORK, "child-line"), stop
    ok(api.post(f"/sessions/{sid}/step-over"))
    assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "value"}))["result"] == "42"
    ok(api.post(f"/sessions/{sid}/continue"))
    assert sessions.wait(sid, timeout=120)["exit_code"] == 0
    assert output_text(api, sid, "stdout") == "child 42\nparent saw 0\n"


def test_a_worker_that_raises_pauses_in_the_worker_then_the_parent_sees_the_error(
    api: httpx.Client, sessions: Sessions
) -> None:
    sid = sessions.create()
    body = {"filters": ["raised"], "exception_types": ["ZeroDivisionError"]}
    ok(api.post(f"/sessions/{sid}/exception-breakpoints", json=body))
    sessions.launch(sid, RAISE, debug_subprocesses=True)
    stop = sessions.wait(sid, timeout=120)
    assert stop["status"] == "paused" and stop["reason"] == "exception", stop
    assert stop["exception"]["type"] == "ZeroDivisionError"
    assert stop["location"]["line"] == line_of(RAISE, "raise-line") and stop["process"] is not None
    assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "n"}))["result"] == "0"
    ok(api.post(f"/sessions/{sid}/continue", json={"all": True}))
    ok(api.post(f"/sessions/{sid}/exception-breakpoints", json={"filters": []}))
    while (status := sessions.wait(sid, timeout=120))["status"] == "paused":  # re-raised in the pool's threads
        ok(api.post(f"/sessions/{sid}/continue", json={"all": True}))
    assert status["status"] == "terminated" and status["exit_code"] == 0, status
    assert output_text(api, sid, "stdout") == "parent caught ZeroDivisionError\nRAISE-END\n"


def test_pause_and_processes_of_a_program_with_a_paused_child(
    api: httpx.Client, sessions: Sessions, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    sid = sessions.create()
    sessions.bp(sid, GATE, line_of(GATE, "child-stop"))
    sessions.launch(sid, GATE, args=[str(gate)], debug_subprocesses=True)
    stop = sessions.wait(sid, timeout=120)
    assert stop["status"] == "paused" and stop["process"], stop
    listed = ok(api.get(f"/sessions/{sid}/processes"))["processes"]
    root, child = listed[0], next(p for p in listed if p["pid"] == stop["process"])
    assert root["root"] and root.get("state", "running") == "running"  # the parent waits in waitpid
    assert child["state"] == "paused" and child["ppid"] == root["pid"] and child.get("debugged", True)
    page = api.get(f"/ui/sessions/{sid}").text  # the live view lists them too
    assert f"<td>{child['pid']}</td><td>paused (shown)</td>" in page and f"<td>{root['pid']}</td>" in page
    gate.touch()
    ok(api.post(f"/sessions/{sid}/continue"))
    end = sessions.wait(sid, timeout=120)
    assert end["status"] == "terminated" and end["exit_code"] == 0
    after = ok(api.get(f"/sessions/{sid}/processes"))["processes"]
    assert {p["state"] for p in after} == {"exited"}
    assert output_text(api, sid, "stdout") == "child done in the child\nGATE-END\n"


def test_the_stop_of_another_paused_worker_is_shown_on_request_and_the_first_waits_its_turn(
    api: httpx.Client, sessions: Sessions
) -> None:
    sid = sessions.create()
    sessions.bp(sid, POOL, line_of(POOL, "worker-line"))
    sessions.launch(sid, POOL, args=["fork"], debug_subprocesses=True)
    first = sessions.wait(sid, timeout=120)
    assert first["status"] == "paused"
    until(lambda: ok(api.get(f"/sessions/{sid}/status")).get("processes_waiting") == 1, "the other worker's stop")
    listed = ok(api.get(f"/sessions/{sid}/processes"))["processes"]
    assert [p["pid"] for p in listed if p.get("shown")] == [first["process"]]
    other = next(p["pid"] for p in listed if p.get("state") == "paused" and p["pid"] != first["process"])
    first_n = ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "n"}))["result"]

    shown = ok(api.post(f"/sessions/{sid}/processes/{other}/show"))
    assert shown["status"] == "paused" and shown["process"] == other and shown["processes_waiting"] == 1
    assert shown["location"]["function"] == "square"
    other_pid = ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "__import__('os').getpid()"}))
    assert int(other_pid["result"]) == other  # reads go to the process shown
    assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "n"}))["result"] != first_n

    back = ok(api.post(f"/sessions/{sid}/processes/{first['process']}/show"))
    assert back["process"] == first["process"] and back["location"] == first["location"]
    hits = [b["hit_count"] for b in ok(api.get(f"/sessions/{sid}/breakpoints"))["breakpoints"]]
    assert hits == [2]  # two workers stopped, each once: shown again is not stopped again
    assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "n"}))["result"] == first_n

    running = next(p["pid"] for p in listed if p.get("root"))
    refused = api.post(f"/sessions/{sid}/processes/{running}/show")
    assert refused.status_code == 409 and refused.json()["error"]["hint"]
    unknown = api.post(f"/sessions/{sid}/processes/4194000/show")
    assert unknown.status_code == 404 and unknown.json()["error"]["hint"]
    assert ok(api.get(f"/sessions/{sid}/status"))["process"] == first["process"]  # nothing changed

    ok(api.post(f"/sessions/{sid}/continue", json={"all": True}))
    *_, end = stops_until_the_end(api, sessions, sid, "n")
    assert end["exit_code"] == 0
    assert output_text(api, sid, "stdout").endswith("squares [0, 1, 4, 9]\nPOOL-END\n")


@pytest.mark.slow
def test_a_child_paused_while_the_relay_is_killed_is_still_paused_after(cluster: Cluster, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    first = cluster.relay()
    sid: str = ok(first.http.post("/sessions", json={}), 201)["session_id"]
    ok(
        first.http.post(
            f"/sessions/{sid}/breakpoints", json={"source": {"path": GATE}, "line": line_of(GATE, "child-stop")}
        )
    )
    launch = {"script": GATE, "args": [str(gate)], "debug_subprocesses": True}
    ok(first.http.post(f"/sessions/{sid}/launch", json=launch))
    stop = ok(first.http.post(f"/sessions/{sid}/wait", json={"timeout": 60}))
    assert stop["status"] == "paused" and stop["process"], stop
    first.proc.kill()
    first.proc.wait(10)

    second = cluster.relay()
    poll(lambda: ok(second.http.get(f"/sessions/{sid}"))["recovered"], what="the session taken over")
    again = ok(second.http.post(f"/sessions/{sid}/wait", json={"timeout": 60}))
    assert again["status"] == "paused" and again["process"] == stop["process"], again
    assert again["location"] == stop["location"]
    answer = ok(second.http.post(f"/sessions/{sid}/evaluate", json={"expression": "os.getpid()"}))
    assert int(answer["result"]) == stop["process"]  # read in the child, where it still waits
    gate.touch()
    ok(second.http.post(f"/sessions/{sid}/continue"))
    end = ok(second.http.post(f"/sessions/{sid}/wait", json={"timeout": 60}))
    assert end["status"] == "terminated" and end["exit_code"] == 0, end
    ok(second.http.delete(f"/sessions/{sid}"))


async def test_a_child_stop_over_mcp_and_the_cli(relay: Relay) -> None:
    from tests.integration.test_cli import Cli
    from tests.integration.test_mcp import http_agent

    child_line = line_of(CHILD, "child-line")
    async with http_agent(relay) as agent:
        await agent.call("debug_set_breakpoint", file=CHILD, line=child_line)
        stop = await agent.call("debug_launch", script=RUN, children=True)
        assert stop["status"] == "paused" and stop["location"]["file"] == CHILD and stop["process"], stop
        assert stop["locals"]["n"] == "7"
        listed = await agent.call("threads_list")
        assert stop["process"] in {p["pid"] for p in listed["processes"]}
        root = next(p["pid"] for p in listed["processes"] if p.get("root"))
        assert (await agent.error("threads_list", show_pid=root))["code"] == "NOT_PAUSED"  # it waits for its child
        shown = await agent.call("threads_list", show_pid=stop["process"])
        assert shown["stop"]["process"] == stop["process"] and shown["stop"]["location"] == stop["location"]
        end = await agent.call("debug_continue")
        assert end["status"] == "terminated" and end["exit_code"] == 0, end
        relay.http.delete(f"/sessions/{end['session_id']}")

    cli = Cli(relay)
    stop = cli("launch", "--children", "--break", f"{CHILD}:{child_line}", RUN)
    assert stop["status"] == "paused" and stop["process"], stop
    processes = cli("processes", stop["session_id"])["processes"]
    assert processes[0]["root"] and any(p["pid"] == stop["process"] and p["state"] == "paused" for p in processes)
    assert "PAUSED" in cli.pretty("processes", stop["session_id"]).upper()
    assert cli("processes", "--show", str(stop["process"]), stop["session_id"])["process"] == stop["process"]
    assert cli("continue", stop["session_id"])["status"] == "terminated"
    relay.http.delete(f"/sessions/{stop['session_id']}")


def test_a_non_python_child_runs_untouched_and_is_never_listed(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.launch(sid, SHELL, debug_subprocesses=True)
    end = sessions.wait(sid, timeout=120)
    assert end["status"] == "terminated" and end["exit_code"] == 0, end
    assert output_text(api, sid, "stdout") == "from the shell\nSHELL-END\n"
    assert [p.get("root") for p in ok(api.get(f"/sessions/{sid}/processes"))["processes"]] == [True]


def test_a_failing_test_pauses_in_its_pytest_xdist_worker(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    launch = {"module": "pytest", "args": ["-n", "2", "check_sums.py"], "cwd": XDIST, "debug_subprocesses": True}
    ok(api.post(f"/sessions/{sid}/launch", json=launch))
    stop = sessions.wait(sid, timeout=120)
    assert stop["status"] == "paused" and stop["reason"] == "exception", stop
    assert stop["exception"]["type"] == "AssertionError" and stop["process"], stop
    assert stop["location"]["function"] == "check_wrong"
    assert stop["location"]["line"] == line_of(f"{XDIST}/check_sums.py", "failing-assert")
    assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "values"}))["result"] == "[1, 2, 3]"
    ok(api.post(f"/sessions/{sid}/continue"))
    end = sessions.wait(sid, timeout=120)
    assert end["status"] == "terminated" and end["exit_code"] == 1, end
    assert "1 failed, 3 passed" in output_text(api, sid, "stdout")


def test_a_request_stops_in_a_gunicorn_worker_and_gets_its_answer(api: httpx.Client, sessions: Sessions) -> None:
    import threading

    port = free_port()
    sid = sessions.create()
    sessions.bp(sid, WSGI, line_of(WSGI, "handler-line"))
    args = ["-w", "2", "-b", f"127.0.0.1:{port}", "wsgi_app:app"]
    launch = {"module": "gunicorn", "args": args, "cwd": str(Path(WSGI).parent), "debug_subprocesses": True}
    ok(api.post(f"/sessions/{sid}/launch", json=launch))
    answered: dict[str, str] = {}

    def client() -> None:  # a request into a paused handler answers once the handler goes on
        with httpx.Client(timeout=120) as http:
            answered["body"] = until(lambda: _get(http, f"http://127.0.0.1:{port}/orders/7"), "the server's answer")

    request = threading.Thread(target=client)
    request.start()
    stop = sessions.wait(sid, timeout=120)
    assert stop["status"] == "paused" and stop["location"]["function"] == "app" and stop["process"], stop
    listed = ok(api.get(f"/sessions/{sid}/processes"))["processes"]
    root = listed[0]
    assert next(p for p in listed if p["pid"] == stop["process"])["ppid"] == root["pid"]  # a forked worker
    assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "path"}))["result"] == "'/orders/7'"
    ok(api.post(f"/sessions/{sid}/continue"))
    request.join(120)
    assert answered["body"] == "hello /orders/7"
    pids = [p["pid"] for p in listed]
    ok(api.delete(f"/sessions/{sid}"))
    sessions.created.remove(sid)
    assert not [pid for pid in pids if psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie"]


def _get(http: httpx.Client, url: str) -> str | None:
    try:
        return http.get(url).text
    except httpx.ConnectError:
        return None  # not listening yet


# -- child debugging off: the children that run undebugged are named ------------------------------


def test_a_pool_run_without_child_debugging_names_its_undebugged_workers(api: httpx.Client, sessions: Sessions) -> None:
    ended = run_with_a_breakpoint_in_the_child(api, sessions, POOL, POOL, "worker-line", args=["spawn"])
    assert ended["status"] == "terminated" and ended["exit_code"] == 0
    assert "debug_subprocesses" in ended["undebugged_note"]
    assert ended["undebugged"] and all(p["pid"] for p in ended["undebugged"])


# -- a process that only claims to be a child ---------------------------------------------------------

SECRET = "Sesame-4711"  # in the session's condition, log message and evaluate text
HANDSHAKE = ["pydevdAuthorize", "pydevdSystemInfo"]  # what debugpy's adapter asks any process that connects


def adapter_server_port(root: int) -> int | None:
    """The port of debugpy's adapter the program's own debugger is connected to (where children connect)."""
    try:
        conns = psutil.Process(root).net_connections("tcp")
    except psutil.Error:
        return None
    return next((c.raddr.port for c in conns if c.raddr and c.status == psutil.CONN_ESTABLISHED), None)


def listening_pid(port: int) -> int:
    conns = psutil.net_connections("tcp")
    return next(c.pid for c in conns if c.laddr and c.laddr.port == port and c.status == psutil.CONN_LISTEN)


def requests_to(record: Path) -> list[dict[str, Any]]:
    """The requests the forged process received, in order."""
    lines = record.read_text().splitlines() if record.exists() else []
    return [m for m in map(json.loads, lines) if m.get("type") == "request"]


def texts_of(messages: list[dict[str, Any]]) -> str:
    """Everything in ``messages``, the breakpoint checks the relay compiles (base32 of JSON) decoded too."""
    raw = json.dumps(messages)
    specs = re.findall(r"_debugrelay_check\._([A-Z2-7]+)", raw)
    return raw + "".join(base64.b32decode(s + "=" * (-len(s) % 8)).decode() for s in specs)


def keeper_log(relay: Relay, sid: str) -> str:
    """What the target's keeper wrote (a local target's log, in the relay's state folder)."""
    return (relay.log.parent / "state" / "targets" / f"{sid}.log").read_text()


class Forged:
    """A process that connects to the session's debugpy where its children connect and claims to be one
    (the program its parent), as any local process can; it records what it receives."""

    def __init__(self, api: httpx.Client, sid: str, record: Path, *, claim_the_adapter: bool = False) -> None:
        self.api, self.sid, self.record = api, sid, record
        self.root = until(lambda: ok(api.get(f"/sessions/{sid}/processes"))["processes"][0]["pid"], "the pid")
        port = until(lambda: adapter_server_port(self.root), "the program's debugger connected to its adapter")
        # a real process of the program that is not a child debugpy follows, or a pid no process has
        pid_max = int(Path("/proc/sys/kernel/pid_max").read_text())
        self.claimed = listening_pid(port) if claim_the_adapter else pid_max + 1
        argv = [sys.executable, FORGED, str(port), str(self.claimed), str(self.root), str(record)]
        self.proc = subprocess.Popen(argv)

    def refusal(self) -> str | None:
        notes = ok(self.api.get(f"/sessions/{self.sid}")).get("notes", [])
        return next((n for n in notes if f"process {self.claimed}," in n), None)

    def received(self) -> list[dict[str, Any]]:
        return requests_to(self.record)

    def asked(self) -> list[str]:
        """What it was asked beyond debugpy's handshake: an attached child is initialized, configured, ..."""
        return [m["command"] for m in self.received()][len(HANDSHAKE) :]

    def settled(self) -> str | None:
        """The session's note of its refusal, once there is one (None: it was attached instead)."""
        until(lambda: self.refusal() or self.asked(), "the forged process refused or attached", 120)
        return None if self.asked() else self.refusal()

    def end(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


@pytest.mark.parametrize(
    "case", ["the adapter's pid, children on", "a made-up pid, children on", "a made-up pid, children off"]
)
def test_a_process_that_claims_to_be_a_child_is_refused_and_given_nothing(
    relay: Relay, api: httpx.Client, sessions: Sessions, tmp_path: Path, case: str
) -> None:
    gate = tmp_path / "gate"
    sid = sessions.create()
    sessions.bp(sid, GUARDED, line_of(GUARDED, "stop-line"), condition=f"'{SECRET}' != ''")
    sessions.bp(sid, GUARDED, line_of(GUARDED, "logged-line"), log_message=f"{SECRET} {{n}}")
    sessions.launch(sid, GUARDED, args=[str(gate)], debug_subprocesses=case.endswith("children on"))
    forged = Forged(api, sid, tmp_path / "forged.jsonl", claim_the_adapter=case.startswith("the adapter's"))
    try:
        note = forged.settled()
        assert note and "refused" in note, forged.received()
        assert [m["command"] for m in forged.received()] == HANDSHAKE
        assert f"refused process {forged.claimed} " in keeper_log(relay, sid)
        listed = ok(api.get(f"/sessions/{sid}/processes"))["processes"]
        assert [p["pid"] for p in listed] == [forged.root], listed

        gate.touch()
        stop = sessions.wait(sid, timeout=120)
        assert stop["status"] == "paused" and stop["location"]["line"] == line_of(GUARDED, "stop-line"), stop
        assert stop.get("process") in (None, forged.root), stop  # the program's own stop, not the forged one's
        answer = ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": f"len('{SECRET}') + total"}))
        assert answer["result"] == str(len(SECRET) + 4)
        ok(api.post(f"/sessions/{sid}/continue"))
        end = sessions.wait(sid, timeout=120)
        assert end["status"] == "terminated" and end["exit_code"] == 0, end
        logged = [f"{SECRET} {n}\n" for n in range(3)]  # the logpoint, for the session's own owner
        assert output_text(api, sid, "stdout") == "".join([*logged, "GUARDED-END\n"])
        forged.proc.wait(120)  # its connection ends with the target's debugger
    finally:
        forged.end()
    received = forged.received()
    assert [m["command"] for m in received] == HANDSHAKE, received
    assert SECRET not in texts_of(received)


def test_a_child_started_while_a_forged_one_is_connected_is_debugged_once_it_has_gone(
    relay: Relay, api: httpx.Client, sessions: Sessions, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    sid = sessions.create()
    sessions.bp(sid, CHILD, line_of(CHILD, "child-line"), condition=f"'{SECRET}' != ''")
    sessions.launch(sid, GUARDED, args=[str(gate), "with a child"], debug_subprocesses=True)
    forged = Forged(api, sid, tmp_path / "forged.jsonl")
    try:
        assert forged.settled(), forged.received()
        gate.touch()  # the program starts its child: debugpy announces it while the forged one is connected
        until(lambda: "waits to be attached" in keeper_log(relay, sid), "the child held back", 120)
        forged.end()
        stop = sessions.wait(sid, timeout=120)
        assert stop["status"] == "paused" and stop["location"]["file"] == CHILD and stop["process"], stop
        assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "n"}))["result"] == "7"
        ok(api.post(f"/sessions/{sid}/continue"))
        end = sessions.wait(sid, timeout=120)
        assert end["status"] == "terminated" and end["exit_code"] == 0, end
        assert output_text(api, sid, "stdout") == "child squared 49\nGUARDED-END\n"
    finally:
        forged.end()
    assert [m["command"] for m in forged.received()] == HANDSHAKE
