"""A stored record is a claim: a relay checks it before it kills, reads or forwards anything for it."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest

from debugrelay.launchers import kill_tree
from tests.conftest import error_of, free_port, line_of, ok, target
from tests.redis_server import Cluster, poll

pytestmark = pytest.mark.integration

BASIC = target("basic.py")


def tamper(cluster: Cluster, sid: str, change: Any) -> dict[str, Any]:
    store = cluster.redis()
    try:
        record: dict[str, Any] = json.loads(store.hget(f"{cluster.namespace}:sessions", sid))  # type: ignore[arg-type]
        change(record)
        store.hset(f"{cluster.namespace}:sessions", sid, json.dumps(record))
    finally:
        store.close()
    return record


def test_a_stored_pid_and_log_path_of_something_else_are_not_acted_on(cluster: Cluster, tmp_path: Path) -> None:
    first = cluster.relay()
    sid = ok(first.http.post("/sessions", json={}), 201)["session_id"]
    ok(
        first.http.post(
            f"/sessions/{sid}/breakpoints", json={"source": {"path": BASIC}, "line": line_of(BASIC, "add-body")}
        )
    )
    ok(first.http.post(f"/sessions/{sid}/launch", json={"script": BASIC}))
    assert ok(first.http.post(f"/sessions/{sid}/wait", json={"timeout": 30}))["status"] == "paused"
    original = ok(first.http.get(f"/sessions/{sid}"))["target"]["pid"]
    first.proc.kill()
    first.proc.wait(10)
    port = free_port()
    # an unrelated process whose command line merely mentions --listen on some port
    decoy = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "--listen", f"127.0.0.1:{port}"])
    secret = tmp_path / "not-a-log"
    secret.write_text("root:SECRET-HASH:0:0\n")
    try:

        def point_elsewhere(record: dict[str, Any]) -> None:
            record["target"].update(pid=decoy.pid, port=port, log=str(secret), status_file=str(secret))

        tamper(cluster, sid, point_elsewhere)
        second = cluster.relay()
        # recovery runs as the relay starts: the session ends up terminated, its target is not that process
        status = poll(lambda: ok(second.http.get(f"/sessions/{sid}/status")).get("recovered") and 1, what="recovery")
        assert ok(second.http.get(f"/sessions/{sid}/status"))["status"] == "terminated", status
        output = second.http.get(f"/sessions/{sid}/output").text
        assert "SECRET-HASH" not in output
        ok(second.http.delete(f"/sessions/{sid}"))
        assert decoy.poll() is None  # not killed
    finally:
        decoy.kill()
        decoy.wait(10)
        kill_tree(original)  # the real target, which the record no longer names


class Catcher(http.server.BaseHTTPRequestHandler):
    """An HTTP server no relay runs: it records what reaches it."""

    seen: ClassVar[list[dict[str, str]]] = []

    def do_GET(self) -> None:
        Catcher.seen.append(dict(self.headers))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *_: Any) -> None:
        return


def test_a_lease_naming_an_address_no_replica_announced_is_not_followed(cluster: Cluster) -> None:
    relay = cluster.relay(DEBUGRELAY_TOKEN="relay-token-1")
    catcher = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Catcher)
    thread = threading.Thread(target=catcher.serve_forever)
    thread.start()
    store = cluster.redis()
    try:
        sid = "sess_0123456789ab"
        ns = cluster.namespace
        url = f"http://127.0.0.1:{catcher.server_address[1]}"
        record = {"id": sid, "status": "created", "owner": "intruder", "created_at": 1.0, "last_activity": 1.0}
        store.hset(f"{ns}:sessions", sid, json.dumps(record))
        store.set(f"{ns}:lease:{sid}", json.dumps({"owner": "intruder", "url": url}), px=60_000)
        headers = {"Authorization": "Bearer relay-token-1"}
        error = error_of(relay.http.get(f"/sessions/{sid}", headers=headers), 502, "forward_failed")
        assert "not a registered replica" in error["message"]
        assert Catcher.seen == []  # nothing, and no token, went there
    finally:
        store.delete(f"{cluster.namespace}:lease:sess_0123456789ab")
        store.close()
        catcher.shutdown()
        catcher.server_close()
        thread.join()


def test_source_serves_the_session_s_files_only_and_never_blocks(api: Any, tmp_path: Path) -> None:
    program = tmp_path / "prog.py"
    program.write_text("x = 1\nprint(x)\n")
    os.mkfifo(tmp_path / "pipe")
    sid = ok(api.post("/sessions", json={}), 201)["session_id"]
    try:
        ok(api.post(f"/sessions/{sid}/launch", json={"script": str(program), "stop_on_entry": True}))
        assert ok(api.post(f"/sessions/{sid}/wait", json={"timeout": 30}))["status"] == "paused"
        source = f"/sessions/{sid}/source"
        assert ok(api.get(source, params={"path": str(program)}))["content"] == "x = 1\nprint(x)\n"
        for foreign in ("/etc/passwd", "/proc/self/environ"):
            error_of(api.get(source, params={"path": foreign}), 403, "refused")
        error_of(api.get(source, params={"path": str(tmp_path / "pipe")}), 400, "file_not_found")  # not opened
        assert ok(api.get("/health"))["status"] == "ok"
    finally:
        api.delete(f"/sessions/{sid}")
