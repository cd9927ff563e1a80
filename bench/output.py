"""Output that reaches the agent: how much of what a program printed a session serves, and how long
a run that prints a lot takes under the relay against the same program run plain.

    .venv/bin/python -m bench.output [--runs 10] [--lines 3000,100000] [--no-docker]

Each run launches ``tests/targets/out_lines.py N`` (N short lines, then ``DONE-END``), waits for
the end, reads every page of ``/output`` and counts the lines served and whether the last one is
there. Plain: the same program with its stdout on a pipe read to the end. Writes
bench/results/output.json. Every process and container started is ended.
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

from ._harness import ROOT, Cleanup, Relay, docker_status
from .run import RESULTS, expect, summary

PROGRAM = str(ROOT / "tests" / "targets" / "out_lines.py")


def served_lines(relay: Relay, sid: str) -> list[str]:
    text, since = "", None
    while True:
        params: dict[str, Any] = {"limit": 1000, **({"since": since} if since else {})}
        page = expect(relay.http.get(f"/sessions/{sid}/output", params=params))
        text += "".join(e["text"] for e in page["outputs"] if e["type"] == "stdout")
        since = page["cursor"]
        if not page["has_more"]:
            return text.splitlines()


def relay_runs(relay: Relay, launcher: str, lines: int, runs: int) -> dict[str, Any]:
    seconds: list[float] = []
    served: list[int] = []
    complete = 0
    for _ in range(runs):
        sid = expect(relay.http.post("/sessions", json={}))["session_id"]
        start = time.perf_counter()
        launch = {"script": PROGRAM, "args": [str(lines)], "launcher": launcher, "pool": False}
        expect(relay.http.post(f"/sessions/{sid}/launch", json=launch))
        while expect(relay.http.post(f"/sessions/{sid}/wait", json={"timeout": 120}))["status"] != "terminated":
            pass
        seconds.append(time.perf_counter() - start)
        got = served_lines(relay, sid)
        served.append(len(got))
        complete += got == [f"line {n}" for n in range(lines)] + ["DONE-END"]
        expect(relay.http.delete(f"/sessions/{sid}"))
    return {
        "seconds": summary(seconds),
        "lines_served": {"min": min(served), "max": max(served), "of": lines + 1},
        "complete_runs": complete,
        "runs": runs,
    }


def plain_runs(lines: int, runs: int) -> dict[str, Any]:
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, PROGRAM, str(lines)], stdout=subprocess.PIPE, check=True)
        seconds.append(time.perf_counter() - start)
    return {"seconds": summary(seconds)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.output", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--lines", default="3000,100000", help="comma separated line counts")
    parser.add_argument("--no-docker", action="store_true", help="skip container targets")
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.lines.split(",")]
    docker_ok, why = (False, "--no-docker") if args.no_docker else docker_status()
    result: dict[str, Any] = {"runs": args.runs, "plain": {}, "local": {}, "container": {} if docker_ok else None}
    cleanup = Cleanup()
    with cleanup.installed(), tempfile.TemporaryDirectory(prefix="debugrelay-bench-") as tmp:
        relay = Relay(Path(tmp), cleanup, "output", {"DEBUGRELAY_POOL_SIZE": "0"})
        for lines in counts:
            result["plain"][lines] = plain_runs(lines, args.runs)
            result["local"][lines] = relay_runs(relay, "local", lines, args.runs)
            if docker_ok:
                result["container"][lines] = relay_runs(relay, "docker", lines, args.runs)
        relay.stop()
    if not docker_ok:
        result["skipped"] = why
    for lines in counts:
        for kind in ("local", "container"):
            if result.get(kind):
                r = result[kind][lines]
                print(
                    f"{kind:9} {lines:>7} lines: {r['complete_runs']}/{r['runs']} runs complete, served "
                    f"{r['lines_served']['min']}..{r['lines_served']['max']} of {r['lines_served']['of']}, "
                    f"launch->end median {r['seconds']['median']:.2f} s "
                    f"(plain {result['plain'][lines]['seconds']['median']:.2f} s)",
                    file=sys.stderr,
                )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "output.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
