"""What the CLI and curl stories of docs/agents.md cost an agent: calls and bytes of answers.

    .venv/bin/python bench/stories.py [--src PATH]

Starts a relay (local targets, in-memory state) from this checkout's ``src`` (or from ``--src``, e.g.
an older version's ``src`` unpacked with ``git archive``, to measure it the same way), runs the CLI
story (each command a fresh ``debugrelay`` process, as a shell agent runs it) and the curl story
(plain HTTP requests; ``--actions``: the agent's actions, ``POST /agent/{tool}``), and prints the number
of calls and the bytes of their answers as JSON, and their ``total``. A
version whose stops do not carry their locals needs one more call in each story to read them
(``vars``, ``GET frames/0/variables``): pass ``--locals-call``. The relay is ended by PID.

Then a wrong value made many calls before anything fails (tests/targets/tr_orders.py: ``price()`` is
wrong only for ``qty == 7777``, the program prints "order 7777 priced 233309 expected 23330"), found two
ways, each in the CLI and over plain HTTP: with the line debugger (a conditional breakpoint
``qty == 7777`` on price's first line, launch, step over until the local goes wrong) and with a
function trace (trace price, launch, list the calls matching the wrong result, read that call). Each
story's calls and bytes of answers (and each answer's), and its wall time in seconds, under the keys
``*_wrong_value_*``; a version without function traces answers ``{"error": ...}`` for those.

Then how a value went wrong, as the agent's actions: a total written wrong to ``self`` in a method
(tests/targets/tr_cart.py: launch with ``Basket.add`` traced, whose end lists its calls with ``self`` as each
found it, then read the call after which the total is off: its run shows ``"self.total": "22.0 -> 19.8"``;
``self_write_traced_actions``), and the 173rd of 300 iterations of a loop (tests/targets/tr_readings.py:
launch with ``calibrate`` traced, whose end carries the lone call's run with that iteration kept whole;
``odd_iteration_traced_actions``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
TARGETS = ROOT / "tests" / "targets"
BUG = str(TARGETS / "mcp_bug.py")
ORDERS = str(TARGETS / "tr_orders.py")
BASKET = str(TARGETS / "tr_cart.py")
READINGS = str(TARGETS / "tr_readings.py")
WRONG_TEXT = "233309"  # what the program printed for order 7777


def _line_of(marker: str, path: str) -> int:
    for number, text in enumerate(Path(path).read_text().splitlines(), 1):
        if text.rstrip().endswith(f"# {marker}"):
            return number
    raise LookupError(marker)


WRONG_LINE = _line_of("tr-wrong", ORDERS)  # total = total * 10
PRICE_FIRST = WRONG_LINE - 2  # total = qty * unit: where an agent breaks on entry to price
RUN = "import sys; from debugrelay.cli import main; sys.exit(main())"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def cli_story(env: dict[str, str], locals_call: bool) -> dict[str, Any]:
    def run(*args: str) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, "-c", RUN, *args], env=env, cwd=TARGETS, capture_output=True, text=True, check=True
        )
        sizes.append(len(done.stdout.strip().encode()))
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer

    sizes: list[int] = []
    sid = run("launch", "mcp_bug.py")["session_id"]
    if locals_call:
        run("vars")
    run("break", "--function", "moving_average")
    run("launch", "mcp_bug.py")
    run("eval", "list(range(len(values) - window))")
    run("eval", "len(values) - window + 1")
    run("delete", sid)
    return {"calls": len(sizes), "bytes": sum(sizes)}


def curl_story(url: str, locals_call: bool) -> dict[str, Any]:
    sizes: list[int] = []
    with httpx.Client(base_url=url, timeout=60) as http:

        def call(method: str, path: str, **kw: Any) -> dict[str, Any]:
            response = http.request(method, path, **kw)
            sizes.append(len(response.content))
            answer: dict[str, Any] = response.json()
            return answer

        sid = call("POST", "/sessions")["session_id"]
        call("POST", f"/sessions/{sid}/breakpoints", json={"source": {"path": BUG}, "line": 6})
        call("POST", f"/sessions/{sid}/launch", json={"script": BUG, "stop_on_exception": "uncaught"})
        if locals_call:
            call("POST", f"/sessions/{sid}/wait", json={"timeout": 30})
            call("GET", f"/sessions/{sid}/frames/0/variables")
        else:
            call("POST", f"/sessions/{sid}/wait", params={"locals": "true"}, json={"timeout": 30})
        call("POST", f"/sessions/{sid}/evaluate", json={"expression": "list(range(len(values) - window))"})
        call("DELETE", f"/sessions/{sid}/breakpoints/bp_1")
        call("POST", f"/sessions/{sid}/continue", json={"timeout": 30})
        call("DELETE", f"/sessions/{sid}")
    return {"calls": len(sizes), "bytes": sum(sizes)}


def _wrong_line_shown(stop: dict[str, Any]) -> bool:
    """A stop just after the wrong line: the local it made is the wrong value (233310 = 7777 * 3 * 10)."""
    line, total = stop.get("location", {}).get("line"), stop.get("locals", {}).get("total")
    return bool(line == WRONG_LINE + 1 and total == "233310")


def _events_show_wrong_line(run: dict[str, Any]) -> bool:
    return {"line": WRONG_LINE, "changed": {"total": "233310"}} in run.get("events", [])


def _figures(sizes: list[int], started: float) -> dict[str, Any]:
    seconds = round(time.perf_counter() - started, 2)
    return {"calls": len(sizes), "bytes": sum(sizes), "seconds": seconds, "bytes_per_call": list(sizes)}


class _Cli:
    """``debugrelay ARGS`` as a fresh process per command; counts the commands and bytes of their answers."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.sizes: list[int] = []

    def __call__(self, *args: str, counted: bool = True) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, "-c", RUN, *args], env=self.env, cwd=TARGETS, capture_output=True, text=True, check=True
        )
        if counted:
            self.sizes.append(len(done.stdout.strip().encode()))
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer

    def result(self, started: float) -> dict[str, Any]:
        return _figures(self.sizes, started)


def cli_wrong_value_stepping(env: dict[str, str]) -> dict[str, Any]:
    """Without traces: break on price's first line when qty == 7777, launch, step over until the wrong line."""
    run, started = _Cli(env), time.perf_counter()
    sid = run("break", f"tr_orders.py:{PRICE_FIRST}", "--condition", "qty == 7777")["session_id"]
    stop = run("launch", "tr_orders.py", "--timeout", "120")
    for _ in range(5):  # bounded: the wrong line is two lines further
        if _wrong_line_shown(stop) or stop.get("status") != "paused":
            break
        stop = run("step", "over")
    result = run.result(started)
    run("delete", sid, counted=False)
    if not _wrong_line_shown(stop):
        raise RuntimeError(f"stepping did not show the wrong line: {stop}")
    return result


def cli_wrong_value_traced(env: dict[str, str]) -> dict[str, Any]:
    """With a trace: trace price, launch (runs to its end), the calls whose result is the wrong one, that call."""
    run, started = _Cli(env), time.perf_counter()
    sid = run("trace", "tr_orders.py:price", "--keep", "10000")["session_id"]
    run("launch", "tr_orders.py", "--timeout", "120")
    found = run("calls", "price", "--match", WRONG_TEXT)
    call = run("call", found["calls"][0]["call_id"])
    result = run.result(started)
    run("delete", sid, counted=False)
    if not _events_show_wrong_line(call):
        raise RuntimeError(f"the call's run does not show the wrong line: {call}")
    return result


class _Http:
    """Plain HTTP requests, as curl sends them; counts the requests and bytes of their answers."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http
        self.sizes: list[int] = []

    def __call__(self, method: str, path: str, **kw: Any) -> dict[str, Any]:
        response = self.http.request(method, path, **kw)
        self.sizes.append(len(response.content))
        answer: dict[str, Any] = response.json()
        return answer

    def result(self, started: float) -> dict[str, Any]:
        return _figures(self.sizes, started)


def curl_wrong_value_stepping(url: str) -> dict[str, Any]:
    with httpx.Client(base_url=url, timeout=180) as http:
        call, started = _Http(http), time.perf_counter()
        sid = call("POST", "/sessions")["session_id"]
        where = {"source": {"path": ORDERS}, "line": PRICE_FIRST, "condition": "qty == 7777"}
        call("POST", f"/sessions/{sid}/breakpoints", json=where)
        call("POST", f"/sessions/{sid}/launch", json={"script": ORDERS})
        stop = call("POST", f"/sessions/{sid}/wait", params={"locals": "true"}, json={"timeout": 120})
        for _ in range(5):
            if _wrong_line_shown(stop) or stop.get("status") != "paused":
                break
            stop = call("POST", f"/sessions/{sid}/step-over", params={"locals": "true"}, json={"timeout": 10})
        result = call.result(started)
        http.delete(f"/sessions/{sid}")
    if not _wrong_line_shown(stop):
        raise RuntimeError(f"stepping did not show the wrong line: {stop}")
    return result


def curl_wrong_value_traced(url: str) -> dict[str, Any]:
    with httpx.Client(base_url=url, timeout=180) as http:
        call, started = _Http(http), time.perf_counter()
        sid = call("POST", "/sessions")["session_id"]
        call("POST", f"/sessions/{sid}/traces", json={"function": f"{ORDERS}:price", "keep": 10_000})
        call("POST", f"/sessions/{sid}/launch", json={"script": ORDERS})
        call("POST", f"/sessions/{sid}/wait", json={"timeout": 120})
        found = call("GET", f"/sessions/{sid}/traces/calls", params={"function": "price", "match": WRONG_TEXT})
        run = call("GET", f"/sessions/{sid}/traces/calls/{found['calls'][0]['call_id']}")
        result = call.result(started)
        http.delete(f"/sessions/{sid}")
    if not _events_show_wrong_line(run):
        raise RuntimeError(f"the call's run does not show the wrong line: {run}")
    return result


def curl_story_actions(url: str) -> dict[str, Any]:
    """The curl story as an agent's actions (``POST /agent/{tool}``): one request each."""
    with httpx.Client(base_url=url, timeout=60) as http:
        call = _Http(http)
        stop = call("POST", "/agent/debug_launch", json={"script": BUG, "breakpoints": [f"{BUG}:6"]})
        call("POST", "/agent/debug_evaluate", json={"expression": "list(range(len(values) - window))"})
        call("POST", "/agent/debug_remove_breakpoint", json={"breakpoint_id": "all"})
        call("POST", "/agent/debug_continue", json={})
        call("POST", "/agent/debug_disconnect", json={"forget": True, "session_id": stop["session_id"]})
    return {"calls": len(call.sizes), "bytes": sum(call.sizes)}


def curl_wrong_value_stepping_actions(url: str) -> dict[str, Any]:
    with httpx.Client(base_url=url, timeout=180) as http:
        call, started = _Http(http), time.perf_counter()
        where = {"file": ORDERS, "line": PRICE_FIRST, "condition": "qty == 7777"}
        sid = call("POST", "/agent/debug_set_breakpoint", json=where)["session_id"]
        stop = call("POST", "/agent/debug_launch", json={"script": ORDERS, "timeout": 120})
        for _ in range(5):
            if _wrong_line_shown(stop) or stop.get("status") != "paused":
                break
            stop = call("POST", "/agent/debug_step_over", json={})
        result = call.result(started)
        http.delete(f"/sessions/{sid}")
    if not _wrong_line_shown(stop):
        raise RuntimeError(f"stepping did not show the wrong line: {stop}")
    return result


def curl_wrong_value_traced_actions(url: str) -> dict[str, Any]:
    with httpx.Client(base_url=url, timeout=180) as http:
        call, started = _Http(http), time.perf_counter()
        sid = call("POST", "/agent/debug_trace", json={"function": f"{ORDERS}:price", "keep": 10_000})["session_id"]
        call("POST", "/agent/debug_launch", json={"script": ORDERS, "timeout": 120})
        found = call("POST", "/agent/debug_trace", json={"calls": "price", "match": WRONG_TEXT})
        run = call("POST", "/agent/debug_trace", json={"call_id": found["calls"][0]["call_id"]})
        result = call.result(started)
        http.delete(f"/sessions/{sid}")
    if not _events_show_wrong_line(run):
        raise RuntimeError(f"the call's run does not show the wrong line: {run}")
    return result


def _basket_total(call: dict[str, Any]) -> float:
    """The basket's total as a traced call of ``Basket.add`` found it (its ``self`` argument)."""
    return float(re.search(r"total=([0-9.]+)", call["args"]["self"]).group(1))  # type: ignore[union-attr]


def self_write_traced_actions(url: str) -> dict[str, Any]:
    """How did the basket's total go wrong: launch with ``Basket.add`` traced (the end lists its calls), read
    the call after which the total is not the total before plus the call's cost: its run shows the write."""
    with httpx.Client(base_url=url, timeout=180) as http:
        call, started = _Http(http), time.perf_counter()
        end = call("POST", "/agent/debug_launch", json={"script": BASKET, "trace": [f"{BASKET}:Basket.add"]})
        traced = end["traced"]
        wrong = next(
            a
            for a, b in itertools.pairwise(traced)
            if abs(_basket_total(a) + float(a["returned"]) - _basket_total(b)) > 1e-9
        )
        run = call("POST", "/agent/debug_trace", json={"call_id": wrong["call_id"]})
        result = call.result(started)
        http.delete(f"/sessions/{end['session_id']}")
    wanted = {
        "line": _line_of("tr-bulk", BASKET),
        "changed": {"self.total": "22.0 -> 19.8"},
    }
    if wanted not in run.get("events", []):
        raise RuntimeError(f"the call's run does not show the write to self.total: {run}")
    return result


def odd_iteration_traced_actions(url: str) -> dict[str, Any]:
    """Which of 300 readings made the average wrong: launch with ``calibrate`` traced; the end names its one call
    with its run, whose folded loop keeps the 173rd iteration (a reading far off the others) whole."""
    with httpx.Client(base_url=url, timeout=180) as http:
        call, started = _Http(http), time.perf_counter()
        end = call("POST", "/agent/debug_launch", json={"script": READINGS, "trace": [f"{READINGS}:calibrate"]})
        result = call.result(started)
        http.delete(f"/sessions/{end['session_id']}")
    (lone,) = end["traced"]
    far = [f for e in lone["run"] for f in e.get("far", [])]
    if not any(f["iteration"] == 173 and f["value"] == "1040.0" for f in far):
        raise RuntimeError(f"the launch's answer does not show the 173rd iteration: {lone}")
    return result


def _or_error(story: Any, *args: Any) -> dict[str, Any]:
    """A story's figures, or what stopped it (a relay version without function traces)."""
    try:
        result: dict[str, Any] = story(*args)
    except (subprocess.CalledProcessError, RuntimeError, KeyError, IndexError, ValueError) as exc:
        detail = exc.stderr.strip()[-300:] if isinstance(exc, subprocess.CalledProcessError) else str(exc)[:300]
        return {"error": f"{type(exc).__name__}: {detail}"}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--src", default=str(ROOT / "src"), help="the relay's source tree (default: this one)")
    parser.add_argument("--locals-call", action="store_true", help="read the locals with a call of their own")
    parser.add_argument(
        "--actions", action="store_true", help="the curl stories as the agent's actions (POST /agent/{tool})"
    )
    args = parser.parse_args()
    port = free_port()
    env = {**os.environ, "PYTHONPATH": args.src, "DEBUGRELAY_URL": f"http://127.0.0.1:{port}"}
    env.pop("DEBUGRELAY_TOKEN", None)
    relay = subprocess.Popen(
        [sys.executable, "-c", RUN, "serve", "--port", str(port)],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = env["DEBUGRELAY_URL"]
        for _ in range(300):  # until the relay answers (bounded)
            try:
                httpx.get(f"{url}/health", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        curl = curl_story_actions(url) if args.actions else curl_story(url, args.locals_call)
        result: dict[str, Any] = {"cli": cli_story(env, args.locals_call), "curl": curl}
        result["cli_wrong_value_stepping"] = _or_error(cli_wrong_value_stepping, env)
        result["cli_wrong_value_traced"] = _or_error(cli_wrong_value_traced, env)
        stepping, traced = (
            (curl_wrong_value_stepping_actions, curl_wrong_value_traced_actions)
            if args.actions
            else (curl_wrong_value_stepping, curl_wrong_value_traced)
        )
        result["curl_wrong_value_stepping"] = _or_error(stepping, url)
        result["curl_wrong_value_traced"] = _or_error(traced, url)
        result["self_write_traced_actions"] = _or_error(self_write_traced_actions, url)
        result["odd_iteration_traced_actions"] = _or_error(odd_iteration_traced_actions, url)
        stories = [v for v in result.values() if "bytes" in v]
        result["total"] = {"calls": sum(v["calls"] for v in stories), "bytes": sum(v["bytes"] for v in stories)}
    finally:
        relay.terminate()
        relay.wait(timeout=30)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
