"""A port another process takes between the relay's choice and its keeper's bind: the relay starts the keeper
again on another port, for a launch and for an attach (any process on the machine may bind a free port at
any moment). The relay runs in this process, its real local launcher and real debugpy targets, so its next
free port can be made one a listener of this test already holds."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import psutil
import pytest

from debugrelay.config import load_settings
from debugrelay.launchers import local
from debugrelay.models import AttachSpec, BreakpointRequest, LaunchRequest
from debugrelay.service import RelayService
from debugrelay.wiring import build_manager
from tests.conftest import free_port, line_of, target, until

BASIC = target("basic.py")
LOOP = target("loop.py")


@pytest.fixture
async def relay(tmp_path: Path) -> AsyncIterator[RelayService]:
    settings = load_settings(state_dir=str(tmp_path / "state"), pool_size=0, launchers="local", redis_url="")
    manager = build_manager(settings)
    await manager.start()
    try:
        yield RelayService(manager)
    finally:
        await manager.close()


@pytest.fixture
def handed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The ports the relay is handed: first one this test's socket listens on, then free ones."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        taken = other.getsockname()[1]
        ports: list[int] = []

        def next_port() -> int:
            port = taken if not ports else free_port()
            ports.append(port)
            return port

        monkeypatch.setattr(local, "free_port", next_port)
        yield ports


async def test_a_launch_whose_keeper_port_was_taken_starts_again_on_another(
    relay: RelayService, handed: list[int]
) -> None:
    sid = (await relay.create_session()).session_id
    await relay.add_breakpoints(sid, [BreakpointRequest(file=BASIC, line=line_of(BASIC, "add-body"))])
    await relay.launch(sid, LaunchRequest(script=BASIC))
    assert (await relay.wait(sid, 30)).status == "paused"
    assert len(handed) == 4  # the keeper's port (taken) and debugpy's, then both again
    await relay.delete_session(sid)


@pytest.fixture
def program() -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """``python -m debugpy --listen PORT loop.py``, as someone starts a program to attach to, and its port."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "debugpy", "--listen", f"127.0.0.1:{port}", LOOP],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        until(
            lambda: any(
                c.laddr and c.laddr.port == port and c.status == psutil.CONN_LISTEN
                for c in psutil.net_connections("tcp")
            ),
            "debugpy to listen",  # its adapter, a process of its own, listens
        )
        yield proc, port
    finally:
        proc.kill()
        proc.wait()


async def test_an_attach_whose_keeper_port_was_taken_starts_it_again_on_another(
    relay: RelayService, handed: list[int], program: tuple[subprocess.Popen[bytes], int]
) -> None:
    proc, port = program
    sid = (await relay.create_session()).session_id
    status = await relay.attach(sid, AttachSpec(port=port))
    assert status.status == "running"
    assert len(handed) == 2  # the keeper's port (taken), then another
    await relay.delete_session(sid)
    assert proc.poll() is None  # detached: the program someone else started runs on
