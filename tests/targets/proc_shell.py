"""Runs a shell command, a child that is not Python: it runs as it would without the debugger."""

import subprocess

subprocess.run(["sh", "-c", "sleep 1.5; echo from the shell"], check=True)  # long enough for the keeper to see it
print("SHELL-END", flush=True)
