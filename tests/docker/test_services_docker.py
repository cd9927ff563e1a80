"""A service in a container target, reached through the relay: it sends the request from where it
reaches the container (its address on the targets' network) and answers with the stop or the response;
and its ports published at URLs on the relay's machine, for a person's browser."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.conftest import Sessions, line_of, ok, target
from tests.redis_server import Cluster

ORDERS = target("svc_orders.py")


def test_a_request_stops_in_a_containers_handler_and_continue_brings_the_response(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    sid = sessions.create()
    sessions.bp(sid, ORDERS, line_of(ORDERS, "handler-line"))
    launched = sessions.launch(sid, ORDERS, args=["8000"], launcher="docker", ready={"port": 8000, "timeout": 120})
    assert launched["ready"] == "listening", launched
    stop = ok(api.post(f"/sessions/{sid}/request", json={"path": "/orders/3"}, timeout=90))
    assert stop["status"] == "paused" and stop["location"]["file"] == ORDERS, stop
    assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "order_id"}))["result"] == "3"
    rid = stop["request"]["request_id"]
    went_on = ok(api.post(f"/sessions/{sid}/continue", json={"wait": 2}))
    done = {r["request_id"]: r for r in went_on.get("requests", [])}
    answer = done.get(rid) or ok(api.get(f"/sessions/{sid}/requests/{rid}"))
    assert answer["response"]["status"] == 200 and answer["response"]["body"] == '{"order": 3, "total": 14}'


def get(url: str) -> httpx.Response:
    with httpx.Client(timeout=30) as client:  # a person's browser: straight to the URL, not through the relay
        return client.get(url)


def test_a_containers_port_is_published_at_a_url_on_loopback_until_the_run_ends(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    sid = sessions.create()
    launched = sessions.launch(
        sid, ORDERS, args=["8000"], launcher="docker", ports=[8000], ready={"port": 8000, "timeout": 120}
    )
    [published] = launched["published"]
    assert published["port"] == 8000 and published["url"].startswith("http://127.0.0.1:"), launched
    assert ok(api.get(f"/sessions/{sid}"))["published"] == [published]  # the status says it too
    answer = get(published["url"] + "/orders/5")
    assert answer.status_code == 200 and answer.text == '{"order": 5, "total": 20}'

    ok(api.post(f"/sessions/{sid}/terminate"))
    assert "published" not in ok(api.get(f"/sessions/{sid}"))
    with pytest.raises(httpx.TransportError):
        get(published["url"] + "/orders/5")


def test_a_handler_paused_by_a_browsers_request_answers_it_after_continue(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    sid = sessions.create()
    sessions.bp(sid, ORDERS, line_of(ORDERS, "handler-line"))
    launched = sessions.launch(
        sid, ORDERS, args=["8000"], launcher="docker", ports=[8000], ready={"port": 8000, "timeout": 120}
    )
    url = launched["published"][0]["url"]
    with ThreadPoolExecutor(1) as pool:
        browser = pool.submit(get, url + "/orders/6")
        stop = ok(api.post(f"/sessions/{sid}/wait", json={"timeout": 60}))
        assert stop["status"] == "paused" and stop["location"]["line"] == line_of(ORDERS, "handler-line"), stop
        assert not browser.done()  # the handler is paused: the browser waits for it
        ok(api.post(f"/sessions/{sid}/continue"))
        assert browser.result(60).text == '{"order": 6, "total": 23}'


def test_a_published_port_comes_back_at_the_same_url_with_the_relay_that_takes_over(
    docker_client: Any, cluster: Cluster
) -> None:
    first = cluster.relay()
    sid = ok(first.http.post("/sessions", json={}), 201)["session_id"]
    launch = {"script": ORDERS, "args": ["8000"], "launcher": "docker", "ports": [8000], "pool": False}
    launched = ok(first.http.post(f"/sessions/{sid}/launch", json={**launch, "ready": {"port": 8000, "timeout": 120}}))
    url = launched["published"][0]["url"]
    assert get(url + "/orders/2").status_code == 200

    first.proc.kill()  # SIGKILL: no goodbye; the container and its keeper go on
    first.proc.wait(10)
    with pytest.raises(httpx.TransportError):
        get(url + "/orders/2")  # the forwarder died with its relay

    second = cluster.relay()
    status = ok(second.http.get(f"/sessions/{sid}"))
    assert status["status"] == "running" and status["published"] == launched["published"], status
    assert get(url + "/orders/2").text == '{"order": 2, "total": 11}'
    ok(second.http.delete(f"/sessions/{sid}"))
