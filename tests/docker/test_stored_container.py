"""A stored container id is a claim: a relay acts only on containers its own store's relays started."""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import ok
from tests.redis_server import Cluster, poll


def test_a_stored_container_id_of_another_container_is_left_alone(docker_client: Any, cluster: Cluster) -> None:
    bystander = docker_client.containers.run("debugrelay/base:bookworm", ["sleep", "600"], detach=True)
    try:
        first = cluster.relay()
        sid = ok(first.http.post("/sessions", json={}), 201)["session_id"]
        first.proc.kill()
        first.proc.wait(10)
        store = cluster.redis()
        try:
            key = f"{cluster.namespace}:sessions"
            record = json.loads(store.hget(key, sid))  # type: ignore[arg-type]
            record.update(status="running", target={"kind": "docker", "container_id": bystander.id, "port": 5678})
            store.hset(key, sid, json.dumps(record))
        finally:
            store.close()
        second = cluster.relay()
        poll(lambda: ok(second.http.get(f"/sessions/{sid}/status")).get("recovered"), what="recovery")
        assert ok(second.http.get(f"/sessions/{sid}/status"))["status"] == "terminated"
        ok(second.http.delete(f"/sessions/{sid}"))
        bystander.reload()
        assert bystander.status == "running"
    finally:
        bystander.remove(force=True, v=True)
