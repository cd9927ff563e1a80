"""Ports for local targets: two targets started together are never told the same port."""

from __future__ import annotations

import socket
from pathlib import Path

from debugrelay.launchers.local import free_port


def test_ports_handed_out_together_are_distinct_and_free() -> None:
    ports = [free_port() for _ in range(500)]  # the kernel alone repeats some in 500
    assert len(set(ports)) == len(ports)
    with socket.socket() as sock:  # and each one was free when handed out (the last one still is)
        sock.bind(("127.0.0.1", ports[-1]))


def test_ports_are_outside_the_kernels_ephemeral_range() -> None:
    # a port the kernel may hand to any process's bind(0) (a debuggee's debugpy binds some as it starts)
    # could be taken between the relay choosing it and the target binding it
    low, high = (int(n) for n in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    ports = [free_port() for _ in range(200)]
    assert all(not low <= port <= high for port in ports), [p for p in ports if low <= p <= high]
