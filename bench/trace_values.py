"""What writing values costs a traced call, and how long a program's ``__repr__`` can hold it:
``.venv/bin/python -m bench.trace_values`` (the tracer alone, in a plain ``python`` per interpreter found: no
debugger, no relay).

Per Python (this one, and pyenv's newest 3.12 and 3.13 when present), CPU time per call of a 3-line traced
function (``work(obj, n)``), median of ``--runs``:

- ``numbers``: ``obj`` an int (the values the recorder writes without walking anything);
- ``objects``: ``obj`` a new object of the program's per call, five attributes (the default: type, address and
  attributes, written at the call and again at each line to see what changed);
- ``objects, reprs``: the same with ``reprs`` on (its own ``__repr__``, once per value, on the recorder's
  thread: the hand-off's cost).

Then the wall time a traced call is held by a ``__repr__`` that blocks until the program goes on (``reprs`` on):
the first call (the bound, ``REPR_WAIT``), and the next ones (its type is not asked again). Measures and prints;
asserts nothing. Each interpreter runs as a child process that ends by itself.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOT = str(ROOT / "src" / "debugrelay" / "_boot")
CALLS = 20_000
CHILD = """
import json, sys, threading, time
import _debugrelay_trace as trace

class Cat:
    def __init__(self, n):
        self.name, self.hunger, self.owner, self.toys, self.age = "Nono", n, "Ann", ["ball"], 3

    def __repr__(self):
        return "Cat(%r, %d)" % (self.name, self.hunger)

go_on = threading.Event()

class Stuck:
    def __repr__(self):
        go_on.wait()
        return "Stuck()"

def work(obj, n):
    total = n * 2
    return total

def per_call(make, reprs, calls):
    trace.add(json.dumps({"id": "t1", "file": __file__, "qualname": "work", "reprs": reprs, "keep": 100}))
    start = time.process_time()
    for i in range(calls):
        work(make(i), i)
    spent = time.process_time() - start
    trace.remove("t1")
    return spent / calls * 1e6

def held(calls):
    trace.add(json.dumps({"id": "t2", "file": __file__, "qualname": "work", "reprs": True}))
    took = []
    for i in range(calls):
        start = time.perf_counter()
        work(Stuck(), i)
        took.append(time.perf_counter() - start)
    go_on.set()
    return took

calls = int(sys.argv[1])
out = {"python": "%d.%d" % sys.version_info[:2]}
out["numbers"] = per_call(lambda i: i, False, calls)
out["objects"] = per_call(Cat, False, calls)
out["objects, reprs"] = per_call(Cat, True, calls)
first, *rest = held(5)
out["held_first_ms"] = first * 1000
out["held_next_ms"] = max(rest) * 1000
print(json.dumps(out))
"""


def _pythons() -> list[str]:
    found = [sys.executable]
    versions = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    for minor in ("3.12", "3.13"):
        if sys.version_info[:2] == tuple(int(x) for x in minor.split(".")):
            continue
        candidates = sorted(versions.glob(f"{minor}.*/bin/python3"), key=lambda p: p.parts[-3])
        candidates = [c for c in candidates if c.parts[-3].replace(".", "").isdigit()]
        if candidates:
            found.append(str(candidates[-1]))
    return found


def measure(python: str, runs: int, calls: int) -> dict[str, float | str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGRELAY_")}
    env["PYTHONPATH"] = BOOT
    done = []
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "values_workload.py"
        script.write_text(CHILD)
        for _ in range(runs):
            out = subprocess.run(
                [python, str(script), str(calls)], capture_output=True, text=True, check=True, timeout=600, env=env
            )
            done.append(json.loads(out.stdout.splitlines()[-1]))
    result: dict[str, float | str] = {"python": done[0]["python"]}
    for key in done[0]:
        if key != "python":
            result[key] = round(statistics.median(run[key] for run in done), 1)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=CALLS)
    args = parser.parse_args(argv)
    print(f"{'python':7} {'numbers':>9} {'objects':>9} {'+reprs':>9}  (CPU us per call)  held: first, next (ms)")
    for python in _pythons():
        row = measure(python, args.runs, args.calls)
        print(
            f"{row['python']:7} {row['numbers']:9} {row['objects']:9} {row['objects, reprs']:9}"
            f"                     {row['held_first_ms']}, {row['held_next_ms']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
