"""Attach reaches only what the operator allows, and never echoes what a non-debugger peer sent."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import error_of, ok

pytestmark = pytest.mark.integration

BANNER = b"SSH-2.0-OpenSSH_9.9 secret-build-7\r\n"


@pytest.fixture
def ssh_like_port() -> Iterator[int]:
    """A loopback server that greets with a banner and hangs up: not a debugger."""
    server = socket.create_server(("127.0.0.1", 0))
    port: int = server.getsockname()[1]
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.sendall(BANNER)

    thread = threading.Thread(target=serve)
    thread.start()
    yield port
    stop.set()
    thread.join()
    server.close()


def session_ids(api: httpx.Client) -> set[str]:
    return {s["session_id"] for s in ok(api.get("/sessions"))["sessions"]}


def test_a_peer_that_is_not_a_debugger_is_named_so_without_its_bytes(api: httpx.Client, ssh_like_port: int) -> None:
    before = session_ids(api)
    answer = api.post("/sessions", json={"mode": "attach", "host": "127.0.0.1", "port": ssh_like_port})
    error = error_of(answer, 400, "launch_failed")
    assert "not a DAP server" in error["message"]
    assert "SSH" not in answer.text and "secret-build" not in answer.text
    assert session_ids(api) == before


@pytest.mark.parametrize("host", ["169.254.169.254", "224.0.0.1", "0.0.0.0"])
def test_metadata_multicast_and_unspecified_addresses_are_never_attached_to(api: httpx.Client, host: str) -> None:
    before = session_ids(api)
    error = error_of(api.post("/sessions", json={"mode": "attach", "host": host, "port": 80}), 403, "refused")
    assert error["details"]["host"] == host
    assert session_ids(api) == before


def test_hosts_beyond_loopback_need_the_operator(api: httpx.Client) -> None:
    before = session_ids(api)
    error = error_of(api.post("/sessions", json={"mode": "attach", "host": "192.0.2.10", "port": 5678}), 403, "refused")
    assert error["details"]["setting"] == "DEBUGRELAY_ATTACH_HOSTS"
    assert session_ids(api) == before
