"""A stored record is a claim: a relay checks it before it kills, reads or forwards anything for it."""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, ClassVar

import httpx
import psutil
import pytest

from debugrelay.api.replicas import PeerProofs
from debugrelay.launchers import kill_tree
from debugrelay.trust import RelayKeys
from tests.conftest import Relay, error_of, free_port, line_of, ok, target
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


# -- a record tampered with by whoever can write to Redis ------------------------------------------------


def paused_session(relay: Relay) -> tuple[str, dict[str, Any]]:
    """A launched session paused at a breakpoint, and its target as the session shows it."""
    sid = ok(relay.http.post("/sessions", json={}), 201)["session_id"]
    bp = {"source": {"path": BASIC}, "line": line_of(BASIC, "add-body")}
    ok(relay.http.post(f"/sessions/{sid}/breakpoints", json=bp))
    ok(relay.http.post(f"/sessions/{sid}/launch", json={"script": BASIC}))
    assert ok(relay.http.post(f"/sessions/{sid}/wait", json={"timeout": 30}))["status"] == "paused"
    return sid, ok(relay.http.get(f"/sessions/{sid}"))["target"]


def end_target(described: dict[str, Any]) -> None:
    """End a target the test's relay started, if that pid is still that process (not a reused pid)."""
    with contextlib.suppress(psutil.Error):
        if abs(psutil.Process(described["pid"]).create_time() - described["started"]) < 0.01:
            kill_tree(described["pid"])


def sleeper(*argv: str) -> subprocess.Popen[bytes]:
    """A process of the test's own whose command line says what ``argv`` says (it only sleeps)."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", *argv])


@pytest.mark.parametrize("forgery", ["without_start_and_uid", "with_a_decoys_start_and_uid", "another_sessions"])
def test_a_tampered_target_record_gets_nothing_killed_or_read(cluster: Cluster, forgery: str) -> None:
    first = cluster.relay()
    sid, real = paused_session(first)
    victim = None
    if forgery == "another_sessions":  # a sealed description, copied into the record of another session
        victim = sid
        sid = ok(first.http.post("/sessions", json={}), 201)["session_id"]
    first.proc.kill()
    first.proc.wait(10)
    port, inner = free_port(), free_port()
    decoy = sleeper("--listen", f"127.0.0.1:{port}")
    adapter = sleeper("debugpy/adapter", "--port", str(inner))
    try:
        store = cluster.redis()
        try:
            key = f"{cluster.namespace}:sessions"
            if forgery == "another_sessions":
                source = json.loads(store.hget(key, victim))  # type: ignore[arg-type]
                forged = {k: source[k] for k in ("status", "target", "keeper_secret", "seals", "launch") if k in source}
            else:
                forged = json.loads(store.hget(key, sid))  # type: ignore[arg-type]
                forged["target"].update(pid=decoy.pid, port=port, adapter_pid=adapter.pid, debugpy_port=inner)
                forged["target"].pop("started")
                forged["target"].pop("uid")
                if forgery == "with_a_decoys_start_and_uid":  # as a Redis writer reads them in /proc
                    forged["target"].update(started=psutil.Process(decoy.pid).create_time(), uid=os.getuid())
            tamper(cluster, sid, lambda record: record.update(forged))
        finally:
            store.close()
        second = cluster.relay()
        poll(lambda: ok(second.http.get(f"/sessions/{sid}/status")).get("recovered"), what="recovery")
        status = ok(second.http.get(f"/sessions/{sid}/status"))
        ok(second.http.delete(f"/sessions/{sid}"))
        assert decoy.poll() is None and adapter.poll() is None  # neither killed
        assert psutil.pid_exists(real["pid"]) and psutil.Process(real["pid"]).status() != psutil.STATUS_ZOMBIE
        assert status["status"] == "terminated", status
        assert status["error"]["code"] == "target_unverified", status
        if victim is not None:  # the session the description belongs to goes on, still paused
            assert ok(second.http.get(f"/sessions/{victim}/status"))["status"] == "paused"
    finally:
        for proc in (decoy, adapter):
            proc.kill()
            proc.wait(10)
        if victim is None:
            end_target(real)  # the real target, which the record no longer names


class Listener(http.server.BaseHTTPRequestHandler):
    """An HTTP server no relay runs, at an address written into Redis: it records every request."""

    seen: ClassVar[list[tuple[str, str, dict[str, str]]]] = []

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        Listener.seen.append((self.command, self.path, {k.lower(): v for k, v in self.headers.items()}))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    do_GET = do_POST = _answer

    def log_message(self, *_: Any) -> None:
        return


def test_a_forged_owner_gets_neither_the_token_nor_a_request(cluster: Cluster) -> None:
    relay = cluster.relay(DEBUGRELAY_TOKEN="relay-token-2")
    listener = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Listener)
    thread = threading.Thread(target=listener.serve_forever)
    thread.start()
    store = cluster.redis()
    sid, ns = "sess_0123456789cd", cluster.namespace
    try:
        url = f"http://127.0.0.1:{listener.server_address[1]}"
        record = {"id": sid, "status": "paused", "owner": "intruder", "created_at": 1.0, "last_activity": 1.0}
        store.hset(f"{ns}:sessions", sid, json.dumps(record))
        store.set(f"{ns}:lease:{sid}", json.dumps({"owner": "intruder", "url": url}), px=60_000)
        # the replica registration too: whoever writes the lease writes this as well
        store.set(f"{ns}:instance:intruder", json.dumps({"url": url, "pid": 1, "sessions": 1}), px=60_000)
        for response in (
            relay.http.get(f"/sessions/{sid}"),
            relay.http.post(f"/sessions/{sid}/evaluate", json={"expression": "1"}, headers={"Cookie": "a=b"}),
        ):
            error = error_of(response, 502, "forward_failed")
            assert "did not prove" in error["message"], error
        assert Listener.seen, "the listener was not even challenged"
        for method, path, headers in Listener.seen:  # the challenge alone, and nothing it could use
            assert (method, path.partition("?")[0]) == ("GET", "/cluster/proof"), path
            assert "authorization" not in headers and "cookie" not in headers
            assert "x-debugrelay-signature" not in headers
            assert "relay-token-2" not in json.dumps(headers)
    finally:
        store.delete(f"{ns}:lease:{sid}", f"{ns}:instance:intruder")
        store.close()
        listener.shutdown()
        listener.server_close()
        thread.join()


def test_replicas_sharing_a_token_forward_signed_requests_each_good_once(cluster: Cluster) -> None:
    token = "shared-token-3"
    owner, other = cluster.relay(DEBUGRELAY_TOKEN=token), cluster.relay(DEBUGRELAY_TOKEN=token)
    sid = ok(owner.http.post("/sessions", json={}), 201)["session_id"]
    bp = {"source": {"path": BASIC}, "line": line_of(BASIC, "add-body")}
    ok(owner.http.post(f"/sessions/{sid}/breakpoints", json=bp))
    ok(owner.http.post(f"/sessions/{sid}/launch", json={"script": BASIC}))
    waited = other.http.post(f"/sessions/{sid}/wait", json={"timeout": 30})
    assert ok(waited)["status"] == "paused" and waited.headers["x-debugrelay-served-by"]
    answer = other.http.post(f"/sessions/{sid}/evaluate", json={"expression": "a + b"})
    assert ok(answer)["result"] == "3" and answer.headers["x-debugrelay-served-by"]

    # what the owner takes in place of the token: a signature of the very request, once, in its window
    keys = RelayKeys(token.encode(), "test")
    stranger = httpx.Client(timeout=30)
    try:
        path, body = f"/sessions/{sid}/evaluate", b'{"expression": "b"}'

        def signed(content: bytes, *, sign: bytes = body) -> httpx.Request:
            request = httpx.Request("POST", owner.url + path, content=content, headers={"x-debugrelay-hops": "1"})
            request.headers["content-type"] = "application/json"
            request.headers["x-debugrelay-signature"] = PeerProofs.sign(keys, request, owner.url, sign, hops="1")
            return request

        first = signed(body)
        assert ok(stranger.send(first))["result"] == "3"
        error_of(stranger.send(first), 401, "unauthorized")  # the same request again
        error_of(stranger.send(signed(b'{"expression": "__import__(\'os\').getpid()"}')), 401, "unauthorized")
        error_of(stranger.post(owner.url + path, content=body, headers={"content-type": "application/json"}), 401)
        proof = ok(stranger.get(f"{owner.url}/cluster/proof", params={"nonce": "ab" * 16}))
        assert proof["url"] == owner.url  # a relay answers for its own address only
        assert proof["proof"] == keys.peer_proof("ab" * 16, owner.url) != keys.peer_proof("ab" * 16, "http://x")
    finally:
        stranger.close()


def test_a_tampered_launch_is_not_started_again(cluster: Cluster, tmp_path: Path) -> None:
    first = cluster.relay()
    sid, real = paused_session(first)
    first.proc.kill()
    first.proc.wait(10)
    marker = tmp_path / "ran"
    planted = tmp_path / "planted.py"
    planted.write_text(f"open({str(marker)!r}, 'w').close()\n")
    try:
        tamper(cluster, sid, lambda record: record["launch"].update(script=str(planted)))
        second = cluster.relay()
        poll(lambda: ok(second.http.get(f"/sessions/{sid}/status")).get("recovered"), what="recovery")
        assert ok(second.http.get(f"/sessions/{sid}/status"))["status"] == "paused"  # its target was sealed
        restarted = second.http.post(f"/sessions/{sid}/restart")
        if restarted.status_code == 200:  # then it runs the planted script: see it end before looking
            poll(lambda: ok(second.http.get(f"/sessions/{sid}/status"))["status"] == "terminated", what="the end")
        error_of(restarted, 409, "invalid_state")
        assert not marker.exists()
        assert "launch" not in ok(second.http.get(f"/sessions/{sid}"))
    finally:
        end_target(real)
