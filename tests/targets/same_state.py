"""What a program can see of its own process, printed after a stop: its sockets' options, its import
machinery, its sys module. Run plain, it prints the same."""

import socket
import sys


def pair():
    """A TCP connection to itself: both ends as the program made them."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        client = socket.create_connection(server.getsockname())
        accepted, _ = server.accept()
    return client, accepted


def nodelay(sock):
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


def main():
    client, accepted = pair()
    ends = (nodelay(client), nodelay(accepted))  # state-read
    client.close()
    accepted.close()
    return ends


print("nodelay", main())
print("finders", [type(f).__module__ for f in sys.meta_path if "debugrelay" in type(f).__module__])
print("sys", sorted(name for name in vars(sys) if "debugrelay" in name))
