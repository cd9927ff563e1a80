"""A target whose relay never comes back ends: its keeper, once no relay has been connected for the
session's timeout, ends the program (its whole process tree) and exits, saying why in its log. A relay
that comes back in time, or stays connected, keeps the target. Real relays killed with SIGKILL, real
keepers, real debugpy."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from debugrelay.dap import KEEPER_FILE, DapClient, keeper_command, new_secret, secret_pipe
from tests.conftest import Relay, free_port, line_of, ok, target
from tests.integration.test_keeper import COUNT, COUNT_LINE, evaluate, gone, kill, wait
from tests.redis_server import Cluster, poll

pytestmark = [pytest.mark.integration, pytest.mark.slow]

KEEPER = Path(__file__).resolve().parents[2] / "src" / "debugrelay" / "_boot" / KEEPER_FILE
LOOP = target("loop.py")
REASON = "the session's timeout; ending the program"
BOUND = 120.0  # a bound on waiting for the end, not a speed check: a loaded machine is slow


@pytest.fixture
def lone_relay(tmp_path: Path) -> Iterator[Relay]:
    """A relay on the in-memory store: nothing but its keepers can end its targets once it is killed."""
    relay = Relay(tmp_path, env={"DEBUGRELAY_ALLOWED_ROOTS": str(tmp_path)})
    yield relay
    relay.stop()


def paused_at_count(http: httpx.Client, body: dict[str, Any], *, pool: bool = False) -> str:
    sid: str = ok(http.post("/sessions", json=body), 201)["session_id"]
    bp = {"source": {"path": COUNT}, "line": COUNT_LINE, "condition": "i == 5"}
    ok(http.post(f"/sessions/{sid}/breakpoints", json=bp))
    ok(http.post(f"/sessions/{sid}/launch", json={"script": COUNT, "args": ["0"], "pool": pool}))
    status = wait(http, sid)
    assert status["status"] == "paused" and status["location"]["line"] == COUNT_LINE
    return sid


def tree(pid: int) -> list[psutil.Process]:
    """The keeper and every process under it (the debuggee, debugpy's adapter)."""
    keeper = psutil.Process(pid)
    return [keeper, *keeper.children(recursive=True)]


def all_gone(processes: list[psutil.Process]) -> bool:
    return all(gone(p.pid) for p in processes)


def pool_ready(http: httpx.Client) -> bool:
    return bool(ok(http.get("/pool"))["pools"]["local"]["ready"] >= 1)


@pytest.mark.parametrize("start", ["cold", "warm"])
def test_a_target_whose_relay_never_returns_ends_after_the_sessions_timeout(lone_relay: Relay, start: str) -> None:
    if start == "warm":
        poll(lambda: pool_ready(lone_relay.http), timeout=BOUND, what="a warm target in the pool")
    sid = paused_at_count(lone_relay.http, {"timeout_minutes": 0.1}, pool=start == "warm")
    detail = ok(lone_relay.http.get(f"/sessions/{sid}"))
    assert detail["target"].get("pooled", False) is (start == "warm")
    processes = tree(detail["target"]["pid"])
    assert len(processes) >= 2  # the keeper and the debuggee under it
    # started with the relay's own session timeout; the session's own (6 s) is told once connected
    assert "--orphan-after" in processes[0].cmdline()

    kill(lone_relay)
    poll(lambda: all_gone(processes), timeout=BOUND, what="the keeper and its program ending")

    log = Path(detail["target"]["log"]).read_text()
    assert f"no relay for 6 s: {REASON}" in log, log
    assert "i 5\n" in log and "i 6\n" not in log  # ended where it was paused, never resumed


def test_a_timeout_changed_later_is_the_one_the_keeper_keeps(lone_relay: Relay) -> None:
    sid = paused_at_count(lone_relay.http, {})  # the relay's default: an hour
    ok(lone_relay.http.patch(f"/sessions/{sid}", json={"timeout_minutes": 0.05}))
    detail = ok(lone_relay.http.get(f"/sessions/{sid}"))
    processes = tree(detail["target"]["pid"])

    kill(lone_relay)
    poll(lambda: all_gone(processes), timeout=BOUND, what="the keeper and its program ending")
    assert f"no relay for 3 s: {REASON}" in Path(detail["target"]["log"]).read_text()


def test_a_relay_that_returns_in_time_keeps_the_target(cluster: Cluster) -> None:
    first = cluster.relay()
    sid = paused_at_count(first.http, {"timeout_minutes": 0.25})  # 15 s
    detail = ok(first.http.get(f"/sessions/{sid}"))
    processes = tree(detail["target"]["pid"])

    kill(first)
    killed = time.monotonic()
    second = cluster.relay()
    again = wait(second.http, sid)  # reconnected: the keeper's deadline starts over
    assert again["status"] == "paused" and again["recovered"] is True

    # past the first relay's deadline, the session in use all along: still there, still paused at i == 5
    while (left := killed + 15 + 3 - time.monotonic()) > 0:
        with pytest.raises(psutil.TimeoutExpired):  # the keeper does not end: its exit is waited for, in vain
            processes[0].wait(min(left, 3.0))
        assert ok(second.http.get(f"/sessions/{sid}/status"))["status"] == "paused"  # in use: not idle
    assert evaluate(second.http, sid, "i") == "5"
    assert REASON not in Path(detail["target"]["log"]).read_text()
    ok(second.http.delete(f"/sessions/{sid}"))


def test_an_attached_program_whose_relay_never_returns_is_let_go_not_ended(lone_relay: Relay) -> None:
    from tests.integration.test_mcp import debugpy_listening, kill_debugpy

    port = free_port()
    program = debugpy_listening(port)
    try:
        sid: str = ok(lone_relay.http.post("/sessions", json={"timeout_minutes": 0.05}), 201)["session_id"]
        ok(lone_relay.http.post(f"/sessions/{sid}/attach", json={"port": port}))
        bp = {"source": {"path": LOOP}, "line": line_of(LOOP, "forever")}
        ok(lone_relay.http.post(f"/sessions/{sid}/breakpoints", json=bp))
        assert wait(lone_relay.http, sid)["status"] == "paused"
        detail = ok(lone_relay.http.get(f"/sessions/{sid}"))
        keeper = psutil.Process(detail["target"]["pid"])
        assert keeper.pid != program.pid  # the keeper beside the relay holds the program

        kill(lone_relay)
        keeper.wait(BOUND)

        assert (
            "no relay for 3 s: the session's timeout; letting the program go"
            in Path(detail["target"]["log"]).read_text()
        )
        assert program.poll() is None  # someone else's program: resumed and running on, never ended
    finally:
        kill_debugpy(program, port)


# -- the keeper on its own: a relay connected holds the target, the deadline restarts on each connect --


class Keeper:
    """A keeper this test starts (``--orphan-after``), its program behind it, a relay played by DapClient."""

    def __init__(self, tmp: Path, orphan_after: float) -> None:
        self.secret = new_secret()
        self.port, inner = free_port(), free_port()
        self.log = tmp / "keeper.log"
        fd = secret_pipe(self.secret)
        argv = keeper_command(
            [sys.executable],
            listen=f"127.0.0.1:{self.port}",
            connect=f"127.0.0.1:{inner}",
            status_file=str(tmp / "keeper.json"),
            keeper=str(KEEPER),
            debuggee=[sys.executable, "-m", "debugpy", "--listen", f"127.0.0.1:{inner}", "--wait-for-client", LOOP],
            attach={"justMyCode": False},
            secret_fd=fd,
            orphan_after=orphan_after,
        )
        try:
            with self.log.open("wb") as out:
                self.proc = subprocess.Popen(argv, stdout=out, stderr=out, pass_fds=(fd,), start_new_session=True)
        finally:
            os.close(fd)

    async def relay(self) -> DapClient:
        deadline = time.monotonic() + BOUND
        while True:
            try:
                return await DapClient.connect("127.0.0.1", self.port, timeout=5.0, secret=self.secret)
            except (OSError, ConnectionError):
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.05)

    def end(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


@pytest.fixture
def keeper(tmp_path: Path) -> Iterator[Keeper]:
    started = Keeper(tmp_path, orphan_after=2.0)
    yield started
    started.end()


def test_a_connected_relay_holds_the_target_and_each_connect_restarts_the_deadline(keeper: Keeper) -> None:
    async def scenario() -> float:
        client = await keeper.relay()
        program = psutil.Process(keeper.proc.pid).children()
        assert program
        with pytest.raises(subprocess.TimeoutExpired):  # past the deadline, connected all along: no end
            await asyncio.to_thread(keeper.proc.wait, 2.0 + 2.0)
        assert not any(gone(p.pid) for p in program)
        await client.close()
        left = time.monotonic()
        client = await keeper.relay()  # back within the deadline: it starts over
        await client.close()
        return left

    left = asyncio.run(scenario())
    keeper.proc.wait(BOUND)
    assert time.monotonic() - left >= 2.0
    log = keeper.log.read_text()
    assert log.count(f"no relay for 2 s: {REASON}") == 1, log


def test_a_relay_tells_the_keeper_a_new_deadline(tmp_path: Path) -> None:
    started = Keeper(tmp_path, orphan_after=3600.0)
    try:

        async def tell() -> None:
            client = await started.relay()
            assert await client.request("debugrelay.orphanAfter", {"seconds": 1}) == {"seconds": 1.0}
            await client.close()

        asyncio.run(tell())
        started.proc.wait(BOUND)
        assert f"no relay for 1 s: {REASON}" in started.log.read_text()
    finally:
        started.end()
