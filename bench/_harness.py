"""What the benchmark starts (relays, raw debugpy targets, containers) and how every one of them ends."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = str(ROOT / "bench" / "scenario.py")


def line_of(marker: str, path: str = SCENARIO) -> int:
    for number, text in enumerate(Path(path).read_text().splitlines(), 1):
        if text.rstrip().endswith(f"# {marker}"):
            return number
    raise LookupError(marker)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def until(check: Callable[[], Any], what: str, seconds: float = 120.0, every: float = 0.02) -> Any:
    """Poll ``check`` until it returns something truthy; a bounded wait, never forever."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(every)
    raise TimeoutError(f"timed out waiting for {what}")


class Cleanup:
    """Everything started, ended in reverse order by PID or container id, also on SIGTERM/SIGINT."""

    def __init__(self) -> None:
        self._actions: list[tuple[str, Callable[[], None]]] = []

    def add(self, what: str, action: Callable[[], None]) -> Callable[[], None]:
        entry = (what, action)
        self._actions.append(entry)

        def done() -> None:
            if entry in self._actions:
                self._actions.remove(entry)
                with contextlib.suppress(Exception):
                    action()

        return done

    def run(self) -> None:
        while self._actions:
            what, action = self._actions.pop()
            try:
                action()
            except Exception as exc:
                print(f"[bench] cleanup of {what} failed: {exc}", file=sys.stderr)

    @contextlib.contextmanager
    def installed(self) -> Iterator[Cleanup]:
        def on_signal(signum: int, _frame: Any) -> None:
            raise KeyboardInterrupt(f"signal {signum}")

        previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            yield self
        finally:
            self.run()
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def kill_tree(pid: int) -> None:
    """Kill a process and its descendants, each by PID, and wait until they are gone."""
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(procs, timeout=5)


def adapter_of(port: int) -> int | None:
    """The debugpy adapter serving ``port`` (it daemonizes: not a child of the debuggee)."""
    from debugrelay.launchers import find_adapter

    return find_adapter(port)


class Relay:
    """A ``debugrelay serve`` subprocess with an HTTP client (keep-alive) bound to it."""

    def __init__(self, workdir: Path, cleanup: Cleanup, name: str, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = workdir / f"relay-{name}.log"
        base = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGRELAY_")}
        full = {
            **base,
            "DEBUGRELAY_STATE_DIR": str(workdir / f"state-{name}"),
            "DEBUGRELAY_MAX_SESSIONS": "500",
            **(env or {}),
        }
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "debugrelay.cli", "serve", "--port", str(self.port)],
                env=full,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
            )
        self._done = cleanup.add(f"relay {name}", self._stop)
        self.http = httpx.Client(base_url=self.url, timeout=120)

        def healthy() -> bool:
            if self.proc.poll() is not None:
                raise RuntimeError(f"relay exited:\n{self.log.read_text()[-3000:]}")
            try:
                return self.http.get("/health").status_code == 200
            except httpx.TransportError:
                return False

        until(healthy, "the relay to answer", 60)

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=120)

    def rss(self) -> int:
        return int(psutil.Process(self.proc.pid).memory_info().rss)

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.http.request(method, path, **kwargs)
        if response.status_code >= 300:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text[:500]}")
        return response.json()

    def pool_ready(self, launcher: str, *, full: bool = True) -> bool:
        """The pool of ``launcher`` has every target ready and nothing starting (so nothing competes)."""
        pool = self.call("GET", "/pool")["pools"].get(launcher)
        if pool is None:
            return True
        if launcher == "docker":
            return bool(pool["keys"]) and all(k["ready"] >= pool["size"] for k in pool["keys"]) and not pool["starting"]
        return bool(pool["ready"] >= (pool["size"] if full else 1) and not pool["starting"])

    def stop(self) -> None:
        self._done()

    def _stop(self) -> None:
        self.http.close()
        if self.proc.poll() is None:
            self.proc.terminate()  # the relay ends its sessions' targets and its warm pool
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                kill_tree(self.proc.pid)
                self.proc.wait()


class RawTarget:
    """``python -m debugpy --listen ... --wait-for-client scenario.py``, tuned (the sitecustomize) or stock."""

    def __init__(
        self, workdir: Path, cleanup: Cleanup, *, tuned: bool, env: dict[str, str] | None = None, keeper: bool = False
    ) -> None:
        from debugrelay.dap import KEEPER_FILE, SECRET_ENV, keeper_command, new_secret
        from debugrelay.launchers.boot import debugpy_args, prepare_boot_dir
        from debugrelay.models import LaunchRequest

        self.port = free_port()
        self.secret: str | None = None
        spec = LaunchRequest(script=SCENARIO)
        base = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGRELAY_") and k != "PYTHONPATH"}
        base["PYTHONUNBUFFERED"] = "1"
        if tuned:
            base["PYTHONPATH"] = str(prepare_boot_dir(workdir / "boot"))
        self.started = time.perf_counter()
        self.log = (workdir / f"raw-{self.port}.log").open("wb")
        argv = [sys.executable, *debugpy_args(spec, f"127.0.0.1:{self.port}")]
        if keeper:  # the same target behind its keeper: what the keeper adds per request
            boot = prepare_boot_dir(workdir / "boot")
            outer, self.secret = free_port(), new_secret()
            argv = keeper_command(
                [sys.executable],
                listen=f"127.0.0.1:{outer}",
                connect=f"127.0.0.1:{self.port}",
                status_file=None,
                keeper=str(boot / KEEPER_FILE),
                debuggee=argv,
            )
            base[SECRET_ENV] = self.secret
            self.debugpy_port, self.port = self.port, outer
        else:
            self.debugpy_port = self.port
        self.proc = subprocess.Popen(
            argv,
            env={**base, **(env or {})},
            cwd=str(ROOT / "bench"),
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._done = cleanup.add(f"raw target {self.proc.pid}", self._end)

    def end(self) -> None:
        self._done()

    def _end(self) -> None:
        adapter = adapter_of(self.debugpy_port)
        kill_tree(self.proc.pid)
        self.proc.wait(10)
        if adapter is not None:
            kill_tree(adapter)
        self.log.close()


class RawContainer:
    """A container target started by debugrelay's own Docker launcher, driven straight over DAP."""

    def __init__(self, workdir: Path, cleanup: Cleanup) -> None:

        from debugrelay.config import load_settings
        from debugrelay.launchers.docker import DockerLauncher
        from debugrelay.models import LaunchRequest

        settings = load_settings(state_dir=str(workdir / "state-raw"))
        launcher = DockerLauncher(settings)
        spec = LaunchRequest(script=SCENARIO, launcher="docker", pool=False)
        kwargs, mounts, with_debugpy = launcher._plan(spec, f"bench_floor_{os.getpid()}")
        self.target: Any = launcher._run(kwargs, mounts, with_debugpy)  # debugpy itself: no keeper
        self.host, self.port = self.target.host, self.target.port
        container = self.target.container
        self._done = cleanup.add(f"container {container.short_id}", lambda: container.remove(force=True, v=True))

    def end(self) -> None:
        self._done()


def docker_status() -> tuple[bool, str]:
    """Whether container targets can be measured here, and why not."""
    try:
        import docker

        client = docker.from_env()
        client.ping()
    except Exception as exc:
        return False, f"no Docker engine: {exc.__class__.__name__}"
    from debugrelay.config import Settings

    image = Settings().docker_image
    try:
        client.images.get(image)
    except Exception:
        return False, f"{image} is not built (make images)"
    finally:
        client.close()
    return True, ""
