"""The way most people run debugrelay: ``compose.yaml`` itself, driven by the README's own compose block.

The stack runs under a project name, port, workspace and targets network of its own, so it cannot meet a
developer's ``make up``; everything it made is gone at the end."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import free_port, ok
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
from tests.redis_server import poll

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SCRIPT = Path("tests/targets/basic.py")
EXAMPLE = Path("docker/example_app/app.py")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A user's folder: the files the README's block names, readable by the relay's own user."""
    root = tmp_path / "workspace"
    for relative in (SCRIPT, EXAMPLE):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / relative, root / relative)
    for path in (tmp_path, *root.rglob("*"), root):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return root


@pytest.fixture
def stack(docker_client: Any, workspace: Path) -> Iterator[Stack]:
    require_images(docker_client, *STACK_IMAGES)
    up = Stack(workspace, free_port())
    yield up
    up.down()
    remove_leftovers(docker_client, up.project, up.sessions)  # only what a failed test left


def healthy(http: httpx.Client) -> bool:
    try:
        return http.get("/health").status_code == 200
    except httpx.TransportError:
        return False


def test_the_readme_compose_block_works_and_a_killed_relay_comes_back_paused(
    docker_client: Any, stack: Stack, workspace: Path
) -> None:
    stack.compose("up", "-d")
    token = stack.settings["DEBUGRELAY_TOKEN"]
    http = httpx.Client(base_url=stack.url, timeout=60, headers={"Authorization": f"Bearer {token}"})
    try:
        poll(lambda: healthy(http), timeout=60, what="the relay under compose answering /health")
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
