"""debugrelay against raw debugpy, in one run: ``make bench`` (or ``.venv/bin/python -m bench``).

Measures, on this machine:
- the same stepping-and-inspecting scenario straight over DAP against a tuned debugpy (TCP_NODELAY
  through debugrelay's sitecustomize: the floor), the same through the target's keeper (what the
  keeper adds per request), and through the relay's HTTP API (a real relay
  subprocess, httpx with keep-alive), for local and container targets: median and p95 per operation
  and the ratio relay / floor; stock debugpy (no sitecustomize) for reference;
- the floor's evaluate after an idle gap of 0, 2 and 5 ms (the floor is measured back to back), and
  where an uncached answer's time goes: the floor, the keeper's hop, HTTP alone, the relay's own work;
- launch -> paused at the first breakpoint: cold, and warm from the pool, local and container;
- N concurrent sessions (1, 10, 50) stepping and inspecting: per-operation p95 under that load;
- relay memory per idle session (created only; launched and paused), targets not counted;
- debuggee overhead: a CPU-bound program's wall time under the relay vs plain, per Python (the
  host's for local targets, the target image's for containers).
- redaction's cost per KiB of output and per variables answer (in process; the relay above runs
  with redaction on, its default).
- a function trace's cost (bench/traces.py): untraced code in a traced run vs an untraced one, and
  the traced function's own cost per call, local and in the default target image.
Prints a table and writes bench/results/<timestamp>.json. Every process and container it starts is
ended (by PID or id) before it returns, also on Ctrl-C. Container parts are skipped without Docker.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from . import overhead, redaction, traces
from ._dap import Dap
from ._harness import ROOT, SCENARIO, Cleanup, RawContainer, RawTarget, Relay, docker_status, line_of, until

RESULTS = ROOT / "bench" / "results"
WORK_LINE = line_of("bench-work")
TOGGLE_LINE = line_of("bench-toggle")
# "variables again": the same variables right after the evaluate, which may have changed them (the
# relay drops its cache on evaluate): the uncached read
INSPECTION = ("stacktrace", "scopes", "variables", "evaluate", "variables again")
OPS = ("step", *INSPECTION, "breakpoints", "status")
DAP_NAMES = {
    "step": "next",
    "stacktrace": "stackTrace",
    "scopes": "scopes",
    "variables": "variables",
    "evaluate": "evaluate",
    "variables again": "variables",
    "breakpoints": "setBreakpoints",
}
EXPRESSION = "i * 2"

Samples = dict[str, list[float]]


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]
    return {"median": round(statistics.median(ordered), 3), "p95": round(p95, 3), "n": len(ordered)}


class Timer:
    def __init__(self) -> None:
        self.samples: Samples = {}

    @contextlib.contextmanager
    def op(self, name: str, keep: bool = True) -> Iterator[None]:
        start = time.perf_counter()
        yield
        if keep:
            self.samples.setdefault(name, []).append((time.perf_counter() - start) * 1000)


# -- the scenario, straight over DAP ----------------------------------------------------------------


def dap_cycles(dap: Dap, cycles: int, warmup: int) -> Samples:
    """Per cycle: next (until stopped), stackTrace, scopes, variables, evaluate, setBreakpoints."""
    timer = Timer()
    tid = int(dap.event("stopped")["threadId"])
    toggled = False
    for cycle in range(warmup + cycles):
        keep = cycle >= warmup
        with timer.op("step", keep):
            dap.request("next", {"threadId": tid})
            dap.event("stopped")
        with timer.op("stacktrace", keep):
            frames = dap.request("stackTrace", {"threadId": tid, "startFrame": 0, "levels": 20})["stackFrames"]
        with timer.op("scopes", keep):
            scopes = dap.request("scopes", {"frameId": frames[0]["id"]})["scopes"]
        with timer.op("variables", keep):
            dap.request("variables", {"variablesReference": scopes[0]["variablesReference"]})
        with timer.op("evaluate", keep):
            dap.request("evaluate", {"expression": EXPRESSION, "frameId": frames[0]["id"], "context": "repl"})
        with timer.op("variables again", keep):
            dap.request("variables", {"variablesReference": scopes[0]["variablesReference"]})
        toggled = not toggled
        lines = [WORK_LINE, TOGGLE_LINE] if toggled else [WORK_LINE]
        with timer.op("breakpoints", keep):
            dap.request("setBreakpoints", {"source": {"path": SCENARIO}, "breakpoints": [{"line": n} for n in lines]})
    return timer.samples


def floor_local(
    work: Path, cleanup: Cleanup, cycles: int, warmup: int, *, tuned: bool, keeper: bool = False
) -> Samples:
    target = RawTarget(work, cleanup, tuned=tuned, keeper=keeper)
    try:
        dap = Dap.ready("127.0.0.1", target.port, secret=target.secret)
        dap.start({SCENARIO: [WORK_LINE]})
        samples = dap_cycles(dap, cycles, warmup)
        dap.close()
        return samples
    finally:
        target.end()


def floor_container(work: Path, cleanup: Cleanup, cycles: int, warmup: int) -> Samples:
    target = RawContainer(work, cleanup)
    try:
        dap = Dap.ready(target.host, target.port)
        dap.start({SCENARIO: [WORK_LINE]})
        samples = dap_cycles(dap, cycles, warmup)
        dap.close()
        return samples
    finally:
        target.end()


GAPS_MS = (0.0, 2.0, 5.0)


def floor_after_gaps(work: Path, cleanup: Cleanup, samples: int) -> dict[str, dict[str, float]]:
    """Raw evaluate after an idle gap: the floor is measured back to back, while a relay's DAP request
    follows the HTTP work before it (and an agent's, its thinking); debugpy's processes answer a
    request that comes after a pause more slowly."""
    target = RawTarget(work, cleanup, tuned=True)
    try:
        dap = Dap.ready("127.0.0.1", target.port)
        dap.start({SCENARIO: [WORK_LINE]})
        tid = int(dap.event("stopped")["threadId"])
        frame = dap.request("stackTrace", {"threadId": tid, "startFrame": 0, "levels": 1})["stackFrames"][0]["id"]
        out = {}
        for gap in GAPS_MS:
            timer = Timer()
            for _ in range(samples):
                time.sleep(gap / 1000)
                with timer.op("evaluate"):
                    dap.request("evaluate", {"expression": EXPRESSION, "frameId": frame, "context": "repl"})
            out[f"after {gap:g} ms"] = summary(timer.samples["evaluate"])
        dap.close()
        return out
    finally:
        target.end()


def references(work: Path, cleanup: Cleanup, cycles: int, step: Callable[[str], None], result: dict[str, Any]) -> None:
    """The floor after idle gaps, and stock debugpy: what the floor itself depends on."""
    step("raw evaluate after an idle gap, local")
    result["floor_after_gaps"] = floor_after_gaps(work, cleanup, max(100, cycles))
    step("stock debugpy over DAP, local")
    stock = floor_local(work, cleanup, max(50, cycles // 2), 2, tuned=False)
    result["stock"] = {f"{op} ({DAP_NAMES[op]})": summary(v) for op, v in stock.items()}


def floor_launch(work: Path, cleanup: Cleanup, samples: int) -> list[float]:
    """Spawn a tuned debugpy, attach, break at the first breakpoint: what a cold launch costs at best."""
    out = []
    for _ in range(samples):
        target = RawTarget(work, cleanup, tuned=True)
        try:
            dap = Dap.ready("127.0.0.1", target.port)
            dap.start({SCENARIO: [WORK_LINE]})
            dap.event("stopped")
            out.append((time.perf_counter() - target.started) * 1000)
            dap.close()
        finally:
            target.end()
    return out


# -- the same scenario, through the relay ------------------------------------------------------------


def expect(response: httpx.Response) -> Any:
    if response.status_code >= 300:
        raise RuntimeError(
            f"{response.request.method} {response.request.url}: {response.status_code} {response.text[:300]}"
        )
    return response.json()


def start_paused(http: httpx.Client, *, launcher: str = "local", pool: bool = True) -> str:
    sid: str = expect(http.post("/sessions", json={}))["session_id"]
    expect(http.post(f"/sessions/{sid}/breakpoints", json={"source": {"path": SCENARIO}, "line": WORK_LINE}))
    expect(http.post(f"/sessions/{sid}/launch", json={"script": SCENARIO, "launcher": launcher, "pool": pool}))
    status = expect(http.post(f"/sessions/{sid}/wait", json={"timeout": 120}))
    if status["status"] != "paused":
        raise RuntimeError(f"session {sid} did not pause: {status}")
    return sid


def relay_cycles(http: httpx.Client, sid: str, cycles: int, warmup: int, *, think: float = 0.0) -> Samples:
    """The agent's loop: step-over, stacktrace, scopes, variables, evaluate, breakpoint, status."""
    timer = Timer()
    toggle: str | None = None
    base = f"/sessions/{sid}"
    for cycle in range(warmup + cycles):
        keep = cycle >= warmup
        with timer.op("step", keep):
            status = expect(http.post(f"{base}/step-over"))
        if status["status"] != "paused":
            raise RuntimeError(f"step did not pause: {status}")
        time.sleep(think)
        with timer.op("stacktrace", keep):
            expect(http.get(f"{base}/stacktrace"))
        time.sleep(think)
        with timer.op("scopes", keep):
            scopes = expect(http.get(f"{base}/frames/0/scopes"))["scopes"]
        time.sleep(think)
        with timer.op("variables", keep):
            expect(http.get(f"{base}/scopes/{scopes[0]['reference']}/variables"))
        time.sleep(think)
        with timer.op("evaluate", keep):
            expect(http.post(f"{base}/evaluate", json={"expression": EXPRESSION}))
        time.sleep(think)
        with timer.op("variables again", keep):
            expect(http.get(f"{base}/scopes/{scopes[0]['reference']}/variables"))
        time.sleep(think)
        with timer.op("breakpoints", keep):
            if toggle is None:
                toggle = expect(
                    http.post(f"{base}/breakpoints", json={"source": {"path": SCENARIO}, "line": TOGGLE_LINE})
                )["breakpoint_id"]
            else:
                expect(http.delete(f"{base}/breakpoints/{toggle}"))
                toggle = None
        time.sleep(think)
        with timer.op("status", keep):
            expect(http.get(f"{base}/status"))
        time.sleep(think)
    return timer.samples


def http_baseline(relay: Relay, samples: int) -> dict[str, Any]:
    """What one HTTP round trip to the relay costs before any debugging: httpx (the bench's client) and
    the standard library's http.client, to tell the client's share from the relay's."""
    import http.client

    timer = Timer()
    for _ in range(samples):
        with timer.op("httpx"):
            expect(relay.http.get("/health"))
    conn = http.client.HTTPConnection("127.0.0.1", relay.port)
    for _ in range(samples):
        with timer.op("http.client"):
            conn.request("GET", "/health")
            conn.getresponse().read()
    conn.close()
    return {name: summary(values) for name, values in timer.samples.items()}


def relay_scenario(relay: Relay, cycles: int, warmup: int, launcher: str) -> Samples:
    sid = start_paused(relay.http, launcher=launcher)
    try:
        return relay_cycles(relay.http, sid, cycles, warmup)
    finally:
        expect(relay.http.delete(f"/sessions/{sid}"))


def launch_samples(relay: Relay, launcher: str, pool: bool, samples: int) -> list[float]:
    """Launch -> paused at the first breakpoint, from the launch request to the stop the wait returns.

    Before each sample the pool is full and idle: nothing starting in the background competes.
    """
    http = relay.http
    out = []
    for _ in range(samples):
        until(lambda: relay.pool_ready(launcher), "the pool to be full and idle", 180)
        sid = expect(http.post("/sessions", json={}))["session_id"]
        expect(http.post(f"/sessions/{sid}/breakpoints", json={"source": {"path": SCENARIO}, "line": WORK_LINE}))
        start = time.perf_counter()
        expect(http.post(f"/sessions/{sid}/launch", json={"script": SCENARIO, "launcher": launcher, "pool": pool}))
        status = expect(http.post(f"/sessions/{sid}/wait", json={"timeout": 120}))
        elapsed = (time.perf_counter() - start) * 1000
        target = expect(http.get(f"/sessions/{sid}"))["target"]
        expect(http.delete(f"/sessions/{sid}"))
        if status["status"] != "paused" or status["location"]["line"] != WORK_LINE:
            raise RuntimeError(f"launch did not stop at the first breakpoint: {status}")
        if bool(target.get("pooled")) != pool:
            raise RuntimeError(f"expected a {'warm' if pool else 'cold'} target, got {target}")
        out.append(elapsed)
    return out


# -- load and memory ---------------------------------------------------------------------------------


def concurrent(relay: Relay, sids: list[str], cycles: int, think: float) -> dict[str, Any]:
    """Every session steps and inspects at once (its own keep-alive client); per-operation latencies."""
    results: list[Samples] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(sids))

    def worker(sid: str) -> None:
        with relay.client() as http:
            try:
                expect(http.get(f"/sessions/{sid}/status"))
                barrier.wait(60)
                results.append(relay_cycles(http, sid, cycles, 0, think=think))
            except BaseException as exc:
                errors.append(exc)
                barrier.abort()

    started = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(sid,), daemon=True) for sid in sids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(600)
    wall = time.perf_counter() - started
    if errors:
        raise RuntimeError(f"{len(errors)} worker(s) failed: {errors[0]!r}")
    merged: Samples = {}
    for samples in results:
        for op, values in samples.items():
            merged.setdefault(op, []).extend(values)
    requests = sum(len(v) for v in merged.values())
    return {
        "sessions": len(sids),
        "think_s": think,
        "cycles": cycles,
        "requests": requests,
        "throughput_rps": round(requests / wall, 1),
        "ops": {op: summary(merged[op]) for op in OPS if op in merged},
    }


def launch_many(relay: Relay, count: int) -> list[str]:
    def one(_: int) -> str:
        with relay.client() as http:
            return start_paused(http)

    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(one, range(count)))


def memory_and_load(relay: Relay, sessions: int, cycles: int, thinks: list[float]) -> dict[str, Any]:
    http = relay.http
    for _ in range(3):  # warm the relay's code paths before the baseline
        expect(http.delete(f"/sessions/{start_paused(http)}"))
        until(lambda: relay.pool_ready("local"), "the pool to refill", 120)
    rss0 = relay.rss()
    created = [expect(http.post("/sessions", json={}))["session_id"] for _ in range(sessions)]
    rss_created = relay.rss()
    for sid in created:
        expect(http.delete(f"/sessions/{sid}"))
    until(lambda: relay.pool_ready("local"), "the pool to refill", 120)
    rss1 = relay.rss()
    sids = launch_many(relay, sessions)
    rss_paused = relay.rss()
    mib = 1024 * 1024
    memory = {
        "sessions": sessions,
        "relay_rss_mib_baseline": round(rss0 / mib, 2),
        "relay_rss_mib_created": round(rss_created / mib, 2),
        "relay_rss_mib_paused": round(rss_paused / mib, 2),
        "per_created_session_kib": round((rss_created - rss0) / sessions / 1024, 1),
        "per_paused_session_kib": round((rss_paused - rss1) / sessions / 1024, 1),
    }
    load = []
    for think in thinks:
        for n in (1, 10, sessions):
            load.append(concurrent(relay, sids[:n], cycles, think))
    for sid in sids:
        expect(http.delete(f"/sessions/{sid}"))
    return {"memory": memory, "load": load}


# -- report ------------------------------------------------------------------------------------------


def compare(floor: Samples, relay: Samples) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for op in OPS:
        row: dict[str, Any] = {}
        if op in floor:
            row["floor"] = summary(floor[op])
        if op in relay:
            row["relay"] = summary(relay[op])
        if "floor" in row and "relay" in row:
            row["ratio_median"] = round(row["relay"]["median"] / row["floor"]["median"], 2)
            row["ratio_p95"] = round(row["relay"]["p95"] / row["floor"]["p95"], 2)
        out[op] = row
    return out


def goals(result: dict[str, Any]) -> list[dict[str, Any]]:
    checks: list[dict[str, Any]] = []

    def check(goal: str, value: Any, ok: bool) -> None:
        checks.append({"goal": goal, "measured": value, "met": ok})

    for kind in ("local", "container"):
        table = result["scenario"].get(kind)
        if not table:
            continue
        for op in INSPECTION:
            row = table[op]
            check(
                f"{kind} {op}: relay <= 1.5x floor and <= 5 ms (median)",
                f"{row['relay']['median']} ms, {row['ratio_median']}x",
                row["ratio_median"] <= 1.5 and row["relay"]["median"] <= 5,
            )
    for kind, row in result.get("overhead", {}).items():
        check(
            f"debuggee overhead, {kind} (Python {row['python']}): <= 1.3x plain",
            f"{row['debugged_s']} s vs {row['plain_s']} s, {row['ratio']}x",
            row["ratio"] <= 1.3,
        )
    status = result["scenario"]["local"]["status"]["relay"]["median"]
    check("GET /status <= 2 ms (median)", f"{status} ms", status <= 2)
    for kind, launch in result["launch"].items():
        if "warm" in launch:
            median = launch["warm"]["median"]
            check(f"{kind} launch -> paused from the warm pool <= 150 ms (median)", f"{median} ms", median <= 150)
    for run in result["load"]["load"]:
        if run["sessions"] == max(r["sessions"] for r in result["load"]["load"]):
            worst = max(run["ops"].items(), key=lambda kv: kv[1]["p95"])
            check(
                f"{run['sessions']} concurrent sessions, think {run['think_s']} s: p95 <= 20 ms per operation",
                f"worst {worst[0]} {worst[1]['p95']} ms",
                worst[1]["p95"] <= 20,
            )
    cost = result.get("redaction")
    if cost:
        worst = max(cost["corpus_with_secrets"]["ms_per_kib_median"], cost["ordinary_output"]["ms_per_kib_median"])
        check("redaction < 0.3 ms per KiB of output (median)", f"{worst} ms/KiB", worst < 0.3)
    memory = result["load"]["memory"]
    for kind in ("created", "paused"):
        kib = memory[f"per_{kind}_session_kib"]
        check(f"relay memory per idle {kind} session <= 1 MiB", f"{kib} KiB", kib <= 1024)
    return checks


def answer_split(result: dict[str, Any]) -> dict[str, dict[str, float]]:
    """An uncached answer's median split: debugpy (the floor), the keeper's hop, an empty HTTP round trip
    (the bench's own client) and what is left, the relay's own work."""
    table, kept, base = result["scenario"].get("local"), result.get("keeper"), result.get("http_baseline")
    if not table or not kept or not base:
        return {}
    out = {}
    for op in ("evaluate", "variables again"):
        floor, relay = table[op]["floor"]["median"], table[op]["relay"]["median"]
        keeper, http = kept[f"{op} ({DAP_NAMES[op]})"]["added_median"], base["httpx"]["median"]
        out[op] = {
            "floor": floor,
            "keeper": keeper,
            "http": http,
            "relay_own": round(relay - floor - keeper - http, 3),
            "relay": relay,
        }
    return out


def print_report(result: dict[str, Any]) -> None:
    def fmt(cell: dict[str, Any] | None) -> str:
        return f"{cell['median']:8.2f} {cell['p95']:8.2f}" if cell else f"{'-':>8} {'-':>8}"

    print()
    machine = result["machine"]
    print(f"debugrelay bench  {result['when']}  ({machine['cpus']} CPUs, python {machine['python']})")
    base = result.get("http_baseline")
    if base:
        print(
            "HTTP alone (GET /health, keep-alive), ms: "
            + ", ".join(f"{k} {v['median']:.2f} median" for k, v in base.items())
        )
    for kind, table in result["scenario"].items():
        if not table:
            print(f"\n{kind}: skipped ({result['skipped'].get(kind, '')})")
            continue
        print(f"\n{kind} target, ms           floor (DAP)       relay (HTTP)     relay/floor")
        print(f"{'operation':<22} {'median':>8} {'p95':>8} {'median':>8} {'p95':>8}  {'median':>6} {'p95':>6}")
        for op, row in table.items():
            name = f"{op} ({DAP_NAMES[op]})" if op in DAP_NAMES else op
            ratio = f"{row['ratio_median']:6.2f} {row['ratio_p95']:6.2f}" if "ratio_median" in row else ""
            print(f"{name:<22} {fmt(row.get('floor'))} {fmt(row.get('relay'))}  {ratio}")
    kept = result.get("keeper")
    if kept:
        print("\nthrough the keeper (same run as the floor), local, ms   median      p95   added median")
        for op, cell in kept.items():
            print(f"  {op:<40} {cell['median']:8.2f} {cell['p95']:8.2f} {cell['added_median']:+8.3f}")
    split = answer_split(result)
    if split:
        print("\nwhere an uncached answer's time goes, local, median ms   floor  +keeper  +HTTP alone  +relay  = relay")
        for op, cell in split.items():
            print(
                f"  {op:<50} {cell['floor']:6.2f} {cell['keeper']:+8.2f} {cell['http']:+12.2f}"
                f" {cell['relay_own']:+7.2f} {cell['relay']:8.2f}"
            )
    gaps = result.get("floor_after_gaps")
    if gaps:
        print("\nraw evaluate (the floor) after an idle gap, local, ms       median      p95")
        for name, cell in gaps.items():
            print(f"  {name:<50} {cell['median']:8.2f} {cell['p95']:8.2f}")
    stock = result.get("stock")
    if stock:
        print("\nstock debugpy (no TCP_NODELAY), local, ms   median      p95")
        for op, cell in stock.items():
            print(f"  {op:<40} {cell['median']:8.2f} {cell['p95']:8.2f}")
    print("\nlaunch -> paused at the first breakpoint, ms      median      p95    n")
    for kind, launch in result["launch"].items():
        for mode, cell in launch.items():
            print(f"  {kind + ' ' + mode:<44} {cell['median']:8.1f} {cell['p95']:8.1f} {cell['n']:4d}")
    print("\nconcurrent sessions: p95 per operation, ms (think = pause between an agent's calls)")
    print(f"  {'sessions':>8} {'think s':>8} {'req/s':>7}  " + " ".join(f"{op:>11}" for op in OPS))
    for run in result["load"]["load"]:
        cells = " ".join(f"{run['ops'][op]['p95']:11.2f}" if op in run["ops"] else f"{'-':>11}" for op in OPS)
        print(f"  {run['sessions']:>8} {run['think_s']:>8} {run['throughput_rps']:>7}  {cells}")
    if result.get("overhead"):
        print("\ndebuggee overhead (CPU-bound program, a breakpoint never hit), s      plain  debugged  ratio")
        for kind, row in result["overhead"].items():
            name = f"{kind} (Python {row['python']})"
            print(f"  {name:<60} {row['plain_s']:6.3f} {row['debugged_s']:8.3f} {row['ratio']:6.2f}")
    if result.get("traces"):
        traces.print_report(result["traces"])
    memory = result["load"]["memory"]
    print(
        f"\nrelay memory: {memory['relay_rss_mib_baseline']} MiB with no session; "
        f"+{memory['per_created_session_kib']} KiB per created session, "
        f"+{memory['per_paused_session_kib']} KiB per launched-and-paused session ({memory['sessions']} each)"
    )
    cost = result.get("redaction")
    if cost:
        print(
            f"\nredaction: {cost['ordinary_output']['ms_per_kib_median']} ms/KiB of ordinary output, "
            f"{cost['corpus_with_secrets']['ms_per_kib_median']} ms/KiB of output full of secrets, "
            f"{cost['variables_answer_50_locals']['ms_median']} ms per variables answer (50 locals), median"
        )
    print("\ngoals")
    for item in result["goals"]:
        print(f"  [{'met' if item['met'] else 'MISSED':>6}] {item['goal']}: {item['measured']}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=60, help="measured cycles of the scenario (>= 50 samples)")
    parser.add_argument("--launches", type=int, default=20, help="launch samples per kind and mode")
    parser.add_argument("--sessions", type=int, default=50, help="the largest number of concurrent sessions")
    parser.add_argument("--load-cycles", type=int, default=6, help="cycles per session under load")
    parser.add_argument(
        "--think",
        type=float,
        nargs="*",
        default=[0.0, 0.1],
        help="pauses between a session's calls under load, seconds (0: back to back)",
    )
    parser.add_argument("--no-docker", action="store_true", help="skip container targets")
    parser.add_argument("--overhead-runs", type=int, default=3, help="runs of the debuggee-overhead program each way")
    parser.add_argument(
        "--trace-runs", type=int, default=3, help="runs of the function-trace program each way (0: skip)"
    )
    parser.add_argument(
        "--overhead-image",
        nargs="*",
        default=[],
        help="more target images to measure the debuggee overhead in (e.g. one built with TARGET_SUITE=bookworm)",
    )
    parser.add_argument("--out", type=Path, default=None, help="JSON file (default bench/results/<timestamp>.json)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    warmup = 5
    when = time.strftime("%Y%m%d-%H%M%S")

    result: dict[str, Any] = {
        "when": when,
        "command": "python -m bench " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "scenario": {},
        "launch": {},
        "skipped": {},
        "redaction": redaction.measure(),  # in process, before any relay or target runs
    }
    docker_ok, why = (False, "--no-docker") if args.no_docker else docker_status()
    cleanup = Cleanup()
    started = time.perf_counter()
    with cleanup.installed(), tempfile.TemporaryDirectory(prefix="debugrelay-bench-") as tmp:
        work = Path(tmp)
        step = _progress()
        step("floor: tuned debugpy over DAP, local")
        floor = floor_local(work, cleanup, args.cycles, warmup, tuned=True)
        step("tuned debugpy over DAP through its keeper, local")
        kept = floor_local(work, cleanup, args.cycles, warmup, tuned=True, keeper=True)
        result["keeper"] = {
            f"{op} ({DAP_NAMES[op]})": {
                **summary(v),
                "added_median": round(statistics.median(v) - statistics.median(floor[op]), 3),
            }
            for op, v in kept.items()
            if op in floor
        }
        references(work, cleanup, args.cycles, step, result)
        step("floor: cold spawn -> first stop, local")
        raw_launch = floor_launch(work, cleanup, args.launches)
        relay = Relay(work, cleanup, "local", {"DEBUGRELAY_POOL_SIZE": "2"})
        step("relay scenario, local")
        until(lambda: relay.pool_ready("local"), "the local pool", 120)
        result["http_baseline"] = http_baseline(relay, 200)
        result["scenario"]["local"] = compare(floor, relay_scenario(relay, args.cycles, warmup, "local"))
        step("relay scenario, local, redaction off (what redaction costs an answer)")
        plain = Relay(work, cleanup, "local-plain", {"DEBUGRELAY_POOL_SIZE": "0", "DEBUGRELAY_REDACTION": "off"})
        result["scenario"]["local, redaction off"] = compare(floor, relay_scenario(plain, args.cycles, warmup, "local"))
        plain.stop()
        step("launch, local, cold then warm")
        result["launch"]["local"] = {
            "floor_cold_raw_dap": summary(raw_launch),
            "cold": summary(launch_samples(relay, "local", False, args.launches)),
            "warm": summary(launch_samples(relay, "local", True, args.launches)),
        }
        step(f"memory per idle session and {args.sessions} concurrent sessions")
        result["load"] = memory_and_load(relay, args.sessions, args.load_cycles, args.think)
        step("debuggee overhead, local")
        result["overhead"] = {"local": overhead.measure(relay, "local", args.overhead_runs)}
        if args.trace_runs:
            step("function trace cost, local")
            result["traces"] = {"local": traces.measure(relay, "local", args.trace_runs)}
        relay.stop()
        if docker_ok:
            containers(work, cleanup, args, warmup=warmup, result=result, step=step)
        else:
            result["scenario"]["container"] = None
            result["skipped"]["container"] = why
    result["duration_s"] = round(time.perf_counter() - started, 1)
    result["answer_split"] = answer_split(result)
    result["goals"] = goals(result)
    print_report(result)
    out = args.out or RESULTS / f"{when}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwritten {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out} in {result['duration_s']} s")
    return 0


def containers(
    work: Path,
    cleanup: Cleanup,
    args: argparse.Namespace,
    *,
    warmup: int,
    result: dict[str, Any],
    step: Callable[[str], None],
) -> None:
    step("floor: tuned debugpy over DAP, container")
    cfloor = floor_container(work, cleanup, args.cycles, warmup)
    relay = Relay(work, cleanup, "docker", {"DEBUGRELAY_POOL_SIZE": "0", "DEBUGRELAY_DOCKER_POOL_SIZE": "1"})
    step("relay scenario, container (the first launch in the folder: cold)")
    result["scenario"]["container"] = compare(cfloor, relay_scenario(relay, args.cycles, warmup, "docker"))
    step("launch, container, cold then warm")
    result["launch"]["container"] = {
        "cold": summary(launch_samples(relay, "docker", False, args.launches)),
        "warm": summary(launch_samples(relay, "docker", True, args.launches)),
    }
    result["pool_after"] = relay.call("GET", "/pool")
    relay.stop()
    from debugrelay.config import Settings

    for n, image in enumerate([Settings().docker_image, *args.overhead_image]):
        step(f"debuggee overhead, container {image}")
        env = {"DEBUGRELAY_POOL_SIZE": "0", "DEBUGRELAY_DOCKER_POOL_SIZE": "0", "DEBUGRELAY_DOCKER_IMAGE": image}
        relay = Relay(work, cleanup, f"overhead-{n}", env)
        result["overhead"][f"container {image}"] = overhead.measure(relay, "docker", args.overhead_runs, image)
        if n == 0 and args.trace_runs:
            step(f"function trace cost, container {image}")
            result.setdefault("traces", {})[f"container {image}"] = traces.measure(
                relay, "docker", args.trace_runs, image
            )
        relay.stop()


def _progress() -> Callable[[str], None]:
    began = time.perf_counter()

    def step(what: str) -> None:
        print(f"[bench {time.perf_counter() - began:6.1f}s] {what}", file=sys.stderr, flush=True)

    return step
