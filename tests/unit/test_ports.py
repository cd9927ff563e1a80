"""Ports for local targets: two targets started together are never told the same port."""

from __future__ import annotations

import socket

from debugrelay.launchers.local import free_port


def test_ports_handed_out_together_are_distinct_and_free() -> None:
    ports = [free_port() for _ in range(500)]  # the kernel alone repeats some in 500
    assert len(set(ports)) == len(ports)
    with socket.socket() as sock:  # and each one was free when handed out (the last one still is)
        sock.bind(("127.0.0.1", ports[-1]))
