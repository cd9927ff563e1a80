"""A web page in the user's browser cannot drive a relay on this machine: a foreign Origin, a foreign
Host (DNS rebinding) and a body that is not JSON are refused before anything happens; the names and
origins the operator configures are let in. Real relay processes, driven over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Relay, Sessions, error_of, ok, target
from tests.redis_server import Cluster

pytestmark = pytest.mark.integration

BASIC = target("basic.py")
EVIL = "http://evil.example"


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Relay]:
    """A relay with the defaults, of this module's own (the tests ask it to shut down)."""
    r = Relay(tmp_path_factory.mktemp("plain"))
    yield r
    r.stop()


@pytest.fixture(scope="module")
def configured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Relay]:
    """A relay reached under a service name, advertised under another, with one browser UI let in."""
    r = Relay(
        tmp_path_factory.mktemp("configured"),
        env={
            "DEBUGRELAY_ALLOWED_HOSTS": "relay.test, debugrelay.default.svc",
            "DEBUGRELAY_ADVERTISE_URL": "http://relay-a.internal:8765",
            "DEBUGRELAY_CORS_ORIGINS": "https://ui.example",
        },
    )
    yield r
    r.stop()


def session_ids(http: httpx.Client) -> set[str]:
    return {s["session_id"] for s in ok(http.get("/sessions"))["sessions"]}


def as_host(relay: Relay, name: str) -> dict[str, str]:
    return {"Host": f"{name}:{relay.port}"}


# -- Origin ----------------------------------------------------------------------------------------


def test_a_foreign_origin_is_refused_on_every_method_and_changes_nothing(plain: Relay, tmp_path: Path) -> None:
    api = plain.http
    sessions = Sessions(api)
    try:
        sid, _ = sessions.start_at(BASIC, "loop-body")
        idle = sessions.create(name="idle")
        before = session_ids(api)
        marker = tmp_path / "evaluated"
        write_marker = f"__import__('pathlib').Path({str(marker)!r}).write_text('x')"
        sample: list[tuple[str, str, Any]] = [
            ("POST", "/sessions", {}),
            ("GET", "/sessions", None),
            ("GET", f"/sessions/{idle}", None),
            ("PATCH", f"/sessions/{idle}", {"name": "renamed"}),
            ("DELETE", f"/sessions/{idle}", None),
            ("POST", f"/sessions/{idle}/launch", {"script": BASIC}),
            ("POST", f"/sessions/{sid}/evaluate", {"expression": write_marker}),
            ("POST", "/shutdown", None),
        ]
        for method, path, body in sample:
            for extra in ({}, {"Content-Type": "text/plain"}):  # text/plain: what a page sends without preflight
                response = api.request(method, path, json=body, headers={"Origin": EVIL, **extra})
                err = error_of(response, 403, "forbidden_origin")
                assert "DEBUGRELAY_CORS_ORIGINS" in err["hint"]
            preflight = api.options(path, headers={"Origin": EVIL, "Access-Control-Request-Method": method})
            error_of(preflight, 403, "forbidden_origin")
            assert "access-control-allow-origin" not in preflight.headers

        assert ok(api.get("/health"))["status"] == "ok"  # still up after the refused shutdown
        assert session_ids(api) == before
        idle_now = ok(api.get(f"/sessions/{idle}"))
        assert idle_now["status"] == "created" and idle_now["name"] == "idle"
        assert ok(api.get(f"/sessions/{sid}/status"))["status"] == "paused"
        assert not marker.exists()
        # the same expression from this machine's own page is evaluated: the refusal was the origin
        ok(
            api.post(
                f"/sessions/{sid}/evaluate",
                json={"expression": write_marker},
                headers={"Origin": "http://localhost:3000"},
            )
        )
        assert marker.read_text() == "x"
    finally:
        sessions.cleanup()


def test_pages_on_this_machine_are_let_in_without_cors_headers(plain: Relay) -> None:
    for origin in (
        "http://localhost:3000",
        "http://127.0.0.1:9",
        "http://[::1]:5173",
        f"http://127.0.0.1:{plain.port}",
    ):
        response = plain.http.get("/sessions", headers={"Origin": origin})
        assert response.status_code == 200, (origin, response.text)
        assert not [h for h in response.headers if h.startswith("access-control-")], response.headers
    for origin in ("null", "http://localhost.evil.example", "file://"):
        error_of(plain.http.get("/sessions", headers={"Origin": origin}), 403, "forbidden_origin")


# -- Host ------------------------------------------------------------------------------------------


def test_a_foreign_host_is_refused_and_changes_nothing(plain: Relay) -> None:
    before = session_ids(plain.http)
    rebound = {**as_host(plain, "evil.example"), "Origin": f"http://evil.example:{plain.port}"}
    for headers in (as_host(plain, "evil.example"), {"Host": "evil.example"}, rebound):
        err = error_of(plain.http.get("/sessions", headers=headers), 400, "invalid_host")
        assert "DEBUGRELAY_ALLOWED_HOSTS" in err["hint"]
        error_of(plain.http.post("/sessions", json={}, headers=headers), 400, "invalid_host")
        error_of(plain.http.get("/health", headers=headers), 400, "invalid_host")
    assert session_ids(plain.http) == before
    for name in ("localhost", "127.0.0.1", "[::1]"):
        ok(plain.http.get("/health", headers=as_host(plain, name)))


def test_names_the_operator_allows_and_the_advertised_host_are_accepted(configured: Relay) -> None:
    http = configured.http
    for host in ("relay.test", "RELAY.TEST", "debugrelay.default.svc", "relay-a.internal"):
        assert ok(http.get("/health", headers=as_host(configured, host)))["status"] == "ok"
    ok(http.get("/health", headers={"Host": "relay.test"}))  # behind a proxy on port 80
    error_of(http.get("/health", headers=as_host(configured, "other.test")), 400, "invalid_host")
    # the relay's own page (e.g. /schema under the service name) may call it: same origin as the Host
    same_origin = {**as_host(configured, "relay.test"), "Origin": f"http://relay.test:{configured.port}"}
    sid = ok(http.post("/sessions", json={"name": "from the docs page"}, headers=same_origin), 201)["session_id"]
    ok(http.delete(f"/sessions/{sid}"))
    shown = ok(http.get("/config"))
    assert shown["allowed_hosts"] == ["relay.test", "debugrelay.default.svc"]
    assert shown["cors_origins"] == ["https://ui.example"]


# -- bodies ----------------------------------------------------------------------------------------


def test_a_body_that_is_not_json_is_refused_and_creates_nothing(plain: Relay) -> None:
    http = plain.http
    before = session_ids(http)
    for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
        response = http.post("/sessions", content=b"{}", headers={"Content-Type": content_type})
        err = error_of(response, 415, "unsupported_media_type")
        assert "application/json" in err["hint"]
    error_of(http.post("/sessions", content=b"{}"), 415, "unsupported_media_type")  # a body without a type
    assert session_ids(http) == before
    for content_type in ("application/json; charset=utf-8", "application/merge-patch+json"):
        sid = ok(http.post("/sessions", content=b"{}", headers={"Content-Type": content_type}), 201)["session_id"]
        ok(http.delete(f"/sessions/{sid}"))
    sid = ok(http.post("/sessions"), 201)["session_id"]  # no body at all needs no type
    ok(http.delete(f"/sessions/{sid}"))


# -- CORS, when configured -------------------------------------------------------------------------


def test_an_allowed_origin_gets_cors_headers_and_its_preflight_passes(configured: Relay) -> None:
    http = configured.http
    ui = "https://ui.example"
    preflight = http.options(
        "/sessions",
        headers={
            "Origin": ui,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
    )
    assert preflight.status_code == 204, preflight.text
    assert preflight.headers["access-control-allow-origin"] == ui
    assert "content-type" in preflight.headers["access-control-allow-headers"].lower()
    created = http.post("/sessions", json={}, headers={"Origin": ui})
    sid = ok(created, 201)["session_id"]
    assert created.headers["access-control-allow-origin"] == ui
    ok(http.delete(f"/sessions/{sid}"))

    refused = http.post("/sessions", json={}, headers={"Origin": EVIL})
    error_of(refused, 403, "forbidden_origin")
    assert "access-control-allow-origin" not in refused.headers
    assert http.options("/sessions", headers={"Origin": EVIL, "Access-Control-Request-Method": "POST"}).is_error


# -- /mcp ------------------------------------------------------------------------------------------


def test_mcp_endpoint_follows_the_same_rules(plain: Relay) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    accept = {"Accept": "application/json, text/event-stream"}
    error_of(plain.http.post("/mcp", json=body, headers={**accept, "Origin": EVIL}), 403, "forbidden_origin")
    error_of(
        plain.http.post("/mcp", json=body, headers={**accept, **as_host(plain, "evil.example")}), 400, "invalid_host"
    )
    error_of(plain.http.post("/mcp", content=b"{}", headers={**accept, "Content-Type": "text/plain"}), 415)
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    local_page = {**accept, "Origin": "http://localhost:6274"}  # e.g. the MCP Inspector on this machine
    assert plain.http.post("/mcp", json=initialize, headers=local_page).status_code == 200


# -- replicas --------------------------------------------------------------------------------------


def test_requests_forwarded_between_replicas_pass_the_owners_checks(cluster: Cluster) -> None:
    owner = cluster.relay(DEBUGRELAY_ALLOWED_HOSTS="relay.test")
    other = cluster.relay(DEBUGRELAY_ALLOWED_HOSTS="relay.test")
    owner_id = ok(owner.http.get("/cluster"))["instance_id"]
    sid = ok(owner.http.post("/sessions", json={"name": "owned"}), 201)["session_id"]
    # the docs page served by the other replica under the service name: same origin there, not at the owner
    page = {**as_host(other, "relay.test"), "Origin": f"http://relay.test:{other.port}"}
    renamed = other.http.patch(f"/sessions/{sid}", json={"name": "renamed"}, headers=page)
    assert ok(renamed)["name"] == "renamed"
    assert renamed.headers["x-debugrelay-served-by"] == owner_id
    stepped = other.http.post(f"/sessions/{sid}/step-over", headers={"Origin": "http://localhost:3000"})
    assert stepped.headers["x-debugrelay-served-by"] == owner_id
    error_of(stepped, 409)  # reached the owner: the session has no target to step

    refused = other.http.patch(f"/sessions/{sid}", json={"name": "evil"}, headers={"Origin": EVIL})
    error_of(refused, 403, "forbidden_origin")
    assert "x-debugrelay-served-by" not in refused.headers
    assert ok(owner.http.get(f"/sessions/{sid}"))["name"] == "renamed"
