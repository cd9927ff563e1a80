"""Requests with headers exactly as given, from a chosen loopback address: an HTTP client would fix or
refuse some headers, and every client on this machine is otherwise 127.0.0.1."""

from __future__ import annotations

import http.client

import httpx


def send(
    port: int,
    method: str,
    path: str,
    headers: list[tuple[str, bytes]],
    body: bytes = b"",
    *,
    source: str = "127.0.0.1",
) -> httpx.Response:
    """One request to 127.0.0.1:``port`` from ``source`` (any 127.x address is this machine), and its answer."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60, source_address=(source, 0))
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in headers:
            conn.putheader(name, value)
        if body:
            conn.putheader("Content-Type", "application/json")
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body or None)
        answer = conn.getresponse()
        return httpx.Response(answer.status, headers=answer.getheaders(), content=answer.read())
    finally:
        conn.close()


def client_from(url: str, source: str, headers: dict[str, str] | None = None) -> httpx.Client:
    """An HTTP client whose connections come from the loopback address ``source``."""
    transport = httpx.HTTPTransport(local_address=source)
    return httpx.Client(base_url=url, transport=transport, timeout=60, headers=headers)
