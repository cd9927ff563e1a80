"""Looks for its keeper's secret where a process of the same user could read it: its parent's environment
and command line."""

import os

for name in ("environ", "cmdline"):
    try:
        with open(f"/proc/{os.getppid()}/{name}", "rb") as fh:
            data = fh.read(1 << 16)
    except OSError as exc:
        print(name, "refused", type(exc).__name__, flush=True)
    else:
        print(name, "has the secret" if b"DEBUGRELAY_KEEPER_SECRET" in data else "has no secret", flush=True)
