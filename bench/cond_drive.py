"""Runs one pyperformance benchmark's own code (not written here) for the conditions bench, timing itself:
``cond_drive.py FILE NAME LOOPS`` prints ``workload_s S python X.Y``. pyperf is not needed: its clock is
the only part the benchmarks use outside their runner."""

import importlib.util
import sys
import time
import types

sys.modules.setdefault("pyperf", types.SimpleNamespace(perf_counter=time.perf_counter))
path, name, loops = sys.argv[1], sys.argv[2], int(sys.argv[3])
spec = importlib.util.spec_from_file_location(f"bm_{name}", path)
assert spec is not None
assert spec.loader is not None
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
started = time.perf_counter()
if name == "richards":
    assert module.Richards().run(loops)
elif name == "nbody":
    module.bench_nbody(1, "sun", loops)
else:
    raise SystemExit(f"no driver for {name}")
took = time.perf_counter() - started
print(f"workload_s {took:.4f} python {sys.version_info[0]}.{sys.version_info[1]}", flush=True)
