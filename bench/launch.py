"""Launch -> paused at the first breakpoint, cold and warm from the pools, local and container.

    .venv/bin/python -m bench.launch [--launches 10] [--no-docker]

The launch part of ``python -m bench`` on its own (a minute or two instead of five): each sample
starts with the pool full and idle, so nothing starting in the background competes. Prints the
medians and writes bench/results/launch.json. Every process and container started is ended.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from ._harness import SCENARIO, Cleanup, Relay, docker_status, until
from .run import RESULTS, expect, launch_samples, summary


def prime(relay: Relay) -> None:
    """One container launch run to its end: from now on the pool keeps containers for it warm."""
    sid = expect(relay.http.post("/sessions", json={}))["session_id"]
    launch = {"script": SCENARIO, "launcher": "docker", "env": {"BENCH_LIMIT": "1"}}
    expect(relay.http.post(f"/sessions/{sid}/launch", json=launch))
    expect(relay.http.post(f"/sessions/{sid}/wait", json={"timeout": 120}))
    expect(relay.http.delete(f"/sessions/{sid}"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.launch", description=__doc__.split("\n\n")[0])
    parser.add_argument("--launches", type=int, default=10, help="samples per kind and mode")
    parser.add_argument("--no-docker", action="store_true", help="skip container targets")
    args = parser.parse_args(argv)
    docker_ok, why = (False, "--no-docker") if args.no_docker else docker_status()
    result: dict[str, Any] = {"launches": args.launches}
    cleanup = Cleanup()
    with cleanup.installed(), tempfile.TemporaryDirectory(prefix="debugrelay-bench-") as tmp:
        work = Path(tmp)
        relay = Relay(work, cleanup, "local", {"DEBUGRELAY_POOL_SIZE": "2"})
        until(lambda: relay.pool_ready("local"), "the local pool", 120)
        result["local"] = {
            "cold": summary(launch_samples(relay, "local", False, args.launches)),
            "warm": summary(launch_samples(relay, "local", True, args.launches)),
        }
        relay.stop()
        if docker_ok:
            env = {"DEBUGRELAY_POOL_SIZE": "0", "DEBUGRELAY_DOCKER_POOL_SIZE": "1"}
            relay = Relay(work, cleanup, "docker", env)
            prime(relay)  # the first launch in the folder makes the pool keep containers warm there
            result["container"] = {
                "cold": summary(launch_samples(relay, "docker", False, args.launches)),
                "warm": summary(launch_samples(relay, "docker", True, args.launches)),
            }
            relay.stop()
        else:
            result["container"] = None
            result["skipped"] = why
    for kind in ("local", "container"):
        if result.get(kind):
            cold, warm = result[kind]["cold"]["median"], result[kind]["warm"]["median"]
            print(f"{kind:9} launch -> paused, median: cold {cold} ms, warm {warm} ms", file=sys.stderr)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "launch.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
