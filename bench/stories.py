"""What the CLI and curl stories of docs/agents.md cost an agent: calls and bytes of answers.

    .venv/bin/python bench/stories.py [--src PATH]

Starts a relay (local targets, in-memory state) from this checkout's ``src`` (or from ``--src``, e.g.
an older version's ``src`` unpacked with ``git archive``, to measure it the same way), runs the CLI
story (each command a fresh ``debugrelay`` process, as a shell agent runs it) and the curl story
(plain HTTP requests), and prints the number of calls and the bytes of their answers as JSON. A
version whose stops do not carry their locals needs one more call in each story to read them
(``vars``, ``GET frames/0/variables``): pass ``--locals-call``. The relay is ended by PID.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
TARGETS = ROOT / "tests" / "targets"
BUG = str(TARGETS / "mcp_bug.py")
RUN = "import sys; from debugrelay.cli import main; sys.exit(main())"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def cli_story(env: dict[str, str], locals_call: bool) -> dict[str, Any]:
    def run(*args: str) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, "-c", RUN, *args], env=env, cwd=TARGETS, capture_output=True, text=True, check=True
        )
        sizes.append(len(done.stdout.strip().encode()))
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer

    sizes: list[int] = []
    sid = run("launch", "mcp_bug.py")["session_id"]
    if locals_call:
        run("vars")
    run("break", "--function", "moving_average")
    run("launch", "mcp_bug.py")
    run("eval", "list(range(len(values) - window))")
    run("eval", "len(values) - window + 1")
    run("delete", sid)
    return {"calls": len(sizes), "bytes": sum(sizes)}


def curl_story(url: str, locals_call: bool) -> dict[str, Any]:
    sizes: list[int] = []
    with httpx.Client(base_url=url, timeout=60) as http:

        def call(method: str, path: str, **kw: Any) -> dict[str, Any]:
            response = http.request(method, path, **kw)
            sizes.append(len(response.content))
            answer: dict[str, Any] = response.json()
            return answer

        sid = call("POST", "/sessions")["session_id"]
        call("POST", f"/sessions/{sid}/breakpoints", json={"source": {"path": BUG}, "line": 6})
        call("POST", f"/sessions/{sid}/launch", json={"script": BUG, "stop_on_exception": "uncaught"})
        if locals_call:
            call("POST", f"/sessions/{sid}/wait", json={"timeout": 30})
            call("GET", f"/sessions/{sid}/frames/0/variables")
        else:
            call("POST", f"/sessions/{sid}/wait", params={"locals": "true"}, json={"timeout": 30})
        call("POST", f"/sessions/{sid}/evaluate", json={"expression": "list(range(len(values) - window))"})
        call("DELETE", f"/sessions/{sid}/breakpoints/bp_1")
        call("POST", f"/sessions/{sid}/continue", json={"timeout": 30})
        call("DELETE", f"/sessions/{sid}")
    return {"calls": len(sizes), "bytes": sum(sizes)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--src", default=str(ROOT / "src"), help="the relay's source tree (default: this one)")
    parser.add_argument("--locals-call", action="store_true", help="read the locals with a call of their own")
    args = parser.parse_args()
    port = free_port()
    env = {**os.environ, "PYTHONPATH": args.src, "DEBUGRELAY_URL": f"http://127.0.0.1:{port}"}
    env.pop("DEBUGRELAY_TOKEN", None)
    relay = subprocess.Popen(
        [sys.executable, "-c", RUN, "serve", "--port", str(port)],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = env["DEBUGRELAY_URL"]
        for _ in range(300):  # until the relay answers (bounded)
            try:
                httpx.get(f"{url}/health", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        result = {"cli": cli_story(env, args.locals_call), "curl": curl_story(url, args.locals_call)}
    finally:
        relay.terminate()
        relay.wait(timeout=30)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
