"""Waits until the file named by its first argument exists, then (given a second argument) runs
proc_child.py with subprocess.run, then passes a logged line and a stop line: a program whose session's
breakpoints carry secrets in their condition and log message."""

import os
import subprocess
import sys
import time

gate = sys.argv[1]
while not os.path.exists(gate):
    time.sleep(0.01)
if len(sys.argv) > 2:
    child = os.path.join(os.path.dirname(os.path.abspath(__file__)), "proc_child.py")
    subprocess.run([sys.executable, child, "7"], check=True)
for n in range(3):
    total = n * n  # logged-line
reached = True  # stop-line
print("GUARDED-END", flush=True)
