"""Do paused programs stay paused through a kill -9 of the relay, and how soon is every session served?

    .venv/bin/python bench/restart.py [--local 10] [--containers 10] [--rounds 3]

Starts a redis-server (AOF, temp dir) and a relay on it (warm pools on: 2 local interpreters, 1
container per folder), and creates sessions on a target that ticks forever (local ones, and container
ones where Docker and the target image are present): half paused at an unconditional breakpoint on
the tick line, half running with a conditional one there (``count % 10 == 0``: every 2 s). Then per
round (``--rounds`` times kill -9, then one graceful SIGTERM) it starts a new relay and measures
- paused: sessions still paused where they were (recovered, same line, and ``evaluate count``
  gives the value it gave before the kill), left paused for the next round;
- running: sessions stopping at their breakpoint again (then continued, for the next round);
- the time from starting the new relay process to every session served (``/status`` answers,
  recovered, a paused one shown paused), to its ``/health``, and the relay's own recovery time.
Prints one JSON line per round and a summary, written to bench/results/restart.json. Everything it
starts is ended, also on failure: sessions deleted through the relay, then the relay, redis-server,
each target process (by PID) and container (by id) the store names, and any container or network
labelled with this run's store.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import signal
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
IMAGE = "debugrelay/target:latest"


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


def expect(response: httpx.Response) -> Any:
    if response.status_code >= 300:
        raise RuntimeError(
            f"{response.request.method} {response.request.url.path}: {response.status_code} {response.text[:500]}"
        )
    return response.json()


class Relay:
    def __init__(self, workdir: Path, env: dict[str, str]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = workdir / f"relay-{self.port}.log"
        self.started = time.monotonic()
        base = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGRELAY_")}
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "debugrelay.cli", "serve", "--port", str(self.port)],
                env={**base, **env},
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
            )
        self.http = httpx.Client(base_url=self.url, timeout=60)

        def healthy() -> bool:
            if self.proc.poll() is not None:
                raise RuntimeError(self.log.read_text()[-3000:])
            try:
                return self.http.get("/health").status_code == 200
            except httpx.TransportError:
                return False

        try:
            until(healthy, "the relay to answer")
        except BaseException:
            self.kill()
            raise
        self.ready = time.monotonic()

    def kill(self) -> None:
        self.http.close()
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def terminate(self) -> None:
        self.http.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


class Plan:
    """One session of the run: where it runs, whether it is left paused, what it evaluated to."""

    def __init__(self, sid: str, launcher: str, paused: bool) -> None:
        self.sid = sid
        self.launcher = launcher
        self.paused = paused
        self.value: str | None = None
        self.pooled = False


def make_session(http: httpx.Client, index: int, launcher: str, paused: bool) -> Plan:
    sid = expect(http.post("/sessions", json={"name": f"bench-{launcher}-{index}"}))["session_id"]
    bp: dict[str, Any] = {"source": {"path": TICK}, "line": TICK_LINE}
    if not paused:
        bp["condition"] = "count % 10 == 0"  # every 2 s at TICK_SECONDS=0.2
    expect(http.post(f"/sessions/{sid}/breakpoints", json=bp))
    launch = {"script": TICK, "launcher": launcher, "env": {"TICK_SECONDS": "0.2"}}  # light: 20 targets share 2 CPUs
    expect(http.post(f"/sessions/{sid}/launch", json=launch))
    status = expect(http.post(f"/sessions/{sid}/wait", json={"timeout": 60}))
    if status["status"] != "paused" or status["location"]["line"] != TICK_LINE:
        raise RuntimeError(f"session {sid} did not stop at its breakpoint: {status}")
    plan = Plan(sid, launcher, paused)
    plan.pooled = bool(expect(http.get(f"/sessions/{sid}"))["target"].get("pooled"))
    if paused:
        plan.value = evaluate(http, sid)
    else:
        expect(http.post(f"/sessions/{sid}/continue"))
    return plan


def evaluate(http: httpx.Client, sid: str) -> str:
    result: str = expect(http.post(f"/sessions/{sid}/evaluate", json={"expression": "count"}))["result"]
    return result


def served(relay: Relay, plans: list[Plan]) -> float:
    """Seconds from starting the relay process until every session answered its status, recovered
    (a paused one shown paused)."""
    pending = {plan.sid: plan for plan in plans}

    def check() -> bool:
        for sid, plan in list(pending.items()):
            response = relay.http.get(f"/sessions/{sid}/status")
            if response.status_code != 200:
                continue
            status = response.json()
            if status.get("recovered") and status["status"] in (("paused",) if plan.paused else ("running", "paused")):
                del pending[sid]
        return not pending

    until(check, "every session served", 120)
    return time.monotonic() - relay.started


def still_paused(relay: Relay, plan: Plan) -> bool:
    """Paused where it was: recovered, same line, same value."""
    status = expect(relay.http.post(f"/sessions/{plan.sid}/wait", json={"timeout": 30}))
    where = status.get("location") or {}
    if not (status.get("recovered") and status.get("status") == "paused" and where.get("line") == TICK_LINE):
        return False
    return evaluate(relay.http, plan.sid) == plan.value


def stops_again(relay: Relay, plan: Plan) -> bool:
    """A running session stops at its breakpoint again; it is continued for the next round."""
    status = expect(relay.http.post(f"/sessions/{plan.sid}/wait", json={"timeout": 30}))
    where = status.get("location") or {}
    stopped = bool(status.get("recovered") and status.get("status") == "paused" and where.get("line") == TICK_LINE)
    if status.get("status") == "paused":
        expect(relay.http.post(f"/sessions/{plan.sid}/continue"))
    return stopped


def round_trip(
    workdir: Path, env: dict[str, str], old: Relay, plans: list[Plan], how: str
) -> tuple[Relay, dict[str, Any]]:
    (old.kill if how == "kill -9" else old.terminate)()
    relay = Relay(workdir, env)
    all_served = served(relay, plans)
    recovery = until(
        lambda: (r := relay.http.get("/cluster").json()["recovery"])["state"] == "done" and r, "recovery to finish"
    )
    listed = {s["session_id"] for s in expect(relay.http.get("/sessions"))["sessions"]}
    result: dict[str, Any] = {"restart": how, "sessions": len(plans), "listed": len(listed & {p.sid for p in plans})}
    for launcher in sorted({p.launcher for p in plans}):
        mine = [p for p in plans if p.launcher == launcher]
        paused = [p for p in mine if p.paused]
        running = [p for p in mine if not p.paused]
        result[launcher] = {
            "paused_kept": f"{sum(still_paused(relay, p) for p in paused)}/{len(paused)}",
            "running_stopped_again": f"{sum(stops_again(relay, p) for p in running)}/{len(running)}",
        }
    result.update(
        start_to_all_served_s=round(all_served, 3),
        start_to_health_s=round(relay.ready - relay.started, 3),
        recovery_s=recovery["seconds"],
        reattached=recovery.get("reattached", 0),
    )
    return relay, result


def store_id(url: str, namespace: str) -> str:
    """The label the relay puts on the containers and networks of this store (see DockerLauncher.store_id)."""
    return "redis:" + hashlib.sha256(f"{url}\0{namespace}".encode()).hexdigest()[:24]


def docker_client() -> Any:
    """A Docker client when the engine and the target image are there, else None."""
    try:
        import docker

        client = docker.from_env()  # type: ignore[attr-defined]
        client.ping()
        client.images.get(IMAGE)
    except Exception:
        return None
    return client


def end_targets(client: redis.Redis, namespace: str, engine: Any, store: str) -> None:
    """End every target the store names (local: keeper and adapter by PID, checked; containers by id),
    then whatever container or network still carries this store's label."""
    from debugrelay.launchers import kill_tree
    from debugrelay.launchers.orphan import OrphanTarget

    for raw in client.hvals(f"{namespace}:sessions"):
        described = json.loads(raw).get("target") or {}
        if described.get("container_id") and engine is not None:
            with contextlib.suppress(Exception):
                engine.containers.get(described["container_id"]).remove(force=True, v=True)
            continue
        target = OrphanTarget.find(described)
        if target is not None:
            kill_tree(target.proc.pid)
        adapter = described.get("adapter_pid")
        with contextlib.suppress(psutil.Error):
            if isinstance(adapter, int) and "debugpy" in " ".join(psutil.Process(adapter).cmdline()):
                kill_tree(adapter)
    if engine is None:
        return
    with contextlib.suppress(Exception):
        for container in engine.containers.list(all=True, filters={"label": f"debugrelay.store={store}"}):
            with contextlib.suppress(Exception):
                container.remove(force=True, v=True)
    with contextlib.suppress(Exception):
        for network in engine.networks.list(filters={"label": f"debugrelay.store={store}"}):
            with contextlib.suppress(Exception):
                network.remove()


def start_redis(workdir: Path, port: int) -> subprocess.Popen[bytes]:
    redis_bin = shutil.which("redis-server") or "/usr/bin/redis-server"
    argv = [redis_bin, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(workdir), "--appendonly", "yes"]
    return subprocess.Popen([*argv, "--save", ""], stdout=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--local", type=int, default=10, help="sessions on local targets")
    parser.add_argument("--containers", type=int, default=10, help="sessions on containers (where Docker is)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of kill -9 (then one graceful restart)")
    args = parser.parse_args()
    engine = docker_client() if args.containers else None
    containers = args.containers if engine is not None else 0
    workdir = Path(tempfile.mkdtemp(prefix="debugrelay-bench-"))
    port = free_port()
    server = start_redis(workdir, port)
    client = redis.Redis(port=port)
    namespace = "bench"
    url = f"redis://127.0.0.1:{port}/0"
    env = {
        "DEBUGRELAY_REDIS_URL": url,
        "DEBUGRELAY_REDIS_NAMESPACE": namespace,
        "DEBUGRELAY_STATE_DIR": str(workdir / "state"),
        "DEBUGRELAY_POOL_SIZE": "2",
        "DEBUGRELAY_DOCKER_POOL_SIZE": "1",
    }
    relay: Relay | None = None
    rounds: list[dict[str, Any]] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))
    try:
        until(lambda: _ping(client), "redis-server")
        relay = Relay(workdir, env)
        began = time.monotonic()
        plans = [make_session(relay.http, i, "local", i % 2 == 0) for i in range(args.local)]
        plans += [make_session(relay.http, i, "docker", i % 2 == 0) for i in range(containers)]
        setup = time.monotonic() - began
        for _ in range(args.rounds):
            relay, result = round_trip(workdir, env, relay, plans, "kill -9")
            rounds.append(result)
            print(json.dumps(result), flush=True)
        relay, result = round_trip(workdir, env, relay, plans, "SIGTERM (graceful)")
        rounds.append(result)
        print(json.dumps(result), flush=True)
    finally:
        signal.signal(signal.SIGTERM, previous)
        if relay is not None:
            with contextlib.suppress(Exception):
                for session in expect(relay.http.get("/sessions"))["sessions"]:
                    relay.http.delete(f"/sessions/{session['session_id']}")
            relay.terminate()  # its warm pools end with it
        with contextlib.suppress(Exception):
            end_targets(client, namespace, engine, store_id(url, namespace))
        client.close()
        server.terminate()
        server.wait(20)
        if engine is not None:
            engine.close()
        shutil.rmtree(workdir, ignore_errors=True)
    killed = [r for r in rounds if r["restart"] == "kill -9"]
    summary = {
        "command": "python bench/restart.py " + " ".join(sys.argv[1:]),
        "sessions": {"local": args.local, "docker": containers},
        "pooled_at_launch": {k: sum(p.pooled for p in plans if p.launcher == k) for k in ("local", "docker")},
        "setup_s": round(setup, 2),
        "kill9_rounds": len(killed),
        "kill9_start_to_all_served_s_median": statistics.median(r["start_to_all_served_s"] for r in killed),
        "kill9_start_to_health_s_median": statistics.median(r["start_to_health_s"] for r in killed),
        "kill9_recovery_s_median": statistics.median(r["recovery_s"] for r in killed),
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
