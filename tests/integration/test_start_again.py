"""What the relay starts again rather than fail a launch or an attach for a reason of its own: a keeper whose
port another process took between the relay's choice and the keeper's bind (any process may bind a free
port at any moment), and a warm target that ended before the launch's program started in it. The relay runs
in this process with its real local launcher and real debugpy targets, so its next free port can be one this
test already listens on, and its warm target can be lost at the worst moment."""

from __future__ import annotations

import asyncio
import socket
import subprocess
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import psutil
import pytest

from debugrelay.config import load_settings
from debugrelay.launchers import local
from debugrelay.launchers.pool import POOL_MODULE, LocalPool, PooledLocalTarget
from debugrelay.models import AttachSpec, BreakpointRequest, CaptureRequest, LaunchRequest
from debugrelay.service import RelayService
from debugrelay.sessions import SessionManager
from debugrelay.wiring import build_manager
from tests.conftest import debugpy_listening, free_port, line_of, target

BASIC = target("basic.py")
LOOP = target("loop.py")
EV_LOOP = target("ev_loop.py")


@asynccontextmanager
async def relay_in_process(tmp_path: Path, pool_size: int = 0) -> AsyncIterator[SessionManager]:
    settings = load_settings(state_dir=str(tmp_path / "state"), pool_size=pool_size, launchers="local", redis_url="")
    manager = build_manager(settings)
    await manager.start()
    for launcher in manager.launchers.values():
        launcher.warm_up()  # as the relay's app does once its event loop runs
    try:
        yield manager
    finally:
        await manager.close()


@pytest.fixture
async def relay(tmp_path: Path) -> AsyncIterator[RelayService]:
    async with relay_in_process(tmp_path) as manager:
        yield RelayService(manager)


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


async def test_a_capture_point_set_before_a_launch_that_starts_again_still_collects(
    relay: RelayService, handed: list[int]
) -> None:
    sid = (await relay.create_session()).session_id
    point = await relay.add_capture(
        sid, CaptureRequest(file=EV_LOOP, line=line_of(EV_LOOP, "loop-body"), expressions=["i"], hit_limit=5)
    )
    await relay.launch(sid, LaunchRequest(script=EV_LOOP, args=["20"]))
    assert (await relay.wait(sid, 30)).status == "terminated"
    assert len(handed) == 4  # started again
    table = await relay.capture_table(sid, point.capture_id)
    assert [row[2] for row in table.rows] == [0, 1, 2, 3, 4]
    await relay.delete_session(sid)


async def test_a_cold_launch_started_again_counts_as_one_cold_start(tmp_path: Path, handed: list[int]) -> None:
    async with relay_in_process(tmp_path, pool_size=1) as manager:
        pool = manager.launchers["local"].pool
        assert pool is not None
        relay = RelayService(manager)
        sid = (await relay.create_session()).session_id
        await relay.launch(sid, LaunchRequest(script=BASIC, env={"PYTHONHASHSEED": "7"}))
        assert (await relay.wait(sid, 30)).exit_code == 0
        assert len(handed) == 4  # started again
        assert pool.pool.stats()["cold_starts"] == {"startup_env": 1}  # one launch, one cold start
        await relay.delete_session(sid)


@pytest.fixture
def program() -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """A program someone started under ``debugpy --listen``, and its port."""
    port = free_port()
    with debugpy_listening(LOOP, port) as proc:
        yield proc, port


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


async def eventually(check: Callable[[], object], what: str) -> None:
    """Until ``check`` holds, the event loop running meanwhile (the relay in this process works there)."""
    for _ in range(600):
        if check():
            return
        await asyncio.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


async def test_a_warm_target_lost_before_the_program_starts_gives_way_to_a_cold_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lost: list[int] = []
    taken = LocalPool.acquire

    async def acquire_and_lose(self: LocalPool, spec: LaunchRequest, **given: Any) -> PooledLocalTarget | None:
        """The warm target, its program killed as it is handed over (it had died a moment before)."""
        target = await taken(self, spec, **given)
        if target is not None:
            program = [p for p in psutil.Process(target.proc.pid).children() if POOL_MODULE in " ".join(p.cmdline())]
            for p in program:
                p.kill()
            psutil.wait_procs(program, timeout=10)
            lost.extend(p.pid for p in program)
        return target

    monkeypatch.setattr(LocalPool, "acquire", acquire_and_lose)
    async with relay_in_process(tmp_path, pool_size=1) as manager:
        pool = manager.launchers["local"].pool
        assert pool is not None
        await eventually(lambda: pool.pool.ready(pool.python) >= 1, "a warm target")
        relay = RelayService(manager)
        sid = (await relay.create_session()).session_id
        await relay.add_breakpoints(sid, [BreakpointRequest(file=BASIC, line=line_of(BASIC, "add-body"))])
        await relay.launch(sid, LaunchRequest(script=BASIC))
        assert lost  # the warm target was handed over, and lost
        stop = await relay.wait(sid, 30)
        assert stop.status == "paused", stop  # in a cold target: the launch never saw the pool's loss
        detail = await relay.session(sid)
        assert detail.target is not None and not detail.target.pooled
        await relay.delete_session(sid)
