"""Runs proc_child.py with subprocess.run and the same interpreter."""

import os
import subprocess
import sys

child = os.path.join(os.path.dirname(os.path.abspath(__file__)), "proc_child.py")
done = subprocess.run([sys.executable, child, "7"], check=True)
print("RUN-END", done.returncode, flush=True)
