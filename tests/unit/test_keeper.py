"""The keeper's core in process: its select loop stepped by the test, debugpy played by one end of a
socket pair, relays by real TCP clients. Queueing, seq mapping, proof and replacement."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from debugrelay.dap import _keeper as relay_side

SECRET = "a-secret-for-tests"
_PATH = Path(__file__).resolve().parents[2] / "src" / "debugrelay" / "_boot" / "_debugrelay_keeper.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_debugrelay_keeper", _PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


keeper_module = _load()


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


class Peer:
    """A blocking socket speaking framed DAP, read while the keeper is stepped."""

    def __init__(self, sock: socket.socket, keeper: Any) -> None:
        self.sock, self.keeper = sock, keeper
        self.sock.setblocking(False)
        self.framer = keeper_module.Framer()
        self.got: list[dict[str, Any]] = []
        self.closed = False

    def send(self, message: dict[str, Any]) -> None:
        self.sock.sendall(frame(message))

    def pump(self) -> None:
        self.keeper.step(0.01)
        self.read()

    def read(self) -> None:
        try:
            data = self.sock.recv(65536)
        except BlockingIOError:
            return
        if not data:
            self.closed = True
            return
        self.got += [json.loads(b) for b in self.framer.feed(data)]

    def until(self, check: Callable[[], Any], what: str) -> Any:
        for _ in range(500):  # bounded: each round is one keeper step
            self.pump()
            result = check()
            if result:
                return result
        raise AssertionError(f"{what} not reached")


@pytest.fixture
def keeper() -> Iterator[Any]:
    listener = socket.create_server(("127.0.0.1", 0))
    k = keeper_module.Keeper(listener, ("127.0.0.1", 1), SECRET.encode())
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    k.up = keeper_module.Conn(ours, "upstream")
    k.watch(k.up)
    k.debugpy = Peer(theirs, k)
    yield k
    listener.close()
    theirs.close()


def relay(keeper: Any, secret: str = SECRET) -> Peer:
    sock = socket.create_connection(keeper.listener.getsockname(), timeout=5)
    keeper.step(0.01)  # accept and greet
    greeting = sock.recv(200)
    assert greeting.startswith(relay_side.GREETING)
    sock.sendall(relay_side.prove(secret, greeting[len(relay_side.GREETING) :].strip()) + b"\n")
    return Peer(sock, keeper)


def hello_of(peer: Peer) -> dict[str, Any]:
    message = peer.until(lambda: peer.got and peer.got[0], "the keeper's state")
    assert message["event"] == "debugrelay.keeper"
    state: dict[str, Any] = message["body"]
    return state


def event(name: str, seq: int, **body: Any) -> dict[str, Any]:
    return {"seq": seq, "type": "event", "event": name, "body": body}


def test_both_halves_of_the_proof_agree() -> None:
    nonce = b"00ff"
    assert keeper_module.prove(SECRET.encode(), nonce) == relay_side.prove(SECRET, nonce)
    assert keeper_module.GREETING == relay_side.GREETING
    assert keeper_module.SECRET_ENV == relay_side.SECRET_ENV


def test_events_while_detached_are_queued_in_order_and_replayed_once(keeper: Any) -> None:
    debugpy = keeper.debugpy
    debugpy.send(event("output", 1, category="stdout", output="one\n"))
    debugpy.send(event("output", 2, category="stdout", output="two\n"))
    debugpy.send(event("stopped", 3, reason="breakpoint", threadId=1))
    debugpy.until(lambda: len(keeper.queue) == 3, "three events queued")

    first = relay(keeper)
    state = hello_of(first)
    assert state["paused"] == {"reason": "breakpoint", "threadId": 1}
    assert state["paused_while_detached"] is True and state["queued"] == 3
    first.until(lambda: len(first.got) == 4, "the queue replayed")
    assert [m["event"] for m in first.got[1:]] == ["output", "output", "stopped"]
    assert [m["body"].get("output") for m in first.got[1:3]] == ["one\n", "two\n"]

    second = relay(keeper)  # replaces the first; the queue was delivered already
    state = hello_of(second)
    assert state["queued"] == 0 and state["paused_while_detached"] is False
    assert state["paused"] is not None  # still paused
    first.until(lambda: first.closed, "the replaced relay closed")


def test_output_is_dropped_oldest_first_and_counted(keeper: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keeper_module, "MAX_QUEUED", 3)
    debugpy = keeper.debugpy
    debugpy.send(event("stopped", 1, reason="pause", threadId=1))
    for n in range(5):
        debugpy.send(event("output", 2 + n, category="stdout", output=f"{n}\n"))
    debugpy.until(lambda: keeper.dropped_output == 3, "output dropped")
    peer = relay(keeper)
    state = hello_of(peer)
    assert state["dropped_output"] == 3
    peer.until(lambda: len(peer.got) == 4, "the queue replayed")
    assert [m["event"] for m in peer.got[1:]] == ["stopped", "output", "output"]
    assert [m["body"].get("output") for m in peer.got[2:]] == ["3\n", "4\n"]


def test_seqs_are_mapped_and_answers_to_a_gone_relay_dropped(keeper: Any) -> None:
    debugpy = keeper.debugpy
    first = relay(keeper)
    hello_of(first)
    first.send({"seq": 7, "type": "request", "command": "threads"})
    asked = debugpy.until(lambda: debugpy.got and debugpy.got[-1], "the request upstream")
    assert asked["command"] == "threads"

    second = relay(keeper)
    hello_of(second)
    second.send({"seq": 7, "type": "request", "command": "threads"})  # the same seq, a new relay
    debugpy.until(lambda: len(debugpy.got) == 2, "the second request upstream")
    mine = debugpy.got[1]
    assert mine["seq"] != asked["seq"]

    for request in (asked, mine):  # debugpy answers both
        debugpy.send(
            {
                "seq": 100,
                "type": "response",
                "request_seq": request["seq"],
                "command": "threads",
                "success": True,
                "body": {"threads": [{"id": request["seq"], "name": "t"}]},
            }
        )
    answer = second.until(lambda: [m for m in second.got if m["type"] == "response"], "the answer")
    assert len(answer) == 1
    assert answer[0]["request_seq"] == 7
    assert answer[0]["body"]["threads"][0]["id"] == mine["seq"]  # its own answer, not the gone relay's


def test_a_wrong_proof_is_refused_and_changes_nothing(keeper: Any) -> None:
    debugpy = keeper.debugpy
    good = relay(keeper)
    hello_of(good)
    stranger = relay(keeper, secret="guess")
    stranger.until(lambda: stranger.closed, "the stranger refused")
    assert keeper.relay is not None and keeper.relay.sock is not None
    good.send({"seq": 1, "type": "request", "command": "threads"})
    asked = debugpy.until(lambda: debugpy.got and debugpy.got[-1], "the request upstream")
    debugpy.send({"seq": 5, "type": "response", "request_seq": asked["seq"], "command": "threads", "success": True})
    good.until(lambda: any(m["type"] == "response" for m in good.got), "the answer to the relay")


def test_pause_state_follows_stops_and_resumes(keeper: Any) -> None:
    debugpy = keeper.debugpy
    peer = relay(keeper)
    hello_of(peer)
    debugpy.send(event("stopped", 1, reason="step", threadId=1))
    debugpy.until(lambda: keeper.paused, "paused")
    assert keeper.paused_while_detached is False  # a relay saw it
    peer.send({"seq": 2, "type": "request", "command": "continue", "arguments": {"threadId": 1}})
    asked = debugpy.until(lambda: debugpy.got and debugpy.got[-1], "continue upstream")
    debugpy.send({"seq": 6, "type": "response", "request_seq": asked["seq"], "command": "continue", "success": True})
    debugpy.until(lambda: keeper.paused is None, "running again")
    debugpy.send({"seq": 7, "type": "request", "command": "runInTerminal", "arguments": {}})
    refused = debugpy.until(lambda: [m for m in debugpy.got if m["type"] == "response"], "a reverse request refused")
    assert refused[0]["success"] is False and refused[0]["request_seq"] == 7


@pytest.mark.parametrize(
    "message",
    [
        {"seq": 3, "type": "response", "request_seq": 12, "success": True, "command": "evaluate", "body": {"x": 1}},
        {"body": {"request_seq": 99}, "type": "response", "request_seq": 12, "seq": 3, "command": "evaluate"},
        {"seq": 3, "message": 'a "request_seq": 5 {', "type": "response", "request_seq": 12, "command": "x"},
    ],
)
def test_seqs_are_rewritten_at_the_top_level_only(message: dict[str, Any]) -> None:
    peek = keeper_module.Peek(json.dumps(message).encode())
    assert peek.get("request_seq") == 12 and peek.get("type") == "response"
    framed = peek.replaced("request_seq", 7)
    body = json.loads(framed.split(b"\r\n\r\n", 1)[1])
    assert body == {**message, "request_seq": 7}


class AdapterStandIn:
    """Stands in for debugpy's adapter on a TCP port (the real one drops a client that attaches in its
    first milliseconds only under load, not on demand): it answers the keeper's handshake and can drop
    the connection after the ``attach`` request, as debugpy's adapter does when its set-up is unfinished."""

    def __init__(self, keeper_of: Callable[[], Any]) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.setblocking(False)
        self.keeper_of = keeper_of
        self.conns: list[Peer] = []

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.listener.getsockname()[:2]
        return host, port

    def step(self) -> None:
        keeper = self.keeper_of()
        if keeper.up is None and keeper.up_retry_at <= keeper_module.time.monotonic():
            keeper.connect_upstream()
        try:
            sock, _ = self.listener.accept()
        except BlockingIOError:
            pass
        else:
            self.conns.append(Peer(sock, keeper))
        keeper.step(0.01)
        for conn in self.conns:
            if not conn.closed:
                conn.read()

    def request(self, conn: int, command: str) -> dict[str, Any]:
        """The keeper's ``command`` request on connection ``conn`` (0 = the first one)."""

        def asked() -> dict[str, Any] | None:
            self.step()
            if len(self.conns) <= conn:
                return None
            return next((m for m in self.conns[conn].got if m.get("command") == command), None)

        for _ in range(500):  # bounded: each round is one keeper step
            found = asked()
            if found:
                return found
        raise AssertionError(f"no {command} on connection {conn}")

    def answer(self, conn: int, request: dict[str, Any], body: dict[str, Any] | None = None) -> None:
        self.conns[conn].send(
            {
                "seq": 1,
                "type": "response",
                "request_seq": request["seq"],
                "command": request["command"],
                "success": True,
                "body": body or {},
            }
        )

    def close(self) -> None:
        for conn in self.conns:
            conn.sock.close()
        self.listener.close()


def test_an_attach_debugpy_drops_early_is_made_again_and_the_relay_never_knows(tmp_path: Path) -> None:
    import subprocess
    import sys

    debuggee = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])  # alive throughout
    listener = socket.create_server(("127.0.0.1", 0))
    holder: list[Any] = []
    adapter = AdapterStandIn(lambda: holder[0])
    client = {"initialize": {"adapterID": "debugpy"}, "attach": {"justMyCode": True}}
    keeper = keeper_module.Keeper(listener, adapter.address, SECRET.encode(), child=debuggee, client=client)
    holder.append(keeper)
    try:
        peer = relay(keeper)
        hello_of(peer)
        peer.send({"seq": 1, "type": "request", "command": "initialize", "arguments": {}})
        peer.send({"seq": 2, "type": "request", "command": "attach", "arguments": {}})

        # the first connection: initialize answered, then dropped at the attach
        adapter.answer(0, adapter.request(0, "initialize"), {"supportsConfigurationDoneRequest": True})
        adapter.request(0, "attach")
        adapter.conns[0].sock.close()
        adapter.conns[0].closed = True

        # the keeper comes back on its own and attaches again; the relay's connection stays
        adapter.answer(1, adapter.request(1, "initialize"), {"supportsConfigurationDoneRequest": True})
        attach = adapter.request(1, "attach")
        assert attach["arguments"] == {"justMyCode": True}
        adapter.conns[1].send(event("initialized", 2))
        assert not peer.closed
        peer.until(lambda: any(m.get("event") == "initialized" for m in peer.got), "the initialized event")
        peer.send({"seq": 3, "type": "request", "command": "configurationDone"})
        done = adapter.request(1, "configurationDone")
        adapter.answer(1, done)
        adapter.answer(1, attach)  # debugpy answers attach once configured

        answers = peer.until(
            lambda: (
                {m["command"]: m for m in peer.got if m["type"] == "response"}.keys()
                >= {"initialize", "attach", "configurationDone"}
                and {m["command"]: m for m in peer.got if m["type"] == "response"}
            ),
            "the relay's answers",
        )
        assert answers["initialize"]["success"] and answers["initialize"]["body"]["supportsConfigurationDoneRequest"]
        assert answers["attach"]["success"] and answers["configurationDone"]["success"]
        assert not peer.closed
        assert debuggee.poll() is None  # nothing was refused: the debuggee runs on
    finally:
        debuggee.kill()
        debuggee.wait()
        adapter.close()
        listener.close()


def test_a_keeper_waiting_for_a_relay_after_its_program_ended_sleeps_until_its_linger_ends(keeper: Any) -> None:
    """Ended with events no relay took, the keeper lingers for one: its loop waits on its sockets, never spins
    (it woke at once, every round, for a debugpy it no longer tries to reach, and once its drain was over)."""
    now = 1000.0
    keeper.close(keeper.up)  # the run is over: debugpy's connection is gone
    keeper.up_retry_at = now - 5  # a reconnect that was due when the run ended
    keeper.exit_code = 0
    keeper.ending_at = now + 2.0
    keeper.linger_until = now + 30.0
    keeper.enqueue("output", b"{}", 2, 1)
    assert keeper.timeout(now) == 1.0  # the loop's longest sleep: nothing to do before then
    assert keeper.timeout(now + 2.5) == 1.0  # past the drain, lingering
    assert keeper.timeout(now + 29.5) == 0.5  # wakes when the linger ends
    assert not keeper.finished(now + 29.5) and keeper.finished(now + 30.0)


# -- who may join as a child process: real processes, this test standing for the keeper -------------------

FAKE_ADAPTER = """
import socket
client, server = socket.create_server(("127.0.0.1", 0)), socket.create_server(("127.0.0.1", 0))
print(client.getsockname()[1], server.getsockname()[1], flush=True)
held = []
while True:
    conn, peer = server.accept()
    held.append(conn)
    print(peer[1], flush=True)
"""
CONNECTS = """
import os, socket, sys
if len(sys.argv) > 2 and os.fork():
    os._exit(0)  # leaves its child to another parent: a process outside whoever started it
held = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
print(os.getpid(), flush=True)
sys.stdin.read()
"""


def test_a_child_joins_only_from_the_program_with_its_own_connection_and_no_outsider_beside_it() -> None:
    """The adapter takes any connection to its server port as a child, on the pid it claims: the keeper asks
    Linux who holds each connection there."""
    started: list[subprocess.Popen[str]] = []

    def run(source: str, *args: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-c", source, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        started.append(proc)
        return proc

    try:
        adapter = run(FAKE_ADAPTER)
        assert adapter.stdout is not None
        client_port, server_port = map(int, adapter.stdout.readline().split())
        child = run(CONNECTS, str(server_port))
        assert child.stdout is not None and int(child.stdout.readline()) == child.pid
        adapter.stdout.readline()  # accepted
        me = os.getpid()
        assert keeper_module.not_a_child(child.pid, me, client_port) is None
        assert keeper_module.not_a_child(adapter.pid, me, client_port) == "it has no connection to debugpy"
        assert keeper_module.not_a_child(1, me, client_port) == "not a process of the program"

        outsider = run(CONNECTS, str(server_port), "orphaned")
        assert outsider.stdout is not None
        orphan = int(outsider.stdout.readline())
        outsider.wait()
        adapter.stdout.readline()  # accepted
        why = keeper_module.not_a_child(child.pid, me, client_port)
        assert why == f"{keeper_module.OUTSIDER} (pid {orphan}) is connected to debugpy"
    finally:
        for proc in started:
            if proc.stdin is not None:
                proc.stdin.close()  # each (the orphan too: it shares its parent's) reads its end and goes
            if proc.poll() is None:
                proc.kill()
            proc.wait()


@pytest.fixture
def piped(keeper: Any) -> Iterator[tuple[Any, int, int]]:
    """A keeper holding a program's stdout and stderr pipes, as it does the program it starts: (keeper, the
    stdout's write end, the stderr's write end). The pipes are not watched: only a stop reads them."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    sink = os.open(os.devnull, os.O_WRONLY)
    keeper.streams = [keeper_module.Stream(out_r, "stdout", sink), keeper_module.Stream(err_r, "stderr", sink)]
    keeper.order = keeper_module.WriteOrder.start(keeper.streams)
    if keeper.order is not None:
        keeper.sel.register(keeper.order.fd, keeper_module.selectors.EVENT_READ, "order")
    yield keeper, out_w, err_w
    for fd in (out_w, err_w, sink, out_r, err_r):
        with contextlib.suppress(OSError):
            os.close(fd)


def queued_output(keeper: Any) -> list[tuple[str, str]]:
    framer = keeper_module.Framer()
    found = []
    for name, data, *_ in keeper.queue:
        if name == "output":
            body = json.loads(next(iter(framer.feed(data))))["body"]
            found.append((body["category"], body["output"]))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the order of writes is Linux's (inotify)")
def test_output_waiting_in_both_pipes_is_passed_on_in_the_order_it_was_written(piped: tuple[Any, int, int]) -> None:
    keeper, out_w, err_w = piped
    # a child process writes to the program's stderr, then the program 3,000 characters to stdout
    subprocess.run(["sh", "-c", "echo CHILD-ERR >&2"], stderr=err_w, check=True)
    for _ in range(3000):
        os.write(out_w, b"x")
    os.write(out_w, b"\nOUT-LAST\n")
    keeper.debugpy.send(event("stopped", 1, reason="pause", threadId=1))  # the stop drains both pipes first
    keeper.debugpy.until(lambda: any(name == "stopped" for name, *_ in keeper.queue), "the stop queued")
    assert queued_output(keeper) == [("stderr", "CHILD-ERR\n"), ("stdout", "x" * 3000 + "\nOUT-LAST\n")]
    assert [name for name, *_ in keeper.queue][-1] == "stopped"
