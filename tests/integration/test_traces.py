"""Function traces on real programs through the HTTP API: every call of a traced function, found by one filtered
list, and one call's whole run read in one request (function traces)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Relay, Sessions, error_of, line_of, ok, output_text, target
from tests.integration.test_cli import Cli
from tests.integration.test_mcp import http_agent, stdio_agent
from tests.integration.test_metrics import scraped, value
from tests.redis_server import Cluster

pytestmark = pytest.mark.integration

ORDERS = target("tr_orders.py")
MANY = target("tr_many.py")
REPRS = target("tr_reprs.py")
PYTHON_313 = "/root/.pyenv/versions/3.13.0/bin/python"
WRONG = line_of(ORDERS, "tr-wrong")
PARSE = line_of(ORDERS, "tr-parse")


@pytest.fixture
def cli(relay: Relay) -> Cli:
    return Cli(relay)


def trace(api: httpx.Client, sid: str, function: str, **options: Any) -> dict[str, Any]:
    found: dict[str, Any] = ok(api.post(f"/sessions/{sid}/traces", json={"function": function, **options}), 201)
    return found


def calls(api: httpx.Client, sid: str, **params: Any) -> dict[str, Any]:
    found: dict[str, Any] = ok(api.get(f"/sessions/{sid}/traces/calls", params=params))
    return found


def one(api: httpx.Client, sid: str, call_id: str) -> dict[str, Any]:
    found: dict[str, Any] = ok(api.get(f"/sessions/{sid}/traces/calls/{call_id}"))
    return found


def ran(api: httpx.Client, sessions: Sessions, functions: list[str], **options: Any) -> str:
    """A session of tr_orders.py with ``functions`` traced before the launch, run to its end."""
    sid = sessions.create()
    for name in functions:
        trace(api, sid, f"{ORDERS}:{name}", **options)
    sessions.launch(sid, ORDERS)
    assert sessions.wait(sid, 60)["status"] == "terminated"
    return sid


def test_the_one_wrong_call_of_ten_thousand_is_found_by_one_list_and_read_by_one_call(
    api: httpx.Client, sessions: Sessions
) -> None:
    sid = ran(api, sessions, ["price"], keep=10_000)
    assert "order 7777 priced 233309" in output_text(api, sid)  # what the agent saw go wrong
    found = calls(api, sid, function="price", match="233309")
    assert (found["total"], found.get("has_more", False)) == (1, False)
    call = found["calls"][0]
    assert call["args"] == {"qty": "7777", "unit": "3"} and call["returned"] == "233309"
    assert WRONG in call["lines"]
    run = api.get(f"/sessions/{sid}/traces/calls/{call['call_id']}")
    assert len(run.content) < 2048  # a 10-line function's call reads in well under 2 KB
    events = run.json()["events"]
    assert {"line": WRONG, "changed": {"total": "233310"}} in events  # the line where its local went wrong
    assert events[0] == {"line": WRONG - 2, "changed": {"total": "23331"}}
    assert [e["line"] for e in events] == sorted(e["line"] for e in events)  # in order, no line twice
    listed = ok(api.get(f"/sessions/{sid}/traces"))["traces"]
    assert [(t["qualname"], t["found"], t["calls"], t["total"]) for t in listed] == [("price", True, 10_000, 10_000)]


def test_tracing_changes_nothing_the_program_prints(api: httpx.Client, sessions: Sessions) -> None:
    plain = sessions.create()
    sessions.launch(plain, ORDERS)
    assert sessions.wait(plain, 60)["status"] == "terminated"
    traced = ran(api, sessions, ["price", "parse", "fact", "countdown", "fetch", "work"])
    assert output_text(api, traced) == output_text(api, plain)


def test_a_call_that_raises_says_what_and_where(api: httpx.Client, sessions: Sessions) -> None:
    sid = ran(api, sessions, ["parse"])
    raised = calls(api, sid, outcome="raised")
    assert raised["total"] == 1
    call = raised["calls"][0]
    assert call["args"] == {"text": "'x2'"} and "returned" not in call
    assert call["raised"] == "ValueError: invalid literal for int() with base 10: 'x2'"
    assert call["raised_line"] == PARSE
    assert calls(api, sid, outcome="returned")["total"] == 2


def test_recursion_links_each_call_to_its_parent(api: httpx.Client, sessions: Sessions) -> None:
    sid = ran(api, sessions, ["fact"])
    found = calls(api, sid, function="fact")["calls"]
    assert [(c["args"]["n"], c["returned"]) for c in found] == [("4", "24"), ("3", "6"), ("2", "2"), ("1", "1")]
    assert [c.get("parent") for c in found] == [None, found[0]["call_id"], found[1]["call_id"], found[2]["call_id"]]
    assert one(api, sid, found[0]["call_id"])["callees"] == [found[1]["call_id"]]


def test_a_method_a_nested_function_a_generator_and_a_coroutine_are_each_one_call(
    api: httpx.Client, sessions: Sessions
) -> None:
    sid = ran(api, sessions, ["Cart.total", "outer.inner", "countdown", "fetch"])
    method = calls(api, sid, function="Cart.total")["calls"]
    assert [(c["args"]["rate"], c["returned"]) for c in method] == [("2", "12")]
    nested = calls(api, sid, function="inner")["calls"]
    assert [(c["function"], c["args"], c["returned"]) for c in nested] == [("outer.<locals>.inner", {"y": "2"}, "3")]
    generator = calls(api, sid, function="countdown")["calls"]
    assert [(c["args"], c["returned"]) for c in generator] == [({"n": "3"}, "None")]  # three yields, one call
    coroutine = calls(api, sid, function="fetch")["calls"]
    assert [(c["args"], c["returned"]) for c in coroutine] == [({"key": "21"}, "42")]  # two awaits, one call


def test_calls_from_two_threads_name_their_thread(api: httpx.Client, sessions: Sessions) -> None:
    sid = ran(api, sessions, ["work"])
    found = calls(api, sid, function="work")["calls"]
    assert sorted((c["thread"], c["args"]["name"], c["returned"]) for c in found) == [
        ("left", "'left'", "5"),
        ("right", "'right'", "5"),
    ]
    assert all(c.get("parent") is None for c in found)


def test_a_trace_set_before_launch_is_kept_across_a_relaunch(api: httpx.Client, sessions: Sessions) -> None:
    sid = ran(api, sessions, ["fact"])
    first = {c["call_id"] for c in calls(api, sid)["calls"]}
    sessions.launch(sid, ORDERS)
    assert sessions.wait(sid, 60)["status"] == "terminated"
    again = calls(api, sid)
    assert again["total"] == 4  # this run's calls, not the last run's too
    assert not first & {c["call_id"] for c in again["calls"]} or len(first) == 4
    assert [t["qualname"] for t in ok(api.get(f"/sessions/{sid}/traces"))["traces"]] == ["fact"]


def test_a_million_calls_keep_the_newest_thousand_and_say_how_many_were_dropped(
    api: httpx.Client, sessions: Sessions
) -> None:
    sid = sessions.create()
    trace(api, sid, f"{MANY}:advance")
    sessions.launch(sid, MANY)
    assert sessions.wait(sid, 120)["status"] == "terminated"
    listed = ok(api.get(f"/sessions/{sid}/traces"))["traces"][0]
    assert (listed["calls"], listed["total"], listed["dropped"]) == (1000, 1_000_000, 999_000)
    page = calls(api, sid, limit=1)
    assert (page["total"], page["dropped"], page["has_more"]) == (1000, 999_000, True)
    assert page["calls"][0]["args"] == {"i": "999000"}  # the newest thousand


def test_a_secret_passed_as_an_argument_is_redacted(api: httpx.Client, sessions: Sessions) -> None:
    sid = ran(api, sessions, ["login"])
    call = calls(api, sid)["calls"][0]
    assert "hunter2-s3cret" not in json.dumps(call) and "hunter2-s3cret" not in json.dumps(
        one(api, sid, call["call_id"])
    )
    assert call["args"]["user"] == "'ada'" and call["args"]["password"].startswith("'[SECRET_")


def test_an_unknown_function_is_refused_with_the_nearest_names(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    err = error_of(api.post(f"/sessions/{sid}/traces", json={"function": f"{ORDERS}:prcie"}), 404, "function_not_found")
    assert "price" in err["details"]["nearest"]
    err = error_of(api.post(f"/sessions/{sid}/traces", json={"function": f"{ORDERS}:Cart.totl"}), 404)
    assert "Cart.total" in err["details"]["nearest"]
    missing = ORDERS.replace("tr_orders", "tr_nothing")
    error_of(api.post(f"/sessions/{sid}/traces", json={"function": f"{missing}:price"}), 404, "function_not_found")
    error_of(api.post(f"/sessions/{sid}/traces", json={"function": "/etc/passwd:root"}), 403, "refused")
    assert ok(api.get(f"/sessions/{sid}/traces"))["traces"] == []  # nothing changed


def test_a_paused_program_shows_the_running_call_so_far_and_a_trace_added_while_paused(
    api: httpx.Client, sessions: Sessions
) -> None:
    sid = sessions.create()
    trace(api, sid, f"{ORDERS}:price", keep=10_000)
    sessions.bp(sid, ORDERS, WRONG)
    sessions.launch(sid, ORDERS)
    assert sessions.wait(sid, 60)["status"] == "paused"
    running = calls(api, sid, outcome="running")["calls"]
    assert [(c["args"]["qty"], c["running"]) for c in running] == [("7777", True)]
    so_far = one(api, sid, running[0]["call_id"])
    assert so_far["events"][-1]["line"] == WRONG - 1 and "returned" not in so_far
    added = trace(api, sid, f"{ORDERS}:fact")
    assert added["found"] is True
    ok(api.delete(f"/sessions/{sid}/breakpoints"))
    assert ok(api.post(f"/sessions/{sid}/continue", json={"wait": 60}))["status"] == "terminated"
    assert [c["returned"] for c in calls(api, sid, function="fact")["calls"]] == ["24", "6", "2", "1"]
    finished = one(api, sid, running[0]["call_id"])
    assert finished["returned"] == "233309" and not finished.get("running")


def test_the_call_that_raised_is_read_at_the_exception_stop(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    trace(api, sid, f"{ORDERS}:parse")
    ok(
        api.post(
            f"/sessions/{sid}/exception-breakpoints", json={"filters": ["raised"], "exception_types": ["ValueError"]}
        )
    )
    sessions.launch(sid, ORDERS)
    stop = sessions.wait(sid, 60)
    assert stop["status"] == "paused" and stop["location"]["line"] == PARSE
    running = calls(api, sid, outcome="running")["calls"]
    assert [(c["function"], c["args"]) for c in running] == [("parse", {"text": "'x2'"})]
    assert stop["traced_calls"] == [running[0]["call_id"]]  # the stop names the traced call it stopped in
    so_far = one(api, sid, stop["traced_calls"][0])
    assert (so_far["running"], so_far["args"], so_far["lines"]) == (True, {"text": "'x2'"}, [PARSE])


def test_removing_a_trace_removes_its_calls(api: httpx.Client, sessions: Sessions) -> None:
    sid = ran(api, sessions, ["fact", "parse"])
    removed = ok(api.delete(f"/sessions/{sid}/traces/t1"))
    assert (removed["qualname"], removed["total"]) == ("fact", 4)
    assert {c["function"] for c in calls(api, sid)["calls"]} == {"parse"}
    error_of(api.delete(f"/sessions/{sid}/traces/t1"), 404)


def test_calls_recorded_so_far_outlive_a_relay_restarted_with_redis(cluster: Cluster) -> None:
    first = cluster.relay()
    api = first.http
    ended = ok(api.post("/sessions", json={}), 201)["session_id"]
    trace(api, ended, f"{ORDERS}:fact")
    ok(api.post(f"/sessions/{ended}/launch", json={"script": ORDERS}))
    assert ok(api.post(f"/sessions/{ended}/wait", json={"timeout": 60}, timeout=90))["status"] == "terminated"
    paused = ok(api.post("/sessions", json={}), 201)["session_id"]
    trace(api, paused, f"{ORDERS}:price", keep=10_000)
    ok(api.post(f"/sessions/{paused}/breakpoints", json={"source": {"path": ORDERS}, "line": WRONG}))
    ok(api.post(f"/sessions/{paused}/launch", json={"script": ORDERS}))
    assert ok(api.post(f"/sessions/{paused}/wait", json={"timeout": 60}, timeout=90))["status"] == "paused"
    before = calls(api, paused, limit=1000)
    assert before["total"] == 7777  # 7,776 returned, the 7,777th running

    first.proc.kill()  # kill -9: nothing of the relay runs its shutdown
    first.proc.wait(10)
    second = cluster.relay()
    after = calls(second.http, paused, limit=1000)
    assert after["total"] == 7777 and after["calls"] == before["calls"]
    assert [c["returned"] for c in calls(second.http, ended)["calls"]] == ["24", "6", "2", "1"]  # from the store
    assert value(scraped(second.http), "debugrelay_keeper_reconnects_total") >= 1  # the paused one, held again
    ok(second.http.delete(f"/sessions/{paused}"))
    ok(second.http.delete(f"/sessions/{ended}"))


def test_a_trace_added_to_a_program_launched_without_one_records_calls_of_threads_started_later(
    api: httpx.Client, sessions: Sessions
) -> None:
    sid, _ = sessions.start_at(ORDERS, "tr-parse")
    added = trace(api, sid, f"{ORDERS}:work")
    assert added["found"] is True and added["message"] == "Traced from its next call."
    ok(api.delete(f"/sessions/{sid}/breakpoints"))
    assert ok(api.post(f"/sessions/{sid}/continue", json={"wait": 60}))["status"] == "terminated"
    found = calls(api, sid, function="work")["calls"]
    assert sorted(c["thread"] for c in found) == ["left", "right"]


@pytest.mark.asyncio
async def test_an_mcp_agent_finds_the_wrong_call_with_one_trace_one_launch_and_two_reads(tmp_path: Path) -> None:
    async with stdio_agent(tmp_path) as agent:
        traced = await agent.call("debug_trace", function=f"{ORDERS}:price", keep=10_000)
        assert (traced["trace_id"], traced["qualname"]) == ("t1", "price")
        ended = await agent.call("debug_launch", script=ORDERS)
        assert ended["status"] == "terminated" and "priced 233309" in ended["output"]
        found = await agent.call("debug_trace", calls="price", match="233309")
        (call,) = found["calls"]
        assert call["args"] == {"qty": "7777", "unit": "3"}
        run = await agent.call("debug_trace", call_id=call["call_id"])
        assert {"line": WRONG, "changed": {"total": "233310"}} in run["events"]
        assert agent.calls == 4
        listed = await agent.call("debug_trace")
        assert [t["total"] for t in listed["traces"]] == [10_000]
        err = await agent.error("debug_trace", function=f"{ORDERS}:prize")
        assert err["code"] == "function_not_found" and "price" in err["details"]["nearest"]
        removed = await agent.call("debug_trace", remove="t1")
        assert removed["trace_id"] == "t1"


@pytest.mark.asyncio
async def test_the_relays_mcp_endpoint_traces_too(relay: Relay, sessions: Sessions) -> None:
    async with http_agent(relay) as agent:
        traced = await agent.call("debug_trace", function=f"{ORDERS}:fact")
        sessions.created.append(traced["session_id"])
        await agent.call("debug_launch", script=ORDERS, session_id=traced["session_id"])
        found = await agent.call("debug_trace", calls="*", session_id=traced["session_id"])
        assert [c["args"]["n"] for c in found["calls"]] == ["4", "3", "2", "1"]


def test_the_cli_finds_the_wrong_call_with_trace_launch_calls_and_call(cli: Cli) -> None:
    traced = cli("trace", f"{ORDERS}:price", "--keep", "10000")
    sid = traced["session_id"]
    ended = cli("launch", ORDERS)
    assert (ended["session_id"], ended["status"]) == (sid, "terminated")
    found = cli("calls", "price", "--match", "233309")
    (call,) = found["calls"]
    run = cli("call", call["call_id"])
    assert {"line": WRONG, "changed": {"total": "233310"}} in run["events"]
    assert cli("calls", sid, "--outcome", "raised")["total"] == 0
    assert [t["qualname"] for t in cli("traces", sid)["traces"]] == ["price"]
    pretty = cli.pretty("call", sid, call["call_id"])
    assert "233310" in pretty
    assert cli("trace", sid, "t1", "--remove")["trace_id"] == "t1"
    assert cli.error("trace", f"{ORDERS}:prize")["code"] == "function_not_found"
    cli("delete", sid)


@pytest.mark.parametrize(("method", "children"), [("fork", False), ("spawn", True)])
def test_calls_in_a_pools_worker_processes_carry_their_pid(
    api: httpx.Client, sessions: Sessions, method: str, children: bool
) -> None:
    pool = target("proc_pool.py")
    sid = sessions.create()
    trace(api, sid, f"{pool}:square")
    sessions.launch(sid, pool, args=[method], debug_subprocesses=children)
    assert sessions.wait(sid, 60)["status"] == "terminated"
    found = calls(api, sid)["calls"]
    assert sorted((c["args"]["n"], c["returned"]) for c in found) == [("0", "0"), ("1", "1"), ("2", "4"), ("3", "9")]
    root = [p["pid"] for p in ok(api.get(f"/sessions/{sid}/processes"))["processes"] if p.get("root")]
    assert root and all(c["pid"] not in root for c in found)  # each call says the worker it ran in


def test_a_loop_of_500_iterations_is_folded_with_its_counts_values_and_the_odd_iteration(
    api: httpx.Client, sessions: Sessions
) -> None:
    sid = ran(api, sessions, ["tally"])
    (call,) = calls(api, sid)["calls"]
    run = api.get(f"/sessions/{sid}/traces/calls/{call['call_id']}")
    assert len(run.content) < 2048
    (loop,) = [e for e in run.json()["events"] if "loop" in e]
    odd = line_of(ORDERS, "tr-odd")
    assert loop["iterations"] == 500
    counts = {item["line"]: item["count"] for item in loop["lines"]}
    assert counts[odd] == 1 and counts[odd + 2] == 499
    assert {item["line"]: item.get("last") for item in loop["lines"]}[odd + 2] == {"total": "124499"}
    kept = [
        {"line": odd - 2, "changed": {"value": "250"}},
        {"line": odd - 1, "changed": {}},
        {"line": odd, "changed": {"total": "31124"}},
    ]
    assert loop["other"] == [{"lines": [odd - 2, odd - 1, odd], "iterations": [251], "count": 1, "run": kept}]


def test_a_calls_run_reads_in_part_by_line_text_and_page(api: httpx.Client, sessions: Sessions) -> None:
    sid = ran(api, sessions, ["tally"])
    (call,) = calls(api, sid)["calls"]
    path = f"/sessions/{sid}/traces/calls/{call['call_id']}"
    whole = ok(api.get(path))
    assert "events_total" not in whole  # read whole: nothing to say of parts
    odd = line_of(ORDERS, "tr-odd")
    (loop,) = ok(api.get(path, params={"line": odd}))["events"]
    assert loop["lines"] == [{"line": odd, "count": 1, "first": {"total": "31124"}, "last": {"total": "31124"}}]
    assert loop["other"][0]["run"] == [{"line": odd, "changed": {"total": "31124"}}]
    found = ok(api.get(path, params={"match": "31124"}))
    assert [("loop" in e) for e in found["events"]] == [True] and found["events_total"] == 1
    none = ok(api.get(path, params={"line": 1}))
    assert (none.get("events"), none["events_total"], none["has_more"]) == (None, 0, False)  # none: left out
    first = ok(api.get(path, params={"limit": 1}))
    assert first["events"] == whole["events"][:1] and first["has_more"] is True
    rest = ok(api.get(path, params={"offset": 1, "limit": 100}))
    assert rest["events"] == whole["events"][1:] and rest["events_total"] == len(whole["events"])
    bad = api.get(path, params={"line": 0})
    assert bad.status_code == 400, bad.text


def test_breakpoints_and_steps_in_a_traced_function_work_as_without_the_trace(
    api: httpx.Client, sessions: Sessions
) -> None:
    sid = sessions.create()
    trace(api, sid, f"{ORDERS}:price", keep=10_000)
    sessions.bp(sid, ORDERS, WRONG)
    sessions.launch(sid, ORDERS)
    stop = sessions.wait(sid, 60)
    assert (stop["status"], stop["location"]["line"]) == ("paused", WRONG)
    stepped = ok(api.post(f"/sessions/{sid}/step-over", json={"wait": 30}))
    assert stepped["location"]["line"] == WRONG + 1
    stepped = ok(api.post(f"/sessions/{sid}/step-over", json={"wait": 30}))
    assert stepped["location"]["line"] == WRONG + 2
    value = ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "total"}))
    assert value["result"] == "233310"
    ok(api.delete(f"/sessions/{sid}/breakpoints"))
    assert ok(api.post(f"/sessions/{sid}/continue", json={"wait": 60}))["status"] == "terminated"
    (call,) = calls(api, sid, match="233309")["calls"]
    events = one(api, sid, call["call_id"])["events"]
    assert [e["line"] for e in events] == [WRONG - 2, WRONG - 1, WRONG, WRONG + 1, WRONG + 2, WRONG + 3, WRONG + 4]
    assert {"line": WRONG, "changed": {"total": "233310"}} in events


def test_callees_in_the_programs_own_code_are_recorded_as_calls_of_the_traced_one(
    api: httpx.Client, sessions: Sessions
) -> None:
    sid = ran(api, sessions, ["outer"], callees=True)
    found = calls(api, sid)["calls"]
    by_name = {c["function"]: c for c in found}
    assert set(by_name) == {"outer", "outer.<locals>.inner"}
    inner = by_name["outer.<locals>.inner"]
    assert (inner["parent"], inner["args"], inner["returned"]) == (by_name["outer"]["call_id"], {"y": "2"}, "3")
    assert one(api, sid, by_name["outer"]["call_id"])["callees"] == [inner["call_id"]]


def _run(api: httpx.Client, sessions: Sessions, python: str | None, **trace_options: Any) -> tuple[str, str]:
    """tr_reprs.py run to its end (``work`` traced when options are given): (session, its output)."""
    sid = sessions.create()
    if trace_options:
        trace(api, sid, f"{REPRS}:work", **trace_options)
    launched = sessions.launch(sid, REPRS, **({"python": python} if python else {}))
    assert launched["python"] == ("3.13" if python else "3.11")
    assert sessions.wait(sid, 120)["status"] == "terminated"
    return sid, output_text(api, sid)


@pytest.mark.parametrize("python", [None, PYTHON_313], ids=["3.11", "3.13"])
def test_a_trace_runs_none_of_the_programs_reprs_and_none_can_hold_the_program(
    api: httpx.Client, sessions: Sessions, python: str | None
) -> None:
    _, plain = _run(api, sessions, python)
    sid, traced = _run(api, sessions, python, reprs=False)
    assert traced == plain and "repr calls 0" in plain  # the lock its caller holds, a repr that waits: no deadlock
    shown = [c["args"]["obj"] for c in calls(api, sid)["calls"]]
    assert len(shown) == 4 and shown[0] == shown[1], shown
    assert re.fullmatch(r"<Counted at 0x[0-9a-f]+: name='a'>", shown[0]), shown
    assert re.fullmatch(r"<Guarded at 0x[0-9a-f]+>", shown[2]) and re.fullmatch(r"<Waiting at 0x[0-9a-f]+>", shown[3])


@pytest.mark.parametrize("python", [None, PYTHON_313], ids=["3.11", "3.13"])
def test_with_reprs_a_programs_repr_runs_once_per_value_and_one_that_blocks_is_left_behind(
    api: httpx.Client, sessions: Sessions, python: str | None
) -> None:
    _, plain = _run(api, sessions, python)
    sid, asked = _run(api, sessions, python, reprs=True)
    assert asked == plain.replace("repr calls 0", "repr calls 1")  # the one Counted, once for its two calls
    listed = ok(api.get(f"/sessions/{sid}/traces"))["traces"]
    assert [(t["qualname"], t["reprs"]) for t in listed] == [("work", True)]
    counted, again, guarded, waiting = (c["args"]["obj"] for c in calls(api, sid)["calls"])
    assert counted == again == "Counted('a')"
    assert guarded.startswith("<repr still running after 0.25 s> <Guarded at 0x"), guarded
    assert waiting.startswith("<repr ") and "<Waiting at 0x" in waiting, waiting
