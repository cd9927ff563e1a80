"""A forged child process: speaks pydevd's side of the protocol to a debugpy adapter's server port, as any
local process can, claiming a pid and a parent of its choosing; records every message it receives.

    python forged_pydevd.py PORT PID PPID RECORD

Each message the adapter (or whoever it passes the connection to) sends is one JSON line in RECORD. It
answers what a debugged process answers (attached, configured, then stopped, and every read after), so that
whatever a session would give a child reaches it; it ends when the adapter closes the connection.
"""

from __future__ import annotations

import json
import socket
import sys
from typing import Any

ANSWERS: dict[str, Any] = {
    "pydevdAuthorize": {"clientAccessToken": None},
    "initialize": {"supportsConfigurationDoneRequest": True, "supportsConditionalBreakpoints": True},
    "threads": {"threads": [{"id": 1, "name": "MainThread"}]},
    "stackTrace": {
        "stackFrames": [{"id": 1, "name": "forged", "line": 1, "column": 1, "source": {"path": "/forged.py"}}],
        "totalFrames": 1,
    },
    "scopes": {"scopes": []},
    "variables": {"variables": []},
    "evaluate": {"result": "0", "variablesReference": 0},
}


def main(port: int, pid: int, ppid: int, record: str) -> None:
    answers = dict(ANSWERS)
    answers["pydevdSystemInfo"] = {
        "process": {"pid": pid, "ppid": ppid, "executable": sys.executable, "bitness": 64},
        "platform": {"name": "linux"},
        "python": {"version": "3.11.0", "implementation": {"name": "cpython", "version": "3.11.0"}},
    }
    seq = 0
    with socket.create_connection(("127.0.0.1", port)) as sock, open(record, "a") as out:
        reader = sock.makefile("rb")

        def send(kind: str, **fields: Any) -> None:
            nonlocal seq
            seq += 1
            body = json.dumps({"seq": seq, "type": kind, **fields}).encode()
            sock.sendall(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

        while True:
            length = None
            while True:
                line = reader.readline()
                if not line:
                    return  # the adapter closed the connection
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode().partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            message = json.loads(reader.read(length or 0))
            out.write(json.dumps(message) + "\n")
            out.flush()
            if message.get("type") != "request":
                continue
            command = message.get("command")
            send(
                "response",
                request_seq=message["seq"],
                command=command,
                success=True,
                body=answers.get(command, {}),
            )
            if command == "attach":
                send("event", event="initialized", body={})
            elif command == "configurationDone":
                send("event", event="stopped", body={"reason": "breakpoint", "threadId": 1, "allThreadsStopped": True})


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
