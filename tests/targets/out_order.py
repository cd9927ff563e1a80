"""Writes a warning to stderr as it starts, then 3,000 characters to stdout, each flushed, and a last
line. With the argument ``child``, a child process first writes a line to stderr on its own."""

import subprocess
import sys

if sys.argv[1:] == ["child"]:
    subprocess.run(["sh", "-c", "echo CHILD-ERR >&2"], check=True)
sys.stderr.write("WARNING: written before the rest\n")
for _ in range(3000):
    sys.stdout.write("x")
    sys.stdout.flush()
print("\nOUT-LAST", flush=True)
