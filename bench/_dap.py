"""A minimal blocking DAP client: the floor is what an agent talking to debugpy itself would get."""

from __future__ import annotations

import json
import socket
import time
from collections import deque
from typing import Any


class DapError(RuntimeError):
    pass


class Dap:
    """One DAP connection; requests are sent one at a time and events are queued while waiting."""

    def __init__(self, host: str, port: int, *, timeout: float = 30.0, secret: str | None = None) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.create_connection((host, port), timeout=2.0)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.settimeout(timeout)
        self.timeout = timeout
        self.buf = b""
        self.seq = 0
        self.events: deque[dict[str, Any]] = deque()
        if secret is not None:  # a keeper: prove the secret, read its state
            from debugrelay.dap._keeper import GREETING, prove

            greeting = b""
            while not greeting.endswith(b"\n"):
                chunk = self.sock.recv(1)
                if not chunk:
                    raise DapError("connection closed")
                greeting += chunk
            if not greeting.startswith(GREETING):
                raise DapError("not a keeper")
            self.sock.sendall(prove(secret, greeting[len(GREETING) :].strip()) + b"\n")
            self._read()

    def close(self) -> None:
        self.sock.close()

    def drain(self) -> None:
        """Read and drop what has arrived (a running program's events), without waiting."""
        self.sock.setblocking(False)
        try:
            while self.sock.recv(1 << 20):
                pass
        except (BlockingIOError, InterruptedError):
            pass
        finally:
            self.sock.setblocking(True)
            self.sock.settimeout(self.timeout)

    def send(self, command: str, arguments: dict[str, Any] | None = None) -> int:
        self.seq += 1
        message = {"seq": self.seq, "type": "request", "command": command}
        if arguments is not None:
            message["arguments"] = arguments
        body = json.dumps(message).encode()
        self.sock.sendall(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        return self.seq

    def _read(self) -> dict[str, Any]:
        while True:
            head, sep, rest = self.buf.partition(b"\r\n\r\n")
            if sep:
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
                if len(rest) >= length:
                    self.buf = rest[length:]
                    message: dict[str, Any] = json.loads(rest[:length])
                    return message
            chunk = self.sock.recv(65536)
            if not chunk:
                raise DapError("connection closed")
            self.buf += chunk

    def response(self, seq: int) -> dict[str, Any]:
        while True:
            message = self._read()
            if message.get("type") == "response" and message.get("request_seq") == seq:
                if not message.get("success"):
                    raise DapError(f"{message.get('command')}: {message.get('message')}")
                body: dict[str, Any] = message.get("body") or {}
                return body
            if message.get("type") == "event":
                self.events.append(message)

    def request(self, command: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.response(self.send(command, arguments))

    def event(self, name: str) -> dict[str, Any]:
        for message in list(self.events):
            if message.get("event") == name:
                self.events.remove(message)
                body: dict[str, Any] = message.get("body") or {}
                return body
        while True:
            message = self._read()
            if message.get("type") == "event":
                if message.get("event") == name:
                    found: dict[str, Any] = message.get("body") or {}
                    return found
                self.events.append(message)

    def initialize(self) -> None:
        self.request(
            "initialize",
            {
                "clientID": "bench",
                "adapterID": "debugpy",
                "linesStartAt1": True,
                "columnsStartAt1": True,
                "pathFormat": "path",
            },
        )

    @classmethod
    def ready(cls, host: str, port: int, *, timeout: float = 60.0, secret: str | None = None) -> Dap:
        """Connected and initialized; retried while the target starts (a published container port
        accepts before debugpy listens, then resets)."""
        deadline = time.monotonic() + timeout
        while True:
            dap: Dap | None = None
            try:
                dap = cls(host, port, timeout=timeout, secret=secret)
                dap.initialize()
            except (OSError, DapError):
                if dap is not None:
                    dap.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)
            else:
                return dap

    def start(self, breakpoints: dict[str, list[int]], path_mappings: list[dict[str, str]] | None = None) -> None:
        """(initialized) attach, set breakpoints, configurationDone: the target starts running."""
        from debugrelay.dap import ATTACH_ARGS  # the same debugpy options as the relay's

        attach = self.send(
            "attach", {**ATTACH_ARGS, "justMyCode": False, "subProcess": False, "pathMappings": path_mappings or []}
        )
        self.event("initialized")
        for path, lines in breakpoints.items():
            self.request("setBreakpoints", {"source": {"path": path}, "breakpoints": [{"line": n} for n in lines]})
        self.request("setExceptionBreakpoints", {"filters": []})
        self.request("configurationDone")
        self.response(attach)
