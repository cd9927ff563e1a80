"""A program that starts debugpy only after a while (its own start-up comes first): for attaching early.

``late_listen.py PORT SECONDS``."""

import sys
import time

port, delay = int(sys.argv[1]), float(sys.argv[2])
time.sleep(delay)  # the program's own start-up, before it listens
import debugpy  # noqa: E402

debugpy.listen(("127.0.0.1", port))
total = 0
while True:
    total += 1  # late-loop
    time.sleep(0.01)
