"""A stored container id is a claim: a relay acts only on containers its own store's relays started, named by a
record sealed for that very session."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from docker.errors import NotFound

from tests.conftest import line_of, ok
from tests.docker.test_container_recovery import TICK, launch_in_container, wait
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


def test_a_sealed_container_record_copied_to_another_session_or_naming_a_lookalike_is_left_alone(
    docker_client: Any, cluster: Cluster
) -> None:
    first = cluster.relay()
    owner = launch_in_container(first.http, TICK, line_of(TICK, "tick"))
    assert wait(first.http, owner)["status"] == "paused"
    container = docker_client.containers.get(ok(first.http.get(f"/sessions/{owner}"))["target"]["container_id"])
    # a container that carries the very labels of a real target (this store's, that session's)
    lookalike = docker_client.containers.run(
        "debugrelay/target:latest",
        ["python", "-c", "import time; time.sleep(600)"],
        labels={**container.labels, "debugrelay.test": "lookalike"},
        detach=True,
    )
    try:
        copied = ok(first.http.post("/sessions", json={}), 201)["session_id"]
        pointed = ok(first.http.post("/sessions", json={}), 201)["session_id"]
        first.proc.kill()
        first.proc.wait(10)
        store = cluster.redis()
        try:
            key = f"{cluster.namespace}:sessions"
            source = json.loads(store.hget(key, owner))  # type: ignore[arg-type]
            for sid, container_id in ((copied, container.id), (pointed, lookalike.id)):
                record = json.loads(store.hget(key, sid))  # type: ignore[arg-type]
                record.update({k: source[k] for k in ("status", "target", "keeper_secret", "seals") if k in source})
                record["target"] = {**source["target"], "container_id": container_id}
                store.hset(key, sid, json.dumps(record))
        finally:
            store.close()
        second = cluster.relay()
        for sid in (copied, pointed):
            poll(lambda sid=sid: ok(second.http.get(f"/sessions/{sid}/status")).get("recovered"), what="recovery")
            ok(second.http.delete(f"/sessions/{sid}"))
        for box in (container, lookalike):
            box.reload()
            assert box.status == "running", box.name
        assert wait(second.http, owner)["status"] == "paused"  # the session the record was copied from goes on
    finally:
        with contextlib.suppress(NotFound):  # gone only if a relay removed it
            lookalike.remove(force=True, v=True)
