"""The shipped images and the compose stack, for the tests that run them as a user does."""

from __future__ import annotations

import contextlib
import os
import random
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


EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")


def quiet_ranges() -> list[range]:
    """Loopback ports outside the kernel's ephemeral range: one found free stays free until the stack
    binds it (an ephemeral port can be handed to any outgoing connection of the test run meanwhile)."""
    try:
        low, high = (int(n) for n in EPHEMERAL.read_text().split())
    except (OSError, ValueError):
        return []
    return [r for r in (range(10000, low), range(high + 1, 65536)) if len(r) >= 1024]


def free_ports(count: int) -> int:
    """The first of ``count`` consecutive ports free on loopback, outside the ephemeral range where the
    machine has one."""
    ranges = quiet_ranges()
    for _ in range(200):
        if ranges:
            chosen = random.choice(ranges)
            first = chosen[random.randrange(len(chosen) - count)]
        else:
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


# what ``compose up`` says when a port it publishes was taken between the choice and the bind
PORT_TAKEN = ("port is already allocated", "address already in use")


class Stack:
    """``compose.yaml`` under a project name of its own, with a workspace, ports and an .env of its own."""

    def __init__(self, workspace: Path, *overrides: Path, **env: str) -> None:
        command = compose_command()
        if command is None:
            pytest.skip("neither `docker compose` nor docker-compose is installed")
        self.command = command
        self.project = f"drtest{uuid.uuid4().hex[:8]}"
        self.workspace = workspace
        self.files = [COMPOSE_FILE, *overrides]  # compose.yaml, then the files laid over it
        self.env_file = workspace / ".env"
        self.sessions: list[str] = []  # the sessions the test made (their targets must go too)
        self.extra_env = env  # more of the stack's .env
        self.choose_ports()

    def choose_ports(self) -> None:
        """Free ports for the relay and for a launch's "ports", written to the stack's .env."""
        first = free_ports(3)
        self.port = first
        self.url = f"http://127.0.0.1:{first}"
        self.publish = (first + 1, first + 2)  # the host ports a launch's "ports" are published on
        written = subprocess.run(
            [str(REPO / "scripts" / "compose-env")],
            cwd=self.workspace,
            env=clean_env(DEBUGRELAY_WORKSPACE=str(self.workspace), DEBUGRELAY_PORT=str(first)),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        self.env_file.write_text(
            written
            + f"DEBUGRELAY_TARGETS_NETWORK={self.project}-targets\n"
            + f"DEBUGRELAY_PUBLISH_PORTS={first + 1}-{first + 2}\n"
        )
        self.env_file.write_text(self.env_file.read_text() + "".join(f"{k}={v}\n" for k, v in self.extra_env.items()))
        self.env_file.chmod(0o600)
        self.settings = dict(line.split("=", 1) for line in written.splitlines() if "=" in line)

    def up(self) -> None:
        """``compose up -d``, again on other ports when one was taken before compose bound it."""
        for attempt in range(3):
            done = self.compose("up", "-d", check=False)
            if done.returncode == 0:
                return
            taken = any(words in done.stderr for words in PORT_TAKEN)
            if not taken or attempt == 2:
                raise AssertionError(f"compose up failed ({done.returncode}):\n{done.stderr[-3000:]}")
            self.compose("down", "--remove-orphans", "--timeout", "10", check=False)
            self.choose_ports()

    def compose(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        files = [arg for f in self.files for arg in ("-f", str(f))]
        base = [*self.command, *files, "-p", self.project, "--env-file", str(self.env_file)]
        done = subprocess.run(
            [*base, *args], cwd=self.workspace, env=clean_env(), capture_output=True, text=True, check=False
        )
        if check and done.returncode != 0:
            raise AssertionError(f"compose {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
        return done

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
