"""The relay image as shipped, run through testcontainers: it starts, answers /health, refuses a request
without the token and runs as a non-root user."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import error_of, free_port, ok
from tests.docker.stack import require_images
from tests.redis_server import LABEL, poll

RELAY_IMAGE = "debugrelay/relay:latest"


@pytest.fixture
def shipped_relay(docker_client: Any) -> Iterator[tuple[Any, str, str]]:
    """The relay image with nothing but a token: (container, URL, token)."""
    require_images(docker_client, RELAY_IMAGE)
    os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")  # Ryuk's image cannot be pulled here
    from testcontainers.core.container import DockerContainer

    token = secrets.token_urlsafe(16)
    port = free_port()
    container = DockerContainer(RELAY_IMAGE).with_env("DEBUGRELAY_TOKEN", token).with_kwargs(labels={LABEL: "relay"})
    container.ports = {8765: ("127.0.0.1", port)}  # type: ignore[dict-item]
    container.start()
    wrapped = container.get_wrapped_container()
    try:
        yield wrapped, f"http://127.0.0.1:{port}", token
    finally:
        wrapped.remove(force=True, v=True)


def test_the_relay_image_starts_answers_health_wants_its_token_and_is_not_root(
    shipped_relay: tuple[Any, str, str],
) -> None:
    container, url, token = shipped_relay

    def health() -> Any:
        try:
            answer = httpx.get(f"{url}/health", timeout=5)
        except httpx.TransportError:
            container.reload()
            assert container.status == "running", container.logs()[-2000:]
            return None
        return answer.json() if answer.status_code == 200 else None

    assert poll(health, timeout=60, what="/health of the shipped relay")["status"] == "ok"
    error_of(httpx.get(f"{url}/sessions", timeout=10), 401)
    wrong = httpx.get(f"{url}/sessions", headers={"Authorization": "Bearer not-the-token"}, timeout=10)
    error_of(wrong, 401)
    assert ok(httpx.get(f"{url}/sessions", headers={"Authorization": f"Bearer {token}"}, timeout=10))["total"] == 0

    uid = container.exec_run(["id", "-u"]).output.decode().strip()
    assert uid != "0" and uid == "10000"
    container.reload()
    relay_uids = {row[container.top()["Titles"].index("UID")] for row in container.top()["Processes"]}
    assert "root" not in relay_uids and "0" not in relay_uids, relay_uids
