"""Shared fixtures: a real relay process on a free port, driven over HTTP like an agent would."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from debugrelay.launchers.local import free_port as local_free_port

TARGETS = Path(__file__).parent / "targets"


def free_port() -> int:
    """A loopback port free now and outside the kernel's ephemeral range: a port from bind(0) can be handed
    meanwhile to any process's outgoing connection or listener (a debugpy in another worker binds some)."""
    return local_free_port()


@contextlib.contextmanager
def refused_port() -> Iterator[int]:
    """A loopback port bound but never listened on while the block runs: a connection to it is refused,
    and no other process can start listening on it meanwhile."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


@contextlib.contextmanager
def debugpy_listening(script: str, port: int) -> Iterator[subprocess.Popen[bytes]]:
    """``python -m debugpy --listen 127.0.0.1:PORT script``, as someone starts a program to attach to, once
    its adapter (a child process of its own) listens; the program and its children end with the block."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "debugpy", "--listen", f"127.0.0.1:{port}", script],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        until(
            lambda: any(
                c.laddr and c.laddr.port == port and c.status == psutil.CONN_LISTEN
                for c in psutil.net_connections("tcp")
            ),
            "debugpy to listen",
        )
        yield proc
    finally:
        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(proc.pid).children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    child.kill()
        proc.kill()
        proc.wait()


def end_tree(pid: int) -> None:
    """Kill the process ``pid`` a test started (through the relay) and everything under it, the leaves
    first; one that ends meanwhile (its parent's end ends it) is already what was wanted."""
    with contextlib.suppress(psutil.NoSuchProcess):
        top = psutil.Process(pid)
        for proc in [*reversed(top.children(recursive=True)), top]:
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()


class Relay:
    """A ``debugrelay serve`` subprocess and an HTTP client bound to it."""

    def __init__(self, tmp: Path, env: dict[str, str] | None = None, args: list[str] | None = None) -> None:
        full_env = {**os.environ, "DEBUGRELAY_STATE_DIR": str(tmp / "state"), **(env or {})}
        headers = {}
        if full_env.get("DEBUGRELAY_TOKEN"):
            headers["Authorization"] = f"Bearer {full_env['DEBUGRELAY_TOKEN']}"
        for attempt in range(3):  # a free port can be taken by another process before the relay binds it
            self.port = free_port()
            self.url = f"http://127.0.0.1:{self.port}"
            self.log = tmp / f"relay-{self.port}.log"
            with self.log.open("wb") as log:
                self.proc = subprocess.Popen(
                    [sys.executable, "-m", "debugrelay.cli", "serve", "--port", str(self.port), *(args or [])],
                    env=full_env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            self.http = httpx.Client(base_url=self.url, timeout=60, headers=headers)
            try:
                self._wait_ready()
            except RuntimeError:
                if attempt == 2 or "address already in use" not in self.log.read_text(errors="replace"):
                    raise
            else:
                return

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 120  # a readiness bound, not a speed check: a loaded machine starts slowly
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.http.close()
                raise RuntimeError(f"relay exited: {self.log.read_text()}")
            try:
                if self.http.get("/health").status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.05)
        self.stop()  # no relay outlives the test that started it
        raise RuntimeError(f"relay did not start: {self.log.read_text()}")

    def stop(self) -> None:
        self.http.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="session")
def relay(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Relay]:
    # the tests' own folders are the operator's: files there are read like the workspace's
    r = Relay(tmp_path_factory.mktemp("relay"), env={"DEBUGRELAY_ALLOWED_ROOTS": str(tmp_path_factory.getbasetemp())})
    yield r
    r.stop()


@pytest.fixture
def api(relay: Relay) -> httpx.Client:
    return relay.http


def target(name: str) -> str:
    """Absolute path of a test target script."""
    return str(TARGETS / name)


def line_of(path: str, marker: str) -> int:
    """The 1-based line of ``path`` holding ``# <marker>`` (targets mark lines instead of hard-coding)."""
    for number, text in enumerate(Path(path).read_text().splitlines(), 1):
        if text.rstrip().endswith(f"# {marker}"):
            return number
    raise LookupError(f"no '# {marker}' in {path}")


def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def until(check: Callable[[], Any], what: str, seconds: float = 30.0) -> Any:
    """Poll ``check`` until it returns something truthy; fail after ``seconds`` (a bound, not a timing)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


def error_of(response: httpx.Response, status: int, code: str | None = None) -> dict[str, Any]:
    """The error envelope of a failed call, checked for its shape (and its code when given)."""
    assert response.status_code == status, response.text
    err: dict[str, Any] = response.json()["error"]
    assert set(err) == {"code", "message", "details", "hint"}, err
    assert err["code"] and err["message"], err
    if code is not None:
        assert err["code"] == code, err
    return err


def output_text(api: httpx.Client, sid: str, stream: str | None = None) -> str:
    """All output of a session so far, joined (optionally one stream only)."""
    outputs = ok(api.get(f"/sessions/{sid}/output", params={"limit": 10000}))["outputs"]
    return "".join(o["text"] for o in outputs if stream is None or o["type"] == stream)


class Sessions:
    """Helpers for the common agent moves, each one HTTP call."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http
        self.created: list[str] = []

    def create(self, **body: Any) -> str:
        sid: str = ok(self.http.post("/sessions", json=body), 201)["session_id"]
        self.created.append(sid)
        return sid

    def bp(self, sid: str, path: str, line: int, **extra: Any) -> Any:
        return ok(
            self.http.post(f"/sessions/{sid}/breakpoints", json={"source": {"path": path}, "line": line, **extra})
        )

    def launch(self, sid: str, script: str, **extra: Any) -> Any:
        return ok(self.http.post(f"/sessions/{sid}/launch", json={"script": script, **extra}))

    def wait(self, sid: str, timeout: float = 30) -> Any:
        # the client waits longer than the long-poll itself, which answers by then
        return ok(self.http.post(f"/sessions/{sid}/wait", json={"timeout": timeout}, timeout=timeout + 30))

    def start_at(self, script: str, marker: str, **launch: Any) -> tuple[str, Any]:
        """Create, break at ``# marker``, launch and wait for the stop: (session id, status)."""
        sid = self.create()
        self.bp(sid, script, line_of(script, marker))
        self.launch(sid, script, **launch)
        status = self.wait(sid)
        assert status["status"] == "paused", status
        return sid, status

    def cleanup(self) -> None:
        for sid in self.created:
            self.http.delete(f"/sessions/{sid}")


@pytest.fixture
def sessions(api: httpx.Client) -> Iterator[Sessions]:
    helper = Sessions(api)
    yield helper
    helper.cleanup()


# a real Redis for the state-store tests, visible to every test folder
from tests.redis_server import cluster, describe_redis, redis_server  # noqa: E402, F401


def pytest_report_header(config: pytest.Config) -> str:
    """Which Redis the store and recovery tests run against."""
    return describe_redis()
