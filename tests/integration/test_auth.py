"""Wrong tokens are limited per client address: a burst, then one a second, then 429 with Retry-After;
the API, /mcp and the live view's sign-in share the limit, and requests that never fail take nothing
from it. Real relay processes; clients on other loopback addresses (127.0.0.x) stand for other hosts."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import Relay, error_of, ok, until
from tests.raw_http import client_from, send

pytestmark = pytest.mark.integration

TOKEN = "auth-test-token-7c1e90"
BURST = 10  # api.auth.BURST
GLOBAL_BURST, GLOBAL_PER_SECOND = 50, 0.5  # api.auth.GLOBAL_BURST, GLOBAL_PER_SECOND: wrong tokens from all addresses
MCP = {"Accept": "application/json, text/event-stream"}
TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Relay]:
    r = Relay(tmp_path_factory.mktemp("auth"), env={"DEBUGRELAY_TOKEN": TOKEN})
    yield r
    r.stop()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def limited(response: httpx.Response) -> int:
    """The wait a 429 names, in the envelope and in Retry-After alike."""
    err = error_of(response, 429, "too_many_attempts")
    wait = err["details"]["retry_after"]
    assert isinstance(wait, int) and wait >= 1, err
    assert response.headers["retry-after"] == str(wait)
    return wait


def test_wrong_tokens_are_limited_per_client_address_and_right_ones_never_count(guarded: Relay) -> None:
    with client_from(guarded.url, "127.0.0.2") as guesser, client_from(guarded.url, "127.0.0.3") as other:
        for _ in range(50):  # successful requests take nothing from the limit
            ok(guesser.get("/sessions", headers=bearer(TOKEN)))
        for n in range(BURST):
            error_of(guesser.get("/sessions", headers=bearer(f"guess-{n}")), 401, "unauthorized")
        limited(guesser.get("/sessions", headers=bearer("guess-more")))
        # while limited, no guess is looked at: the right token waits too, or the answer would tell
        limited(guesser.get("/sessions", headers=bearer(TOKEN)))
        limited(guesser.post("/mcp", json=TOOLS, headers={**MCP, **bearer(TOKEN)}))
        limited(guesser.post("/ui/login", json={"token": TOKEN}))
        limited(guesser.get("/ui", headers=bearer("guess")))
        assert ok(guesser.get("/health"))["status"] == "ok"  # open paths stay open
        assert ok(guesser.get("/livez"))["status"] == "ok"  # the probes too: a kubelet holds no token
        assert ok(guesser.get("/readyz"))["status"] == "ready"

        # another address has its own allowance
        ok(other.get("/sessions", headers=bearer(TOKEN)))
        error_of(other.get("/sessions", headers=bearer("wrong")), 401, "unauthorized")

        # the allowance comes back with time (one try a second)
        until(lambda: guesser.get("/sessions", headers=bearer(TOKEN)).status_code == 200, "the limit to lift")


def test_the_view_sign_in_and_mcp_count_wrong_tokens_too(guarded: Relay) -> None:
    with client_from(guarded.url, "127.0.0.4") as viewer, client_from(guarded.url, "127.0.0.5") as agent:
        for n in range(BURST):
            error_of(viewer.post("/ui/login", json={"token": f"guess-{n}"}), 401, "unauthorized")
        limited(viewer.post("/ui/login", json={"token": "guess"}))
        for n in range(BURST):
            error_of(agent.post("/mcp", json=TOOLS, headers={**MCP, **bearer(f"guess-{n}")}), 401, "unauthorized")
        limited(agent.post("/mcp", json=TOOLS, headers={**MCP, **bearer("guess")}))
        limited(agent.get("/sessions", headers=bearer(TOKEN)))


def test_odd_authorization_headers_are_refused_in_the_envelope(guarded: Relay) -> None:
    host = ("Host", b"127.0.0.1")
    source = "127.0.0.6"

    def status(*values: bytes) -> httpx.Response:
        headers = [host, *(("Authorization", v) for v in values)]
        return send(guarded.port, "GET", "/sessions", headers, source=source)

    for value in (
        b"Basic " + b"dG9rZW46",  # another scheme: no guess at the token, not counted
        b"Digest username=x",
        b"Bearer",
        b"Bearer " + TOKEN.encode() + b" extra",
        b"Bearer\t" + TOKEN.encode(),
        "Bearer t\u00f6ken".encode(),
        b"Bearer \xff\xfe",
        b"Bearer " + b"x" * 20_000,
    ):
        error_of(status(value), 401, "unauthorized")
    err = error_of(status(b"Bearer " + TOKEN.encode(), b"Bearer x"), 400, "invalid_header")
    assert err["details"]["header"] == "authorization"
    # the scheme's case and spaces around the token do not matter (RFC 9110)
    assert status(b"bearer  " + TOKEN.encode()).status_code == 200


def test_with_no_token_configured_nothing_is_limited(tmp_path: Path) -> None:
    relay = Relay(tmp_path)
    try:
        for n in range(BURST + 5):
            ok(relay.http.get("/sessions", headers=bearer(f"anything-{n}")))
    finally:
        relay.stop()


def test_wrong_tokens_from_many_addresses_share_one_budget_and_the_right_token_still_works(tmp_path: Path) -> None:
    relay = Relay(tmp_path, env={"DEBUGRELAY_TOKEN": TOKEN})
    try:
        with client_from(relay.url, "127.0.0.1") as person:
            ok(person.get("/sessions", headers=bearer(TOKEN)))  # the token's holder, at work before the guessing
            evaluated = 0
            started = time.monotonic()
            for n in range(30):  # 30 hosts, each within its own allowance
                with client_from(relay.url, f"127.0.1.{n + 1}") as guesser:
                    for guess in range(BURST):
                        answer = guesser.get("/sessions", headers=bearer(f"guess-{n}-{guess}"))
                        assert answer.status_code in (401, 429), answer.text
                        evaluated += answer.status_code == 401
                ok(person.get("/sessions", headers=bearer(TOKEN)))  # the right token is never refused meanwhile
            # a guess is told wrong within the shared budget and what it refilled since, never 10 per address
            refilled = math.ceil((time.monotonic() - started) * GLOBAL_PER_SECOND)
            assert evaluated <= GLOBAL_BURST + refilled < 30 * BURST, evaluated
    finally:
        relay.stop()
