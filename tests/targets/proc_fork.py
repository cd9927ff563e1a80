"""os.fork: the child computes, the parent waits for it."""

import os

pid = os.fork()
if pid == 0:
    value = 6 * 7  # child-line
    print("child", value, flush=True)
    os._exit(0)
_, status = os.waitpid(pid, 0)
print("parent saw", os.waitstatus_to_exitcode(status), flush=True)
