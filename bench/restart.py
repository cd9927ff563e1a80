"""How many sessions survive a kill -9 of the relay, and how long the next relay takes to re-attach.

    .venv/bin/python bench/restart.py [--sessions 20] [--rounds 3]

Starts a redis-server (AOF, temp dir) and a relay on it, creates N sessions on a target that ticks
forever with a breakpoint on its tick line (half left paused there, half running with a
conditional breakpoint), then per round: kill -9 the relay, start a new one, and measure
- survived: sessions listed, re-attached (``recovered``) and stopping at their breakpoint again;
- time from starting the new relay process to all re-attached (the relay's own recovery record),
  and the part of it the recovery itself took.
A last round restarts gracefully (SIGTERM: targets are left running for the next relay).
Prints a JSON summary and writes it to bench/results/restart.json. Every process started is ended
by PID.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psutil
import redis

ROOT = Path(__file__).resolve().parent.parent
TICK = str(ROOT / "tests" / "targets" / "persist_tick.py")
TICK_LINE = next(i for i, line in enumerate(Path(TICK).read_text().splitlines(), 1) if line.endswith("# tick"))
RESULTS = ROOT / "bench" / "results"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def until(check: Any, what: str, seconds: float = 60.0) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.02)
    raise RuntimeError(f"timed out waiting for {what}")


class Relay:
    def __init__(self, workdir: Path, env: dict[str, str]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = workdir / f"relay-{self.port}.log"
        self.started = time.time()
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "debugrelay.cli", "serve", "--port", str(self.port)],
                env={**os.environ, **env},
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
            )
        self.http = httpx.Client(base_url=self.url, timeout=60)

        def healthy() -> bool:
            if self.proc.poll() is not None:
                raise RuntimeError(self.log.read_text())
            try:
                return self.http.get("/health").status_code == 200
            except httpx.TransportError:
                return False

        until(healthy, "the relay to answer")
        self.ready = time.time()

    def kill(self) -> None:
        self.http.close()
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def terminate(self) -> None:
        self.http.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(30)


def make_sessions(relay: Relay, count: int) -> list[str]:
    ids = []
    for index in range(count):
        running = index % 2 == 1
        sid = relay.http.post("/sessions", json={"name": f"bench-{index}"}).json()["session_id"]
        bp: dict[str, Any] = {"source": {"path": TICK}, "line": TICK_LINE}
        if running:
            bp["condition"] = "count % 10 == 0"  # hits every 2 s
        relay.http.post(f"/sessions/{sid}/breakpoints", json=bp).raise_for_status()
        launch = {"script": TICK, "env": {"TICK_SECONDS": "0.2"}}  # light: 20 targets share the machine
        relay.http.post(f"/sessions/{sid}/launch", json=launch).raise_for_status()
        assert relay.http.post(f"/sessions/{sid}/wait", json={"timeout": 30}).json()["status"] == "paused"
        if running:
            relay.http.post(f"/sessions/{sid}/continue").raise_for_status()
        ids.append(sid)
    return ids


def survived(relay: Relay, sid: str) -> bool:
    """Listed, re-attached, and stopping at its breakpoint again (continued from there once)."""
    status = relay.http.post(f"/sessions/{sid}/wait", json={"timeout": 30}).json()
    if not (
        status.get("recovered")
        and status.get("status") == "paused"
        and status.get("location", {}).get("line") == TICK_LINE
    ):
        return False
    relay.http.post(f"/sessions/{sid}/continue").raise_for_status()
    again = relay.http.post(f"/sessions/{sid}/wait", json={"timeout": 30}).json()
    return bool(again.get("status") == "paused" and again.get("location", {}).get("line") == TICK_LINE)


def round_trip(
    workdir: Path, env: dict[str, str], old: Relay, ids: list[str], how: str
) -> tuple[Relay, dict[str, Any]]:
    (old.kill if how == "kill -9" else old.terminate)()
    relay = Relay(workdir, env)
    recovery = until(
        lambda: (r := relay.http.get("/cluster").json()["recovery"])["state"] == "done" and r, "recovery to finish"
    )
    listed = {s["session_id"] for s in relay.http.get("/sessions").json()["sessions"]}
    ok = [sid for sid in ids if sid in listed and survived(relay, sid)]
    return relay, {
        "restart": how,
        "sessions": len(ids),
        "survived": len(ok),
        "listed": len(listed & set(ids)),
        "start_to_all_reattached_s": round(recovery["finished_at"] - relay.started, 3),
        "start_to_ready_s": round(relay.ready - relay.started, 3),
        "recovery_s": recovery["seconds"],
        "reattached": recovery.get("reattached", 0),
    }


def kill_targets(client: redis.Redis, namespace: str) -> None:
    """End the sessions' targets and their debugpy adapters, each by PID (checked: same debugpy port)."""
    from debugrelay.launchers import kill_tree
    from debugrelay.launchers.orphan import OrphanTarget

    for raw in client.hvals(f"{namespace}:sessions"):
        described = json.loads(raw).get("target") or {}
        target = OrphanTarget.find(described)
        if target is not None:
            kill_tree(target.proc.pid)
        adapter = described.get("adapter_pid")
        is_adapter = (
            isinstance(adapter, int)
            and psutil.pid_exists(adapter)
            and "debugpy" in " ".join(psutil.Process(adapter).cmdline())
        )
        if is_adapter:
            kill_tree(adapter)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="debugrelay-bench-"))
    port = free_port()
    redis_bin = shutil.which("redis-server") or "/usr/bin/redis-server"
    server = subprocess.Popen(
        [
            redis_bin,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(workdir),
            "--appendonly",
            "yes",
            "--save",
            "",
        ],
        stdout=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port)
    until(lambda: _ping(client), "redis-server")
    namespace = "bench"
    env = {
        "DEBUGRELAY_REDIS_URL": f"redis://127.0.0.1:{port}/0",
        "DEBUGRELAY_REDIS_NAMESPACE": namespace,
        "DEBUGRELAY_STATE_DIR": str(workdir / "state"),
    }
    relay: Relay | None = None
    rounds: list[dict[str, Any]] = []
    try:
        relay = Relay(workdir, env)
        began = time.monotonic()
        ids = make_sessions(relay, args.sessions)
        setup = time.monotonic() - began
        for _ in range(args.rounds):
            relay, result = round_trip(workdir, env, relay, ids, "kill -9")
            rounds.append(result)
            print(json.dumps(result), flush=True)
        relay, result = round_trip(workdir, env, relay, ids, "SIGTERM (graceful)")
        rounds.append(result)
        print(json.dumps(result), flush=True)
    finally:
        if relay is not None:
            relay.kill()
        kill_targets(client, namespace)
        client.close()
        server.terminate()
        server.wait(20)
        shutil.rmtree(workdir, ignore_errors=True)
    killed = [r for r in rounds if r["restart"] == "kill -9"]
    summary = {
        "sessions": args.sessions,
        "setup_s": round(setup, 2),
        "kill9_rounds": len(killed),
        "kill9_survived": [r["survived"] for r in killed],
        "kill9_start_to_all_reattached_s_median": statistics.median(r["start_to_all_reattached_s"] for r in killed),
        "kill9_recovery_s_median": statistics.median(r["recovery_s"] for r in killed),
        "kill9_start_to_ready_s_median": statistics.median(r["start_to_ready_s"] for r in killed),
        "rounds": rounds,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "load_average_1m": round(os.getloadavg()[0], 2),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "restart.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k != "rounds"}, indent=2))


def _ping(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False


if __name__ == "__main__":
    main()
