"""What a hostile program tries from inside its container: open connections to addresses around it.

The test pauses it at the marked line and evaluates ``reach(...)`` there."""

import socket
import struct


def reach(host, port, send=b""):
    """Whether a connection to ``host:port`` opened, and what it answered to ``send`` (200 bytes)."""
    try:
        conn = socket.create_connection((host, port), timeout=3)
    except OSError as exc:
        return f"failed: {exc!r}"
    with conn:
        if not send:
            return "connected"
        try:
            conn.sendall(send)
            conn.settimeout(3)
            return "connected, answered: " + conn.recv(200).decode("latin-1")
        except OSError as exc:
            return f"connected, then: {exc!r}"


def gateway():
    """The default gateway of the container's network (its bridge's address on the host, if any)."""
    with open("/proc/net/route") as routes:
        for line in routes.readlines()[1:]:
            fields = line.split()
            if fields[1] == "00000000":
                return socket.inet_ntoa(struct.pack("<L", int(fields[2], 16)))
    return None


if __name__ == "__main__":
    ready = gateway()  # probe-here
    print("probed from", ready)
