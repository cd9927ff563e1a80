"""Function traces in a container target (Python 3.13: ``sys.monitoring``, a tool id of the tracer's own beside
debugpy's): the wrong call found and read, a paused call read so far, one call across a generator's yields; the
program's own reprs not run unless asked, and none of them holding the program."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import Relay, Sessions, line_of, ok, output_text, target
from tests.integration.test_cli import Cli
from tests.integration.test_mcp import http_agent

ORDERS = target("tr_orders.py")
WRONG = line_of(ORDERS, "tr-wrong")
REPRS = target("tr_reprs.py")
PRINTED = "counted 2 4\nguarded 6\nwaiting 8\nrepr calls {}\n"  # what tr_reprs.py prints on its own


def test_the_wrong_call_is_found_and_read_in_a_container(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    sid = sessions.create()
    for name in ("price", "countdown", "parse"):
        ok(api.post(f"/sessions/{sid}/traces", json={"function": f"{ORDERS}:{name}", "keep": 10_000}), 201)
    launched = sessions.launch(sid, ORDERS, launcher="docker")
    assert launched["python"] == "3.13"
    assert sessions.wait(sid, 300)["status"] == "terminated"
    assert "order 7777 priced 233309" in output_text(api, sid)
    found = ok(api.get(f"/sessions/{sid}/traces/calls", params={"function": "price", "match": "233309"}))
    (call,) = found["calls"]
    assert call["args"] == {"qty": "7777", "unit": "3"}
    events = ok(api.get(f"/sessions/{sid}/traces/calls/{call['call_id']}"))["events"]
    assert {"line": WRONG, "changed": {"total": "233310"}} in events
    (generator,) = ok(api.get(f"/sessions/{sid}/traces/calls", params={"function": "countdown"}))["calls"]
    assert (generator["args"], generator["returned"]) == ({"n": "3"}, "None")
    (raised,) = ok(api.get(f"/sessions/{sid}/traces/calls", params={"outcome": "raised"}))["calls"]
    assert raised["raised"].startswith("ValueError:") and raised["args"] == {"text": "'x2'"}


def test_a_paused_container_program_shows_its_running_call(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    sid = sessions.create()
    ok(api.post(f"/sessions/{sid}/traces", json={"function": f"{ORDERS}:price"}), 201)
    sessions.bp(sid, ORDERS, WRONG)
    sessions.launch(sid, ORDERS, launcher="docker")
    assert sessions.wait(sid, 300)["status"] == "paused"
    (running,) = ok(api.get(f"/sessions/{sid}/traces/calls", params={"outcome": "running"}))["calls"]
    assert running["args"]["qty"] == "7777"
    added = ok(api.post(f"/sessions/{sid}/traces", json={"function": f"{ORDERS}:fact"}), 201)
    assert added["found"] is True
    ok(api.delete(f"/sessions/{sid}/breakpoints"))
    assert ok(api.post(f"/sessions/{sid}/continue", json={"wait": 60}))["status"] == "terminated"
    found = ok(api.get(f"/sessions/{sid}/traces/calls", params={"function": "fact"}))["calls"]
    assert [c["returned"] for c in found] == ["24", "6", "2", "1"]


def test_the_cli_and_mcp_find_the_wrong_call_in_a_container(docker_client: Any, tmp_path: Path) -> None:
    relay = Relay(tmp_path, env={"DEBUGRELAY_DEFAULT_LAUNCHER": "docker"})
    try:
        cli = Cli(relay)
        sid = cli("trace", f"{ORDERS}:price", "--keep", "10000")["session_id"]
        ended = cli("launch", ORDERS)
        for _ in range(10):  # on a loaded machine the run may outlast the launch's own wait: wait on, as an agent
            if ended["status"] != "running":
                break
            ended = {**ended, **cli("wait", sid)}
        assert (ended["session_id"], ended["status"], ended["python"]) == (sid, "terminated", "3.13")
        (call,) = cli("calls", "price", "--match", "233309")["calls"]
        assert {"line": WRONG, "changed": {"total": "233310"}} in cli("call", call["call_id"])["events"]
        cli("delete", sid)

        async def agent() -> None:
            async with http_agent(relay) as tools:
                traced = await tools.call("debug_trace", function=f"{ORDERS}:price", keep=10_000)
                await tools.call("debug_launch", script=ORDERS, session_id=traced["session_id"])
                (found,) = (await tools.call("debug_trace", calls="price", match="233309"))["calls"]
                run = await tools.call("debug_trace", call_id=found["call_id"])
                assert {"line": WRONG, "changed": {"total": "233310"}} in run["events"]
                assert tools.calls == 4
                await tools.call("debug_disconnect", forget=True)

        asyncio.run(agent())
    finally:
        relay.stop()


def _reprs_run(api: httpx.Client, sessions: Sessions, reprs: bool) -> tuple[str, list[str]]:
    sid = sessions.create()
    ok(api.post(f"/sessions/{sid}/traces", json={"function": f"{REPRS}:work", "reprs": reprs}), 201)
    assert sessions.launch(sid, REPRS, launcher="docker")["python"] == "3.13"
    assert sessions.wait(sid, 120)["status"] == "terminated"
    found = ok(api.get(f"/sessions/{sid}/traces/calls", params={"function": "work"}))["calls"]
    return output_text(api, sid), [c["args"]["obj"] for c in found]


def test_a_container_programs_reprs_are_not_run_and_cannot_hold_it(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    printed, shown = _reprs_run(api, sessions, reprs=False)
    assert printed == PRINTED.format(0)  # a repr taking the caller's lock, one waiting for the program: no deadlock
    assert re.fullmatch(r"<Counted at 0x[0-9a-f]+: name='a'>", shown[0]) and shown[1] == shown[0], shown
    assert re.fullmatch(r"<Guarded at 0x[0-9a-f]+>", shown[2]) and re.fullmatch(r"<Waiting at 0x[0-9a-f]+>", shown[3])


def test_a_container_programs_reprs_run_once_per_value_when_asked(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    printed, shown = _reprs_run(api, sessions, reprs=True)
    assert printed == PRINTED.format(1)
    assert shown[:2] == ["Counted('a')", "Counted('a')"]
    assert shown[2].startswith("<repr still running after 0.25 s> <Guarded at 0x"), shown
    assert shown[3].startswith("<repr ") and "<Waiting at 0x" in shown[3], shown
