"""A forked child that stops at a breakpoint, then waits for a gate file before it ends."""

import os
import sys
import time

gate = sys.argv[1]
pid = os.fork()
if pid == 0:
    marker = "in the child"  # child-stop
    while not os.path.exists(gate):
        time.sleep(0.05)
    print("child done", marker, flush=True)
    os._exit(0)
os.waitpid(pid, 0)
print("GATE-END", flush=True)
