"""debugrelay's keeper: the debuggee's parent, holding its one DAP connection so a relay may come and go.

    DEBUGRELAY_KEEPER_SECRET=... python _debugrelay_keeper.py --listen HOST:PORT --connect 127.0.0.1:INNER \
        [--status-file PATH] [--client JSON] -- python -m debugpy --listen 127.0.0.1:INNER --wait-for-client ...

debugpy resumes the debuggee and clears its breakpoints as soon as its client goes away. The keeper
is that client for the whole run: it starts the debuggee (stdin, stdout and stderr inherited; the
secret removed from its environment), connects to debugpy on the loopback, and serves the relay on
``--listen``. While no relay is connected nothing changes for debugpy: a paused program stays
paused, breakpoints stay set, and events are queued (bounded: output is dropped first, oldest
first, and counted). The keeper never sends ``disconnect`` on its own.

Protocol (one relay at a time; a new one replaces the old one):
1. the keeper sends ``DEBUGRELAY-KEEPER/1 <nonce>\\n``; the relay answers one line, the hex
   HMAC-SHA256 of ``debugrelay-keeper:<nonce>`` under the secret. Anything else: closed at once.
2. the keeper sends a DAP event ``debugrelay.keeper`` with its state (initialized, attached,
   configured, paused: the last ``stopped`` body or null, paused_while_detached, queued,
   dropped_output, exit_code), then the queued events in order, then relays DAP both ways.
   Request seqs are rewritten (the keeper's own counter towards debugpy), so a response to a
   request of a relay that went away is dropped, never delivered to the next one. Reverse requests
   (``runInTerminal``, ...) are refused here, as the relay would.
With ``--client '{"initialize": {...}, "attach": {...}}'`` the keeper is debugpy's client from the
first moment: it sends ``initialize`` and ``attach`` itself as soon as debugpy's adapter is set up (it
writes ``DEBUGPY_ADAPTER_ENDPOINTS``, a file beside the status file or in a temporary folder of the
keeper's own; a client that attaches earlier is dropped or left waiting), so no other local process
can take the target while it waits for a relay (debugpy serves one client per debuggee and refuses
the next one: "already being debugged"). Should debugpy still drop the keeper before anything was
configured, it attaches again. A relay's own ``initialize`` and ``attach`` are then answered by the
keeper (the capabilities debugpy gave, the ``initialized`` event once debugpy sent it), and
everything after them goes through as usual. If
the keeper's own attach is refused, someone else got there first: the debuggee is ended at once,
before it is given anything to run.
The status file (local targets) tells whoever looks without connecting: a stop while no relay was
connected, and the exit code. When the debuggee exits the keeper writes its exit code there, passes on what it
can within a short drain, and exits with the debuggee's exit code (in a container it is the main
process: the container's exit code is the program's).

Standard library only, Python 3.8+: it runs on the target's own interpreter.
"""

import collections
import hashlib
import hmac
import itertools
import json
import os
import re
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

SECRET_ENV = "DEBUGRELAY_KEEPER_SECRET"
GREETING = b"DEBUGRELAY-KEEPER/1 "
MAX_BODY = 64 * 1024 * 1024
MAX_HEADER = 8 * 1024
MAX_QUEUED = 10000  # events kept while no relay is connected
MAX_QUEUED_BYTES = 8 * 1024 * 1024
AUTH_SECONDS = 5.0
DRAIN_SECONDS = 1.5  # after the debuggee exits: pass on its last events, then go
UPSTREAM_RETRY = 0.005  # short: with --client, the time another process could take debugpy first
RECONNECT_DELAY = 0.5  # debugpy takes a new client ~250 ms after the old one left
EARLY_RETRIES = 5  # attaches again after debugpy dropped the keeper before anything was configured
ENDPOINTS_ENV = "DEBUGPY_ADAPTER_ENDPOINTS"  # debugpy's adapter writes this file once it is fully set up
ENDPOINTS_FILE = "debugpy-endpoints.json"
ENDPOINTS_WAIT = 30.0  # without that file by then (a debugpy that does not write it), connect anyway
RESUMING = frozenset(("continue", "next", "stepIn", "stepOut", "stepBack", "reverseContinue", "goto"))


USAGE = (
    "usage: _debugrelay_keeper.py --listen HOST:PORT --connect HOST:PORT [--status-file PATH] [--client JSON]"
    " -- COMMAND"
)


def log(text):
    try:
        sys.stderr.write("[debugrelay-keeper] %s\n" % text)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def prove(secret, nonce):
    """The proof a relay sends for ``nonce``: hex HMAC-SHA256 under the secret."""
    return hmac.new(secret, b"debugrelay-keeper:" + nonce, hashlib.sha256).hexdigest().encode()


def frame(body):
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def encode(message):
    return frame(json.dumps(message, separators=(",", ":")).encode())


class Framer(object):
    """Content-Length framing, fed bytes as they come; yields message bodies."""

    def __init__(self):
        self.buf = bytearray()

    def feed(self, data):
        self.buf += data
        bodies = []
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buf) > MAX_HEADER:
                    raise ValueError("DAP header too long")
                return bodies
            length = None
            for line in bytes(self.buf[:end]).split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            if length is None or length < 0 or length > MAX_BODY:
                raise ValueError("bad DAP header")
            start = end + 4
            if len(self.buf) < start + length:
                return bodies
            bodies.append(bytes(self.buf[start : start + length]))
            del self.buf[: start + length]


# the envelope's own keys, read where they come before any nested value (debugpy and the relay write
# them first): rewriting a seq in place is what keeps the keeper's cost per request small
KEYS = re.compile(rb'"(seq|type|request_seq|command|event|success)"\s*:\s*("(?:[^"\\]|\\.)*"|\d+|true|false)')


class Peek(object):
    """A DAP message read only as far as needed: envelope keys from the bytes, the rest on demand."""

    __slots__ = ("body", "fields", "message")

    def __init__(self, body):
        self.body = body
        self.message = None
        cut = len(body)
        for nested in (b"{", b"["):
            at = body.find(nested, 1)
            if 0 < at < cut:
                cut = at
        self.fields = {}
        for match in KEYS.finditer(body, 0, cut):
            self.fields.setdefault(match.group(1).decode(), match)

    def full(self):
        if self.message is None:
            self.message = json.loads(self.body)
        return self.message

    def get(self, key):
        match = self.fields.get(key)
        if match is None:
            return self.full().get(key)
        value = match.group(2)
        if value[:1] == b'"':
            return json.loads(value)
        if value in (b"true", b"false"):
            return value == b"true"
        return int(value)

    def replaced(self, key, value):
        """The message, framed, with its top-level ``key`` set to the integer ``value``."""
        match = self.fields.get(key)
        if match is not None:
            body = self.body
            return frame(b"%s%d%s" % (body[: match.start(2)], value, body[match.end(2) :]))
        message = dict(self.full())
        message[key] = value
        return encode(message)


class Conn(object):
    """One socket: what came in (framed), what waits to go out."""

    ids = itertools.count(1)

    def __init__(self, sock, kind):
        self.id = next(Conn.ids)
        self.sock = sock
        self.kind = kind  # "pending" (not authenticated yet), "relay", "upstream"
        self.framer = Framer()
        self.out = bytearray()
        self.line = bytearray()
        self.nonce = b""
        self.deadline = 0.0
        self.closed = False
        self.mask = 0
        try:
            self.peer = "%s:%s" % sock.getpeername()[:2]
        except (OSError, TypeError):
            self.peer = "?"


class Keeper(object):
    """The keeper's state and its one select loop (see the module docstring)."""

    def __init__(self, listener, upstream, secret, status_file=None, child=None, client=None, endpoints=None):  # noqa: PLR0917
        self.sel = selectors.DefaultSelector()
        self.listener = listener
        listener.setblocking(False)
        self.sel.register(listener, selectors.EVENT_READ, None)
        self.upstream_addr = upstream
        self.secret = secret
        self.status_file = status_file
        self.child = child
        self.up = None  # Conn to debugpy
        self.up_backlog = bytearray()  # relay requests written before debugpy was reachable
        self.up_retry_at = 0.0
        self.relay = None
        self.pending = {}
        self.seq = itertools.count(1)
        self.requests = {}  # our seq -> (relay conn id, relay seq)
        self.queue = collections.deque()  # (event name, framed bytes)
        self.queued_bytes = 0
        self.dropped_output = 0
        self.dropped = 0
        self.initialized = False
        self.attached = False
        self.configured = False
        self.paused = None
        self.paused_while_detached = False
        self.terminated = False
        self.exit_code = None
        self.ending_at = None
        self.client = client  # {"initialize": args, "attach": args}: the keeper attaches by itself
        self.own = {}  # our seq -> command, for the keeper's own requests
        self.caps = None  # debugpy's answer to the keeper's initialize
        self.refused = None  # debugpy refused the keeper's attach: why
        self.init_event = None  # debugpy's "initialized" event, framed, once it came
        self.init_due = False  # a relay asked to attach: it gets "initialized" when there is one
        self.held = []  # relay initialize requests waiting for debugpy's capabilities
        self.attach_waiting = None  # a relay's attach, answered when debugpy answers the keeper's
        self.attach_done = False
        self.early_retries = 0
        self.endpoints = endpoints  # the adapter's endpoints file: debugpy is reached once it exists
        self.endpoints_until = time.monotonic() + ENDPOINTS_WAIT
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        self.sel.register(self.wake_r, selectors.EVENT_READ, "wake")

    # -- the loop ------------------------------------------------------------------------------

    def wake(self):
        try:
            os.write(self.wake_w, b"x")
        except OSError:
            pass

    def run(self):
        """Serve until the debuggee has exited and what it said was passed on (or the drain ran out)."""
        while True:
            now = time.monotonic()
            if self.exit_code is not None and self.ending_at is None:
                self.ending_at = now + DRAIN_SECONDS
                self.write_status()
            if self.ending_at is not None and (self.drained() or now >= self.ending_at):
                return
            if self.up is None and self.ending_at is None and now >= self.up_retry_at:
                self.connect_upstream()
            self.step(self.timeout(now))

    def drained(self):
        up_done = self.up is None or self.terminated
        return up_done and (self.relay is None or not self.relay.out)

    def timeout(self, now):
        waits = [1.0]
        if self.up is None:
            waits.append(max(0.0, self.up_retry_at - now))
        if self.ending_at is not None:
            waits.append(max(0.0, self.ending_at - now))
        for conn in self.pending.values():
            waits.append(max(0.0, conn.deadline - now))
        return min(waits)

    def step(self, timeout):
        for key, mask in self.sel.select(timeout):
            if key.data == "wake":
                try:
                    os.read(self.wake_r, 512)
                except OSError:
                    pass
            elif key.data is None:
                self.accept()
            else:
                conn = key.data
                if mask & selectors.EVENT_READ and not conn.closed:
                    self.readable(conn)
                if mask & selectors.EVENT_WRITE and not conn.closed:
                    self.flush(conn)
        now = time.monotonic()
        for conn in [c for c in self.pending.values() if c.deadline <= now]:
            log("refused a connection from %s: no proof in time" % conn.peer)
            self.close(conn)

    def watch(self, conn):
        mask = selectors.EVENT_READ | (selectors.EVENT_WRITE if conn.out else 0)
        if mask == conn.mask:
            return  # one syscall saved per message: write interest only while output waits
        try:
            self.sel.modify(conn.sock, mask, conn)
        except KeyError:
            self.sel.register(conn.sock, mask, conn)
        conn.mask = mask

    def send(self, conn, data):
        if conn is None or conn.closed:
            return
        conn.out += data
        self.flush(conn)

    def flush(self, conn):
        try:
            while conn.out:
                sent = conn.sock.send(conn.out)
                del conn.out[:sent]
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            self.close(conn)
            return
        self.watch(conn)

    def close(self, conn):
        if conn.closed:
            return
        conn.closed = True
        try:
            self.sel.unregister(conn.sock)
        except (KeyError, ValueError):
            pass
        try:
            conn.sock.close()
        except OSError:
            pass
        self.pending.pop(conn.id, None)
        if conn is self.relay:
            self.relay = None
            self.held = []
            self.init_due = False
            self.attach_waiting = None
        elif conn is self.up:
            self.upstream_lost()

    def readable(self, conn):
        try:
            data = conn.sock.recv(262144)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self.close(conn)
            return
        if conn.kind == "pending":
            self.authenticate(conn, data)
            return
        try:
            bodies = conn.framer.feed(data)
        except ValueError as exc:
            log("dropping a connection from %s: %s" % (conn.peer, exc))
            self.close(conn)
            return
        for body in bodies:
            try:
                if conn.kind == "upstream":
                    self.from_debugpy(Peek(body))
                elif conn is self.relay:
                    self.from_relay(Peek(body))
            except (ValueError, TypeError):
                log("undecodable DAP message dropped: %r" % body[:200])

    # -- relays: proof, hello, replacement -------------------------------------------------------

    def accept(self):
        try:
            sock, _ = self.listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            log("accept failed: %s" % exc)
            return
        sock.setblocking(False)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        conn = Conn(sock, "pending")
        conn.nonce = os.urandom(16).hex().encode()
        conn.deadline = time.monotonic() + AUTH_SECONDS
        self.pending[conn.id] = conn
        self.send(conn, GREETING + conn.nonce + b"\n")

    def authenticate(self, conn, data):
        conn.line += data
        end = conn.line.find(b"\n")
        if end < 0:
            if len(conn.line) > 256:
                log("refused a connection from %s: no proof" % conn.peer)
                self.close(conn)
            return
        proof, rest = bytes(conn.line[:end]).strip(), bytes(conn.line[end + 1 :])
        if not hmac.compare_digest(proof, prove(self.secret, conn.nonce)):
            log("refused a connection from %s: wrong proof" % conn.peer)
            self.close(conn)
            return
        self.pending.pop(conn.id, None)
        conn.kind = "relay"
        conn.line = bytearray()
        old, self.relay = self.relay, conn
        if old is not None:
            log("a relay from %s replaces the one from %s" % (conn.peer, old.peer))
            self.close(old)
        hello = {
            "seq": 0,
            "type": "event",
            "event": "debugrelay.keeper",
            "body": {
                "initialized": self.initialized,
                "attached": self.attached,
                "configured": self.configured,
                "paused": self.paused,
                "paused_while_detached": self.paused_while_detached,
                "queued": len(self.queue),
                "dropped_output": self.dropped_output,
                "dropped": self.dropped,
                "exit_code": self.exit_code,
                "pid": self.child.pid if self.child is not None else None,
            },
        }
        out = bytearray(encode(hello))
        for _, data_ in self.queue:
            out += data_
        self.queue.clear()
        self.queued_bytes = 0
        self.dropped_output = self.dropped = 0
        self.paused_while_detached = False
        self.send(conn, bytes(out))
        if rest:
            self.readable_data(conn, rest)

    def readable_data(self, conn, data):
        try:
            bodies = conn.framer.feed(data)
        except ValueError:
            self.close(conn)
            return
        for body in bodies:
            try:
                self.from_relay(Peek(body))
            except (ValueError, TypeError):
                log("undecodable DAP message dropped: %r" % body[:200])

    # -- DAP both ways ---------------------------------------------------------------------------

    def from_relay(self, message):
        if message.get("type") != "request":
            return  # the keeper answers debugpy's reverse requests itself
        if self.client is not None and self.answer_handshake(message):
            return
        seq = next(self.seq)
        self.requests[seq] = (self.relay.id if self.relay else 0, message.get("seq"))
        if message.get("command") == "attach":
            self.attached = True
        data = message.replaced("seq", seq)
        if self.up is None:
            self.up_backlog += data
        else:
            self.send(self.up, data)

    def from_debugpy(self, message):
        kind = message.get("type")
        if kind == "response" and message.get("request_seq") in self.own:
            self.own_answered(self.own.pop(message.get("request_seq")), message.full())
            return
        if kind == "event" and self.client is not None and message.get("event") == "initialized":
            self.init_event = frame(message.body)
            if self.init_due and self.relay is not None:
                self.init_due = False
                self.send(self.relay, self.init_event)
            return
        if kind == "response":
            entry = self.requests.pop(message.get("request_seq"), None)
            if message.get("success"):
                command = message.get("command")
                if command == "initialize":
                    self.initialized = True
                elif command == "configurationDone":
                    self.configured = True
                elif command in RESUMING:
                    self.paused = None
            if entry is None or self.relay is None or entry[0] != self.relay.id:
                return  # asked by a relay that went away
            self.send(self.relay, message.replaced("request_seq", entry[1]))
        elif kind == "event":
            event = message.get("event")
            if event == "stopped":
                self.paused = message.full().get("body") or {}
                if self.relay is None:
                    self.paused_while_detached = True
                    self.write_status()
            elif event == "continued":
                self.paused = None
            elif event == "terminated":
                self.terminated = True
            if self.relay is not None:
                self.send(self.relay, frame(message.body))
            else:
                self.enqueue(event, frame(message.body))
        elif kind == "request":
            refusal = {
                "seq": next(self.seq),
                "type": "response",
                "request_seq": message.get("seq"),
                "command": message.get("command"),
                "success": False,
                "message": "'%s' is not supported by debugrelay" % message.get("command"),
            }
            self.send(self.up, encode(refusal))

    # -- the keeper as debugpy's client (--client) -------------------------------------------------

    def request_own(self, command, arguments):
        seq = next(self.seq)
        self.own[seq] = command
        self.send(self.up, encode({"seq": seq, "type": "request", "command": command, "arguments": arguments}))

    def own_answered(self, command, response):
        if command == "initialize":
            if not response.get("success"):
                self.taken("initialize refused: %s" % response.get("message"))
                return
            self.caps = response.get("body") or {}
            self.request_own("attach", self.client.get("attach") or {})
            held, self.held = self.held, []
            for request in held:
                self.answer_handshake(request)
        elif command == "attach":
            # debugpy answers attach once configured; a relay's attach waiting for it gets the same answer
            if response.get("success"):
                self.attach_done = True
            else:
                self.taken("attach refused: %s" % response.get("message"))
            waiting, self.attach_waiting = self.attach_waiting, None
            if waiting is not None:
                self.answer_handshake(waiting)

    def taken(self, why):
        """debugpy would not take the keeper as its client: another one got there first. The debuggee
        is ended before it runs anything; a relay that asks is told why."""
        self.refused = why
        log("%s; ending the debuggee" % why)
        if self.child is not None:
            try:
                os.kill(self.child.pid, signal.SIGKILL)
            except OSError:
                pass

    def reply(self, request, success, body=None, message=None):
        response = {
            "seq": 0,
            "type": "response",
            "request_seq": request.get("seq"),
            "command": request.get("command"),
            "success": success,
        }
        if body is not None:
            response["body"] = body
        if message is not None:
            response["message"] = message
        self.send(self.relay, encode(response))

    def answer_handshake(self, request):
        """Answer a relay's ``initialize`` or ``attach`` from what the keeper's own handshake got; False
        for any other request (it goes to debugpy)."""
        command = request.get("command")
        if command not in ("initialize", "attach"):
            return False
        if self.refused is not None:
            self.reply(request, False, message="the target was taken by another debugger client (%s)" % self.refused)
        elif command == "initialize":
            if self.caps is None:
                self.held.append(request)
            else:
                self.initialized = True
                self.reply(request, True, body=self.caps)
        elif self.attach_done:
            self.attached = True
            self.reply(request, True)
        else:
            # as debugpy does it: "initialized" now (or when it comes), the answer once configured
            self.attached = True
            self.attach_waiting = request
            if self.init_event is not None:
                self.send(self.relay, self.init_event)
            else:
                self.init_due = True
        return True

    def enqueue(self, event, data):
        self.queue.append((event, data))
        self.queued_bytes += len(data)
        while len(self.queue) > MAX_QUEUED or self.queued_bytes > MAX_QUEUED_BYTES:
            if not self.drop_oldest():
                break

    def drop_oldest(self):
        """Drop the oldest output event (or, with none left, the oldest event that is not a stop)."""
        for want_output in (True, False):
            for i, (event, data) in enumerate(self.queue):
                if (event == "output") == want_output and event not in ("stopped", "exited", "terminated"):
                    del self.queue[i]
                    self.queued_bytes -= len(data)
                    if want_output:
                        self.dropped_output += 1
                    else:
                        self.dropped += 1
                    return True
        return False

    # -- debugpy ---------------------------------------------------------------------------------

    def adapter_ready(self):
        """debugpy's adapter takes clients before it has set itself up, and a client that attaches in
        those milliseconds is dropped or left waiting forever: it is ready once it wrote its endpoints."""
        if self.endpoints is None:
            return True
        if os.path.exists(self.endpoints) or time.monotonic() > self.endpoints_until:
            forget_endpoints(self.endpoints)  # the adapter never reads it (it only removes it as it exits)
            self.endpoints = None
            return True
        return False

    def connect_upstream(self):
        if not self.adapter_ready():
            self.up_retry_at = time.monotonic() + UPSTREAM_RETRY
            return
        try:
            sock = socket.create_connection(self.upstream_addr, timeout=1.0)
        except OSError:
            self.up_retry_at = time.monotonic() + UPSTREAM_RETRY
            return
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        self.up = Conn(sock, "upstream")
        self.watch(self.up)
        if self.client is not None:
            self.request_own("initialize", self.client.get("initialize") or {})
        if self.up_backlog:
            data, self.up_backlog = bytes(self.up_backlog), bytearray()
            self.send(self.up, data)

    def upstream_lost(self):
        """debugpy let go (the debuggee ends, or a relay sent disconnect): start over with a fresh connection."""
        alive = self.exit_code is None and self.child is not None and self.child.poll() is None
        if alive and self.dropped_early():
            return
        if alive:
            log("debugpy closed the connection (attached: %s, configured: %s)" % (self.attached, self.configured))
        self.up = None
        self.requests.clear()
        self.own.clear()
        self.caps = self.init_event = self.attach_waiting = None
        self.init_due = self.attach_done = False
        self.held = []
        self.initialized = self.attached = self.configured = False
        self.paused = None
        self.up_retry_at = time.monotonic() + RECONNECT_DELAY
        if self.relay is not None and self.exit_code is None:
            self.close(self.relay)  # the relay sees its debug connection end, as with debugpy itself

    def dropped_early(self):
        """debugpy's adapter drops a client that attaches in its first milliseconds, before it has set
        itself up (its attach fails on a listener it has not stored yet). With --client, before debugpy
        said ``initialized`` nothing was configured and the relay only waits for its initialize and
        attach answers: the keeper connects and attaches again, and the relay never knows."""
        if self.client is None or self.init_event is not None or self.attach_done or self.refused is not None:
            return False
        if self.requests or self.early_retries >= EARLY_RETRIES:
            return False
        self.early_retries += 1
        self.up = None
        self.own.clear()
        self.up_retry_at = time.monotonic() + UPSTREAM_RETRY
        return True

    # -- the end ---------------------------------------------------------------------------------

    def child_exited(self, code):
        self.exit_code = code
        self.wake()

    def write_status(self):
        if not self.status_file:
            return
        tmp = self.status_file + ".tmp"
        state = {
            "exit_code": self.exit_code,
            "pid": self.child.pid if self.child else None,
            "paused_while_detached": self.paused_while_detached,
        }
        try:
            with open(tmp, "w") as fh:
                json.dump(state, fh)
            os.replace(tmp, self.status_file)
        except OSError as exc:
            log("cannot write %s: %s" % (self.status_file, exc))


def die_with_keeper():
    """In the child, before exec: the kernel kills it if the keeper dies (Linux), so no debuggee
    runs on without the connection that holds it (debugpy would resume it, and nobody ends it)."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def exit_code_of(status):
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    return -1


def reap(keeper, pid):
    """Wait for every child (in a container the keeper is PID 1: orphans are its to reap)."""
    while True:
        try:
            got, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            continue
        if got == pid:
            keeper.child.returncode = exit_code_of(status)
            keeper.child_exited(keeper.child.returncode)


def endpoints_path(status_file):
    """Where debugpy's adapter says it is set up: beside the status file (a local target: the relay's
    own folder, where a keeper killed early leaves nothing elsewhere), else in a folder of the keeper's
    own under the temporary folder (a container's or a pod's, gone with it); None: nowhere to write."""
    if status_file:
        path = status_file + ".endpoints"
        try:
            os.remove(path)  # an earlier run's, in the same session: it must not count for this one
        except OSError:
            pass
        return path
    try:
        return os.path.join(tempfile.mkdtemp(prefix="debugrelay-keeper-"), ENDPOINTS_FILE)
    except OSError:
        return None


def forget_endpoints(path):
    try:
        os.remove(path)
    except OSError:
        pass
    if os.path.basename(path) == ENDPOINTS_FILE:  # the keeper's own folder
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)


def address(text):
    host, _, port = text.rpartition(":")
    return host or "127.0.0.1", int(port)


def main(argv):
    if "--" not in argv:
        raise SystemExit(USAGE)
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1 :]
    opts = {options[i]: options[i + 1] for i in range(0, len(options) - 1, 2)}
    secret = os.environ.pop(SECRET_ENV, "").encode()
    if not secret or not command or "--listen" not in opts or "--connect" not in opts:
        raise SystemExit("the keeper needs --listen, --connect, a command and %s" % SECRET_ENV)
    listen = address(opts["--listen"])
    family = socket.AF_INET6 if ":" in listen[0] else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(listen)
    listener.listen(8)
    env = dict(os.environ)
    env.pop(SECRET_ENV, None)
    endpoints = endpoints_path(opts.get("--status-file"))
    if endpoints is not None:
        env[ENDPOINTS_ENV] = endpoints
    # no thread runs yet: preexec_fn is safe here
    child = subprocess.Popen(command, env=env, preexec_fn=die_with_keeper if sys.platform == "linux" else None)  # noqa: PLW1509
    client = json.loads(opts["--client"]) if "--client" in opts else None
    keeper = Keeper(listener, address(opts["--connect"]), secret, opts.get("--status-file"), child, client, endpoints)

    def forward(signum, _frame):
        try:
            os.kill(child.pid, signum)
        except OSError:
            pass

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    threading.Thread(target=reap, args=(keeper, child.pid), name="reaper", daemon=True).start()
    keeper.run()
    if endpoints is not None:
        forget_endpoints(endpoints)
    code = keeper.exit_code if keeper.exit_code is not None else -1
    if code < -1:  # ended by a signal: end the same way, so whoever waits for the keeper sees that
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
