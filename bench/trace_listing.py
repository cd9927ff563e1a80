"""How soon after a stop an agent reads a trace: ``.venv/bin/python -m bench.trace_listing [--runs 5]``.

tests/targets/tr_orders.py calls ``price`` 10,000 times, traced (``keep`` 10,000, or ``--keep``: the wrong call,
the 7777th, is among the kept ones from 2,224 on), then pauses at a breakpoint
on the next line of ``main``. Per run, on a relay of this checkout (local targets, in-memory state), a keep-alive
HTTP client times the agent's actions right after the stop: the first listing of the calls that match the wrong
result (uncached: the paused program is asked what it recorded since), the same listing again, the call's run,
and ``origin`` of ``total``: asked at once after the stop's answer (``at_once``), and as an agent asks, after
reading the stop (``after_1s``: a model's turn takes longer; the relay reads a paused program's calls as it
answers the stop). Prints the median and the slowest of each, in ms, as JSON; asserts nothing. The relay is
ended by PID.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from ._harness import ROOT, Cleanup, Relay

ORDERS = str(ROOT / "tests" / "targets" / "tr_orders.py")
AFTER = next(n for n, t in enumerate(Path(ORDERS).read_text().splitlines(), 1) if "bad = [text for text" in t)


def _timed(http: httpx.Client, tool: str, body: dict[str, Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    response = http.post(f"/agent/{tool}", json=body)
    took = (time.perf_counter() - started) * 1000
    response.raise_for_status()
    return took, response.json()


def one_run(relay: Relay, think: float, keep: int) -> dict[str, float]:
    with relay.client() as http:
        traced = http.post("/agent/debug_trace", json={"function": f"{ORDERS}:price", "keep": keep}).json()
        stop = http.post(
            "/agent/debug_launch",
            json={"script": ORDERS, "breakpoints": [f"{ORDERS}:{AFTER}"], "session_id": traced["session_id"]},
        ).json()
        if stop.get("status") != "paused":
            raise RuntimeError(f"no stop: {stop}")
        sid = stop["session_id"]
        time.sleep(think)  # the agent reads the stop before it asks (its model's turn)
        figures: dict[str, float] = {}
        figures["first_listing"], found = _timed(http, "debug_trace", {"calls": "price", "match": "233309"})
        figures["listing_again"], _ = _timed(http, "debug_trace", {"calls": "price", "match": "233309"})
        call_id = found["calls"][0]["call_id"]
        figures["call_run"], _ = _timed(http, "debug_trace", {"call_id": call_id})
        figures["origin"], _ = _timed(http, "debug_trace", {"origin": "total"})
        http.delete(f"/sessions/{sid}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", type=int, default=10_000, help="calls a trace keeps (the wrong one is the 7777th)")
    args = parser.parse_args()
    result: dict[str, Any] = {"runs": args.runs, "keep": args.keep}
    with tempfile.TemporaryDirectory() as work, Cleanup().installed() as cleanup:
        relay = Relay(Path(work), cleanup, "listing")
        for label, think in (("at_once", 0.0), ("after_1s", 1.0)):
            runs = [one_run(relay, think, args.keep) for _ in range(args.runs)]
            result[label] = {
                k: {
                    "median_ms": round(statistics.median(r[k] for r in runs), 1),
                    "max_ms": round(max(r[k] for r in runs), 1),
                }
                for k in runs[0]
            }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
