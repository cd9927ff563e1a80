"""Seed 002's evidence in a container (Python 3.13 in the target image): the exception storm, which
needs sys.monitoring (3.12+) to count raises, and a snapshot through the container's path mappings."""

from __future__ import annotations

from typing import Any

import httpx

from tests.conftest import Sessions, ok, output_text, target, until

STORM = target("ev_storm.py")
DEADLOCK = target("ev_deadlock.py")


def test_an_exception_storm_is_named_with_its_rate_and_where(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    sid = sessions.create()
    sessions.launch(sid, STORM, launcher="docker")
    until(lambda: "started" in output_text(api, sid), "the program to start")
    first = ok(api.post(f"/sessions/{sid}/snapshots"), 201)
    assert first["threads"][0]["top"].startswith("ev_storm.py:")  # the user's path, not the container's
    analysis = ok(api.post(f"/sessions/{sid}/analyze", json={"snapshot_ids": [first["snapshot_id"]], "take": 1}))
    (storm,) = [m for m in analysis["matches"] if m["pattern"] == "exception_storm"]
    assert storm["evidence"]["per_second"] >= 200
    top = next(iter(storm["evidence"]["most_raised"]))
    assert top == "ValueError ev_storm.py:parse"
    assert storm["evidence_ids"] == [first["snapshot_id"], analysis["snapshots"][1]]


def test_a_deadlock_in_a_container_is_paused_snapshot_and_named(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    sid = sessions.create()
    sessions.launch(sid, DEADLOCK, launcher="docker")
    until(lambda: "started" in output_text(api, sid), "the program to start")
    analysis = ok(api.post(f"/sessions/{sid}/analyze", json={"take": 1}))
    (deadlock,) = [m for m in analysis["matches"] if m["pattern"] == "deadlock"]
    assert {t["thread"]: t["waits_for"] for t in deadlock["evidence"]["threads"]} == {
        "transfer": "lock_b",
        "audit": "lock_a",
    }
    assert ok(api.get(f"/sessions/{sid}"))["status"] == "running"
