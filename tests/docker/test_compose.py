"""The way most people run debugrelay: ``compose.yaml`` itself, driven by the README's own compose block.

The stack runs under a project name, port, workspace and targets network of its own, so it cannot meet a
developer's ``make up``; everything it made is gone at the end."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from tests.conftest import Sessions, line_of, ok
from tests.docker.stack import (
    REPO,
    STACK_IMAGES,
    Stack,
    clean_env,
    leftovers,
    readme_compose_block,
    remove_leftovers,
    require_images,
)
from tests.integration.test_metrics import DOCUMENTED, metric_names, scraped, value
from tests.redis_server import poll

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SCRIPT = Path("tests/targets/basic.py")
EXAMPLE = Path("docker/example_app/app.py")
REACH = Path("tests/targets/reach.py")
ORDERS = Path("tests/targets/svc_orders.py")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A user's folder: the files the README's block names, readable by the relay's own user."""
    root = tmp_path / "workspace"
    for relative in (SCRIPT, EXAMPLE, REACH, ORDERS):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / relative, root / relative)
    for path in (tmp_path, *root.rglob("*"), root):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return root


@pytest.fixture
def stack(docker_client: Any, workspace: Path) -> Iterator[Stack]:
    require_images(docker_client, *STACK_IMAGES)
    up = Stack(workspace)
    yield up
    up.down()
    remove_leftovers(docker_client, up.project, up.sessions)  # only what a failed test left


def healthy(http: httpx.Client) -> bool:
    try:
        return http.get("/health").status_code == 200
    except httpx.TransportError:
        return False


def started(stack: Stack) -> httpx.Client:
    """``compose up`` of the stack, and a client with its token once the relay answers /health."""
    stack.up()
    token = stack.settings["DEBUGRELAY_TOKEN"]
    http = httpx.Client(base_url=stack.url, timeout=90, headers={"Authorization": f"Bearer {token}"})
    try:
        poll(lambda: healthy(http), timeout=60, what="the relay under compose answering /health")
    except BaseException:
        http.close()
        raise
    return http


def test_the_readme_compose_block_works_and_a_killed_relay_comes_back_paused(
    docker_client: Any, stack: Stack, workspace: Path
) -> None:
    http = started(stack)
    try:
        assert http.get("/health").json()["store"] == "redis"
        assert httpx.get(f"{stack.url}/sessions").status_code == 401  # the token is required

        # the README's block, as a user pastes it into a shell in their folder
        ran = subprocess.run(
            ["bash", "-c", readme_compose_block()],
            cwd=workspace,
            env=clean_env(),
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        said = ran.stdout
        assert ran.returncode == 0, ran.stderr
        assert '"error"' not in said, said
        assert said.count('"verified":true') == 2, said
        assert said.count('"status":"paused"') == 2, said
        assert '"function":"process_order"' in said, said

        listed = ok(http.get("/sessions"))["sessions"]
        stack.sessions[:] = [s["session_id"] for s in listed]
        launched = [s for s in listed if (s.get("location") or {}).get("file", "").endswith(str(SCRIPT))]
        assert len(launched) == 1, listed
        sid = launched[0]["session_id"]
        before = ok(http.post(f"/sessions/{sid}/evaluate", json={"expression": "total"}))["result"]

        # the relay dies hard; compose does not restart a killed container by itself: `up -d` does
        relay = docker_client.containers.get(stack.container_id("relay"))
        relay.kill(signal="SIGKILL")
        relay.reload()
        assert relay.status == "exited"
        stack.compose("up", "-d", "relay")
        poll(lambda: healthy(http), timeout=60, what="the relay back")

        def back() -> Any:
            status = http.get(f"/sessions/{sid}/status")
            return status.json() if status.status_code == 200 and status.json()["status"] == "paused" else None

        status = poll(back, timeout=60, what="the session back, paused")
        assert status["location"]["line"] == launched[0]["location"]["line"]  # where it was: the keeper held it
        assert ok(http.post(f"/sessions/{sid}/evaluate", json={"expression": "total"}))["result"] == before

        for session in stack.sessions:
            assert http.delete(f"/sessions/{session}").status_code in (200, 404)
    finally:
        http.close()

    stack.down()
    poll(lambda: not leftovers(docker_client, stack.project, stack.sessions), what="nothing of the stack left")
    assert leftovers(docker_client, stack.project, stack.sessions) == []


def host_addresses(engine: Any, project: str) -> dict[str, str]:
    """The host's own IPv4 addresses a container could aim at: its interfaces' (loopback aside) and the
    gateway of the stack's own network (the host's address on that bridge)."""
    found = {
        f"the host's {name}": address.address
        for name, addresses in psutil.net_if_addrs().items()
        for address in addresses
        if address.family == socket.AF_INET and not address.address.startswith("127.") and not name.startswith("br-")
    }
    stack_net = engine.networks.get(f"{project}_relay")
    found["the stack network's gateway"] = stack_net.attrs["IPAM"]["Config"][0]["Gateway"]
    return found


def test_a_target_reaches_nothing_of_the_host_nor_the_relays_api(
    docker_client: Any, stack: Stack, workspace: Path
) -> None:
    """A program in a container target aims at every address of the host (a service listening on all
    of them), its own network's gateway and the relay: nothing answers, while the relay debugs it."""
    listener = socket.socket()
    listener.bind(("0.0.0.0", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    http = started(stack)
    sessions = Sessions(http)
    try:
        script = str(workspace / REACH)
        sid = sessions.create()
        stack.sessions.append(sid)
        sessions.bp(sid, script, line_of(script, "probe-here"))
        sessions.launch(sid, script)
        assert sessions.wait(sid, timeout=60)["status"] == "paused"

        def probe(expression: str) -> str:
            return str(ok(http.post(f"/sessions/{sid}/evaluate", json={"expression": expression}))["result"])

        (target,) = docker_client.containers.list(filters={"label": f"debugrelay.session={sid}"})
        network = target.labels["debugrelay.network"]
        relay = docker_client.containers.get(stack.container_id("relay"))
        relay_addresses = {name: n["IPAddress"] for name, n in relay.attrs["NetworkSettings"]["Networks"].items()}
        aims = [("its network's gateway", "gateway()", port)]
        aims += [(where, repr(a), port) for where, a in host_addresses(docker_client, stack.project).items()]
        aims += [(f"the relay on {name}", repr(a), 8765) for name, a in relay_addresses.items() if name != network]
        redis = docker_client.containers.get(stack.container_id("redis"))
        aims += [("Redis", repr(n["IPAddress"]), 6379) for n in redis.attrs["NetworkSettings"]["Networks"].values()]
        for where, address, to in aims:
            answer = probe(f"reach({address}, {to})")
            assert "failed" in answer, f"{where} ({address}:{to}): {answer}"

        # the relay's own address on the target's network: connected, then closed unread
        request = b"GET /health HTTP/1.0\r\nHost: relay\r\n\r\n"
        answer = probe(f"reach({relay_addresses[network]!r}, 8765, {request!r})")
        assert "HTTP" not in answer, answer
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()  # no connection ever reached the host's listener
        # nor does an app on the network of apps to attach to (the example app) get the API
        app = docker_client.containers.get(stack.container_id("example-app"))
        program = f"{(REPO / REACH).read_text()}\nprint(reach('relay', 8765, {request!r}))"
        asked = app.exec_run(["python3", "-c", program])
        assert asked.exit_code == 0 and b"connected" in asked.output and b"HTTP" not in asked.output, asked.output

        # and the relay still drives the target through that network
        assert probe("gateway() is not None") == "True"
        ok(http.post(f"/sessions/{sid}/continue"))
        done = sessions.wait(sid, timeout=60)
        assert done["status"] == "terminated" and done["exit_code"] == 0
        ok(http.delete(f"/sessions/{sid}"))
    finally:
        listener.close()
        with contextlib.suppress(httpx.TransportError):
            sessions.cleanup()
        http.close()
    stack.down()
    assert leftovers(docker_client, stack.project, stack.sessions) == []


def test_redis_asks_the_generated_password_given_on_no_command_line_and_only_the_relay_reaches_it(
    docker_client: Any, stack: Stack
) -> None:
    """Redis takes the password `make up` wrote into .env on its standard input: the command line the
    engine started it with (which `ps` shows every user of the host) does not carry it. Without it Redis
    answers nothing; the app on the network of apps to attach to does not even find it."""
    http = started(stack)
    http.close()
    password = stack.settings["DEBUGRELAY_REDIS_PASSWORD"]
    assert len(password) >= 32
    redis = docker_client.containers.get(stack.container_id("redis"))
    command = [redis.attrs["Path"], *redis.attrs["Args"]]
    assert not any(password in part for part in command), command
    assert b"NOAUTH" in redis.exec_run(["redis-cli", "ping"]).output
    assert redis.exec_run(["redis-cli", "ping"], environment={"REDISCLI_AUTH": password}).output.strip() == b"PONG"

    app = docker_client.containers.get(stack.container_id("example-app"))
    addresses = [n["IPAddress"] for n in redis.attrs["NetworkSettings"]["Networks"].values()]
    program = (REPO / REACH).read_text() + "".join(f"\nprint(reach({a!r}, 6379))" for a in ["redis", *addresses])
    asked = app.exec_run(["python3", "-c", program])
    assert asked.exit_code == 0, asked.output
    assert asked.output.decode().count("failed") == 1 + len(addresses), asked.output


def test_a_handler_in_a_container_is_debugged_in_four_calls_and_reached_at_its_published_url(
    docker_client: Any, stack: Stack, workspace: Path, api: httpx.Client
) -> None:
    """Seed 004 §3.2 under compose: breakpoint, request, read, continue; the service's port published on
    the host's loopback through the relay, which no target reaches it through. Then /metrics: the
    launch counted, under the names a local relay (``api``) answers."""
    http = started(stack)
    sessions = Sessions(http)
    try:
        script = str(workspace / ORDERS)
        sid = sessions.create()
        stack.sessions.append(sid)
        launched = sessions.launch(sid, script, args=["8000"], ports=[8000], ready={"port": 8000, "timeout": 120})
        assert launched["ready"] == "listening", launched
        [published] = launched["published"]
        assert published["url"] == f"http://127.0.0.1:{stack.publish[0]}", launched
        assert httpx.get(published["url"] + "/orders/1", timeout=30).text == '{"order": 1, "total": 8}'

        sessions.bp(sid, script, line_of(script, "handler-line"))  # 1
        stop = ok(http.post(f"/sessions/{sid}/request", json={"path": "/orders/7"}))  # 2
        assert stop["status"] == "paused" and stop["request"]["state"] == "pending", stop
        assert ok(http.post(f"/sessions/{sid}/evaluate", json={"expression": "order_id"}))["result"] == "7"  # 3

        # from the paused service, the relay's publish port on the target's own network: closed unread
        (target,) = docker_client.containers.list(filters={"label": f"debugrelay.session={sid}"})
        relay = docker_client.containers.get(stack.container_id("relay"))
        relay_ip = relay.attrs["NetworkSettings"]["Networks"][target.labels["debugrelay.network"]]["IPAddress"]
        ask = (
            "(lambda s: (s.settimeout(10), s.sendall(b'GET /orders/1 HTTP/1.0\\r\\n\\r\\n'), s.recv(100))[2])"
            f"(__import__('socket').create_connection(({relay_ip!r}, {stack.publish[0]}), 10))"
        )
        asked = http.post(f"/sessions/{sid}/evaluate", json={"expression": ask}).json()
        assert asked.get("result") == "b''" or "ConnectionResetError" in asked["error"]["message"], asked

        went_on = ok(http.post(f"/sessions/{sid}/continue", json={"wait": 2}))  # 4
        rid = stop["request"]["request_id"]
        done = {r["request_id"]: r for r in went_on.get("requests", [])}
        answer = done.get(rid) or ok(http.get(f"/sessions/{sid}/requests/{rid}"))
        assert answer["response"]["body"] == '{"order": 7, "total": 26}', answer
        ok(http.delete(f"/sessions/{sid}"))

        assert httpx.get(f"{stack.url}/metrics").status_code == 401  # the token is asked here too
        names, local = metric_names(http), metric_names(api)
        assert names == local and names >= DOCUMENTED, (names ^ local, DOCUMENTED - names)
        assert value(scraped(http), "debugrelay_launches_total", launcher="docker", outcome="started") == 1
    finally:
        http.close()


def test_an_attached_app_paused_under_compose_stays_paused_through_a_relay_killed_9(
    docker_client: Any, stack: Stack, workspace: Path
) -> None:
    """The example app attached to (seed 004 §3.2), paused in its handler: the relay's container is killed
    with SIGKILL, and the relay that comes back finds it paused where it was, its breakpoint kept."""
    http = started(stack)
    sessions = Sessions(http)
    try:
        app = workspace / EXAMPLE
        mappings = [{"local_root": str(app.parent), "remote_root": "/app"}]
        sid = ok(
            http.post(
                "/sessions", json={"mode": "attach", "host": "example-app", "port": 5678, "path_mappings": mappings}
            ),
            201,
        )["session_id"]
        stack.sessions.append(sid)
        held = ok(http.get(f"/sessions/{sid}"))
        assert held["survives_relay_restart"] is True, held
        lines = app.read_text().splitlines()
        line = 2 + next(i for i, text in enumerate(lines) if text.startswith("def process_order"))  # its first line
        sessions.bp(sid, str(app), line)
        paused = sessions.wait(sid, timeout=60)
        assert paused["status"] == "paused" and paused["location"]["file"] == str(app), paused
        order = ok(http.post(f"/sessions/{sid}/evaluate", json={"expression": "order"}))["result"]

        relay = docker_client.containers.get(stack.container_id("relay"))
        relay.kill(signal="SIGKILL")
        stack.compose("up", "-d", "relay")
        poll(lambda: healthy(http), timeout=60, what="the relay back")

        def back() -> Any:
            status = http.get(f"/sessions/{sid}/status")
            return status.json() if status.status_code == 200 and status.json()["status"] == "paused" else None

        again = poll(back, timeout=60, what="the attached app back, paused")
        assert again["location"] == paused["location"] and again["recovered"] is True, again
        assert ok(http.post(f"/sessions/{sid}/evaluate", json={"expression": "order"}))["result"] == order
        assert [b["line"] for b in ok(http.get(f"/sessions/{sid}/breakpoints"))["breakpoints"]] == [line]
        ok(http.post(f"/sessions/{sid}/continue"))
        assert sessions.wait(sid, timeout=60)["status"] == "paused"  # the next order, at the kept breakpoint
        ok(http.post(f"/sessions/{sid}/detach"))
        assert docker_client.containers.list(filters={"label": f"debugrelay.session={sid}"}) == []  # the keeper went
    finally:
        http.close()
