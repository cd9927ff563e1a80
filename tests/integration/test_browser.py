"""A web page in the user's browser cannot drive a relay on this machine: a foreign Origin, a foreign
Host (DNS rebinding) and a body that is not JSON are refused before anything happens; the names and
origins the operator configures are let in. Real relay processes, driven over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests import raw_http
from tests.chromium import chromium, other_site
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
        # the same expression from the relay's own page is evaluated: the refusal was the origin
        ok(
            api.post(
                f"/sessions/{sid}/evaluate",
                json={"expression": write_marker},
                headers={"Origin": plain.url, "Sec-Fetch-Site": "same-origin"},
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


# -- changes from other pages on this machine -------------------------------------------------------

MCP_ACCEPT = {"Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def test_a_page_on_another_port_of_this_machine_cannot_change_anything(tmp_path: Path) -> None:
    """A bodyless ``POST /shutdown`` with ``Origin: http://localhost:3000`` is what a ``no-cors`` fetch from
    any local page sends: refused, like every change whose page is not the relay's own."""
    relay = Relay(tmp_path)
    try:
        api = relay.http
        sid = ok(api.post("/sessions", json={"name": "kept"}), 201)["session_id"]
        others: list[dict[str, str]] = [
            {"Origin": "http://localhost:3000"},
            {"Origin": "http://localhost:3000", "Sec-Fetch-Site": "same-site"},
            {"Origin": "http://127.0.0.1:9"},  # the same host, another port
            {"Origin": f"http://localhost:{relay.port}"},  # the same port, not the host the request names
            {"Origin": "http://[::1]:5173"},
            {"Origin": "null"},  # a sandboxed frame, a file, a redirect
            {"Sec-Fetch-Site": "same-site"},  # a browser's word without an Origin
            {"Sec-Fetch-Site": "cross-site"},
        ]
        for page in others:
            error_of(api.post("/shutdown", headers=page), 403, "forbidden_origin")
            error_of(api.delete(f"/sessions/{sid}", headers=page), 403, "forbidden_origin")
            error_of(api.patch(f"/sessions/{sid}", json={"name": "x"}, headers=page), 403, "forbidden_origin")
            error_of(api.post("/mcp", json=INITIALIZE, headers={**MCP_ACCEPT, **page}), 403, "forbidden_origin")
        assert ok(api.get("/health"))["status"] == "ok"
        assert ok(api.get(f"/sessions/{sid}"))["name"] == "kept"

        # reads still answer such pages (without CORS headers their scripts cannot read the answer)
        ok(api.get("/sessions", headers={"Origin": "http://localhost:3000", "Sec-Fetch-Site": "same-site"}))
        # the relay's own page, as the request addresses it, may change things
        own = {"Origin": relay.url, "Sec-Fetch-Site": "same-origin"}
        assert ok(api.patch(f"/sessions/{sid}", json={"name": "own page"}, headers=own))["name"] == "own page"
        by_name = {"Host": f"localhost:{relay.port}", "Origin": f"http://localhost:{relay.port}"}
        assert ok(api.patch(f"/sessions/{sid}", json={"name": "by name"}, headers=by_name))["name"] == "by name"
        assert api.post("/mcp", json=INITIALIZE, headers={**MCP_ACCEPT, **own}).status_code == 200
        # clients that are not browsers send neither header: the README's curl calls work as before
        assert ok(api.post("/shutdown"))["shutting_down"] is True
        relay.proc.wait(30)
    finally:
        relay.stop()


def test_in_a_real_browser_a_no_cors_post_from_another_local_page_is_refused(tmp_path: Path) -> None:
    relay = Relay(tmp_path)
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<!doctype html><title>another local app</title><p>hello</p>")
    fetch = (
        "const done = arguments[arguments.length - 1];"
        "fetch(arguments[0], {method: arguments[1], mode: arguments[2], credentials: 'include'})"
        ".then(r => done(r.type + ' ' + r.status), e => done('failed: ' + e));"
    )
    try:
        sid = ok(relay.http.post("/sessions", json={"name": "kept"}), 201)["session_id"]
        with chromium() as driver, other_site(site) as (port, _):
            driver.set_script_timeout(30)
            driver.get(f"http://localhost:{port}/")
            for target_url in (f"http://localhost:{relay.port}", relay.url):  # same site, and another site
                assert driver.execute_async_script(fetch, f"{target_url}/shutdown", "POST", "no-cors") == "opaque 0"
                driver.execute_async_script(fetch, f"{target_url}/sessions/{sid}", "DELETE", "cors")
            assert ok(relay.http.get("/health"))["status"] == "ok"
            assert ok(relay.http.get(f"/sessions/{sid}"))["name"] == "kept"

            # the relay's own page may: the browser's Origin is the relay's as the page addressed it
            driver.get(f"{relay.url}/ui")
            created = driver.execute_async_script(
                "const done = arguments[arguments.length - 1];"
                "fetch('/sessions', {method: 'POST', headers: {'Content-Type': 'application/json'},"
                " body: JSON.stringify({name: 'from the relay page'})}).then(r => done(r.status));"
            )
            assert created == 201
        assert "from the relay page" in {s["name"] for s in ok(relay.http.get("/sessions"))["sessions"]}
    finally:
        relay.stop()


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


# -- malformed headers -----------------------------------------------------------------------------


def send(relay: Relay, method: str, path: str, headers: list[tuple[str, bytes]], body: bytes = b"") -> httpx.Response:
    return raw_http.send(relay.port, method, path, headers, body)


def test_a_malformed_host_is_a_400_in_the_envelope_never_a_500(plain: Relay) -> None:
    before = session_ids(plain.http)
    malformed = [
        b"127.0.0.1:x.evil.example",
        b"127.0.0.1:99999",
        b"127.0.0.1:0",
        b"127.0.0.1:-1",
        b"127.0.0.1:+80",
        b"127.0.0.1:",
        b"localhost:" + b"9" * 500,
        b"[::1",
        b"[::1]x",
        b"[::1]:abc",
        b"[::1]:80:90",
        b"[127.0.0.1]",
        b"::1",
        b"localhost..",
        b"user@127.0.0.1",
        b"l\xc3\xb6calhost",
        "127.0.0.1:8\u00e9".encode(),
        b"a" * 10_000,
        b"",
    ]
    requests = [("POST", "/sessions", b"{}"), ("GET", "/sessions", b""), ("GET", "/ui", b""), ("GET", "/health", b"")]
    for host in malformed:
        for method, path, body in requests:
            answer = send(plain, method, path, [("Host", host)], body)
            err = error_of(answer, 400)
            # Litestar's router refuses some before any middleware runs (invalid_request), the relay the rest
            assert err["code"] in ("invalid_host", "invalid_request"), err
            assert len(err["details"].get("host", "")) <= 200, err  # echoed, clipped
        mcp = send(plain, "POST", "/mcp", [("Host", host), ("Accept", b"application/json, text/event-stream")], b"{}")
        assert error_of(mcp, 400)["code"] in ("invalid_host", "invalid_request")
    two = send(plain, "POST", "/sessions", [("Host", b"127.0.0.1"), ("Host", b"127.0.0.1")], b"{}")
    error_of(two, 400, "invalid_host")
    assert session_ids(plain.http) == before
    # well-formed spellings of the relay's names still answer
    for host in (b"127.0.0.1", b"LOCALHOST.", f"localhost:{plain.port}".encode(), b"[0:0::1]:80"):
        assert send(plain, "GET", "/health", [("Host", host)]).status_code == 200, host


def test_a_malformed_origin_is_refused_in_the_envelope(plain: Relay) -> None:
    host = ("Host", f"127.0.0.1:{plain.port}".encode())
    malformed = [
        b"",
        b"http://",
        b"http://[::1",
        b"http://localhost:99999",
        b"http://localhost:x",
        b"http://localhost:3000/path",
        b"http://user@localhost:3000",
        b"javascript:alert(1)",
        b"://localhost",
        b"http://localhost\xff",
        b"http://" + b"a" * 20_000,
    ]
    for origin in malformed:
        for method, path, body in (("POST", "/sessions", b"{}"), ("GET", "/sessions", b"")):
            err = error_of(send(plain, method, path, [host, ("Origin", origin)], body), 403, "forbidden_origin")
            assert len(err["details"]["origin"]) <= 200, err
    for name, value in (("Origin", plain.url), ("Sec-Fetch-Site", "same-origin")):
        twice = [host, (name, value.encode()), (name, value.encode())]
        err = error_of(send(plain, "POST", "/sessions", twice, b"{}"), 400, "invalid_header")
        assert err["details"]["header"] == name.lower()


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
    # a page on another port of this machine (e.g. the MCP Inspector) may not call tools: list its origin
    # in DEBUGRELAY_CORS_ORIGINS; clients that are not browsers and the relay's own page may
    local_page = {**accept, "Origin": "http://localhost:6274"}
    error_of(plain.http.post("/mcp", json=initialize, headers=local_page), 403, "forbidden_origin")
    assert plain.http.post("/mcp", json=initialize, headers=accept).status_code == 200
    own_page = {**accept, "Origin": plain.url, "Sec-Fetch-Site": "same-origin"}
    assert plain.http.post("/mcp", json=initialize, headers=own_page).status_code == 200


# -- replicas --------------------------------------------------------------------------------------


def test_requests_forwarded_between_replicas_pass_the_owners_checks(cluster: Cluster) -> None:
    owner = cluster.relay(DEBUGRELAY_ALLOWED_HOSTS="relay.test", DEBUGRELAY_CORS_ORIGINS="https://ui.example")
    other = cluster.relay(DEBUGRELAY_ALLOWED_HOSTS="relay.test", DEBUGRELAY_CORS_ORIGINS="https://ui.example")
    owner_id = ok(owner.http.get("/cluster"))["instance_id"]
    sid = ok(owner.http.post("/sessions", json={"name": "owned"}), 201)["session_id"]
    # the docs page served by the other replica under the service name: same origin there, not at the owner
    page = {**as_host(other, "relay.test"), "Origin": f"http://relay.test:{other.port}"}
    renamed = other.http.patch(f"/sessions/{sid}", json={"name": "renamed"}, headers=page)
    assert ok(renamed)["name"] == "renamed"
    assert renamed.headers["x-debugrelay-served-by"] == owner_id
    # what the browser says about the page is checked where it arrives, and not sent on: the owner, reached
    # under another name, would see a page of another site
    for browser in (
        {"Origin": other.url, "Sec-Fetch-Site": "same-origin"},
        {"Origin": "https://ui.example", "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors"},
    ):
        stepped = other.http.post(f"/sessions/{sid}/step-over", headers=browser)
        assert stepped.headers["x-debugrelay-served-by"] == owner_id, stepped.text
        error_of(stepped, 409)  # reached the owner: the session has no target to step

    refused = other.http.patch(f"/sessions/{sid}", json={"name": "evil"}, headers={"Origin": EVIL})
    error_of(refused, 403, "forbidden_origin")
    assert "x-debugrelay-served-by" not in refused.headers
    assert ok(owner.http.get(f"/sessions/{sid}"))["name"] == "renamed"
