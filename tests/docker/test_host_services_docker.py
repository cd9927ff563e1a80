"""A relay on the host with the docker launcher, and a Redis on that host as a careless operator runs it
(every address, no password, no protected mode): a program in a container target goes for that Redis
through its network's gateway and every address of the host, and gets nothing, while the relay still
debugs it through that network."""

from __future__ import annotations

import json
import os
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psutil
import pytest
import redis

from tests.conftest import Relay, Sessions, line_of, ok, output_text, target
from tests.redis_server import host_redis, poll, remove_store_targets

pytestmark = [pytest.mark.integration]

REACH_STORE = target("reach_store.py")
PLANT_WATCH = target("plant_watch.py")
BASIC = target("basic.py")


def host_addresses() -> list[str]:
    """The host's IPv4 addresses but loopback's and those of networks that come and go (other Docker
    networks' bridges: one removed meanwhile is no address of the host any more)."""
    return sorted(
        {
            address.address
            for name, addresses in psutil.net_if_addrs().items()
            for address in addresses
            if address.family == socket.AF_INET
            and not address.address.startswith("127.")
            and not name.startswith(("br-", "drelay", "veth"))
        }
    )


@pytest.fixture
def careless(tmp_path: Path) -> Iterator[str]:
    """The host's Redis on every address, without a password or protected mode: its URL."""
    with host_redis(tmp_path / "redis", "--bind", "0.0.0.0", "--protected-mode", "no") as url:
        yield url


@pytest.fixture
def host_relay(tmp_path: Path, careless: str) -> Iterator[Relay]:
    """A relay on the host keeping its sessions in that Redis, launching containers."""
    namespace = f"t{uuid.uuid4().hex[:10]}"
    relay = Relay(
        tmp_path,
        env={
            "DEBUGRELAY_REDIS_URL": careless,
            "DEBUGRELAY_REDIS_NAMESPACE": namespace,
            "DEBUGRELAY_LAUNCHERS": "docker",
        },
    )
    try:
        yield relay
    finally:
        relay.stop()
        remove_store_targets(careless, namespace)


def test_a_container_target_cannot_reach_the_hosts_redis_the_relay_keeps_its_sessions_in(
    docker_client: Any, careless: str, host_relay: Relay
) -> None:
    if os.geteuid() != 0:
        pytest.skip("a relay closes the host to its targets only as root (else it warns: test_store_exposure.py)")
    port = urlsplit(careless).port
    sessions = Sessions(host_relay.http)
    try:
        sid = sessions.create()
        sessions.bp(sid, REACH_STORE, line_of(REACH_STORE, "asked"))
        addresses = host_addresses()
        sessions.launch(sid, REACH_STORE, launcher="docker", args=[str(port), *addresses])
        paused = sessions.wait(sid, timeout=120)
        assert paused["status"] == "paused", paused  # the relay reached the target's keeper through the bridge

        def attempts() -> list[str] | None:
            said = output_text(host_relay.http, sid).splitlines()
            tried = [line for line in said if " failed: " in line or " connected" in line]
            return tried if len(tried) == 1 + len(addresses) else None  # the gateway, then each host address

        tried = poll(attempts, timeout=60, what="the program's attempts in its output")
        assert all(" failed: " in line for line in tried), tried
        # the agent's own code runs there, and finds the same
        gateway = ok(host_relay.http.post(f"/sessions/{sid}/evaluate", json={"expression": "gateway()"}))["result"]
        asked = f"reach({gateway}, {port}, b'PING\\r\\n')"
        answer = ok(host_relay.http.post(f"/sessions/{sid}/evaluate", json={"expression": asked}))["result"]
        assert "failed" in answer, answer
        ok(host_relay.http.post(f"/sessions/{sid}/continue"))
        done = sessions.wait(sid, timeout=60)
        assert done["status"] == "terminated" and done["exit_code"] == 0, done
    finally:
        sessions.cleanup()
    assert "container targets reach no service of this host" in host_relay.log.read_text()


def test_a_watch_a_container_target_plants_in_a_local_session_is_shown_not_run(
    docker_client: Any, careless: str, tmp_path: Path
) -> None:
    """The chain: a container target goes for the host's Redis to plant a watch in a local session, whose
    program runs on the host. The host's firewall stops it; and a watch planted there all the same (a relay
    that may not change the firewall) is shown after a restart, never evaluated."""
    if os.geteuid() != 0:
        pytest.skip("a relay closes the host to its targets only as root (else it warns: test_store_exposure.py)")
    namespace = f"t{uuid.uuid4().hex[:10]}"
    env = {
        "DEBUGRELAY_REDIS_URL": careless,
        "DEBUGRELAY_REDIS_NAMESPACE": namespace,
        "DEBUGRELAY_LAUNCHERS": "local,docker",
    }
    marker = tmp_path / "ran-on-the-host"
    planted = f"open({str(marker)!r}, 'w').close() or True"
    relays = [Relay(tmp_path, env=env)]
    made: list[str] = []
    try:
        sessions = Sessions(relays[0].http)
        local = sessions.create()
        made.append(local)
        sessions.bp(local, BASIC, line_of(BASIC, "add-body"))
        sessions.launch(local, BASIC)
        assert sessions.wait(local, timeout=60)["status"] == "paused"
        ok(relays[0].http.post(f"/sessions/{local}/watch", json={"expression": "a + b"}))

        hostile = sessions.create()
        made.append(hostile)
        addresses = host_addresses()
        args = [str(urlsplit(careless).port), namespace, local, planted, *addresses]
        sessions.launch(hostile, PLANT_WATCH, launcher="docker", args=args)
        assert sessions.wait(hostile, timeout=120)["status"] == "terminated"
        said = output_text(relays[0].http, hostile).splitlines()
        tried = [line for line in said if " failed: " in line or " connected: " in line]
        assert len(tried) == 1 + len(addresses) and all(" failed: " in line for line in tried), said

        client = redis.Redis.from_url(careless)  # what the program would have done, had the host been open to it
        try:
            record = json.loads(client.hget(f"{namespace}:sessions", local))  # type: ignore[arg-type]
            record["watches"].append({"id": "w9", "expression": planted})
            client.hset(f"{namespace}:sessions", local, json.dumps(record))
        finally:
            client.close()
        relays[0].proc.kill()  # kill -9, and a relay on the same store takes the session up
        relays[0].proc.wait(10)
        relays.append(Relay(tmp_path, env=env))
        http = relays[1].http
        poll(lambda: ok(http.get(f"/sessions/{local}/status")).get("recovered"), what="recovery")
        watches = {w["watch_id"]: w for w in ok(http.get(f"/sessions/{local}/watch"))["watches"]}
        ok(http.post(f"/sessions/{local}/continue"))
        Sessions(http).wait(local, timeout=60)
        assert not marker.exists()
        assert watches["w9"]["unsealed"] is True and watches["w1"]["result"] == "3", watches
    finally:
        if relays[-1].proc.poll() is None:  # whichever relay holds the sessions now ends their targets
            for sid in made:
                relays[-1].http.delete(f"/sessions/{sid}")
        for relay in relays:
            relay.stop()
        remove_store_targets(careless, namespace)
