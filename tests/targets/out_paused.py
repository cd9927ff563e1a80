"""A child process (a shell) prints while this program is paused at its stop line; both print after it."""

import subprocess

print("before the stop", flush=True)
child = subprocess.Popen(
    ["sh", "-c", "read go; for n in 0 1 2 3 4; do echo while paused $n; done; read done; echo after continue"],
    stdin=subprocess.PIPE,
    text=True,
)
child.stdin.write("go\n")
child.stdin.flush()
child.stdin.write("done\n")  # stop here
child.stdin.close()
child.wait()
print("MAIN-END", flush=True)
