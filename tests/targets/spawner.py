"""Starts a Python child process and waits for it: must not hang under the debugger."""

import subprocess
import sys

out = subprocess.run([sys.executable, "-c", "print('child says hi')"], capture_output=True, text=True, timeout=60)
print("child:", out.stdout.strip())  # after-child
