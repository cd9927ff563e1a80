"""An agent's action is one request to the relay, whichever interface it comes through: every MCP tool
forwarded with ``--url`` and every CLI command is one HTTP request (counted in ``/metrics``); the current
session and relative paths are decided in the relay, by one rule."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Relay, free_port, line_of, ok, target
from tests.integration.test_cli import Cli
from tests.integration.test_mcp import stdio_agent
from tests.integration.test_metrics import scraped

pytestmark = pytest.mark.integration

BASIC = target("basic.py")
ADD = line_of(BASIC, "add-body")
LOOP = line_of(BASIC, "loop-body")


@pytest.fixture
def own_relay(tmp_path: Path) -> Iterator[Relay]:
    """A relay of this test's own: its request counts are this test's."""
    relay = Relay(tmp_path, env={"DEBUGRELAY_ALLOWED_ROOTS": str(tmp_path.parent.parent)})
    yield relay
    relay.stop()


def requests_served(http: httpx.Client) -> float:
    """How many requests the relay answered (``/metrics`` does not count itself)."""
    return sum(v for (name, _), v in scraped(http).items() if name == "debugrelay_request_duration_seconds_count")


# every tool, in a story where each makes sense (a call the program's state refuses is one request too)
STORY: list[tuple[str, dict[str, Any]]] = [
    ("debug_status", {}),
    ("debug_set_breakpoint", {"file": BASIC, "line": ADD}),
    ("debug_set_exception_breakpoints", {"filters": ["uncaught"]}),
    ("debug_launch", {"script": BASIC}),
    ("debug_variables", {}),
    ("debug_evaluate", {"expression": "a + b"}),
    ("debug_evaluate", {"expression": "a", "watch": True}),
    ("evaluate", {"expression": "255", "format": "hex"}),
    ("debug_stacktrace", {}),
    ("stacktrace_get", {"start_frame": 1}),
    ("variables_get", {"scope": "locals"}),
    ("object_inspect", {"object_ref": "a"}),
    ("threads_list", {}),
    ("debug_redactions", {}),
    ("debug_step_over", {}),
    ("debug_step_out", {}),
    ("debug_step_into", {}),
    ("debug_run_to", {"file": BASIC, "line": LOOP}),
    ("debug_capture", {"file": BASIC, "line": ADD, "expressions": ["a"]}),
    ("debug_trace", {"function": f"{BASIC}:add"}),
    ("debug_trace", {}),
    ("debug_snapshot", {}),
    ("debug_evidence", {"evidence_id": "ev-none"}),
    ("debug_analyze", {"take": 1}),
    ("exception_autopsy", {}),
    ("debug_request", {"path": "/", "port": 9}),
    ("debug_remove_breakpoint", {"breakpoint_id": "all"}),
    ("debug_continue", {}),
    ("debug_output", {}),
    ("breakpoint_wait", {"timeout": 0}),
    ("debug_pause", {"timeout": 0}),
    ("debug_attach", {"port": 9}),
    ("debug_disconnect", {}),
]


@pytest.mark.asyncio
async def test_every_tool_forwarded_to_a_relay_is_one_request(tmp_path: Path, own_relay: Relay) -> None:
    seen: set[str] = set()
    async with stdio_agent(tmp_path, "--url", own_relay.url) as agent:
        assert {name for name, _ in STORY} == set(await agent.tools())  # the story calls every tool
        for name, args in STORY:
            before = requests_served(own_relay.http)
            result = await agent.session.call_tool(name, args)
            text = result.content[0].text  # type: ignore[union-attr]
            assert requests_served(own_relay.http) - before == 1, (name, args, text)
            assert not text.startswith("Error"), text  # the relay's own answer or error, never the SDK's
            seen.add(name)
    assert len(seen) == 31


def test_every_cli_command_of_an_agent_story_is_one_request(own_relay: Relay, tmp_path: Path) -> None:
    cli = Cli(own_relay)
    story = [
        ("break", f"{BASIC}:{ADD}"),
        ("launch", BASIC),
        ("status",),
        ("vars",),
        ("eval", "a + b"),
        ("stack",),
        ("step", "over"),
        ("trace", f"{BASIC}:add"),
        ("origin", "total"),
        ("act", "debug_run_to", f"file={BASIC}", f"line={ADD}"),
        ("continue",),
        ("pause",),
        ("output",),
        ("delete",),
    ]
    for words in story:
        before = requests_served(own_relay.http)
        cli.run(*words)  # its answer or its error: either is one request
        assert requests_served(own_relay.http) - before == 1, words


def test_the_current_session_is_the_callers_newest_over_http(own_relay: Relay) -> None:
    """``current`` names the newest session on every route; a breakpoint set with none yet makes one."""
    http = own_relay.http
    missing = http.get("/sessions/current/status")
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "session_not_found")
    made = http.post("/sessions/current/breakpoints", json={"file": BASIC, "line": ADD}).json()
    sid = ok(http.get("/sessions"))["sessions"][0]["session_id"]
    assert ok(http.get("/sessions/current/breakpoints"))["breakpoints"][0]["breakpoint_id"] == made["breakpoint_id"]
    newer = http.post("/sessions", json={}).json()["session_id"]
    assert ok(http.get("/sessions/current"))["session_id"] == newer != sid


@pytest.mark.asyncio
async def test_a_relative_path_means_the_same_on_every_interface(own_relay: Relay, tmp_path: Path) -> None:
    """``app/basic.py:N`` is taken from the folder the agent works in: the CLI's, the MCP server's (run in
    process or forwarding), or a plain HTTP client's header; never from the launch's folder."""
    project = tmp_path / "project"
    (project / "app").mkdir(parents=True)
    script = project / "app" / "basic.py"
    shutil.copy(BASIC, script)
    where = f"app/basic.py:{ADD}"

    cli = Cli(own_relay)
    stop = cli("launch", "app/basic.py", "--break", where, cwd=project)
    assert (stop["location"]["file"], stop["location"]["line"]) == ("app/basic.py", ADD), stop
    cli("delete", stop["session_id"])

    for args in ((), ("--url", own_relay.url)):  # the MCP server starts where the agent's client starts it
        async with stdio_agent(tmp_path, *args, cwd=project) as agent:
            await agent.call("debug_set_breakpoint", file="app/basic.py", line=ADD)
            stop = await agent.call("debug_launch", script="app/basic.py", cwd="app")
            assert (stop["location"]["file"], stop["location"]["line"]) == ("app/basic.py", ADD), (args, stop)
            later = await agent.call("debug_set_breakpoint", file="app/basic.py", line=LOOP)  # not from cwd
            assert later["file"] == "app/basic.py", later  # shown as the agent names it
            await agent.call("debug_disconnect", forget=True)

    http = own_relay.http
    asked = {"x-debugrelay-folder": str(project)}
    answer = http.post("/agent/debug_launch", json={"script": "app/basic.py", "breakpoints": [where]}, headers=asked)
    stop = ok(answer)
    assert (stop["location"]["file"], stop["location"]["line"]) == ("app/basic.py", ADD), stop
    ok(http.delete(f"/sessions/{stop['session_id']}"))


def test_an_action_over_http_refuses_what_it_does_not_take(own_relay: Relay) -> None:
    http = own_relay.http
    unknown = http.post("/agent/debug_launch", json={"script": BASIC, "frobnicate": 1})
    assert unknown.status_code == 400
    assert unknown.json()["error"]["details"] == {"unknown": ["frobnicate"]}
    wrong = http.post("/agent/debug_step_over", json={"timeout": "soon"})
    assert (wrong.status_code, wrong.json()["error"]["details"]) == (400, {"arguments": ["timeout"]})
    many = http.post("/agent/debug_launch", json={"script": BASIC, "trace": [f"{BASIC}:f{n}" for n in range(21)]})
    assert (many.status_code, many.json()["error"]["details"]) == (400, {"trace": 21})
    nothing = http.post("/agent/debug_frobnicate", json={})
    assert (nothing.status_code, nothing.json()["error"]["code"]) == (404, "not_found")
    assert ok(http.get("/sessions"))["sessions"] == []
    assert json.loads(http.get("/schema/openapi.json").text)["paths"]["/agent/{action}"]


def test_an_action_added_once_reaches_every_interface(own_relay: Relay) -> None:
    """``debug_run_to`` is declared once (``service/actions/_control.py``): it is an MCP tool, an HTTP route
    and a CLI command; it stops at the line and leaves the agent's own breakpoints as they were."""
    cli = Cli(own_relay)
    stop = cli("launch", "--stop-on-entry", BASIC)
    sid = stop["session_id"]
    there = cli("act", "debug_run_to", f"file={BASIC}", f"line={ADD}")
    assert (there["reason"], there["location"]["line"], there["locals"]) == ("breakpoint", ADD, {"a": "0", "b": "3"})
    assert cli("breakpoints", sid)["breakpoints"] == []  # it was for this call only
    over_http = own_relay.http.post("/agent/debug_run_to", json={"file": BASIC, "line": LOOP, "session_id": sid})
    assert ok(over_http)["location"]["line"] == LOOP
    cli("delete", sid)


CRASH = target("crash.py")
SERVICE = target("svc_orders.py")
MODULE_LEVEL = """\
import os
import sys
import typing
from typing import Any, Dict, List, Optional
from collections import OrderedDict

LIMIT = 3
names = ["a", "b"]


class Thing:
    pass


def helper():
    return 1


total = len(names) + LIMIT  # module-stop
print(total)
"""
CART = """\
class Cart:
    def __init__(self):
        self.items = [1, 2]

    def total(self):
        return self.price(0)

    def price(self, i):
        return self.lookup(i)

    def lookup(self, i):
        raise KeyError(i)  # cart-raise


Cart().total()
"""


@pytest.mark.asyncio
async def test_answers_say_each_thing_once_and_no_stale_hint(tmp_path: Path) -> None:
    """What every launch would repeat (the interpreter's warning, what stops the run, the Python, a
    generic hint) is said once per session; a module-level stop shows the module's own values, not what
    it imported or defines; a hint never points at what is not there."""
    module = tmp_path / "module_level.py"
    module.write_text(MODULE_LEVEL)
    async with stdio_agent(tmp_path) as agent:
        first = await agent.call("debug_launch", script=CRASH)
        assert {"python", "hint"} <= set(first) and "stops_on" not in first, first  # the default is not news
        again = await agent.call("debug_launch", script=CRASH)
        assert not {"python", "stops_on", "warning", "hint"} & set(again), again
        assert "thread_id" not in again  # one thread: nothing to tell it from
    async with stdio_agent(tmp_path) as agent:
        blind = await agent.call("debug_launch", script=CRASH, locals=False)
        assert "locals" not in blind and "above" not in blind["hint"], blind  # no locals to point at
        await agent.call("debug_disconnect", forget=True)

        quiet = tmp_path / "quiet.py"
        quiet.write_text("x = 1\n")
        ended = await agent.call("debug_launch", script=str(quiet))
        assert ended["status"] == "terminated"
        assert "same breakpoints" not in ended["hint"], ended  # it had none
        printed = await agent.call("debug_launch", script=target("basic.py"))
        assert printed["status"] == "terminated" and "hint" not in printed, printed  # all it printed is there
        await agent.call("debug_disconnect", forget=True)

        line = line_of(str(module), "module-stop")
        stop = await agent.call("debug_launch", script=str(module), breakpoints=[f"{module}:{line}"])
        assert stop["location"]["line"] == line, stop
        assert set(stop["locals"]) == {"LIMIT", "names", "..."}, stop["locals"]
        assert "modules, functions, classes" in stop["locals"]["..."]
        await agent.call("debug_disconnect", forget=True)

        port = free_port()
        serving = await agent.call("debug_launch", script=SERVICE, args=[str(port)], port=port)
        assert "debug_request" in serving["hint"] and "breakpoint_wait" not in serving["hint"], serving
        await agent.call("debug_disconnect", forget=True)


@pytest.mark.asyncio
async def test_an_autopsy_shows_each_object_once(tmp_path: Path) -> None:
    """``self`` in three frames is shown in the first and referred to in the others."""
    cart = tmp_path / "cart.py"
    cart.write_text(CART)
    async with stdio_agent(tmp_path) as agent:
        stop = await agent.call("debug_launch", script=str(cart))
        assert stop["location"]["line"] == line_of(str(cart), "cart-raise"), stop
        autopsy = await agent.call("exception_autopsy", include_variables_for_frames=3)
        shown = [v for f in autopsy["frames"] for v in [*f.get("arguments", []), *f.get("locals", [])]]
        selves = [v for v in shown if v["name"] == "self"]
        assert len(selves) == 3, autopsy
        assert "<Cart at 0x" in selves[0]["value"]
        assert [s.get("same_as") for s in selves[1:]] == ["frame 0 self", "frame 0 self"], selves
        assert all("value" not in s and "children" not in s for s in selves[1:]), selves
        await agent.call("debug_disconnect", forget=True)


MULTI = target("multi.py")
HELPERS = target("pkg/helpers.py")


def test_a_trace_without_a_session_goes_to_the_paused_one_whatever_file_it_is_in(own_relay: Relay) -> None:
    """The agent is paused in a program and traces a function of a module it imports: the trace is the
    paused session's (not a new, empty one that the next launch would go to)."""
    http = own_relay.http
    stop = ok(
        http.post(
            "/agent/debug_launch", json={"script": MULTI, "breakpoints": [f"{MULTI}:{line_of(MULTI, 'call-double')}"]}
        )
    )
    assert stop["status"] == "paused", stop
    traced = ok(http.post("/agent/debug_trace", json={"function": f"{HELPERS}:double"}))
    assert traced["session_id"] == stop["session_id"], traced
    assert [s["session_id"] for s in ok(http.get("/sessions"))["sessions"]] == [stop["session_id"]]
    ended = ok(http.post("/agent/debug_continue", json={}))
    assert ended["status"] == "terminated", ended
    calls = ok(http.post("/agent/debug_trace", json={"calls": "*"}))
    assert [(c["args"], c["returned"]) for c in calls["calls"]] == [({"x": "21"}, "42")], calls
    ok(http.delete(f"/sessions/{stop['session_id']}"))


def test_a_launch_with_a_trace_names_the_calls_that_finished_and_a_lone_ones_run(own_relay: Relay) -> None:
    """One step instead of four: the launch carries the function to trace; its answer (the end) names the
    call that finished with its run; the next answer names only what is new; a listing that finds one
    call comes with its run."""
    http = own_relay.http
    end = ok(http.post("/agent/debug_launch", json={"script": MULTI, "trace": [f"{HELPERS}:double"]}))
    assert end["status"] == "terminated", end
    (call,) = end["traced"]
    assert (call["function"], call["args"], call["returned"]) == ("double", {"x": "21"}, "42"), call
    assert {"line": line_of(HELPERS, "double-body"), "changed": {"doubled": "42"}} in call["run"], call
    assert "traced" not in ok(http.post("/agent/breakpoint_wait", json={"timeout": 1})), "said once"
    listed = ok(http.post("/agent/debug_trace", json={"calls": "double"}))
    assert listed["calls"][0]["run"] == call["run"], listed
    again = ok(http.post("/agent/debug_launch", json={"script": MULTI}))  # a new run: its call is new again
    assert [c["returned"] for c in again["traced"]] == ["42"], again
    ok(http.delete(f"/sessions/{end['session_id']}"))


def test_how_a_value_went_wrong_reads_from_a_launch_with_a_trace_and_at_most_one_call_more(own_relay: Relay) -> None:
    """A method that writes the wrong total to ``self``: the launch's end lists the calls (each with ``self`` as
    it was), the one after which the total is off reads with the write on its line. A loop whose 173rd of 300
    iterations read a value far off the others: the launch's end alone shows that iteration whole."""
    http = own_relay.http
    basket, readings = target("tr_cart.py"), target("tr_readings.py")
    end = ok(http.post("/agent/debug_launch", json={"script": basket, "trace": [f"{basket}:Basket.add"]}))
    totals = [c["args"]["self"].split("total=")[1].split(",")[0] for c in end["traced"]]
    assert totals == ["0.0", "5.0", "10.0", "22.0", "24.8"], end  # 22.0 + 5.0 is not 24.8: the 4th call
    run = ok(http.post("/agent/debug_trace", json={"call_id": end["traced"][3]["call_id"]}))
    bulk = line_of(basket, "tr-bulk")
    assert {"line": bulk, "changed": {"self.total": "22.0 -> 19.8"}} in run["events"], run
    part = ok(http.post("/agent/debug_trace", json={"call_id": end["traced"][3]["call_id"], "match": "19.8"}))
    assert part["events"] == [  # the lines that wrote or read on from the wrong value
        {"line": bulk, "changed": {"self.total": "22.0 -> 19.8"}},
        {"line": line_of(basket, "tr-total"), "changed": {"self.total": "19.8 -> 24.8"}},
    ]
    ok(http.delete(f"/sessions/{end['session_id']}"))
    end = ok(http.post("/agent/debug_launch", json={"script": readings, "trace": [f"{readings}:calibrate"]}))
    (call,) = end["traced"]
    (loop,) = [e for e in call["run"] if "loop" in e]
    (far,) = loop["far"]
    assert (far["iteration"], far["name"], far["value"]) == (173, "reading", "1040.0"), loop
    assert {"line": line_of(readings, "tr-volts"), "changed": {"volts": "1560.0"}} in far["run"], far
    ok(http.delete(f"/sessions/{end['session_id']}"))


def test_where_a_value_came_from_is_one_call_at_a_stop(own_relay: Relay) -> None:
    """Paused where the wrong total is printed: ``origin`` names the traced writes of ``basket.total`` (written
    as ``self.total`` in a method), newest first, with call and line; a name no traced call wrote gets the
    functions that assign it, to trace. The CLI says the same in one command."""
    http, cli = own_relay.http, Cli(own_relay)
    basket = target("tr_cart.py")
    report = line_of(basket, "tr-report")
    stop = ok(
        http.post(
            "/agent/debug_launch",
            json={"script": basket, "trace": [f"{basket}:Basket.add"], "breakpoints": [f"{basket}:{report}"]},
        )
    )
    assert stop["status"] == "paused", stop
    found = ok(http.post("/agent/debug_trace", json={"origin": "basket.total"}))
    newest = found["writes"][0]
    assert (newest["name"], newest["value"], newest["line"]) == (
        "self.total",
        "24.8 -> 27.8",
        line_of(basket, "tr-total"),
    )
    bulk = [w for w in found["writes"] if w["line"] == line_of(basket, "tr-bulk")]
    assert [w["value"] for w in bulk] == ["22.0 -> 19.8"], found
    assert found["total"] == len(found["writes"]) == 6, found  # five additions, one discount
    assert cli("origin", "basket.total")["writes"] == found["writes"]
    none = ok(http.post("/agent/debug_trace", json={"origin": "basket", "session_id": stop["session_id"]}))
    assert (none["writes"], none["total"], none["trace"]) == ([], 0, [f"{basket}:main"]), none
    assert none["message"] and "trace" in none["message"]
    ok(http.delete(f"/sessions/{stop['session_id']}"))


def test_an_exception_stop_in_a_pools_parent_names_the_traced_calls_of_its_worker(own_relay: Relay) -> None:
    http = own_relay.http
    pool = target("tr_pool_raise.py")
    stop = ok(http.post("/agent/debug_launch", json={"script": pool, "trace": [f"{pool}:inverse"]}))
    assert (stop["status"], stop["reason"]) == ("paused", "exception"), stop
    named = {c["args"]["n"]: c.get("returned") or c.get("raised") for c in stop["traced"]}
    assert named == {"2": "0.5", "0": "ZeroDivisionError: division by zero"}, stop
    worker = stop["traced"][1]["call_id"].split(".")[0]
    assert worker != str(stop.get("process")), "made in the worker, named at the parent's stop"
    ok(http.delete(f"/sessions/{stop['session_id']}"))
