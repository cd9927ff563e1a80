"""Attach reaches only what the operator allows, and never echoes what a non-debugger peer sent."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import pytest

from tests.conftest import Relay, Sessions, error_of, free_port, line_of, ok, refused_port, target, until
from tests.redis_server import Cluster

pytestmark = pytest.mark.integration

BANNER = b"SSH-2.0-OpenSSH_9.9 secret-build-7\r\n"


@pytest.fixture
def ssh_like_port() -> Iterator[int]:
    """A loopback server that greets with a banner and hangs up: not a debugger."""
    server = socket.create_server(("127.0.0.1", 0))
    port: int = server.getsockname()[1]
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.sendall(BANNER)

    thread = threading.Thread(target=serve)
    thread.start()
    yield port
    stop.set()
    thread.join()
    server.close()


def session_ids(api: httpx.Client) -> set[str]:
    return {s["session_id"] for s in ok(api.get("/sessions"))["sessions"]}


def test_a_peer_that_is_not_a_debugger_is_named_so_without_its_bytes(api: httpx.Client, ssh_like_port: int) -> None:
    before = session_ids(api)
    answer = api.post("/sessions", json={"mode": "attach", "host": "127.0.0.1", "port": ssh_like_port})
    error = error_of(answer, 400, "launch_failed")
    assert "not a DAP server" in error["message"]
    assert "SSH" not in answer.text and "secret-build" not in answer.text
    assert session_ids(api) == before


LATE = target("late_listen.py")


def test_an_attach_waits_for_a_debugpy_that_starts_listening_a_few_seconds_later(
    api: httpx.Client, sessions: Sessions
) -> None:
    port = free_port()
    program = subprocess.Popen([sys.executable, LATE, str(port), "3.5"], stdout=subprocess.DEVNULL)
    try:
        # asked at once: debugpy listens 3.5 s later (the keeper gave up after 3 s, answering launch_failed)
        answer = api.post("/sessions", json={"mode": "attach", "host": "127.0.0.1", "port": port})
        sid = ok(answer, 201)["session_id"]
        sessions.created.append(sid)
        sessions.bp(sid, LATE, line_of(LATE, "late-loop"))
        status = sessions.wait(sid)
        assert status["status"] == "paused" and status["location"]["line"] == line_of(LATE, "late-loop"), status
        ok(api.post(f"/sessions/{sid}/detach"))
    finally:
        end_debugpy(program, port)


def test_an_attach_where_no_debugpy_ever_listens_says_so(api: httpx.Client) -> None:
    before = session_ids(api)
    with refused_port() as port:
        error = error_of(
            api.post("/sessions", json={"mode": "attach", "host": "127.0.0.1", "port": port}), 400, "launch_failed"
        )
    # the keeper's own words (not a timeout of the relay's, nor a closed connection)
    assert f"cannot reach debugpy at 127.0.0.1:{port}" in error["message"], error
    assert session_ids(api) == before


def test_an_attach_through_a_published_port_waits_for_the_debugpy_behind_it(
    api: httpx.Client, sessions: Sessions
) -> None:
    port = free_port()
    program = debugpy_listening("127.0.0.1", port)
    door = FrontDoor()
    answer: list[httpx.Response] = []
    asking = threading.Thread(
        target=lambda: answer.append(
            api.post("/sessions", json={"mode": "attach", "host": "127.0.0.1", "port": door.port})
        )
    )
    try:
        asking.start()
        until(lambda: door.count >= 2, "the relay's side to knock twice on the silent port")
        door.behind = port
        asking.join()
        sid = ok(answer[0], 201)["session_id"]
        sessions.created.append(sid)
        sessions.bp(sid, LOOP, line_of(LOOP, "forever"))
        status = sessions.wait(sid)
        assert status["status"] == "paused" and status["location"]["line"] == line_of(LOOP, "forever"), status
        ok(api.post(f"/sessions/{sid}/detach"))
    finally:
        asking.join()
        door.close()
        end_debugpy(program, port)


@pytest.mark.parametrize("host", ["169.254.169.254", "224.0.0.1", "0.0.0.0"])
def test_metadata_multicast_and_unspecified_addresses_are_never_attached_to(api: httpx.Client, host: str) -> None:
    before = session_ids(api)
    error = error_of(api.post("/sessions", json={"mode": "attach", "host": host, "port": 80}), 403, "refused")
    assert error["details"]["host"] == host
    assert session_ids(api) == before


def test_hosts_beyond_loopback_need_the_operator(api: httpx.Client) -> None:
    before = session_ids(api)
    error = error_of(api.post("/sessions", json={"mode": "attach", "host": "192.0.2.10", "port": 5678}), 403, "refused")
    assert error["details"]["setting"] == "DEBUGRELAY_ATTACH_HOSTS"
    assert session_ids(api) == before


# -- a name is resolved once: the address checked is the address reached ------------------------------

LOOP = target("loop.py")

# A mock of the system resolver, loaded into the relay process by Python's sitecustomize hook: the
# resolver is the one boundary this test cannot start (the relay has no DNS server setting, and the
# machine's resolver is not ours to change). REBIND_NAME answers 127.0.0.1 to its first lookup and
# REBIND_OTHER to every later one, as a rebinding DNS server does; every other name goes through.
RESOLVER_MOCK = """
import os, socket

_real = socket.getaddrinfo
_name, _other = os.environ["REBIND_NAME"], os.environ["REBIND_OTHER"]
_lookups = []


def _rebinding(host, port, *args, **kwargs):
    if host != _name:
        return _real(host, port, *args, **kwargs)
    _lookups.append(host)
    return _real("127.0.0.1" if len(_lookups) == 1 else _other, port, *args, **kwargs)


socket.getaddrinfo = _rebinding
"""


def debugpy_listening(host: str, port: int) -> subprocess.Popen[bytes]:
    """``python -m debugpy --listen HOST:PORT loop.py``, as someone starts a program to attach to."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "debugpy", "--listen", f"[{host}]:{port}", LOOP],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def listening() -> bool:
        assert proc.poll() is None, "debugpy exited"
        found = psutil.net_connections()
        # on its own address: another test socket may listen on the same port elsewhere (Knocks)
        return any(
            c.laddr and c.laddr.port == port and c.laddr.ip == host and c.status == psutil.CONN_LISTEN for c in found
        )

    until(listening, "debugpy to listen")
    return proc


def end_debugpy(proc: subprocess.Popen[bytes], port: int) -> None:
    """The program this test started and its debugpy adapter (which detaches from it)."""
    for other in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(other.info.get("cmdline") or [])
        if "debugpy" in cmdline and f"--port {port}" in cmdline:
            other.kill()
    proc.kill()
    proc.wait()


def own_address() -> str | None:
    """An IPv4 address of this machine that is not loopback (the relay's policy refuses it unlisted)."""
    for addresses in psutil.net_if_addrs().values():
        for entry in addresses:
            if entry.family == socket.AF_INET:
                address = ipaddress.ip_address(entry.address)
                if not (address.is_loopback or address.is_link_local):
                    return str(address)
    return None


def port_on_both(other: str) -> int:
    """A port free on loopback and on ``other``, below the kernel's range for the local ends of connections:
    no connection of a test running beside this one takes it on loopback before debugpy binds it there."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    for port in range(max(1025, low - 4000), low):
        with contextlib.ExitStack() as held:
            try:
                for address in ("127.0.0.1", other):
                    sock = held.enter_context(socket.socket())
                    sock.bind((address, port))
            except OSError:
                continue
            return port
    raise AssertionError("no port free on both addresses")


class Knocks:
    """A listener on ``address:port`` that counts the connections it gets and hangs up on them."""

    def __init__(self, address: str, port: int) -> None:
        self.server = socket.create_server((address, port))
        self.server.settimeout(0.1)
        self.port: int = self.server.getsockname()[1]
        self.count = 0
        self.done = threading.Event()
        self.threads = [threading.Thread(target=self.serve)]
        self.threads[0].start()

    def serve(self) -> None:
        while not self.done.is_set():
            try:
                conn, _ = self.server.accept()
            except TimeoutError:
                continue
            self.take(conn)

    def take(self, conn: socket.socket) -> None:
        self.count += 1
        conn.close()

    def close(self) -> None:
        self.done.set()
        for thread in self.threads:
            thread.join()
        self.server.close()


class FrontDoor(Knocks):
    """A published port as Docker's proxy keeps it: it accepts and hangs up without a byte while nothing
    listens behind it (``count``), then passes connections on to ``behind`` once that is set."""

    def __init__(self) -> None:
        self.behind: int | None = None
        super().__init__("127.0.0.1", 0)

    def take(self, conn: socket.socket) -> None:
        if self.behind is None:
            super().take(conn)
            return
        back = socket.create_connection(("127.0.0.1", self.behind))
        for a, b in ((conn, back), (back, conn)):
            self.threads.append(threading.Thread(target=self.pipe, args=(a, b)))
            self.threads[-1].start()

    def pipe(self, source: socket.socket, sink: socket.socket) -> None:
        source.settimeout(0.1)
        while not self.done.is_set():
            try:
                data = source.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                data = b""
            if not data:
                with contextlib.suppress(OSError):
                    sink.shutdown(socket.SHUT_WR)
                return
            with contextlib.suppress(OSError):
                sink.sendall(data)


def test_a_rebinding_name_reaches_only_the_address_that_was_checked(tmp_path: Path) -> None:
    other = own_address()
    if other is None:
        pytest.skip("this machine has no address beside loopback")
    port = port_on_both(other)  # the same port on both addresses
    knocks = Knocks(other, port)
    program = debugpy_listening("127.0.0.1", port)
    mock = tmp_path / "resolver"
    mock.mkdir()
    (mock / "sitecustomize.py").write_text(RESOLVER_MOCK)
    env = {
        "PYTHONPATH": os.pathsep.join([str(mock), os.environ.get("PYTHONPATH", "")]),
        "REBIND_NAME": "rebind.example",
        "REBIND_OTHER": other,
    }
    relay = Relay(tmp_path, env=env)
    try:
        api, sessions = relay.http, Sessions(relay.http)
        answer = api.post("/sessions", json={"mode": "attach", "host": "rebind.example", "port": port})
        assert knocks.count == 0  # the address the name answered after the check is never connected to
        sid = ok(answer, 201)["session_id"]
        sessions.created.append(sid)
        until(lambda: ok(api.get(f"/sessions/{sid}"))["status"] in ("running", "paused"), "the attach")
        detail = ok(api.get(f"/sessions/{sid}"))
        assert detail["target"]["host"] == "127.0.0.1"  # the address checked, kept for reconnections
        sessions.bp(sid, LOOP, line_of(LOOP, "forever"))
        assert sessions.wait(sid)["status"] == "paused"
        assert knocks.count == 0
        ok(api.post(f"/sessions/{sid}/detach"))
    finally:
        relay.stop()
        knocks.close()
        end_debugpy(program, port)


def test_a_listed_name_is_reached_at_the_address_it_was_checked_at(tmp_path: Path) -> None:
    name = socket.gethostname()  # resolved by the machine's own resolver, as the relay resolves it
    checked = socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)[0][4][0]
    port = free_port()
    program = debugpy_listening(checked, port)
    relay = Relay(tmp_path, env={"DEBUGRELAY_ATTACH_HOSTS": name})
    try:
        api, sessions = relay.http, Sessions(relay.http)
        sid = ok(api.post("/sessions", json={"mode": "attach", "host": name, "port": port}), 201)["session_id"]
        sessions.created.append(sid)
        until(lambda: ok(api.get(f"/sessions/{sid}"))["status"] in ("running", "paused"), "the attach")
        detail = ok(api.get(f"/sessions/{sid}"))
        assert detail["attach"]["host"] == name  # what the agent asked for
        assert detail["target"]["host"] == checked  # what the relay checked and connects to, also later
        ok(api.post(f"/sessions/{sid}/detach"))
    finally:
        relay.stop()
        end_debugpy(program, port)


def test_ipv6_loopback_is_loopback(api: httpx.Client, sessions: Sessions) -> None:
    port = free_port()
    program = debugpy_listening("::1", port)
    try:
        created = ok(api.post("/sessions", json={"mode": "attach", "host": "::1", "port": port}), 201)
        sid = created["session_id"]
        sessions.created.append(sid)
        until(lambda: ok(api.get(f"/sessions/{sid}"))["status"] in ("running", "paused"), "the attach")
        assert ok(api.get(f"/sessions/{sid}"))["target"]["host"] == "::1"
        ok(api.post(f"/sessions/{sid}/detach"))
    finally:
        end_debugpy(program, port)


def test_a_recovered_attach_reaches_only_the_address_checked_again(cluster: Cluster) -> None:
    other = own_address()
    if other is None:
        pytest.skip("this machine has no address beside loopback")
    port = port_on_both(other)  # the same port on both addresses
    knocks = Knocks(other, port)
    program = debugpy_listening("127.0.0.1", port)
    try:
        first = cluster.relay()
        sid = ok(first.http.post("/sessions", json={"mode": "attach", "host": "localhost", "port": port}), 201)[
            "session_id"
        ]
        until(lambda: ok(first.http.get(f"/sessions/{sid}"))["status"] == "running", "the attach")
        first.proc.kill()  # the owner dies; the next relay recovers the session from the store
        first.proc.wait(10)
        store = cluster.redis()
        try:
            record = json.loads(store.hget(f"{cluster.namespace}:sessions", sid))  # type: ignore[arg-type]
            stored = record["target"]["host"]
            record["target"].update(host=other)  # a stored record names an address the name never gave
            store.hset(f"{cluster.namespace}:sessions", sid, json.dumps(record))
        finally:
            store.close()
        second = cluster.relay()
        until(lambda: ok(second.http.get(f"/sessions/{sid}/status")).get("recovered"), "the recovery")
        assert knocks.count == 0  # the address in the record was checked again, and refused
        assert ok(second.http.get(f"/sessions/{sid}/status"))["status"] == "terminated"
        assert stored in ("127.0.0.1", "::1")  # what the first relay kept: the address it checked, not the name
        ok(second.http.delete(f"/sessions/{sid}"))
    finally:
        knocks.close()
        end_debugpy(program, port)
