"""Sessions survive relay restarts; Redis is the source of truth (spec AC-BP-7,
AC-PE-1..4, 5.7, 6.1). Real redis-server, real relay processes, real debugpy targets."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from debugrelay.launchers import kill_tree
from debugrelay.sessions import ACTIVE
from tests.conftest import line_of, ok, target
from tests.redis_server import Cluster, Redis, poll, start_redis

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TICK = target("persist_tick.py")
TICK_LINE = line_of(TICK, "tick")


# -- helpers: one HTTP call each, as an agent would make them ----------------------------------------


def create(http: httpx.Client, **body: Any) -> str:
    sid: str = ok(http.post("/sessions", json=body), 201)["session_id"]
    return sid


def set_bp(http: httpx.Client, sid: str, **extra: Any) -> dict[str, Any]:
    result: dict[str, Any] = ok(
        http.post(f"/sessions/{sid}/breakpoints", json={"source": {"path": TICK}, "line": TICK_LINE, **extra})
    )
    return result


def wait(http: httpx.Client, sid: str, timeout: float = 30) -> dict[str, Any]:
    status: dict[str, Any] = ok(http.post(f"/sessions/{sid}/wait", json={"timeout": timeout}))
    return status


def ticking(http: httpx.Client, name: str | None = None, **bp: Any) -> str:
    """A target paused at its tick breakpoint (which hits on every iteration)."""
    sid = create(http, name=name)
    set_bp(http, sid, **bp)
    ok(http.post(f"/sessions/{sid}/launch", json={"script": TICK}))
    assert wait(http, sid)["status"] == "paused"
    return sid


def count(http: httpx.Client, sid: str) -> int:
    return int(ok(http.post(f"/sessions/{sid}/evaluate", json={"expression": "count"}))["result"])


def paused_at_tick(status: dict[str, Any]) -> bool:
    return status["status"] == "paused" and status.get("location", {}).get("line") == TICK_LINE


def breakpoints(http: httpx.Client, sid: str) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = ok(http.get(f"/sessions/{sid}/breakpoints"))["breakpoints"]
    return listed


def asked(bps: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What the agent asked for, not what a run made of it (hit counts)."""
    return [(b["breakpoint_id"], b["file"], b["line"], b.get("condition"), b["enabled"]) for b in bps]


def target_pid(http: httpx.Client, sid: str) -> int:
    pid: int = ok(http.get(f"/sessions/{sid}"))["target"]["pid"]
    return pid


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def all_output(http: httpx.Client, sid: str) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    since = None
    while True:
        params: dict[str, Any] = {"limit": 1000, **({"since": since} if since else {})}
        page = ok(http.get(f"/sessions/{sid}/output", params=params))
        entries += page["outputs"]
        since = page["cursor"]
        if not page["has_more"]:
            return entries


def ticks(entries: list[dict[str, Any]]) -> list[int]:
    text = "".join(e["text"] for e in entries if e["type"] == "stdout")
    return [int(n) for n in re.findall(r"^tick (\d+)$", text, re.MULTILINE)]


def instance_of(relay_http: httpx.Client) -> str:
    instance: str = ok(relay_http.get("/cluster"))["instance_id"]
    return instance


# -- AC-BP-7 / AC-PE-2: kill -9 the relay, start another: every session is back ---------------------


def test_ac_bp_7_breakpoints_persist_across_relay_restarts(cluster: Cluster) -> None:
    first = cluster.relay()
    paused = ticking(first.http, "paused")
    running = ticking(first.http, "running", condition="count % 25 == 0")
    ok(first.http.post(f"/sessions/{running}/continue"))
    waiting = create(first.http, name="not launched yet")
    set_bp(first.http, waiting)
    ok(first.http.post(f"/sessions/{waiting}/exception-breakpoints", json={"filters": ["uncaught"]}))
    before = {sid: asked(breakpoints(first.http, sid)) for sid in (paused, running, waiting)}
    pids = {sid: target_pid(first.http, sid) for sid in (paused, running)}
    paused_at = count(first.http, paused)

    first.proc.kill()  # kill -9: nothing of the relay runs its shutdown
    first.proc.wait(10)
    assert all(alive(pid) for pid in pids.values()), "targets must outlive the relay"

    second = cluster.relay()
    listed = {s["session_id"]: s for s in ok(second.http.get("/sessions"))["sessions"]}
    assert {paused, running, waiting} <= set(listed)
    assert listed[waiting]["status"] == "created"
    for sid, bps in before.items():
        assert asked(breakpoints(second.http, sid)) == bps

    # the keeper kept the paused target paused where it was, its breakpoints set
    status = wait(second.http, paused)
    assert paused_at_tick(status)
    assert status["recovered"] is True
    detail = ok(second.http.get(f"/sessions/{paused}"))
    assert detail["target"]["pid"] == pids[paused]
    assert any("still paused" in note for note in detail["notes"])
    seen = count(second.http, paused)
    assert seen == paused_at
    ok(second.http.post(f"/sessions/{paused}/continue"))
    assert paused_at_tick(wait(second.http, paused))
    assert count(second.http, paused) > seen

    assert paused_at_tick(wait(second.http, running))
    assert count(second.http, running) % 25 == 0  # the condition came back too

    exceptions = ok(second.http.get(f"/sessions/{waiting}/exception-breakpoints"))
    assert exceptions["filters"] == ["uncaught"]
    ok(second.http.post(f"/sessions/{waiting}/launch", json={"script": TICK}))
    assert paused_at_tick(wait(second.http, waiting))


def test_ac_pe_1_breakpoints_are_saved_when_set(cluster: Cluster) -> None:
    relay = cluster.relay()
    sid = create(relay.http)
    bp = set_bp(relay.http, sid, condition="count > 3")
    store = cluster.redis()

    def stored() -> list[dict[str, Any]]:
        record = json.loads(store.hget(f"{cluster.namespace}:sessions", sid))  # type: ignore[arg-type]
        return [b for b in record.get("breakpoints", []) if not b.get("internal")]

    assert [(b["id"], b["file"], b["line"], b["condition"]) for b in stored()] == [
        (bp["breakpoint_id"], TICK, TICK_LINE, "count > 3")
    ]
    ok(relay.http.patch(f"/sessions/{sid}/breakpoints/{bp['breakpoint_id']}", json={"enabled": False}))
    assert stored()[0]["enabled"] is False
    ok(relay.http.delete(f"/sessions/{sid}/breakpoints/{bp['breakpoint_id']}"))
    assert stored() == []
    store.close()


def test_ac_pe_2_graceful_restart_leaves_targets_for_the_next_relay(cluster: Cluster) -> None:
    first = cluster.relay()
    sid = ticking(first.http)
    pid = target_pid(first.http, sid)
    assert ok(first.http.get("/cluster"))["keep_targets_on_shutdown"] is True

    ok(first.http.post("/shutdown"))
    first.proc.wait(30)
    assert alive(pid)
    assert "left 1 session(s) to the next relay" in first.log.read_text()

    second = cluster.relay()
    status = wait(second.http, sid)
    assert paused_at_tick(status)
    assert status["recovered"] is True
    assert target_pid(second.http, sid) == pid


def test_shutdown_ends_targets_when_told_not_to_keep_them(cluster: Cluster) -> None:
    relay = cluster.relay(DEBUGRELAY_KEEP_TARGETS_ON_SHUTDOWN="false")
    sid = ticking(relay.http)
    pid = target_pid(relay.http, sid)
    relay.stop()  # SIGTERM
    assert not alive(pid)
    record = json.loads(cluster.redis().hget(f"{cluster.namespace}:sessions", sid))  # type: ignore[arg-type]
    assert record["status"] == "terminated"
    assert record["reason"] == "relay_shutdown"


def test_target_that_died_while_no_relay_ran_is_terminated_with_its_log(cluster: Cluster) -> None:
    first = cluster.relay()
    sid = ticking(first.http)
    ok(first.http.post(f"/sessions/{sid}/continue"))
    pid = target_pid(first.http, sid)
    # the program has printed before it dies: its log has something to show
    poll(lambda: any("tick 1" in e["text"] for e in all_output(first.http, sid)))
    first.proc.kill()
    first.proc.wait(10)
    kill_tree(pid)

    second = cluster.relay()
    # the new relay takes the session over as it starts; its answer settles once that is done
    status = poll(lambda: (s := ok(second.http.get(f"/sessions/{sid}/status")))["status"] not in ACTIVE and s)
    assert status["status"] == "terminated"
    assert status["reason"] == "target_exited"
    assert status["exit_code"] is None  # the exit code died with the relay that was its parent
    entries = all_output(second.http, sid)
    logged = [e for e in entries if e["type"] == "log"]
    assert logged
    assert "the target ended while no relay was attached" in logged[0]["text"]
    assert "tick 1" in logged[0]["text"]
    notes = ok(second.http.get(f"/sessions/{sid}"))["notes"]
    assert any("exit code unknown" in note for note in notes)


# -- AC-PE-3: where the state lives is configurable ------------------------------------------------


def test_ac_pe_3_persistence_location_is_configurable(cluster: Cluster, redis_server: Redis) -> None:
    db1 = redis_server.url.rsplit("/", 1)[0] + "/1"
    relay = cluster.relay(DEBUGRELAY_REDIS_URL=db1, DEBUGRELAY_REDIS_NAMESPACE=f"{cluster.namespace}-x")
    sid = create(relay.http, name="elsewhere")
    config = ok(relay.http.get("/config"))
    assert config["redis_url"] == re.sub(r"//:[^@]+@", "//:***@", db1)  # a password is never shown
    assert config["redis_namespace"] == f"{cluster.namespace}-x"
    import redis

    other_db = redis.Redis.from_url(db1)
    assert other_db.hexists(f"{cluster.namespace}-x:sessions", sid)
    other_db.delete(*other_db.keys(f"{cluster.namespace}-x:*"))
    other_db.close()
    assert not cluster.redis().exists(f"{cluster.namespace}-x:sessions")  # nothing in db 0

    neighbour = cluster.relay()  # the default db and this test's namespace: none of those sessions
    assert sid not in [s["session_id"] for s in ok(neighbour.http.get("/sessions"))["sessions"]]


# -- AC-PE-4: unreadable data is skipped with a warning, never a crash -------------------------------


def test_ac_pe_4_invalid_persistence_data_is_skipped(cluster: Cluster) -> None:
    ns = cluster.namespace
    store = cluster.redis()
    good = {"id": "sess_good", "name": "good", "status": "created", "created_at": 1.0, "last_activity": 4e9}
    store.hset(
        f"{ns}:sessions",
        mapping={
            "sess_good": json.dumps(good),
            "sess_badjson": b"{not json",
            "sess_wrongshape": json.dumps({"id": "sess_wrongshape", "status": "exploded"}),
            "sess_foreign": json.dumps({**good, "id": "sess_somebody_else"}),
            b"\xff\xfe": b"\x00binary",
        },
    )
    store.set(f"{ns}:activity", "not a hash")
    store.set(f"{ns}:lease:sess_good", "garbage lease", px=60_000)
    store.hset(f"{ns}:output:sess_good", "not", "a stream")
    store.set(f"{ns}:unrelated", "left alone")

    relay = cluster.relay()
    assert ok(relay.http.get("/health"))["status"] == "ok"
    listed = [s["session_id"] for s in ok(relay.http.get("/sessions"))["sessions"]]
    assert listed == ["sess_good"]
    assert ok(relay.http.get("/sessions/sess_good/output"))["outputs"] == []
    assert relay.http.get("/sessions/sess_badjson/status").status_code == 404
    set_bp(relay.http, "sess_good")  # the good session is usable
    log = relay.log.read_text()
    assert "skipping unreadable session record 'sess_badjson'" in log
    assert "skipping foreign session record 'sess_foreign'" in log
    assert f"'{ns}:activity' held a string" in log
    assert store.get(f"{ns}:unrelated") == b"left alone"
    store.close()


def test_ac_pe_4_a_sessions_key_of_the_wrong_type_is_set_aside(cluster: Cluster) -> None:
    store = cluster.redis()
    store.set(f"{cluster.namespace}:sessions", "this is not a hash")
    relay = cluster.relay()
    poll(lambda: "moved to" in relay.log.read_text(), what="the bad key set aside")
    assert ok(relay.http.get("/sessions"))["sessions"] == []
    sid = create(relay.http)
    assert store.hexists(f"{cluster.namespace}:sessions", sid)
    aside = list(store.scan_iter(match=f"{cluster.namespace}:sessions:unreadable:*"))
    assert len(aside) == 1
    assert store.get(aside[0]) == b"this is not a hash"
    store.close()


# -- replicas: one owner per session, forwarding, takeover ------------------------------------------


def test_two_replicas_forward_to_the_owner_and_take_over_when_it_dies(cluster: Cluster) -> None:
    owner, other = cluster.relay(), cluster.relay()
    owner_id, other_id = instance_of(owner.http), instance_of(other.http)
    sid = ticking(owner.http)
    mine = create(other.http, name="the other's own")

    listed = {s["session_id"] for s in ok(other.http.get("/sessions"))["sessions"]}
    assert {sid, mine} <= listed
    assert {sid, mine} <= {s["session_id"] for s in ok(owner.http.get("/sessions"))["sessions"]}

    forwarded = other.http.get(f"/sessions/{sid}/status")
    assert forwarded.status_code == 200
    assert forwarded.headers["x-debugrelay-served-by"] == owner_id
    assert paused_at_tick(forwarded.json())
    seen = count(other.http, sid)  # a POST with a body, through the other replica
    ok(other.http.post(f"/sessions/{sid}/continue", json={}))
    assert paused_at_tick(wait(other.http, sid))
    assert count(other.http, sid) > seen
    assert "x-debugrelay-served-by" not in other.http.get(f"/sessions/{mine}").headers
    assert owner.http.get(f"/sessions/{mine}").headers["x-debugrelay-served-by"] == other_id

    owner.proc.kill()
    owner.proc.wait(10)

    def served_here() -> dict[str, Any] | None:
        response = other.http.get(f"/sessions/{sid}/status")
        if response.status_code == 200 and "x-debugrelay-served-by" not in response.headers:
            return response.json()  # type: ignore[no-any-return]
        assert response.status_code in (200, 503), response.text
        return None

    status = poll(served_here, what="the other replica serving the session")
    assert status["recovered"] is True
    assert paused_at_tick(wait(other.http, sid))
    seen = count(other.http, sid)
    ok(other.http.post(f"/sessions/{sid}/continue"))
    assert paused_at_tick(wait(other.http, sid))
    assert count(other.http, sid) > seen
    assert ok(other.http.get("/cluster"))["sessions_owned"] == 2


def test_a_replica_refuses_a_body_nested_too_deep_itself_and_forwards_none(cluster: Cluster) -> None:
    owner, other = cluster.relay(), cluster.relay()
    sid = create(owner.http, name="held by the owner")
    deep: Any = "leaf"
    for _ in range(600):
        deep = [deep]
    refused = other.http.post(f"/sessions/{sid}/breakpoints", json={"source": {"path": TICK}, "line": deep})
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["details"] == {"max_depth": 64}
    assert "x-debugrelay-served-by" not in refused.headers  # answered by the replica asked, never forwarded
    assert ok(owner.http.get(f"/sessions/{sid}/breakpoints"))["breakpoints"] == []
    forwarded = other.http.get(f"/sessions/{sid}/breakpoints")
    assert forwarded.headers["x-debugrelay-served-by"] == instance_of(owner.http)


# -- Redis faults ------------------------------------------------------------------------------------


class Load:
    """Requests in a loop on another thread, every answer kept: (status, error code)."""

    def __init__(self, url: str, paths: list[str]) -> None:
        self.url, self.paths = url, paths
        self.answers: list[tuple[int, str]] = []
        self.done = threading.Event()
        self.worker = threading.Thread(target=self.run)

    def run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=15) as http:  # a hang would fail here
            while not self.done.is_set():
                for path in self.paths:
                    response = http.get(path)
                    code = response.json()["error"]["code"] if response.status_code >= 400 else ""
                    self.answers.append((response.status_code, code))

    def __enter__(self) -> Load:
        self.worker.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.done.set()
        self.worker.join(30)


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[tuple[Redis, Cluster]]:
    """A Redis of this test's own, to stop and start again."""
    server = start_redis(tmp_path / "own-redis")
    group = Cluster(tmp_path, server)
    yield server, group
    group.close()
    server.remove()


def test_redis_restart_under_load(own_redis: tuple[Redis, Cluster]) -> None:
    server, group = own_redis
    relay = group.relay()
    printing = create(relay.http, name="prints ticks")
    ok(relay.http.post(f"/sessions/{printing}/launch", json={"script": TICK}))
    stopping = ticking(relay.http, "stops at ticks")
    bps_before = asked(breakpoints(relay.http, stopping))
    poll(lambda: len(ticks(all_output(relay.http, printing))) > 20, what="output flowing")

    paths = ["/sessions", f"/sessions/{stopping}/status", f"/sessions/{printing}/output?limit=5"]
    with Load(relay.url, paths) as load:
        server.stop()
        down = relay.http.get("/sessions")
        assert down.status_code == 503, down.text
        error = down.json()["error"]
        assert error["code"] == "store_unavailable"
        assert "retry" in error["hint"]
        assert relay.http.post("/sessions", json={}).status_code == 503
        assert ok(relay.http.get("/health"))["store_ok"] is False
        assert paused_at_tick(ok(relay.http.get(f"/sessions/{stopping}/status")))  # held in memory
        poll(lambda: any(code == "store_unavailable" for _, code in load.answers), what="load seeing the outage")

        server.start()  # same port, same dir: the append-only file brings the data back
        poll(lambda: relay.http.get("/sessions").status_code == 200, what="the relay using Redis again")
    assert {status for status, _ in load.answers} <= {200, 503}
    assert {code for status, code in load.answers if status == 503} == {"store_unavailable"}

    # nothing lost: the ticks printed during the outage were kept and written once Redis was back
    def caught_up() -> list[int] | None:
        numbers = ticks(all_output(relay.http, printing))
        return numbers if len(numbers) > 100 else None

    numbers = poll(caught_up, what="output after the restart")
    assert numbers == list(range(1, len(numbers) + 1))
    assert asked(breakpoints(relay.http, stopping)) == bps_before
    listed = {s["session_id"] for s in ok(relay.http.get("/sessions"))["sessions"]}
    assert {printing, stopping} <= listed
    ok(relay.http.post(f"/sessions/{stopping}/continue"))
    assert paused_at_tick(wait(relay.http, stopping))


# -- spec 5.7: export, import, clone -----------------------------------------------------------------


def test_export_import_and_clone(cluster: Cluster) -> None:
    relay = cluster.relay()
    sid = create(relay.http, name="original", timeout_minutes=5)
    set_bp(relay.http, sid, condition="count % 3 == 0")
    ok(relay.http.post(f"/sessions/{sid}/exception-breakpoints", json={"filters": ["uncaught"]}))
    ok(relay.http.post(f"/sessions/{sid}/launch", json={"script": TICK, "args": ["--fast"]}))
    assert paused_at_tick(wait(relay.http, sid))

    doc = ok(relay.http.get(f"/sessions/{sid}/export"))
    assert doc["format"] == "debugrelay.session/1"
    assert doc["name"] == "original"
    assert doc["timeout_minutes"] == 5
    assert doc["mode"] == "launch"
    assert doc["launch"] == {
        "script": TICK,
        "args": ["--fast"],
        "stop_on_entry": False,
        "debug_subprocesses": False,
        "just_my_code": False,
        "writable": False,
        "pool": True,
        "root": False,
    }
    assert doc["breakpoints"] == [{"file": TICK, "line": TICK_LINE, "condition": "count % 3 == 0", "enabled": True}]
    assert doc["exception_filters"] == {"filters": ["uncaught"]}

    imported = ok(relay.http.post("/sessions/import", json=doc), 201)
    assert imported["status"] == "created"
    assert imported["name"] == "original"
    assert imported["breakpoints_set"] == 1
    assert imported["timeout_minutes"] == 5
    new = imported["session_id"]
    assert [(b["file"], b["line"], b["condition"]) for b in breakpoints(relay.http, new)] == [
        (TICK, TICK_LINE, "count % 3 == 0")
    ]
    assert ok(relay.http.get(f"/sessions/{new}/exception-breakpoints"))["filters"] == ["uncaught"]

    started = ok(relay.http.post("/sessions/import", json={**doc, "name": "started", "start": True}), 201)
    assert paused_at_tick(wait(relay.http, started["session_id"]))
    assert count(relay.http, started["session_id"]) % 3 == 0

    copy = ok(relay.http.post(f"/sessions/{sid}/clone", json={"name": "copy", "start": True}), 201)
    assert copy["cloned_from"] == sid
    assert copy["name"] == "copy"
    assert paused_at_tick(wait(relay.http, copy["session_id"]))
    assert ok(relay.http.post(f"/sessions/{sid}/clone"), 201)["name"] == "original (clone)"

    partly = {**doc, "breakpoints": [*doc["breakpoints"], {"file": TICK, "line": 9999}]}
    report = ok(relay.http.post("/sessions/import", json=partly), 201)
    assert report["breakpoints_set"] == 1
    assert report["skipped"][0]["error"]["code"] == "invalid_line"

    bad = relay.http.post("/sessions/import", json={**doc, "surprise": 1})
    assert bad.status_code == 400
    assert relay.http.post("/sessions/import", json={**doc, "format": "other/9"}).status_code == 400
