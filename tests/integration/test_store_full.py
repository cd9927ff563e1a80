"""A Redis that is reachable but refuses writes (full under ``maxmemory`` with ``noeviction``, as deploy/
sets it): the relay treats it as down, never answers 500, keeps the changes, and writes them once Redis
takes writes again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Relay, error_of, ok, until
from tests.redis_server import Redis, start_redis


@pytest.fixture
def full_redis(tmp_path: Path) -> Iterator[Redis]:
    server = start_redis(tmp_path / "redis")
    yield server
    server.remove()


def test_a_full_redis_costs_no_change_and_no_500(tmp_path: Path, full_redis: Redis) -> None:
    relay = Relay(tmp_path, env={"DEBUGRELAY_REDIS_URL": full_redis.url, "DEBUGRELAY_REDIS_NAMESPACE": "full"})
    redis = full_redis.client()
    try:
        kept = ok(relay.http.post("/sessions", json={"name": "before"}), 201)["session_id"]
        redis.config_set("maxmemory-policy", "noeviction")
        redis.config_set("maxmemory", 1)  # every write that needs memory is refused: "OOM command not allowed"

        # a new session needs the store (its lease): refused as in an outage, saying why, nothing made
        err = error_of(relay.http.post("/sessions", json={"name": "while full"}), 503, "store_unavailable")
        assert err["details"]["refusal"] == "OOM" and "maxmemory" in err["hint"]
        assert [s["session_id"] for s in ok(relay.http.get("/sessions"))["sessions"]] == [kept]
        # a change to a session the relay holds is kept by the relay and said so
        renamed = ok(relay.http.patch(f"/sessions/{kept}", json={"name": "renamed while full"}))
        assert renamed["name"] == "renamed while full" and renamed["persisted"] is False
        assert b"renamed while full" not in redis.hget("full:sessions", kept)  # Redis really refused it
        assert "Redis refuses writes (OOM" in relay.log.read_text()

        redis.config_set("maxmemory", 0)  # room again: what the relay kept is written through
        until(lambda: b"renamed while full" in (redis.hget("full:sessions", kept) or b""), "the rename in Redis")
    finally:
        redis.close()
        relay.stop()
