"""A service under the debugger (seed 004 §3.2): launched, ready when it listens, and reached through the
relay, which sends the request and answers with the response or the stop the request caused. Real
HTTP server, real debugpy, local targets (the container ones are in tests/docker)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from tests.conftest import Relay, Sessions, error_of, free_port, line_of, ok, refused_port, target, until
from tests.redis_server import Cluster, poll

pytestmark = pytest.mark.integration

ORDERS = target("svc_orders.py")


def serve(api: httpx.Client, sessions: Sessions, *, marker: str | None = "handler-line") -> tuple[str, int]:
    """Launch the orders service with a breakpoint at ``marker``; once it listens: (session id, port)."""
    sid = sessions.create()
    if marker is not None:
        sessions.bp(sid, ORDERS, line_of(ORDERS, marker))
    port = free_port()
    launched = sessions.launch(sid, ORDERS, args=[str(port), "127.0.0.1"], ready={"port": port})
    assert launched["ready"] == "listening" and launched["status"] == "running", launched
    return sid, port


def listening(port: int) -> bool:
    """Whether anything listens on loopback ``port`` (debugpy's adapter, a process of its own)."""
    return any(c.status == psutil.CONN_LISTEN and c.laddr.port == port for c in psutil.net_connections("tcp4"))


@contextlib.contextmanager
def attachable_service() -> Iterator[tuple[int, int]]:
    """The orders service under a debugpy someone else started, listening: (debugpy's port, the service's)."""
    dap_port, port = free_port(), free_port()
    service = subprocess.Popen(
        [sys.executable, "-m", "debugpy", "--listen", f"127.0.0.1:{dap_port}", ORDERS, str(port), "127.0.0.1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # attached once it runs, as a user attaches to a service: its debugpy listening (seen without a
        # connection, which debugpy would take for its client)
        until(lambda: listening(dap_port), "the service's debugpy to listen", 120)
        yield dap_port, port
    finally:
        service.kill()
        service.wait()


def request(api: httpx.Client, sid: str, **call: Any) -> Any:
    return ok(api.post(f"/sessions/{sid}/request", json=call, timeout=float(call.get("timeout", 30)) + 30))


def test_a_request_stops_in_its_handler_then_continue_brings_its_response(
    api: httpx.Client, sessions: Sessions
) -> None:
    sid, _ = serve(api, sessions)
    stop = request(api, sid, path="/orders/4")  # the port is the launch's ready port
    assert stop["status"] == "paused" and stop["location"]["line"] == line_of(ORDERS, "handler-line")
    pending = stop["request"]
    assert pending["state"] == "pending" and pending["path"] == "/orders/4" and "response" not in pending
    assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "order_id"}))["result"] == "4"

    went_on = ok(api.post(f"/sessions/{sid}/continue", json={"wait": 2}))
    answered = went_on.get("requests")
    if answered is None:  # the response came after the continue's answer: readable by id
        answered = [ok(api.get(f"/sessions/{sid}/requests/{pending['request_id']}"))]
    response = answered[0]["response"]
    assert answered[0]["request_id"] == pending["request_id"] and response["status"] == 200
    assert response["body"] == '{"order": 4, "total": 17}'
    assert response["headers"]["content-type"] == "application/json"
    kept = ok(api.get(f"/sessions/{sid}/requests/{pending['request_id']}"))
    assert kept["state"] == "answered" and kept["response"]["body"] == response["body"]


def test_a_request_no_breakpoint_stops_answers_with_its_response(api: httpx.Client, sessions: Sessions) -> None:
    sid, port = serve(api, sessions, marker=None)
    answer = request(api, sid, method="POST", path="/echo", port=port, body="a=1", headers={"Content-Type": "text/x"})
    assert answer["status"] == "running" and answer["request"]["state"] == "answered"
    assert answer["request"]["response"]["status"] == 201
    assert answer["request"]["response"]["body"] == '{"echo": "a=1", "type": "text/x"}'


def test_a_second_request_while_the_first_is_paused_stops_in_its_turn(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = serve(api, sessions)
    first = request(api, sid, path="/orders/1")
    assert first["status"] == "paused"
    # the second request's handler stops too (another thread): it is answered with the wait for it
    second = request(api, sid, path="/orders/2", timeout=2)
    assert second["request"]["state"] == "pending"
    ids = {first["request"]["request_id"], second["request"]["request_id"]}
    bodies = {}
    for _ in range(4):  # each paused handler thread continued in turn; both responses arrive
        status = ok(api.post(f"/sessions/{sid}/continue", json={"wait": 2}))
        for done in status.get("requests", []):
            bodies[done["request_id"]] = done["response"]["body"]
        if status["status"] == "running" and len(bodies) == 2:
            break
    for rid in ids - set(bodies):
        bodies[rid] = ok(api.get(f"/sessions/{sid}/requests/{rid}"))["response"]["body"]
    assert sorted(bodies.values()) == ['{"order": 1, "total": 8}', '{"order": 2, "total": 11}']


def test_a_request_to_a_port_nothing_listens_on_is_a_clear_error(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = serve(api, sessions, marker=None)
    with refused_port() as port:
        err = error_of(api.post(f"/sessions/{sid}/request", json={"path": "/", "port": port, "timeout": 1}), 409)
    assert err["code"] == "service_unreachable" and "nothing answered on port" in err["message"] and err["hint"]
    assert ok(api.get(f"/sessions/{sid}/status"))["status"] == "running"


def test_a_request_needs_a_running_program_and_a_valid_call(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    err = error_of(api.post(f"/sessions/{sid}/request", json={"path": "/", "port": 8000}), 409)
    assert "Launch" in err["hint"]
    for bad in ({"path": "no-slash"}, {"method": "BREW"}, {"headers": {"X": "a\r\nb"}}, {"port": 0}):
        error_of(api.post(f"/sessions/{sid}/request", json=bad), 400)
    error_of(api.get(f"/sessions/{sid}/requests/req_404"), 404)


def test_a_launch_that_never_listens_says_so(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    with refused_port() as port:
        launched = sessions.launch(sid, target("basic.py"), ready={"port": port, "timeout": 30})
    assert launched["ready"] == "ended"  # the program ran to its end without listening


def test_a_request_right_after_a_launch_without_ready_waits_for_the_service_to_listen(
    api: httpx.Client, sessions: Sessions
) -> None:
    sid = sessions.create()
    port = free_port()
    sessions.launch(sid, ORDERS, args=[str(port), "127.0.0.1"])  # answered at once: nothing listens yet
    answer = request(api, sid, path="/orders/0", port=port)
    assert answer["request"]["response"]["body"] == '{"order": 0, "total": 5}'


async def test_a_handler_debugged_over_mcp_and_the_cli(relay: Relay) -> None:
    from tests.integration.test_cli import Cli
    from tests.integration.test_mcp import http_agent

    handler = line_of(ORDERS, "handler-line")
    port = free_port()
    async with http_agent(relay) as agent:
        started = await agent.call("debug_launch", script=ORDERS, args=[str(port), "127.0.0.1"], port=port)
        assert started["status"] == "running" and started["ready"] == "listening", started
        assert started["published"] == [{"port": port, "url": f"http://127.0.0.1:{port}"}]
        await agent.call("debug_set_breakpoint", file=ORDERS, line=handler)
        stop = await agent.call("debug_request", path="/orders/2")  # to the launch's port
        assert stop["status"] == "paused" and stop["locals"]["order_id"] == "2", stop
        assert stop["request"]["state"] == "pending"
        went_on = await agent.call("debug_continue", timeout=2)
        done = went_on.get("requests") or [await agent.call("debug_status")]
        assert any(r.get("response", {}).get("body") == '{"order": 2, "total": 11}' for r in done), went_on
        relay.http.delete(f"/sessions/{started['session_id']}")

    cli = Cli(relay)
    port = free_port()
    launched = cli("launch", "--ready", str(port), "--break", f"{ORDERS}:{handler}", ORDERS, str(port), "127.0.0.1")
    assert launched["ready"] == "listening" and launched["published"][0]["url"].endswith(f":{port}"), launched
    stop = cli("request", launched["session_id"], "GET", "/orders/1")
    assert stop["status"] == "paused" and stop["request"]["state"] == "pending", stop
    echo = cli("request", launched["session_id"], "POST", "/echo", "-d", "x=1", "-H", "Content-Type: text/x")
    assert echo["request"]["state"] == "pending"  # the first handler holds the program: this one waits
    relay.http.delete(f"/sessions/{launched['session_id']}")


def test_a_flask_handler_stops_with_the_request_readable_and_answers_after_continue(
    api: httpx.Client, sessions: Sessions
) -> None:
    app = target("flask_orders.py")
    sid = sessions.create()
    sessions.bp(sid, app, line_of(app, "handler-line"))
    port = free_port()
    assert sessions.launch(sid, app, args=[str(port)], ready={"port": port})["ready"] == "listening"
    stop = request(api, sid, path="/orders/3?coupon=SAVE2", headers={"X-Agent": "yes"})
    assert stop["status"] == "paused" and stop["location"]["function"] == "order", stop
    read = {
        expression: ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": expression}))["result"]
        for expression in ("order_id", "coupon", "request.headers['X-Agent']", "request.path")
    }
    assert read == {
        "order_id": "3",
        "coupon": "'SAVE2'",
        "request.headers['X-Agent']": "'yes'",
        "request.path": "'/orders/3'",
    }
    rid = stop["request"]["request_id"]
    went_on = ok(api.post(f"/sessions/{sid}/continue", json={"wait": 2}))
    done = {r["request_id"]: r for r in went_on.get("requests", [])}
    answer = done.get(rid) or ok(api.get(f"/sessions/{sid}/requests/{rid}"))
    assert answer["response"]["status"] == 200
    assert answer["response"]["body"].replace(" ", "").strip() == '{"coupon":"SAVE2","order":3,"total":12}'


@pytest.mark.slow
def test_a_response_reaches_the_relay_that_took_over_after_one_was_killed_at_the_paused_handler(
    cluster: Cluster,
) -> None:
    first = cluster.relay()
    sid: str = ok(first.http.post("/sessions", json={}), 201)["session_id"]
    bp = {"source": {"path": ORDERS}, "line": line_of(ORDERS, "handler-line")}
    ok(first.http.post(f"/sessions/{sid}/breakpoints", json=bp))
    port = free_port()
    launch = {"script": ORDERS, "args": [str(port), "127.0.0.1"], "ready": {"port": port}}
    assert ok(first.http.post(f"/sessions/{sid}/launch", json=launch))["ready"] == "listening"
    stop = request(first.http, sid, path="/orders/5")
    assert stop["status"] == "paused", stop
    rid = stop["request"]["request_id"]
    first.proc.kill()  # the relay that sent the request is gone; the keeper beside the service sent it
    first.proc.wait(10)

    second = cluster.relay()
    poll(lambda: ok(second.http.get(f"/sessions/{sid}"))["recovered"], what="the session taken over")
    again = ok(second.http.post(f"/sessions/{sid}/wait", json={"timeout": 60}))
    assert again["status"] == "paused" and again["location"] == stop["location"], again
    ok(second.http.post(f"/sessions/{sid}/continue", json={}))
    poll(
        lambda: second.http.get(f"/sessions/{sid}/requests/{rid}").status_code == 200,
        what="the response of the request the first relay sent",
    )
    answer = ok(second.http.get(f"/sessions/{sid}/requests/{rid}"))
    assert answer["state"] == "answered" and answer["response"]["body"] == '{"order": 5, "total": 20}', answer
    ok(second.http.delete(f"/sessions/{sid}"))


def test_an_attached_service_is_sent_requests_by_the_relay(
    api: httpx.Client, sessions: Sessions, tmp_path: Path
) -> None:
    """No keeper beside an attached program: the relay sends the request itself, to the attached host."""
    with attachable_service() as (dap_port, port):
        sid = ok(api.post("/sessions", json={"mode": "attach", "host": "127.0.0.1", "port": dap_port}), 201)[
            "session_id"
        ]
        sessions.created.append(sid)
        sessions.bp(sid, ORDERS, line_of(ORDERS, "handler-line"))
        stop = request(api, sid, path="/orders/1", port=port)
        assert stop["status"] == "paused" and stop["request"]["state"] == "pending", stop
        rid = stop["request"]["request_id"]
        went_on = ok(api.post(f"/sessions/{sid}/continue", json={"wait": 2}))
        done = {r["request_id"]: r for r in went_on.get("requests", [])}
        answer = done.get(rid) or ok(api.get(f"/sessions/{sid}/requests/{rid}"))
        assert answer["response"]["body"] == '{"order": 1, "total": 8}'


@pytest.mark.slow
def test_an_attached_service_paused_in_its_handler_survives_a_relay_killed_9(cluster: Cluster) -> None:
    """The attach is held by a keeper beside the relay, as a launched program is: the handler stays
    paused with its breakpoints, and the request's response reaches the relay that takes over."""
    with attachable_service() as (dap_port, port):
        first = cluster.relay()
        created = ok(first.http.post("/sessions", json={"mode": "attach", "host": "127.0.0.1", "port": dap_port}), 201)
        sid = created["session_id"]
        assert created["survives_relay_restart"] is True and created["target"]["port"] == dap_port, created
        bp = {"source": {"path": ORDERS}, "line": line_of(ORDERS, "handler-line")}
        ok(first.http.post(f"/sessions/{sid}/breakpoints", json=bp))
        stop = request(first.http, sid, path="/orders/6", port=port)
        assert stop["status"] == "paused", stop
        rid = stop["request"]["request_id"]
        first.proc.kill()
        first.proc.wait(10)

        second = cluster.relay()
        poll(lambda: ok(second.http.get(f"/sessions/{sid}"))["recovered"], what="the session taken over")
        again = ok(second.http.post(f"/sessions/{sid}/wait", json={"timeout": 60}))
        assert again["status"] == "paused" and again["location"] == stop["location"], again
        assert ok(second.http.post(f"/sessions/{sid}/evaluate", json={"expression": "order_id"}))["result"] == "6"
        ok(second.http.post(f"/sessions/{sid}/continue", json={}))
        poll(lambda: second.http.get(f"/sessions/{sid}/requests/{rid}").status_code == 200, what="the response")
        answer = ok(second.http.get(f"/sessions/{sid}/requests/{rid}"))
        assert answer["response"]["body"] == '{"order": 6, "total": 23}', answer
        # the breakpoint is still set: the next request stops again
        assert request(second.http, sid, path="/orders/1", port=port)["status"] == "paused"
        ok(second.http.post(f"/sessions/{sid}/detach"))
        ok(second.http.delete(f"/sessions/{sid}"))


def test_published_ports_are_bounded_and_checked(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    for ports in ([0], [70000], list(range(8000, 8017)), ["http"]):
        launch = {"script": ORDERS, "ports": ports}
        err = error_of(api.post(f"/sessions/{sid}/launch", json=launch), 400)
        assert err["code"] == "invalid_request" and "ports" in err["message"], err
    assert ok(api.get(f"/sessions/{sid}"))["status"] == "created"


def test_a_local_services_port_is_given_as_the_url_it_listens_at(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    port = free_port()
    launched = sessions.launch(sid, ORDERS, args=[str(port), "127.0.0.1"], ports=[port], ready={"port": port})
    assert launched["published"] == [{"port": port, "url": f"http://127.0.0.1:{port}"}]
    assert httpx.get(f"http://127.0.0.1:{port}/orders/1").text == '{"order": 1, "total": 8}'
    page = api.get(f"/ui/sessions/{sid}").text  # the live view links it
    assert f"<a href='http://127.0.0.1:{port}'" in page and f"{port} → http://127.0.0.1:{port}" in page
