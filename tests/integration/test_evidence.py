"""Seed 002 for Python: snapshots, post-mortem, capture points, the evidence store and known patterns,
on real debugpy targets through the HTTP API."""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest

from tests.conftest import Sessions, debugpy_listening, error_of, free_port, line_of, ok, output_text, target, until
from tests.redis_server import Cluster

pytestmark = pytest.mark.integration

DEADLOCK = target("ev_deadlock.py")
POOL = target("ev_pool.py")
ASYNC = target("ev_async.py")
LEAK = target("ev_leak.py")
STORM = target("ev_storm.py")
LOOP = target("ev_loop.py")
CRASH = target("ex_thread.py")


def running(api: httpx.Client, sessions: Sessions, script: str, **launch: Any) -> str:
    """A session whose program runs and has said 'started'."""
    sid = sessions.create()
    sessions.launch(sid, script, **launch)
    until(lambda: "started" in output_text(api, sid), "the program to start")
    return sid


def analyze(api: httpx.Client, sid: str, **body: Any) -> dict[str, Any]:
    out: dict[str, Any] = ok(api.post(f"/sessions/{sid}/analyze", json=body))
    return out


def named(analysis: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["pattern"]: m for m in analysis["matches"]}


def test_a_hanging_service_snapshot_then_analyze_names_the_deadlock_with_both_stacks(
    api: httpx.Client, sessions: Sessions
) -> None:
    sid = running(api, sessions, DEADLOCK)
    until(lambda: len(ok(api.get(f"/sessions/{sid}/threads"))["threads"]) >= 3, "both threads")
    snap = ok(api.post(f"/sessions/{sid}/snapshots"), 201)
    assert snap["program"] == "running" and snap["paused_ms"] > 0
    threads = {t["name"]: t for t in snap["threads"]}
    assert threads["transfer"]["waits_for"].startswith("lock_b")
    assert threads["audit"]["waits_for"].startswith("lock_a")

    found = named(analyze(api, sid, snapshot_ids=[snap["snapshot_id"]]))
    deadlock = found["deadlock"]
    assert deadlock["evidence_ids"] == [snap["snapshot_id"]]
    cycle = {t["thread"]: t for t in deadlock["evidence"]["threads"]}
    assert cycle["transfer"]["holds"] == ["lock_a"] and cycle["transfer"]["waits_for"] == "lock_b"
    assert cycle["audit"]["holds"] == ["lock_b"] and cycle["audit"]["waits_for"] == "lock_a"
    assert cycle["transfer"]["stack"][0] == f"ev_deadlock.py:{line_of(DEADLOCK, 'transfer-waits')} transfer"
    assert cycle["audit"]["stack"][0] == f"ev_deadlock.py:{line_of(DEADLOCK, 'audit-waits')} audit"
    # the program was left running, as it was
    assert ok(api.get(f"/sessions/{sid}"))["status"] == "running"


def test_a_paused_program_is_snapshot_where_it_is_and_stays_paused(api: httpx.Client, sessions: Sessions) -> None:
    secrets = target("secrets.py")
    sid, status = sessions.start_at(secrets, "secrets-stop")
    snap = ok(api.post(f"/sessions/{sid}/snapshots", json={"chars": 64}), 201)
    assert snap["program"] == "paused" and "paused_ms" not in snap
    assert snap["threads"][0]["top"] == f"secrets.py:{line_of(secrets, 'secrets-stop')} connect"
    whole = ok(api.get(f"/sessions/{sid}/snapshots/{snap['snapshot_id']}"))
    frame = whole["data"]["threads"][0]["frames"][0]
    # redaction applies to snapshots: no secret of the program reaches the agent
    text = str(whole)
    assert "Tr0ub4dor3x" not in text and "ghp_R2d2" not in text and "4111 1111" not in text
    assert frame["locals"]["card"].startswith("'[CARD_")
    assert frame["locals"]["password"].startswith("'[SECRET_")
    page = ok(api.get(f"/evidence/{snap['snapshot_id']}", params={"limit": 1000}))
    kept = "\n".join(page["lines"])
    assert '"card": "\'[CARD_' in kept
    assert "hunter2" not in kept and "Tr0ub4dor3x" not in kept and "ghp_R2d2" not in kept and "4111 1111" not in kept
    status_now = ok(api.get(f"/sessions/{sid}"))
    assert status_now["status"] == "paused" and status_now["location"] == status["location"]


def test_bounds_cut_values_and_say_so(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(target("objects.py"), "inspect-here")
    snap = ok(api.post(f"/sessions/{sid}/snapshots", json={"items": 2, "chars": 16}), 201)
    local = ok(api.get(f"/sessions/{sid}/snapshots/{snap['snapshot_id']}"))["data"]["threads"][0]["frames"][0]["locals"]
    assert local["big"] == [0, 1, "... 99998 more"]
    assert local["text"] == "'" + "x" * 15 + "..."
    assert local["nested"] == {"a": {"b": {"c": [1, 2, "... 1 more"]}}, "n": 7}
    assert "truncated" not in snap

    cut = ok(api.post(f"/sessions/{sid}/snapshots", json={"items": 1000, "max_bytes": 1024}), 201)
    assert cut["truncated"]["reason"] == "max_bytes reached"
    local = ok(api.get(f"/sessions/{sid}/snapshots/{cut['snapshot_id']}"))["data"]["threads"][0]["frames"][0]["locals"]
    assert local["..."] == "cut: the snapshot's size bound was reached"


def test_a_thread_pool_all_blocked_on_one_queue_is_named_starvation(api: httpx.Client, sessions: Sessions) -> None:
    sid = running(api, sessions, POOL)
    # 'started' is said as the workers start: a snapshot may come before all four wait, so look again
    found = until(lambda: (f := named(analyze(api, sid, take=1))).get("starvation") and f, "the starvation named")
    starved = found["starvation"]
    assert sorted(starved["evidence"]["blocked_workers"]) == [f"worker-{n}" for n in range(4)]
    assert starved["evidence"]["waiting_on"] == "queue"
    assert f"ev_pool.py:{line_of(POOL, 'worker-waits')} worker" in starved["evidence"]["worker_stack"]
    assert "deadlock" not in found


def test_an_asyncio_task_awaiting_a_future_nobody_sets_is_named(api: httpx.Client, sessions: Sessions) -> None:
    sid = running(api, sessions, ASYNC)
    analysis = analyze(api, sid, take=2, interval=0.2)
    stuck = named(analysis)["async_stuck"]
    assert stuck["confidence"] == "high" and len(stuck["evidence_ids"]) == 2
    (task,) = [t for t in stuck["evidence"]["tasks"] if t["task"] == "fetch-reply"]
    assert task["at"].endswith(f"ev_async.py:{line_of(ASYNC, 'never-set')} fetch_reply")
    assert task["awaits"].startswith("<Future pending")


def test_a_leak_that_grows_a_dict_is_named_with_the_dicts_name(api: httpx.Client, sessions: Sessions) -> None:
    sid = running(api, sessions, LEAK)
    leak = named(analyze(api, sid, take=2, interval=1.0))["leak"]
    (grown,) = [c for c in leak["evidence"]["containers"] if c["name"] == "__main__.sessions_cache"]
    assert grown["type"] == "dict" and grown["len"][1] - grown["len"][0] >= 1000
    assert ok(api.get(f"/sessions/{sid}"))["status"] == "running"


def test_a_crash_in_a_worker_thread_answers_after_the_program_is_gone(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.launch(sid, CRASH, stop_on_exception="uncaught")
    assert sessions.wait(sid)["reason"] == "exception"
    ok(api.post(f"/sessions/{sid}/continue", json={}))
    until(lambda: ok(api.get(f"/sessions/{sid}"))["status"] == "terminated", "the program to end")

    autopsy = ok(api.get(f"/sessions/{sid}/autopsy"))
    assert autopsy["post_mortem"].startswith("ev-")
    assert autopsy["exception"]["type"] == "IndexError"
    top = autopsy["frames"][0]
    assert (top["function"], top["line"]) == ("work", line_of(CRASH, "worker-raise"))
    assert {v["name"]: v["value"] for v in top["locals"]}["items"] == "[0, 1, 2]"
    stack = ok(api.get(f"/sessions/{sid}/stacktrace"))
    assert stack["post_mortem"] == autopsy["post_mortem"]
    assert stack["frames"][0]["name"] == "work"
    listed = ok(api.get(f"/sessions/{sid}/snapshots"))["snapshots"]
    assert [s["reason"] for s in listed] == ["post_mortem"]
    assert listed[0]["exception"]["message"] == "list index out of range"
    variables = ok(api.get(f"/sessions/{sid}/variables", params={"scope": "all"}))
    assert variables["post_mortem"] == autopsy["post_mortem"]
    assert {v["name"]: v["value"] for v in variables["variables"]} == {"batch": "3", "items": "[0, 1, 2]"}
    assert error_of(api.get(f"/sessions/{sid}/variables", params={"scope": "globals"}), 400)["hint"]
    crash = named(analyze(api, sid))["crash"]
    assert crash["evidence"]["exception"] == "IndexError: list index out of range"
    assert crash["evidence"]["thread"] == "worker-1" and crash["evidence"]["locals"]["items"] == "[0, 1, 2]"
    assert crash["evidence"]["stack"][0] == f"ex_thread.py:{line_of(CRASH, 'worker-raise')} work"
    assert crash["evidence_ids"] == [autopsy["post_mortem"]]
    whole = ok(api.get(f"/sessions/{sid}/snapshots/post_mortem"))
    assert whole["snapshot_id"] == autopsy["post_mortem"]
    assert {t["name"] for t in whole["data"]["threads"]} >= {"MainThread", "worker-1"}


def test_a_capture_point_at_a_loop_collects_100_rows_without_stopping(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.launch(sid, LOOP, args=["300"], stop_on_entry=True)
    sessions.wait(sid)
    line = line_of(LOOP, "loop-body")
    point = ok(
        api.post(f"/sessions/{sid}/captures", json={"file": LOOP, "line": line, "expressions": ["i", "total"]}), 201
    )
    assert point["state"] == "active" and point["hit_limit"] == 100 and point["verified"] is True
    ok(api.post(f"/sessions/{sid}/continue", json={}))
    # nobody continues the program again: it reaches its end only if no hit paused it
    assert sessions.wait(sid)["status"] == "terminated"
    assert "done" in output_text(api, sid)

    table = ok(api.get(f"/sessions/{sid}/captures/{point['capture_id']}"))
    assert table["columns"] == ["t", "thread", "i", "total"]
    assert table["total"] == 100 and len(table["rows"]) == 100 and "has_more" not in table
    assert [r[2] for r in table["rows"]] == list(range(100))
    assert table["rows"][3][3] == 0 + 1 + 4  # total before step 3
    assert table["capture"]["state"] == "done"
    assert "[debugrelay-capture" not in output_text(api, sid)  # rows are not program output

    page = ok(api.get(f"/sessions/{sid}/captures/{point['capture_id']}", params={"start": 90, "count": 5}))
    assert [r[2] for r in page["rows"]] == [90, 91, 92, 93, 94] and page["has_more"] is True
    whole = ok(api.get(f"/evidence/{page['evidence_id']}", params={"grep": '"i": 97\\b'}))
    assert whole["matches"] == 1 and '"total": ' in whole["lines"][0]


def test_a_capture_point_condition_and_locals(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.launch(sid, LOOP, args=["50"], stop_on_entry=True)
    sessions.wait(sid)
    body = {"file": LOOP, "line": line_of(LOOP, "loop-body"), "expressions": ["locals"], "condition": "i % 10 == 0"}
    point = ok(api.post(f"/sessions/{sid}/captures", json=body), 201)
    ok(api.post(f"/sessions/{sid}/continue", json={}))
    assert sessions.wait(sid)["status"] == "terminated"  # every hit has arrived by the program's end
    table = ok(api.get(f"/sessions/{sid}/captures/{point['capture_id']}"))
    i = table["columns"].index("i")
    assert [r[i] for r in table["rows"]] == [0, 10, 20, 30, 40]
    assert {"steps", "total", "started"} <= set(table["columns"])


def test_evidence_pages_and_searches_a_snapshot(api: httpx.Client, sessions: Sessions) -> None:
    sid = running(api, sessions, DEADLOCK)

    def blocked() -> tuple[str, dict[str, Any]] | None:
        """A snapshot taken once a thread waits at the marked line (it says 'started' just before)."""
        snap_id: str = ok(api.post(f"/sessions/{sid}/snapshots"), 201)["snapshot_id"]
        found: dict[str, Any] = ok(api.get(f"/evidence/{snap_id}", params={"grep": "transfer-waits"}))
        return (snap_id, found) if found["matches"] else None

    snapshot_id, hits = until(blocked, "a thread to wait at the marked line")
    assert all("transfer-waits" in line for line in hits["lines"])
    first = ok(api.get(f"/evidence/{snapshot_id}", params={"limit": 10}))
    assert first["kind"] == "snapshot" and len(first["lines"]) == 10 and first["has_more"] is True
    assert first["total_lines"] > 10
    # a pattern that backtracks for ever in Python's re runs in linear time: the relay stays responsive
    assert ok(api.get(f"/evidence/{snapshot_id}", params={"grep": "(a+)+$"}))["matches"] == 0


def test_a_search_that_would_backtrack_for_ever_answers_and_the_relay_stays_responsive(
    api: httpx.Client, sessions: Sessions
) -> None:
    """``(x|x)*Q`` over a local of 255 x's: Python's re would try 2**255 ways and hold the event loop
    (and the GIL) until the relay is killed; the relay answers it, and /health answers after it."""
    sid, _ = sessions.start_at(target("objects.py"), "inspect-here")
    snap = ok(api.post(f"/sessions/{sid}/snapshots"), 201)["snapshot_id"]
    assert "x" * 200 in "\n".join(ok(api.get(f"/evidence/{snap}", params={"grep": "text"}))["lines"])
    answers: list[httpx.Response] = []
    search = threading.Thread(
        target=lambda: answers.append(api.get(f"/evidence/{snap}", params={"grep": "(x|x)*Q"})), daemon=True
    )
    search.start()
    until(lambda: answers, "the search to answer")
    assert ok(answers[0])["matches"] == ok(api.get(f"/evidence/{snap}", params={"grep": "Q"}))["matches"]
    assert ok(api.get("/health"))["status"] == "ok"
    found = ok(api.get(f"/evidence/{snap}", params={"grep": "(x|x)*x{200}"}))
    assert found["matches"] >= 1 and all("x" * 200 in line for line in found["lines"])

    # what RE2 does not do is refused, saying so; nothing falls back to a backtracking engine
    for pattern in ("(x)\\1", "(?=x)x", "(?<!y)x", "(?P<a>x)(?P=a)", "x++"):
        refused = error_of(api.get(f"/evidence/{snap}", params={"grep": pattern}), 400, "invalid_request")
        assert "RE2" in refused["message"] and "backreferences" in refused["hint"], refused
        assert refused["details"] == {"grep": pattern}


def test_bad_input_is_refused_with_a_hint_and_changes_nothing(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(target("objects.py"), "inspect-here")
    assert error_of(api.post(f"/sessions/{sid}/snapshots", json={"frames": 0}), 400)
    assert error_of(api.post(f"/sessions/{sid}/snapshots", json={"depth": 3, "color": "red"}), 400)
    err = error_of(api.get(f"/sessions/{sid}/snapshots/ev-000000000000"), 404, "not_found")
    assert err["hint"]
    assert error_of(api.get("/evidence/nope"), 404, "not_found")["hint"]  # names nothing, like any unknown id
    assert error_of(api.get("/evidence/ev-000000000000"), 404, "not_found")
    bad_line = {"file": LOOP, "line": 100_000}
    assert error_of(api.post(f"/sessions/{sid}/captures", json=bad_line), 400)
    bad_expr = {"file": LOOP, "line": 3, "expressions": ["i +"]}
    assert error_of(api.post(f"/sessions/{sid}/captures", json=bad_expr), 400)
    assert error_of(api.post(f"/sessions/{sid}/analyze", json={"take": 5}), 400)
    assert ok(api.get(f"/sessions/{sid}/captures"))["captures"] == []
    assert ok(api.get(f"/sessions/{sid}/snapshots"))["snapshots"] == []
    assert ok(api.get(f"/sessions/{sid}/breakpoints"))["breakpoints"][0]["line"] == line_of(
        target("objects.py"), "inspect-here"
    )
    assert len(ok(api.get(f"/sessions/{sid}/breakpoints"))["breakpoints"]) == 1


def test_evidence_goes_with_its_session(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(target("objects.py"), "inspect-here")
    snap = ok(api.post(f"/sessions/{sid}/snapshots"), 201)
    ok(api.delete(f"/sessions/{sid}"))
    assert error_of(api.get(f"/evidence/{snap['snapshot_id']}"), 404, "not_found")


def test_a_thread_spinning_at_the_same_line_is_named_a_busy_loop(api: httpx.Client, sessions: Sessions) -> None:
    spin = target("ev_spin.py")
    sid = running(api, sessions, spin)
    busy = named(analyze(api, sid, take=2, interval=0.2))["busy_loop"]
    assert busy["evidence"]["thread"] == "spinner"
    assert busy["evidence"]["stack"][0].startswith("ev_spin.py:")
    assert len(busy["evidence_ids"]) == 2


def test_a_loop_whose_counter_changes_every_time_round_is_named_with_its_values(
    api: httpx.Client, sessions: Sessions
) -> None:
    poll = target("ev_poll.py")
    sid = running(api, sessions, poll)
    busy = named(analyze(api, sid, take=2, interval=0.2))["busy_loop"]
    evidence = busy["evidence"]
    assert evidence["thread"] == "poller" and busy["confidence"] == "low", busy
    before, after = evidence["changing"]["attempts"]
    assert int(after) > int(before), evidence  # the counter moves: a hang even though a value changes


def test_an_event_loop_blocked_by_a_sync_call_is_named(api: httpx.Client, sessions: Sessions) -> None:
    blocking = target("ev_blocking.py")
    sid = running(api, sessions, blocking)
    blocked = named(analyze(api, sid, take=1))["loop_blocked"]
    assert blocked["evidence"]["thread"] == "MainThread"
    assert blocked["evidence"]["blocked_in"]["kind"] == "sleep"
    assert blocked["evidence"]["stack"][0] == f"ev_blocking.py:{line_of(blocking, 'blocks-the-loop')} handler"


def test_a_crash_nobody_watched_is_kept_when_it_happens(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.launch(sid, CRASH, stop_on_exception="uncaught")  # and nobody waits for it
    until(lambda: ok(api.get(f"/sessions/{sid}/snapshots"))["snapshots"], "the post-mortem")
    ok(api.post(f"/sessions/{sid}/terminate"))  # later: the program is ended without anyone looking
    autopsy = ok(api.get(f"/sessions/{sid}/autopsy"))
    assert autopsy["exception"]["message"] == "list index out of range"
    assert autopsy["frames"][0]["line"] == line_of(CRASH, "worker-raise")


def test_sys_exit_is_not_a_crash(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.launch(sid, target("ev_exit.py"), stop_on_exception="uncaught")
    status = sessions.wait(sid)
    if status["status"] == "paused":  # debugpy stops at SystemExit with a non-zero code
        ok(api.post(f"/sessions/{sid}/continue", json={}))
    until(lambda: ok(api.get(f"/sessions/{sid}"))["status"] == "terminated", "the program to end")
    assert ok(api.get(f"/sessions/{sid}/snapshots"))["snapshots"] == []


def test_capture_rows_carry_placeholders_not_secrets(api: httpx.Client, sessions: Sessions) -> None:
    secrets = target("secrets.py")
    sid = sessions.create()
    sessions.launch(sid, secrets, stop_on_entry=True)
    sessions.wait(sid)
    body = {"file": secrets, "line": line_of(secrets, "secrets-stop"), "expressions": ["password", "card", "locals"]}
    point = ok(api.post(f"/sessions/{sid}/captures", json=body), 201)
    ok(api.post(f"/sessions/{sid}/continue", json={}))
    until(lambda: ok(api.get(f"/sessions/{sid}"))["status"] == "terminated", "the program to end")
    table = ok(api.get(f"/sessions/{sid}/captures/{point['capture_id']}"))
    (row,) = table["rows"]
    values = dict(zip(table["columns"], row, strict=True))
    assert values["password"].startswith("'[SECRET_") and values["card"].startswith("'[CARD_")
    assert "hunter2" not in str(table) and "4111 1111" not in str(table) and "ghp_R2d2" not in str(table)


def test_with_redis_a_post_mortem_outlives_the_program_and_the_relay(cluster: Cluster) -> None:
    cold = {"DEBUGRELAY_POOL_SIZE": "0"}  # kill -9 would leave a warm pool's interpreters behind
    first = cluster.relay(**cold)
    sid = ok(first.http.post("/sessions", json={}), 201)["session_id"]
    ok(first.http.post(f"/sessions/{sid}/launch", json={"script": CRASH, "stop_on_exception": "uncaught"}))
    assert ok(first.http.post(f"/sessions/{sid}/wait", json={"timeout": 30}))["reason"] == "exception"
    ok(first.http.post(f"/sessions/{sid}/continue", json={}))
    until(lambda: ok(first.http.get(f"/sessions/{sid}"))["status"] == "terminated", "the program to end")
    snapshot_id = ok(first.http.get(f"/sessions/{sid}/snapshots"))["snapshots"][0]["snapshot_id"]
    assert cluster.redis().hexists(f"{cluster.namespace}:evidence:{sid}", snapshot_id)

    first.proc.kill()  # kill -9
    first.proc.wait(10)
    second = cluster.relay(**cold)
    autopsy = ok(second.http.get(f"/sessions/{sid}/autopsy"))
    assert autopsy["post_mortem"] == snapshot_id
    assert autopsy["frames"][0]["line"] == line_of(CRASH, "worker-raise")
    ok(second.http.delete(f"/sessions/{sid}"))
    assert not cluster.redis().exists(f"{cluster.namespace}:evidence:{sid}")


@pytest.mark.slow
def test_an_attached_deadlock_that_cannot_pause_is_a_clear_error_and_keeps_running(
    api: httpx.Client, sessions: Sessions
) -> None:
    port = free_port()
    # started by someone else, without the relay's start-up hook: nothing can wake its main thread
    with debugpy_listening(DEADLOCK, port):
        sid = sessions.create(mode="attach", host="127.0.0.1", port=port)
        until(lambda: len(ok(api.get(f"/sessions/{sid}/threads"))["threads"]) >= 3, "both threads")
        err = error_of(api.post(f"/sessions/{sid}/snapshots"), 409, "collect_failed")
        assert "did not pause" in err["message"] and err["hint"]
        assert ok(api.get(f"/sessions/{sid}"))["status"] == "running"
        assert ok(api.get(f"/sessions/{sid}/snapshots"))["snapshots"] == []


def test_a_capture_point_set_before_launch_collects_from_the_first_hit(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    body = {"file": LOOP, "line": line_of(LOOP, "loop-body"), "expressions": ["i"], "hit_limit": 5}
    point = ok(api.post(f"/sessions/{sid}/captures", json=body), 201)
    sessions.launch(sid, LOOP, args=["20"])
    assert sessions.wait(sid)["status"] == "terminated"
    table = ok(api.get(f"/sessions/{sid}/captures/{point['capture_id']}"))
    assert [r[2] for r in table["rows"]] == [0, 1, 2, 3, 4]
    assert table["capture"]["state"] == "done"


def test_a_capture_point_ends_with_its_run_and_its_logpoint_is_never_a_breakpoint(
    api: httpx.Client, sessions: Sessions
) -> None:
    sid = sessions.create()
    body = {"file": LOOP, "line": line_of(LOOP, "loop-body"), "expressions": ["i"]}
    point = ok(api.post(f"/sessions/{sid}/captures", json=body), 201)
    assert ok(api.get(f"/sessions/{sid}/breakpoints"))["breakpoints"] == []
    sessions.launch(sid, LOOP, args=["10"])
    assert sessions.wait(sid)["status"] == "terminated"
    sessions.launch(sid, LOOP, args=["10"])  # the next run: the capture point ended with the last one
    assert sessions.wait(sid)["status"] == "terminated"
    table = ok(api.get(f"/sessions/{sid}/captures/{point['capture_id']}"))
    assert table["total"] == 10 and table["capture"]["state"] == "ended", table
    assert ok(api.get(f"/sessions/{sid}/breakpoints"))["breakpoints"] == []
    assert ok(api.get(f"/sessions/{sid}"))["breakpoints"] == 0


def test_terminating_right_at_the_crash_still_keeps_its_post_mortem(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.launch(sid, CRASH, stop_on_exception="uncaught")
    assert sessions.wait(sid)["reason"] == "exception"
    ok(api.post(f"/sessions/{sid}/terminate"))  # at once: the post-mortem is read before the program goes
    assert ok(api.get(f"/sessions/{sid}/autopsy"))["post_mortem"].startswith("ev-")


def test_a_deadlock_on_rlocks_taken_with_acquire_is_named_by_their_owners(
    api: httpx.Client, sessions: Sessions
) -> None:
    rlocks = target("ev_rlock.py")
    sid = running(api, sessions, rlocks)
    # 'started' is said as the threads start: a snapshot may come before both block, so look again
    deadlock = until(lambda: named(analyze(api, sid, take=1)).get("deadlock"), "the deadlock named")
    cycle = {t["thread"]: t for t in deadlock["evidence"]["threads"]}
    assert cycle["writer"]["waits_for"] == "second" and cycle["writer"]["holds"] == ["first"]
    assert cycle["reader"]["waits_for"] == "first" and cycle["reader"]["holds"] == ["second"]
    assert cycle["writer"]["stack"][0] == f"ev_rlock.py:{line_of(rlocks, 'writer-waits')} writer"
