"""What a function trace costs the program: ``.venv/bin/python -m bench.traces`` (also a part of ``python -m bench``).

bench/trace_workload.py calls one small function (``priced``) 100,000 times in a loop whose untraced
work (``busy``) is the larger part of each iteration, then runs the untraced work alone. It times both
phases itself (start-up and attach are not counted). Each run, per Python (the host's for local
targets, the target image's for containers), median of ``--runs``:

- plain python (no debugger), and plain python with the tracer installed and ``priced`` traced (no
  debugger: the tracer's own cost);
- under the relay, untraced, and under the relay with ``priced`` traced (``keep`` 1000);

and what follows from them: the untraced phase traced vs untraced (the goal: no measurable
difference where ``sys.monitoring`` is used, 3.12+) and the traced function's own cost per call,
(loop traced - loop untraced) / calls. Measures and prints; asserts nothing. Every relay and
container it starts is ended (by PID or id), also on Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ._harness import ROOT, Cleanup, Relay, docker_status

WORKLOAD = str(ROOT / "bench" / "trace_workload.py")
BOOT = str(ROOT / "src" / "debugrelay" / "_boot")
FUNCTION = "priced"
KEEP = 1000
_TIMED = re.compile(r"loop_s ([0-9.]+) untraced_s ([0-9.]+) calls (\d+) python (\d+\.\d+)")
# the tracer alone: installed as the relay's sitecustomize installs it, the trace given as at launch
_WITH_TRACER = (
    "import json, runpy, sys; sys.argv = [sys.argv[1]]; "
    "import _debugrelay_trace as t; "
    "t.install(); "
    f"t.add(json.dumps({{'id': 't1', 'file': sys.argv[0], 'qualname': {FUNCTION!r}, 'keep': {KEEP}}})); "
    "runpy.run_path(sys.argv[0], run_name='__main__')"
)
MODES = ("plain", "plain + tracer", "relay untraced", "relay traced")

Run = dict[str, Any]


def _parse(text: str) -> Run:
    found = _TIMED.search(text)
    if found is None:
        raise RuntimeError(f"the workload printed no timing: {text[-500:]!r}")
    return {
        "loop_s": float(found.group(1)),
        "untraced_s": float(found.group(2)),
        "calls": int(found.group(3)),
        "python": found.group(4),
    }


def _argv(tracer: bool) -> list[str]:
    return ["-c", _WITH_TRACER, WORKLOAD] if tracer else [WORKLOAD]


def plain_local(tracer: bool) -> Run:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGRELAY_")}
    if tracer:
        env["PYTHONPATH"] = BOOT
    argv = [sys.executable, *_argv(tracer)]
    out = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=600, env=env)
    return _parse(out.stdout)


def plain_container(image: str, tracer: bool) -> Run:
    import docker

    client = docker.from_env()
    try:
        folders = {str(ROOT / "bench"): {"bind": str(ROOT / "bench"), "mode": "ro"}}
        env = {}
        if tracer:
            folders[BOOT] = {"bind": BOOT, "mode": "ro"}
            env = {"PYTHONPATH": BOOT}
        out = client.containers.run(
            image,
            ["python", *_argv(tracer)],
            volumes=folders,
            environment=env,
            user="10001:10001",
            network_disabled=True,
            remove=True,
        )
        return _parse(out.decode())
    finally:
        client.close()


def under_relay(relay: Relay, launcher: str, traced: bool) -> Run:
    http = relay.http
    sid = relay.call("POST", "/sessions", json={})["session_id"]
    try:
        if traced:
            relay.call("POST", f"/sessions/{sid}/traces", json={"function": f"{WORKLOAD}:{FUNCTION}", "keep": KEEP})
        launched = http.post(f"/sessions/{sid}/launch", json={"script": WORKLOAD, "launcher": launcher, "pool": False})
        if launched.status_code != 200:
            raise RuntimeError(f"launch: {launched.text[:300]}")
        status = relay.call("POST", f"/sessions/{sid}/wait", json={"timeout": 300})
        if status.get("status") != "terminated":
            raise RuntimeError(f"the workload did not run to its end: {status}")
        page = relay.call("GET", f"/sessions/{sid}/output")
        run = _parse("".join(line["text"] for line in page["outputs"]))
        if traced:  # the trace did record every call (the newest KEEP kept)
            listed = relay.call("GET", f"/sessions/{sid}/traces")["traces"]
            run["recorded"] = {"calls_kept": listed[0]["calls"], "calls_total": listed[0]["total"]}
            if listed[0]["total"] != run["calls"]:
                raise RuntimeError(f"the trace saw {listed[0]['total']} of {run['calls']} calls: {listed}")
        return run
    finally:
        http.delete(f"/sessions/{sid}")


def _median(runs: list[Run], key: str) -> float:
    return round(float(statistics.median(r[key] for r in runs)), 4)


def measure(relay: Relay, launcher: str, runs: int, image: str | None = None) -> dict[str, Any]:
    """Median of ``runs`` runs each way (the ways interleaved, so a slow spell hits them all)."""
    samples: dict[str, list[Run]] = {mode: [] for mode in MODES}
    for _ in range(runs):
        samples["plain"].append(plain_container(image, False) if image else plain_local(False))
        samples["plain + tracer"].append(plain_container(image, True) if image else plain_local(True))
        samples["relay untraced"].append(under_relay(relay, launcher, False))
        samples["relay traced"].append(under_relay(relay, launcher, True))
    table: dict[str, dict[str, Any]] = {
        mode: {
            "loop_s": _median(done, "loop_s"),
            "untraced_s": _median(done, "untraced_s"),
            "untraced_s_all": [r["untraced_s"] for r in done],
        }
        for mode, done in samples.items()
    }
    calls: int = samples["plain"][0]["calls"]

    def per_call_us(traced: str, untraced: str) -> float:
        return round(float(table[traced]["loop_s"] - table[untraced]["loop_s"]) / calls * 1e6, 2)

    untraced, traced = table["relay untraced"], table["relay traced"]
    return {
        "python": samples["plain"][0]["python"],
        "image": image,
        "launcher": launcher,
        "runs": runs,
        "calls": calls,
        "keep": KEEP,
        "modes": table,
        "recorded": samples["relay traced"][-1].get("recorded"),
        "untraced_code": {
            "relay_untraced_s": untraced["untraced_s"],
            "relay_traced_s": traced["untraced_s"],
            "traced_minus_untraced_s": round(traced["untraced_s"] - untraced["untraced_s"], 4),
            "ratio": round(traced["untraced_s"] / untraced["untraced_s"], 3),
            # the spread of the untraced runs: a difference inside it is not measurable
            "untraced_runs_spread_s": round(max(untraced["untraced_s_all"]) - min(untraced["untraced_s_all"]), 4),
        },
        "per_call_us": {
            "relay: traced - untraced": per_call_us("relay traced", "relay untraced"),
            "no debugger: tracer - plain": per_call_us("plain + tracer", "plain"),
        },
    }


def print_report(result: dict[str, Any]) -> None:
    for kind, row in result.items():
        head = f"function trace, {kind} (Python {row['python']})"
        print(f"\n{head}: {row['calls']:,} calls, median of {row['runs']} runs")
        print(f"  {'':<28} {'loop s':>8} {'untraced phase s':>17}")
        for mode, cell in row["modes"].items():
            print(f"  {mode:<28} {cell['loop_s']:8.3f} {cell['untraced_s']:17.3f}")
        code = row["untraced_code"]
        print(
            f"  untraced code, traced run vs untraced: {code['relay_traced_s']:.3f} s"
            f" vs {code['relay_untraced_s']:.3f} s"
            f" ({code['traced_minus_untraced_s']:+.3f} s, {code['ratio']}x; untraced runs spread"
            f" {code['untraced_runs_spread_s']:.3f} s)"
        )
        print(
            "  the traced function's own cost per call: "
            + ", ".join(f"{name} {us} us" for name, us in row["per_call_us"].items())
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.traces", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each way (median)")
    parser.add_argument("--no-docker", action="store_true", help="skip the container target")
    parser.add_argument("--out", type=Path, default=None, help="also write the result as JSON here")
    args = parser.parse_args(argv)
    docker_ok, why = (False, "--no-docker") if args.no_docker else docker_status()
    result: dict[str, Any] = {}
    cleanup = Cleanup()
    started = time.perf_counter()
    with cleanup.installed(), tempfile.TemporaryDirectory(prefix="debugrelay-bench-traces-") as tmp:
        work = Path(tmp)
        relay = Relay(work, cleanup, "traces-local", {"DEBUGRELAY_POOL_SIZE": "0"})
        result["local"] = measure(relay, "local", args.runs)
        relay.stop()
        if docker_ok:
            from debugrelay.config import Settings

            image = Settings().docker_image
            env = {"DEBUGRELAY_POOL_SIZE": "0", "DEBUGRELAY_DOCKER_POOL_SIZE": "0"}
            relay = Relay(work, cleanup, "traces-docker", env)
            result[f"container {image}"] = measure(relay, "docker", args.runs, image)
            relay.stop()
        else:
            print(f"container: skipped ({why})", file=sys.stderr)
    print_report(result)
    print(f"\n({round(time.perf_counter() - started, 1)} s)")
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
