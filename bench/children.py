"""Programs that start processes, under the relay with child debugging on and off, against the same
program run plain: what debugging every Python child costs, and how soon a breakpoint in a child stops.

    .venv/bin/python -m bench.children [--runs 3] [--no-docker]

- a CPU-bound pool (4 workers, 8 tasks), no breakpoint: plain, children debugged, children not;
- 20 short-lived Python children started one after another by subprocess.run: the same three;
- a program that starts no process (the same work, less of it, in the program itself): the same three;
- launch to the first stop inside a pool worker (children debugged).
Local targets run the relay's own Python; container targets the default target image (Python 3.13),
plain meaning the same image and mounts with no debugger. Writes bench/results/children.json. Every
process and container started is ended.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ._harness import ROOT, Cleanup, Relay, docker_status, line_of
from .run import RESULTS, expect, summary

POOL = str(ROOT / "bench" / "pool_work.py")
SHORT = str(ROOT / "bench" / "short_children.py")
WORK_LINE = line_of("work-line", POOL)

PROGRAMS: dict[str, list[str]] = {
    "pool": [POOL, "4", "8", "3000000"],
    "short_children": [SHORT, "20"],
    "no_children": [POOL, "0", "8", "300000"],
}


def plain(argv: list[str], launcher: str, image: str) -> float:
    if launcher == "docker":
        limits = ["--cpus", "1", "--memory", "512m"]  # a container target's default limits
        mount = ["-v", f"{ROOT}:{ROOT}:ro", "-w", str(ROOT)]
        command = ["docker", "run", "--rm", *limits, *mount, image, "python3", *argv]
    else:
        command = [sys.executable, *argv]
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def under_relay(relay: Relay, argv: list[str], launcher: str, children: bool, stop_in_child: bool = False) -> float:
    sid = expect(relay.http.post("/sessions", json={}))["session_id"]
    try:
        if stop_in_child:
            bp = {"source": {"path": POOL}, "line": WORK_LINE}
            expect(relay.http.post(f"/sessions/{sid}/breakpoints", json=bp))
        launch = {"script": argv[0], "args": argv[1:], "launcher": launcher, "pool": False}
        launch["debug_subprocesses"] = children
        start = time.perf_counter()
        expect(relay.http.post(f"/sessions/{sid}/launch", json=launch))
        while True:
            status = expect(relay.http.post(f"/sessions/{sid}/wait", json={"timeout": 300}))
            if status["status"] == "terminated" or (stop_in_child and status["status"] == "paused"):
                break
        took = time.perf_counter() - start
        if not stop_in_child and status.get("exit_code") != 0:
            raise RuntimeError(f"{argv}: {status}")
        return took
    finally:
        relay.http.delete(f"/sessions/{sid}")


def measure(relay: Relay, launcher: str, runs: int, image: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, argv in PROGRAMS.items():
        row = {
            "plain": summary([plain(argv, launcher, image) for _ in range(runs)]),
            "children_debugged": summary([under_relay(relay, argv, launcher, True) for _ in range(runs)]),
            "children_plain": summary([under_relay(relay, argv, launcher, False) for _ in range(runs)]),
        }
        base = row["plain"]["median"]
        row["ratio_debugged"] = round(row["children_debugged"]["median"] / base, 2)
        row["ratio_not"] = round(row["children_plain"]["median"] / base, 2)
        out[name] = row
    first = [under_relay(relay, PROGRAMS["pool"], launcher, True, stop_in_child=True) for _ in range(runs)]
    out["first_stop_in_a_child"] = summary(first)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.children", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-docker", action="store_true", help="skip container targets")
    args = parser.parse_args(argv)
    docker_ok, why = (False, "--no-docker") if args.no_docker else docker_status()
    from debugrelay.config import Settings

    image = Settings().docker_image
    result: dict[str, Any] = {"runs": args.runs, "local": None, "container": None}
    cleanup = Cleanup()
    with cleanup.installed(), tempfile.TemporaryDirectory(prefix="debugrelay-bench-") as tmp:
        relay = Relay(Path(tmp), cleanup, "children", {"DEBUGRELAY_POOL_SIZE": "0"})
        result["local"] = measure(relay, "local", args.runs, image)
        if docker_ok:
            result["container"] = measure(relay, "docker", args.runs, image)
        relay.stop()
    if not docker_ok:
        result["skipped"] = why
    for kind in ("local", "container"):
        rows = result.get(kind)
        if not rows:
            continue
        for name in PROGRAMS:
            r = rows[name]
            print(
                f"{kind:9} {name:15} plain {r['plain']['median']:.2f} s, children debugged "
                f"{r['children_debugged']['median']:.2f} s ({r['ratio_debugged']}x), not debugged "
                f"{r['children_plain']['median']:.2f} s ({r['ratio_not']}x)",
                file=sys.stderr,
            )
        print(f"{kind:9} first stop in a child: {rows['first_stop_in_a_child']['median']:.2f} s", file=sys.stderr)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "children.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
