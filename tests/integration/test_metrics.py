"""``/metrics`` for Prometheus: what a platform team watches, counted from real sessions and requests."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import Relay, Sessions, line_of, ok, target, until

pytestmark = pytest.mark.integration

BASIC = target("basic.py")
CRASH = target("ex_thread.py")
TOKEN = "metrics-test-token"
DOCUMENTED = {  # the README's Metrics section
    "debugrelay_sessions",
    "debugrelay_launches",
    "debugrelay_launch_to_first_stop_seconds",
    "debugrelay_keeper_reconnects",
    "debugrelay_store_pending_writes",
    "debugrelay_traced_calls",
    "debugrelay_evidence_bytes",
    "debugrelay_request_duration_seconds",
}


def scraped(http: httpx.Client, **headers: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of /metrics: (name, sorted labels) -> value."""
    answer = http.get("/metrics", headers=headers)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(answer.text)
        for s in family.samples
    }


def metric_names(http: httpx.Client) -> set[str]:
    """The families /metrics names (counters without their ``_total``), whether or not they have samples yet
    (the ``_created`` times prometheus_client adds once a series has one aside)."""
    answer = http.get("/metrics")
    assert answer.status_code == 200, answer.text
    families = text_string_to_metric_families(answer.text)
    return {family.name for family in families if not family.name.endswith("_created")}


def value(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_sessions_launches_first_stops_and_requests_are_counted(
    relay: Relay, api: httpx.Client, sessions: Sessions
) -> None:
    before = scraped(api)
    sid, _ = sessions.start_at(BASIC, "add-body")
    bad = sessions.create()
    failed = api.post(f"/sessions/{bad}/launch", json={"script": BASIC, "python": "/nonexistent/python3"})
    assert failed.status_code >= 400
    after = scraped(api, Host="10.42.0.17:8765")  # a scraper reaches the pod by its address
    started = ("debugrelay_launches_total", {"launcher": "local", "outcome": "started"})
    assert value(after, started[0], **started[1]) == value(before, started[0], **started[1]) + 1
    assert value(after, "debugrelay_launches_total", launcher="local", outcome="failed") >= 1
    first = value(after, "debugrelay_launch_to_first_stop_seconds_count", launcher="local")
    assert first == value(before, "debugrelay_launch_to_first_stop_seconds_count", launcher="local") + 1
    assert value(after, "debugrelay_sessions", state="paused", launcher="local") >= 1
    waits = ("debugrelay_request_duration_seconds_count", {"method": "POST", "route": "/sessions/{session_id}/wait"})
    assert value(after, waits[0], **waits[1], status="2xx") >= 1
    assert value(after, "debugrelay_request_duration_seconds_count", method="GET", route="/metrics", status="2xx") == 0
    assert value(after, "debugrelay_store_pending_writes") == 0
    assert metric_names(api) >= DOCUMENTED  # under compose too (tests/docker/test_compose.py)
    assert line_of(BASIC, "add-body") and sid


def test_metrics_ask_for_the_token_when_the_relay_has_one(tmp_path: Path) -> None:
    guarded = Relay(tmp_path, env={"DEBUGRELAY_TOKEN": TOKEN})
    try:
        with httpx.Client(base_url=guarded.url) as scraper:
            assert scraper.get("/metrics").status_code == 401
            samples = scraped(scraper, Authorization=f"Bearer {TOKEN}")
        assert value(samples, "debugrelay_keeper_reconnects_total") == 0
    finally:
        guarded.stop()


def test_evidence_bytes_count_what_snapshots_and_post_mortems_wrote(
    relay: Relay, api: httpx.Client, sessions: Sessions
) -> None:
    """A snapshot taken on request and the post-mortem of a crash each add their size, by kind."""
    before = scraped(api)
    sid, _ = sessions.start_at(BASIC, "add-body")
    snap = ok(api.post(f"/sessions/{sid}/snapshots"), 201)
    taken = scraped(api)
    written = value(taken, "debugrelay_evidence_bytes_total", kind="snapshot")
    assert written - value(before, "debugrelay_evidence_bytes_total", kind="snapshot") == snap["size_bytes"] > 0

    crashed = sessions.create()
    sessions.launch(crashed, CRASH, stop_on_exception="uncaught")
    assert sessions.wait(crashed)["reason"] == "exception"
    ok(api.post(f"/sessions/{crashed}/continue", json={}))
    until(lambda: ok(api.get(f"/sessions/{crashed}"))["status"] == "terminated", "the program to end")
    (post_mortem,) = ok(api.get(f"/sessions/{crashed}/snapshots"))["snapshots"]
    after = scraped(api)
    grown = value(after, "debugrelay_evidence_bytes_total", kind="post_mortem") - value(
        before, "debugrelay_evidence_bytes_total", kind="post_mortem"
    )
    assert grown == post_mortem["size_bytes"] > 0
    assert value(after, "debugrelay_evidence_bytes_total", kind="snapshot") == written
