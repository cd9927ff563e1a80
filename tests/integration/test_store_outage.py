"""Writes while Redis is down: every change is made, answered with ``"persisted": false`` and the
``X-Debugrelay-Persisted: false`` header, and written to Redis once it is back, so the answer matches
what Redis holds afterwards. One test per kind of write, on a real Redis (the project's image through
testcontainers where Docker is present) that is stopped, or paused in the middle of a write."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import psutil
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import Relay, error_of, line_of, ok, target
from tests.redis_server import Cluster, Redis, poll, start_redis

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TICK = target("persist_tick.py")
TICK_LINE = line_of(TICK, "tick")
PRINT_LINE = TICK_LINE + 1  # print("tick", ...)
HEADER = "X-Debugrelay-Persisted"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Redis]:
    server = start_redis(tmp_path_factory.mktemp("outage-redis"))
    yield server
    server.remove()


@pytest.fixture(scope="module")
def group(tmp_path_factory: pytest.TempPathFactory, store: Redis) -> Iterator[Cluster]:
    # a short lease: the relay notices the store is back (and writes through) within a second
    cluster = Cluster(tmp_path_factory.mktemp("outage"), store, DEBUGRELAY_LEASE_TTL="3")
    yield cluster
    _back(store)
    cluster.close()


def _back(store: Redis) -> None:
    """Redis running and answering, whatever a failed test left."""
    if not store.running:
        store.start()
    else:
        store.unpause()


@pytest.fixture
def relay(group: Cluster, store: Redis) -> Iterator[Relay]:
    _back(store)
    relay = group.relays[0] if group.relays else group.relay()
    yield relay
    _back(store)


@pytest.fixture
def down(store: Redis) -> Iterator[Callable[[], None]]:
    """Stop Redis (``docker stop`` / SIGTERM: its AOF is fsynced); started again after the test."""
    yield store.stop
    _back(store)


def stored(group: Cluster, sid: str) -> dict[str, Any] | None:
    client = group.redis()
    try:
        raw = client.hget(f"{group.namespace}:sessions", sid)
    finally:
        client.close()
    return json.loads(raw) if raw else None  # type: ignore[arg-type]


def written(relay: Relay, group: Cluster, sid: str, check: Callable[[dict[str, Any] | None], bool]) -> Any:
    """Once Redis is back: the stored record (None when deleted) as ``check`` wants it, nothing left to write."""

    def done() -> Any:
        if ok(relay.http.get("/health")).get("unpersisted_writes", 0):
            return None
        record = stored(group, sid)
        return (record or "gone") if check(record) else None

    found = poll(done, what="the change written to Redis")
    return None if found == "gone" else found


def unpersisted(response: httpx.Response) -> dict[str, Any]:
    """A change that was made while the store was down, and says so."""
    body: dict[str, Any] = ok(response)
    assert response.headers.get(HEADER) == "false", response.headers
    assert body["persisted"] is False, body
    return body


def paused_at_tick(http: httpx.Client) -> str:
    sid: str = ok(http.post("/sessions", json={}), 201)["session_id"]
    ok(http.post(f"/sessions/{sid}/breakpoints", json={"source": {"path": TICK}, "line": TICK_LINE}))
    ok(http.post(f"/sessions/{sid}/launch", json={"script": TICK}))
    status = ok(http.post(f"/sessions/{sid}/wait", json={"timeout": 30}))
    assert status["status"] == "paused" and status["location"]["line"] == TICK_LINE, status
    return sid


def lines(record: dict[str, Any] | None) -> list[int]:
    return sorted(b["line"] for b in (record or {}).get("breakpoints", []) if not b.get("internal"))


def test_breakpoints_set_and_removed_while_redis_is_down_are_live_and_written_through(
    relay: Relay, group: Cluster, down: Callable[[], None]
) -> None:
    http = relay.http
    sid = paused_at_tick(http)
    first = ok(http.get(f"/sessions/{sid}/breakpoints"))["breakpoints"][0]["breakpoint_id"]
    ordinary = http.post(f"/sessions/{sid}/evaluate", json={"expression": "count"})
    assert HEADER not in ordinary.headers and "persisted" not in ordinary.json()  # only when it matters

    down()
    added = unpersisted(http.post(f"/sessions/{sid}/breakpoints", json={"source": {"path": TICK}, "line": PRINT_LINE}))
    assert added["verified"] is True and added["line"] == PRINT_LINE
    assert unpersisted(http.delete(f"/sessions/{sid}/breakpoints/{first}"))["deleted"] is True
    assert ok(http.get("/health"))["unpersisted_writes"] >= 1
    # live in the program now, not only in memory: it stops there, and no longer at the removed one
    unpersisted(http.post(f"/sessions/{sid}/continue"))
    status = ok(http.post(f"/sessions/{sid}/wait", json={"timeout": 30}))
    assert status["location"]["line"] == PRINT_LINE, status

    group.server.start()
    assert lines(written(relay, group, sid, lambda r: lines(r) == [PRINT_LINE])) == [PRINT_LINE]
    ok(http.post(f"/sessions/{sid}/continue"))
    assert ok(http.post(f"/sessions/{sid}/wait", json={"timeout": 30}))["location"]["line"] == PRINT_LINE


def test_steps_and_resumes_while_redis_is_down_answer_where_the_program_is(
    relay: Relay, group: Cluster, down: Callable[[], None]
) -> None:
    http = relay.http
    sid = paused_at_tick(http)
    before = ok(http.post(f"/sessions/{sid}/evaluate", json={"expression": "count"}))["result"]

    down()
    stepped = unpersisted(http.post(f"/sessions/{sid}/step-over"))
    assert stepped["status"] == "paused" and stepped["location"]["line"] == PRINT_LINE, stepped
    resumed = unpersisted(http.post(f"/sessions/{sid}/continue"))
    assert resumed["status"] in ("running", "paused"), resumed
    again = ok(http.post(f"/sessions/{sid}/wait", json={"timeout": 30}))
    assert again["location"]["line"] == TICK_LINE
    after = ok(http.post(f"/sessions/{sid}/evaluate", json={"expression": "count"}))["result"]
    assert int(after) == int(before) + 1  # one iteration ran, as answered

    group.server.start()

    def at_next_tick(record: dict[str, Any] | None) -> bool:
        stop = (record or {}).get("stop") or {}
        return stop.get("location", {}).get("line") == TICK_LINE and record is not None and record["status"] == "paused"

    assert written(relay, group, sid, at_next_tick)["status"] == "paused"


def test_a_launch_while_redis_is_down_runs_and_is_recorded_when_it_is_back(
    relay: Relay, group: Cluster, down: Callable[[], None]
) -> None:
    http = relay.http
    sid = ok(http.post("/sessions", json={"name": "launched in the outage"}), 201)["session_id"]
    ok(http.post(f"/sessions/{sid}/breakpoints", json={"source": {"path": TICK}, "line": TICK_LINE}))

    down()
    launched = unpersisted(http.post(f"/sessions/{sid}/launch", json={"script": TICK}))
    assert launched["status"] in ("running", "paused"), launched
    paused = ok(http.post(f"/sessions/{sid}/wait", json={"timeout": 30}))
    assert paused["status"] == "paused" and paused["location"]["line"] == TICK_LINE

    group.server.start()
    record = written(relay, group, sid, lambda r: r is not None and r["status"] == "paused")
    assert record["launch"]["script"] == TICK and record["target"], record


def test_a_session_deleted_while_redis_is_down_is_gone_and_stays_gone(
    relay: Relay, group: Cluster, down: Callable[[], None]
) -> None:
    http = relay.http
    sid = paused_at_tick(http)
    pid = (stored(group, sid) or {})["target"]["pid"]
    assert psutil.pid_exists(pid)

    down()
    assert unpersisted(http.delete(f"/sessions/{sid}"))["deleted"] is True
    error_of(http.get(f"/sessions/{sid}"), 404, "session_not_found")
    poll(
        lambda: not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE, what="target ended"
    )

    group.server.start()
    assert written(relay, group, sid, lambda r: r is None) is None
    listed = {s["session_id"] for s in ok(http.get("/sessions"))["sessions"]}
    assert sid not in listed


def test_watches_added_while_redis_is_down_are_answered_and_kept(
    relay: Relay, group: Cluster, down: Callable[[], None]
) -> None:
    http = relay.http
    sid = paused_at_tick(http)
    count = ok(http.post(f"/sessions/{sid}/evaluate", json={"expression": "count"}))["result"]

    down()
    watch = unpersisted(http.post(f"/sessions/{sid}/watch", json={"expression": "count * 10"}))
    assert watch["result"] == str(int(count) * 10), watch

    group.server.start()
    record = written(relay, group, sid, lambda r: bool(r and r["watches"]))
    assert [w["expression"] for w in record["watches"]] == ["count * 10"]


def test_options_changed_while_redis_is_down_are_in_force_and_kept(
    relay: Relay, group: Cluster, down: Callable[[], None]
) -> None:
    http = relay.http
    sid = paused_at_tick(http)

    down()
    renamed = unpersisted(http.patch(f"/sessions/{sid}", json={"name": "renamed", "timeout_minutes": 7}))
    assert renamed["name"] == "renamed"
    filters = unpersisted(http.post(f"/sessions/{sid}/exception-breakpoints", json={"filters": ["raised"]}))
    assert filters["filters"] == ["raised"]
    assert ok(http.get(f"/sessions/{sid}/exception-breakpoints"))["filters"] == ["raised"]

    group.server.start()
    record = written(relay, group, sid, lambda r: bool(r and r["name"] == "renamed"))
    assert record["timeout_minutes"] == 7
    assert record["exception_filters"]["filters"] == ["raised"]


def test_a_new_session_is_refused_while_redis_is_down_and_nothing_is_created(
    relay: Relay, group: Cluster, down: Callable[[], None]
) -> None:
    http = relay.http
    before = ok(http.get("/health"))["sessions"]

    down()
    err = error_of(http.post("/sessions", json={"name": "not now"}), 503, "store_unavailable")
    assert err["hint"]
    assert ok(http.get("/health"))["sessions"] == before

    group.server.start()
    poll(lambda: http.get("/sessions").status_code == 200, what="Redis in use again")
    names = [s.get("name") for s in ok(http.get("/sessions"))["sessions"]]
    assert "not now" not in names
    assert ok(http.get("/health"))["sessions"] == before


def test_redis_paused_in_the_middle_of_a_write_leaves_nothing_half_done(relay: Relay, group: Cluster) -> None:
    http = relay.http
    sid = paused_at_tick(http)

    group.server.pause()  # frozen: the write's connection hangs until the store's timeout
    try:
        added = unpersisted(
            http.post(f"/sessions/{sid}/breakpoints", json={"source": {"path": TICK}, "line": PRINT_LINE})
        )
    finally:
        group.server.unpause()
    assert added["verified"] is True

    record = written(relay, group, sid, lambda r: lines(r) == [TICK_LINE, PRINT_LINE])
    assert lines(record) == [TICK_LINE, PRINT_LINE]
    ok(http.post(f"/sessions/{sid}/continue"))
    assert ok(http.post(f"/sessions/{sid}/wait", json={"timeout": 30}))["location"]["line"] == PRINT_LINE


async def test_mcp_tools_say_a_change_is_not_persisted_yet(
    relay: Relay, group: Cluster, down: Callable[[], None]
) -> None:
    sid = paused_at_tick(relay.http)
    async with (
        streamable_http_client(f"{relay.url}/mcp") as (read, write, *_),
        ClientSession(read, write) as mcp,
    ):
        await mcp.initialize()
        down()
        result = await mcp.call_tool("debug_set_breakpoint", {"session_id": sid, "file": TICK, "line": PRINT_LINE})
        answer = json.loads(result.content[0].text)  # type: ignore[union-attr]
        assert not result.is_error and answer["persisted"] is False, answer
        read_only = await mcp.call_tool("evaluate", {"session_id": sid, "expression": "count"})
        assert "persisted" not in json.loads(read_only.content[0].text)  # type: ignore[union-attr]

    group.server.start()
    assert lines(written(relay, group, sid, lambda r: lines(r) == [TICK_LINE, PRINT_LINE])) == [TICK_LINE, PRINT_LINE]


def test_a_hung_redis_takes_the_relay_out_of_service_without_failing_its_liveness(relay: Relay, store: Redis) -> None:
    """Redis frozen (connections accepted, never answered): readiness says so at once (503, within its bound),
    liveness never asks the store (200), and both answer a kubelet that names the pod's address as Host."""
    assert ok(relay.http.get("/readyz"))["status"] == "ready"
    store.pause()
    try:
        live = relay.http.get("/livez", headers={"Host": "10.42.0.17:8765"})
        assert (live.status_code, live.json()) == (200, {"status": "ok"})
        ready = relay.http.get("/readyz", headers={"Host": "10.42.0.17:8765"})
        assert ready.status_code == 503
        assert ready.json() == {"status": "unready", "store": "redis", "store_ok": False, "within": 0.8}
        assert ok(relay.http.get("/health"))["store_ok"] is False  # answered, not held for the store's timeout
        error_of(relay.http.get("/sessions", headers={"Host": "10.42.0.17:8765"}), 400, "invalid_host")
    finally:
        store.unpause()
    poll(lambda: relay.http.get("/readyz").status_code == 200, what="the relay ready again")
