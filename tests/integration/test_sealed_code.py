"""Code a target runs for a session (watches, breakpoint conditions and log messages, profiles) is run only
when a relay sharing this relay's key sealed it: whoever writes to Redis cannot make a target run code, nor
read a keeper's secret there."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from debugrelay.dap import DapClient
from tests.conftest import error_of, line_of, ok, target
from tests.integration.test_teams import ALICE, BOB, CREDENTIALS, ROOT, bearer
from tests.redis_server import Cluster, poll

pytestmark = pytest.mark.integration

BASIC = target("basic.py")
ORDERS = target("tr_orders.py")
ADD_BODY, LOOP_BODY = line_of(BASIC, "add-body"), line_of(BASIC, "loop-body")
CALL_AVERAGE = line_of(BASIC, "call-average")


def planting(path: Path) -> str:
    """A Python expression that leaves a file at ``path`` when a target evaluates it (and is true)."""
    return f"open({str(path)!r}, 'w').close() or True"


def tamper(cluster: Cluster, sid: str, change: Callable[[dict[str, Any]], None]) -> None:
    store = cluster.redis()
    try:
        key = f"{cluster.namespace}:sessions"
        record: dict[str, Any] = json.loads(store.hget(key, sid))  # type: ignore[arg-type]
        change(record)
        store.hset(key, sid, json.dumps(record))
    finally:
        store.close()


def paused_with_code(http: httpx.Client) -> str:
    """A session paused at the first ``add`` call, with two watches and a conditional breakpoint on the
    loop's line (never true as set: the loop runs on without pausing there)."""
    sid: str = ok(http.post("/sessions", json={}), 201)["session_id"]
    ok(http.post(f"/sessions/{sid}/breakpoints", json={"source": {"path": BASIC}, "line": ADD_BODY}))
    body = {"source": {"path": BASIC}, "line": LOOP_BODY, "condition": "value > 100"}
    ok(http.post(f"/sessions/{sid}/breakpoints", json=body))
    ok(http.post(f"/sessions/{sid}/launch", json={"script": BASIC}))
    assert ok(http.post(f"/sessions/{sid}/wait", json={"timeout": 30}))["status"] == "paused"
    ok(http.post(f"/sessions/{sid}/watch", json={"expression": "a + b"}))
    ok(http.post(f"/sessions/{sid}/watch", json={"expression": "b"}))
    return sid


def plant(cluster: Cluster, sid: str, tmp: Path) -> dict[str, Path]:
    """Change a stored watch and a stored condition to code with a side effect, and add a watch of its own."""
    marks = {k: tmp / f"ran-{k}" for k in ("watch", "condition", "new_watch")}

    def change(record: dict[str, Any]) -> None:
        record["watches"][1]["expression"] = planting(marks["watch"])
        record["watches"].append({"id": "w9", "expression": planting(marks["new_watch"])})
        loop = next(b for b in record["breakpoints"] if b.get("line") == LOOP_BODY)
        loop["condition"] = planting(marks["condition"])

    tamper(cluster, sid, change)
    return marks


def shown_not_run(http: httpx.Client, sid: str, marks: dict[str, Path]) -> None:
    """The planted code is listed, marked unsealed, and never runs, while the relay's own goes on working."""
    watches = {w["watch_id"]: w for w in ok(http.get(f"/sessions/{sid}/watch"))["watches"]}
    listed = {b["line"]: b for b in ok(http.get(f"/sessions/{sid}/breakpoints"))["breakpoints"]}
    # a new breakpoint in the same file sends the file's breakpoints again: the unsealed one is not among them
    ok(http.post(f"/sessions/{sid}/breakpoints", json={"source": {"path": BASIC}, "line": CALL_AVERAGE}))
    ok(http.delete(f"/sessions/{sid}/breakpoints/{listed[ADD_BODY]['breakpoint_id']}"))
    ok(http.post(f"/sessions/{sid}/continue"))
    status = ok(http.post(f"/sessions/{sid}/wait", json={"timeout": 30}))
    assert [p.name for p in marks.values() if p.exists()] == []
    assert status["status"] == "terminated", status  # the loop ran on: its line's planted condition never ran

    assert watches["w1"]["result"] == "3" and not watches["w1"].get("unsealed")  # sealed: evaluated
    for wid in ("w2", "w9"):
        assert watches[wid]["unsealed"] is True and "result" not in watches[wid], watches[wid]
        assert "never run" in watches[wid]["error"]
    assert listed[LOOP_BODY]["unsealed"] is True and "ran-condition" in listed[LOOP_BODY]["condition"]
    assert not listed[ADD_BODY].get("unsealed")
    error_of(http.patch(f"/sessions/{sid}/breakpoints/{listed[LOOP_BODY]['breakpoint_id']}", json={}), 409, "unsealed")
    detail = ok(http.get(f"/sessions/{sid}"))
    assert any("never run" in note for note in detail["notes"]), detail["notes"]
    ok(http.delete(f"/sessions/{sid}"))


def test_planted_watches_and_conditions_are_shown_not_run_after_a_restart(cluster: Cluster, tmp_path: Path) -> None:
    first = cluster.relay()
    sid = paused_with_code(first.http)
    first.proc.kill()  # kill -9
    first.proc.wait(10)
    marks = plant(cluster, sid, tmp_path)
    second = cluster.relay()
    poll(lambda: ok(second.http.get(f"/sessions/{sid}/status")).get("recovered"), what="recovery")
    assert ok(second.http.get(f"/sessions/{sid}/status"))["status"] == "paused"  # its target was sealed
    shown_not_run(second.http, sid, marks)


def test_planted_code_is_not_run_by_a_replica_taking_a_session_over(cluster: Cluster, tmp_path: Path) -> None:
    token = "replicas-shared-token"
    owner, other = cluster.relay(DEBUGRELAY_TOKEN=token), cluster.relay(DEBUGRELAY_TOKEN=token)
    sid = paused_with_code(owner.http)
    owner.proc.kill()  # its lease is left behind, naming an address nothing listens on
    owner.proc.wait(10)
    marks = plant(cluster, sid, tmp_path)
    poll(lambda: ok(other.http.get(f"/sessions/{sid}/status")).get("recovered"), what="the take-over")
    assert ok(other.http.get(f"/sessions/{sid}/status"))["status"] == "paused"
    shown_not_run(other.http, sid, marks)


def test_a_planted_profile_is_shown_and_not_applied(cluster: Cluster, tmp_path: Path) -> None:
    relay = cluster.relay()
    line = {"source": {"path": BASIC}, "line": LOOP_BODY, "condition": "value > 100"}
    ok(relay.http.post("/breakpoint-profiles", json={"name": "mine", "breakpoints": [line]}), 201)
    marker = tmp_path / "ran"
    store = cluster.redis()
    try:
        key = f"{cluster.namespace}:profiles"
        profile = json.loads(store.hget(key, "mine"))  # type: ignore[arg-type]
        profile["breakpoints"][0]["condition"] = planting(marker)
        store.hset(key, "mine", json.dumps(profile))
    finally:
        store.close()
    sid = ok(relay.http.post("/sessions", json={}), 201)["session_id"]
    applied = relay.http.post(f"/sessions/{sid}/breakpoint-profiles/mine/apply")
    ok(relay.http.post(f"/sessions/{sid}/launch", json={"script": BASIC}))
    assert ok(relay.http.post(f"/sessions/{sid}/wait", json={"timeout": 30}))["status"] == "terminated"
    assert not marker.exists()
    error_of(applied, 409, "unsealed")
    assert ok(relay.http.get(f"/sessions/{sid}/breakpoints"))["breakpoints"] == []  # nothing changed
    listed = ok(relay.http.get("/breakpoint-profiles/mine"))
    assert listed["unsealed"] is True and "ran" in listed["breakpoints"][0]["condition"]
    ok(relay.http.post("/breakpoint-profiles", json={"name": "other", "breakpoints": [line]}), 201)
    assert not ok(relay.http.get("/breakpoint-profiles/other")).get("unsealed")
    assert ok(relay.http.post(f"/sessions/{sid}/breakpoint-profiles/other/apply"))["breakpoints"]


def test_a_planted_trace_is_shown_and_not_given_to_the_program(cluster: Cluster) -> None:
    first = cluster.relay()
    sid = ok(first.http.post("/sessions", json={}), 201)["session_id"]
    ok(first.http.post(f"/sessions/{sid}/traces", json={"function": f"{ORDERS}:fact"}), 201)
    ok(first.http.post(f"/sessions/{sid}/launch", json={"script": ORDERS}))
    assert ok(first.http.post(f"/sessions/{sid}/wait", json={"timeout": 60}))["status"] == "terminated"
    first.proc.kill()
    first.proc.wait(10)

    defined = next(n for n, text in enumerate(Path(ORDERS).read_text().splitlines(), 1) if text.startswith("def price"))

    def add_trace(record: dict[str, Any]) -> None:  # price, with the program's own reprs
        record["traces"].append(
            {**record["traces"][0], "id": "t9", "qualname": "price", "line": defined, "reprs": True}
        )

    tamper(cluster, sid, add_trace)
    second = cluster.relay()
    ok(second.http.post(f"/sessions/{sid}/restart"))  # launched again, with the session's traces
    assert ok(second.http.post(f"/sessions/{sid}/wait", json={"timeout": 60}))["status"] == "terminated"
    listed = {t["trace_id"]: t for t in ok(second.http.get(f"/sessions/{sid}/traces"))["traces"]}
    assert listed["t9"].get("total", 0) == 0, listed["t9"]  # the program was not told of it
    assert listed["t9"]["unsealed"] is True and "never run" in listed["t9"]["message"]
    assert listed["t1"]["total"] > 0 and not listed["t1"].get("unsealed")  # the relay's own: sealed, traced
    ok(second.http.delete(f"/sessions/{sid}"))


def test_no_value_in_the_store_passes_a_keepers_challenge(cluster: Cluster) -> None:
    relay = cluster.relay()
    sid = paused_with_code(relay.http)
    port = ok(relay.http.get(f"/sessions/{sid}"))["target"]["port"]
    store = cluster.redis()
    try:
        text = ""
        for key in store.scan_iter(match=f"{cluster.namespace}:*"):
            kind = store.type(key)
            if kind == b"hash":
                text += " ".join(f"{k!r} {v!r}" for k, v in store.hgetall(key).items())
            elif kind == b"string":
                text += repr(store.get(key))
        stored = json.loads(store.hget(f"{cluster.namespace}:sessions", sid))  # type: ignore[arg-type]
    finally:
        store.close()
    candidates = set(re.findall(r"[0-9a-zA-Z:_-]{32,}", text))
    assert stored["keeper_secret"] in candidates  # what the relay keeps of the secret, and all else, is no proof
    for candidate in sorted(candidates):
        with pytest.raises(ConnectionError):
            asyncio.run(DapClient.connect("127.0.0.1", port, secret=candidate))
    # the relay itself still proves itself: it drives the target, and after a restart it reconnects
    relay.proc.kill()
    relay.proc.wait(10)
    again = cluster.relay()
    poll(lambda: ok(again.http.get(f"/sessions/{sid}/status")).get("recovered"), what="recovery")
    assert ok(again.http.get(f"/sessions/{sid}/status"))["status"] == "paused"
    assert ok(again.http.post(f"/sessions/{sid}/evaluate", json={"expression": "a + b"}))["result"] == "3"
    ok(again.http.delete(f"/sessions/{sid}"))


def test_a_teams_paused_session_comes_back_paused_after_hand_over_clones_and_a_watch(cluster: Cluster) -> None:
    file = cluster.tmp / "credentials.toml"
    file.write_text(CREDENTIALS)
    env = {"DEBUGRELAY_CREDENTIALS": str(file)}
    first = cluster.relay(**env)

    async def burst(token: str, n: int) -> list[httpx.Response]:
        async with httpx.AsyncClient(timeout=180, headers=bearer(token)) as client:
            return await asyncio.gather(*(client.post(f"{first.url}/sessions", json={}) for _ in range(n)))

    sids = [ok(a, 201)["session_id"] for a in asyncio.run(burst(ALICE, 3))]
    alice = httpx.Client(base_url=first.url, timeout=60, headers=bearer(ALICE))
    bob = httpx.Client(base_url=first.url, timeout=60, headers=bearer(BOB))
    with alice, bob:
        sid = sids[0]
        ok(alice.post(f"/sessions/{sid}/breakpoints", json={"source": {"path": BASIC}, "line": ADD_BODY}))
        ok(alice.post(f"/sessions/{sid}/launch", json={"script": BASIC}))
        assert ok(alice.post(f"/sessions/{sid}/wait", json={"timeout": 30}))["status"] == "paused"
        ok(alice.post(f"/sessions/{sid}/hand-over", json={"to": "bob"}))
        ok(bob.post(f"/sessions/{sid}/clone", json={}), 201)
        clone = ok(bob.post(f"/sessions/{sid}/clone", json={"start": True}), 201)["session_id"]
        ok(bob.post(f"/sessions/{sid}/watch", json={"expression": "a + b"}))
    first.proc.kill()
    first.proc.wait(10)
    second = cluster.relay(**env)
    with httpx.Client(base_url=second.url, timeout=60, headers=bearer(ROOT)) as root:
        for one in (sid, clone):
            poll(lambda one=one: ok(root.get(f"/sessions/{one}/status")).get("recovered"), what="recovery")
        assert ok(root.get(f"/sessions/{sid}/status"))["status"] == "paused"
        assert ok(root.get(f"/sessions/{sid}/watch"))["watches"][0]["result"] == "3"
