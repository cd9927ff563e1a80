"""The shipped images and the compose stack, for the tests that run them as a user does."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import free_port

REPO = Path(__file__).resolve().parents[2]
COMPOSE_FILE = REPO / "compose.yaml"
STACK_IMAGES = ("debugrelay/relay:latest", "debugrelay/redis:latest", "debugrelay/example-app:latest")


def compose_command() -> list[str] | None:
    """``docker compose`` when the plugin answers, else ``docker-compose``: as the Makefile chooses."""
    plugin = subprocess.run(["docker", "compose", "version"], capture_output=True, check=False)
    if plugin.returncode == 0:
        return ["docker", "compose"]
    return ["docker-compose"] if shutil.which("docker-compose") else None


def require_images(engine: Any, *images: str) -> None:
    for image in images:
        try:
            engine.images.get(image)
        except Exception:
            pytest.skip(f"{image} is not built (make images)")


def readme_compose_block() -> str:
    """The README's shell block for the compose stack: the first ``bash`` block that reads ``./.env``."""
    text = (REPO / "README.md").read_text()
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        if ". ./.env" in block:
            return str(block)
    raise AssertionError("the README has no compose block (a bash block reading ./.env)")


def clean_env(**extra: str) -> dict[str, str]:
    """The environment a user's shell would have: none of the test run's own DEBUGRELAY_* settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGRELAY_")}
    return {**env, **extra}


def free_ports(count: int) -> int:
    """The first of ``count`` consecutive ports free on loopback (a stack's own publish range)."""
    for _ in range(100):
        first = free_port()
        if first + count > 65535:
            continue
        with contextlib.ExitStack() as held:
            try:
                for port in range(first, first + count):
                    sock = held.enter_context(socket.socket())
                    sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return first
    raise RuntimeError(f"no {count} consecutive free ports")


class Stack:
    """``compose.yaml`` under a project name of its own, with a workspace and an .env of its own."""

    def __init__(self, workspace: Path, port: int) -> None:
        command = compose_command()
        if command is None:
            pytest.skip("neither `docker compose` nor docker-compose is installed")
        self.command = command
        self.project = f"drtest{uuid.uuid4().hex[:8]}"
        self.workspace = workspace
        self.port = port
        self.env_file = workspace / ".env"
        written = subprocess.run(
            [str(REPO / "scripts" / "compose-env")],
            cwd=workspace,
            env=clean_env(DEBUGRELAY_WORKSPACE=str(workspace), DEBUGRELAY_PORT=str(port)),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        first = free_ports(2)
        self.publish = (first, first + 1)  # the host ports a launch's "ports" are published on
        self.env_file.write_text(
            written
            + f"DEBUGRELAY_TARGETS_NETWORK={self.project}-targets\nDEBUGRELAY_PUBLISH_PORTS={first}-{first + 1}\n"
        )
        self.env_file.chmod(0o600)
        self.settings = dict(line.split("=", 1) for line in written.splitlines() if "=" in line)
        self.url = f"http://127.0.0.1:{port}"
        self.sessions: list[str] = []  # the sessions the test made (their targets must go too)

    def compose(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        base = [*self.command, "-f", str(COMPOSE_FILE), "-p", self.project, "--env-file", str(self.env_file)]
        return subprocess.run(
            [*base, *args], cwd=self.workspace, env=clean_env(), capture_output=True, text=True, check=check
        )

    def container_id(self, service: str) -> str:
        return self.compose("ps", "-q", service).stdout.strip()

    def down(self) -> None:
        with contextlib.suppress(Exception):
            self.compose("down", "--volumes", "--remove-orphans", "--timeout", "10", check=False)


def leftovers(engine: Any, project: str, sessions: list[str]) -> list[str]:
    """Containers, networks and volumes of the stack (or of its sessions' targets) that still exist."""
    found: list[str] = []
    label = f"com.docker.compose.project={project}"
    found += [f"container {c.name}" for c in engine.containers.list(all=True, filters={"label": label})]
    found += [f"network {n.name}" for n in engine.networks.list(filters={"label": label})]
    found += [f"network {n.name}" for n in engine.networks.list(names=[f"{project}-targets"])]
    found += [f"volume {v.name}" for v in engine.volumes.list(filters={"label": label})]
    for sid in sessions:
        targets = {"label": f"debugrelay.session={sid}"}
        found += [f"target container {c.name}" for c in engine.containers.list(all=True, filters=targets)]
        found += [f"target network {n.name}" for n in engine.networks.list(filters=targets)]
    return found


def remove_leftovers(engine: Any, project: str, sessions: list[str]) -> None:
    """What a failed test left, removed by id."""
    label = f"com.docker.compose.project={project}"
    for sid in sessions:
        for c in engine.containers.list(all=True, filters={"label": f"debugrelay.session={sid}"}):
            with contextlib.suppress(Exception):
                c.remove(force=True, v=True)
        for n in engine.networks.list(filters={"label": f"debugrelay.session={sid}"}):
            with contextlib.suppress(Exception):
                n.remove()
    for c in engine.containers.list(all=True, filters={"label": label}):
        with contextlib.suppress(Exception):
            c.remove(force=True, v=True)
    for n in [*engine.networks.list(filters={"label": label}), *engine.networks.list(names=[f"{project}-targets"])]:
        with contextlib.suppress(Exception):
            n.remove()
    for v in engine.volumes.list(filters={"label": label}):
        with contextlib.suppress(Exception):
            v.remove(force=True)
