"""debugrelay's keeper: the debuggee's parent, holding its one DAP connection so a relay may come and go.

    DEBUGRELAY_KEEPER_SECRET=... python _debugrelay_keeper.py --listen HOST:PORT --connect 127.0.0.1:INNER \
        [--status-file PATH] [--client JSON] [--orphan-after SECONDS] \
        -- python -m debugpy --listen 127.0.0.1:INNER --wait-for-client ...

The secret comes in the environment, or (``--secret-fd N``) on an inherited pipe, read and closed at
start, so that it is not in the keeper's /proc/<pid>/environ at all.

debugpy resumes the debuggee and clears its breakpoints as soon as its client goes away. The keeper
is that client for the whole run: it starts the debuggee (stdin inherited; the secret removed from
its environment), connects to debugpy on the loopback, and serves the relay on ``--listen``. While
no relay is connected nothing changes for debugpy: a paused program stays paused, breakpoints stay
set, and events are queued (bounded: output is dropped first, oldest first, and counted). The keeper
never sends ``disconnect`` on its own.

The program's stdout and stderr are pipes the keeper reads: every byte becomes a DAP ``output``
event of its own (``category`` stdout/stderr, ``time`` of the read), copied to the keeper's own
stdout/stderr too (a local target's log file, a container's log). The pipe written to first is read
first (``WriteOrder``: on Linux the kernel notes each write to either pipe in one queue), so output
keeps the order the program wrote it in across the two streams, whoever wrote it (Python, C code,
a child process). debugpy's own capture
(``redirectOutput``) loses the end of a program that writes fast and exits, so the keeper turns it
off in the attach it passes on. A stop, and the end of the run, reach the relay after everything
the program wrote before them: the pipes are read empty before a ``stopped`` event is passed on,
and ``exited``/``terminated`` wait for the debuggee's exit (the pipes then hold all it wrote). While
a relay is connected but slow to read, the pipes wait (the program blocks on write, as under any
slow reader); while none is, output is queued as above. A debuggee that ends while no relay is
connected leaves a keeper that waits up to LINGER_SECONDS for one to take what it queued.

A target whose relay never comes back ends: with ``--orphan-after SECONDS`` (the session's timeout),
once no relay has been connected for that long the keeper ends the program (SIGTERM to every process
under it, SIGKILL after ORPHAN_GRACE), says why on its stderr, and exits; a keeper holding a program it
did not start lets it go instead (debugpy resumes it) and exits. The deadline starts over whenever a
relay connects, and never runs while one is connected (the relay times out an idle session itself). A
relay may set it again with the request ``debugrelay.orphanAfter`` (``{"seconds": N}``): it says the
session's timeout as it connects and whenever the timeout changes, and a warm keeper started before its
session existed learns it that way.

The keeper makes itself non-dumpable: its ``/proc/<pid>/environ`` (where the secret was) and its
memory are closed to the debuggee, which runs as the same user.

Protocol (one relay at a time; a new one replaces the old one):
1. the keeper sends ``DEBUGRELAY-KEEPER/1 <nonce>\\n``; the relay answers one line, the hex
   HMAC-SHA256 of ``debugrelay-keeper:<nonce>`` under the secret, optionally followed by a space and
   the number ``n`` of the last output event it has stored. Anything else: closed at once.
2. the keeper sends a DAP event ``debugrelay.keeper`` with its state (initialized, attached,
   configured, paused: the last ``stopped`` body or null, paused_while_detached, queued,
   dropped_output, dropped_output_chars, lost_output, exit_code), then the output events it sent
   to an earlier relay after the relay's ``n`` (a relay killed before it stored them; the keeper
   retains the last RETAIN_BYTES of what it sent), then the queued events in order, then relays DAP
   both ways. Output events carry ``n``, the keeper's count, so a relay never stores one twice.
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

import codecs
import collections
import fcntl
import hashlib
import hmac
import http.client
import itertools
import json
import os
import re
import selectors
import shutil
import signal
import socket
import struct
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
DRAIN_SECONDS = 1.5  # after the debuggee exits: pass on its last events, then go (longer while they move)
SIOCOUTQ = 0x5411  # a socket's bytes the peer has not acknowledged yet (Linux's TIOCOUTQ)
UPSTREAM_RETRY = 0.005  # short: with --client, the time another process could take debugpy first
RECONNECT_DELAY = 0.5  # debugpy takes a new client ~250 ms after the old one left
EARLY_RETRIES = 5  # attaches again after debugpy dropped the keeper before anything was configured
ENDPOINTS_ENV = "DEBUGPY_ADAPTER_ENDPOINTS"  # debugpy's adapter writes this file once it is fully set up
ENDPOINTS_FILE = "debugpy-endpoints.json"
ENDPOINTS_WAIT = 30.0  # without that file by then (a debugpy that does not write it), connect anyway
RETAIN_BYTES = 4 * 1024 * 1024  # output sent to a relay, kept to send again to the next one if it died
STREAM_READ = 65536
STREAM_ROUND = 1024 * 1024  # of one pipe per loop round at most, so DAP answers are never held up long
RELAY_BACKLOG = 4 * 1024 * 1024  # unsent to a connected relay: the pipes wait until it has read some
END_HOLD = 2.0  # exited/terminated wait this long for the debuggee's exit (its last output) at most
LINGER_SECONDS = 30.0  # a debuggee ended with events no relay took: wait this long for one
RESUMING = frozenset(("continue", "next", "stepIn", "stepOut", "stepBack", "reverseContinue", "goto"))
# what a relay configures once for the whole program: replayed to each child process as it attaches,
# and passed on to every attached child when it changes
CONFIGURATION = frozenset(
    ("setBreakpoints", "setFunctionBreakpoints", "setExceptionBreakpoints", "setDebuggerProperty")
)
SCAN_SECONDS = 1.0  # how often the debuggee's descendants are looked for in /proc
CHILDREN_ENV = "DEBUGRELAY_CHILDREN_SOCKET"  # a Python process of the program says its pid here as it starts
TRACES_ENV = "DEBUGRELAY_TRACE_SOCKET"  # the program's processes send the calls of traced functions here
CALLS_EVENT = "debugrelay.calls"  # a batch of traced calls, passed on to the relay (queued while none is there)
TRACE_DATAGRAM = 262144  # bytes of one batch at most (the tracer sends less than 64 KiB)
FOLLOW_ENV = "DEBUGRELAY_CHILDREN"  # "debug": debugpy follows the program's children
ATTACH_REACH = 6.0  # s a keeper holding a program it did not start tries to reach its debugpy (relay: 9)
ATTACH_WAIT = 60.0  # s a keeper holding a program it did not start waits to be attached, then gives up
ATTACH_GRACE = 3.0  # s a child of a program whose children are debugged has to be attached, else undebugged
MAX_COMMAND = 512  # characters of a child's command line passed on
MAX_REFUSED = 20  # processes announced but refused (not the program's children): each logged and told, then counted
HTTP_REQUEST = "debugrelay.http"  # a relay's request: send an HTTP request to the program (a service)
HTTP_RESPONSE = "debugrelay.httpResponse"  # its outcome, an event: queued like output while no relay is there
HTTP_BODY_KEPT = 16384  # characters of a response body passed on (the whole length is said)
HTTP_CONNECT_GRACE = 5.0  # a service just started may not listen yet: connecting is retried this long
ORPHAN_REQUEST = "debugrelay.orphanAfter"  # a relay's request: the session's timeout, in seconds
ORPHAN_GRACE = 5.0  # s the program has to end on SIGTERM once its relay is gone for good, then SIGKILL
KEPT_EVENTS = frozenset(("stopped", "exited", "terminated", HTTP_RESPONSE))  # never dropped from the queue


USAGE = (
    "usage: _debugrelay_keeper.py --listen HOST:PORT --connect HOST:PORT [--status-file PATH] [--client JSON]"
    " [--secret-fd N] [--orphan-after SECONDS] -- [COMMAND]"
    "  (no command, with --client: hold a program that debugpy already serves)"
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


def own_output(request):
    """An ``attach`` request with debugpy's own output capture off: the keeper reads the pipes itself."""
    arguments = dict(request.get("arguments") or {})
    arguments["redirectOutput"] = False
    return dict(request, arguments=arguments)


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
KEYS = re.compile(rb'"(seq|type|request_seq|command|event|success|process)"\s*:\s*("(?:[^"\\]|\\.)*"|\d+|true|false)')


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

    def envelope(self, key):
        """A key of the envelope (before any nested value), or None: the message is not parsed for it."""
        match = self.fields.get(key)
        return None if match is None else self.get(key)

    def tagged(self, pid):
        """The message, framed, with ``"process": pid`` in its envelope (a child's message to the relay)."""
        return frame(b'{"process":%d,%s' % (pid, self.body[1:]))

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
        self.heard = False  # the peer sent a byte
        self.proc = None  # a child process's connection: its Proc
        try:
            self.peer = "%s:%s" % sock.getpeername()[:2]
        except (OSError, TypeError):
            self.peer = "?"


class Proc(object):
    """A child process of the debuggee that debugpy announced (``debugpyAttach``): the keeper attaches to
    it over a connection of its own, configures it as the relay configured the program, and holds it."""

    def __init__(self, pid, attach):
        self.pid = pid
        self.attach = attach  # the attach arguments debugpy gave for it
        self.conn = None
        self.state = "attaching"  # -> "running" once configured -> "exited"
        self.paused = None  # the last ``stopped`` body, while stopped
        self.exit_code = None
        self.own = {}  # the keeper's requests to it: seq -> command


class Stream(object):
    """One of the debuggee's output pipes: the program's own stdout or stderr, read by the keeper."""

    def __init__(self, fd, category, echo):
        self.fd = fd
        self.category = category
        self.echo = echo  # the keeper's own stdout/stderr: the log (a file, a container's log) keeps a copy
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.eof = False
        self.watched = False
        self.unannounced_since = None  # since when it holds output no write was noted for (WriteOrder)
        os.set_blocking(fd, False)


IN_MODIFY = 0x2  # inotify: a write to the watched file (a pipe too)
UNANNOUNCED_WAIT = 0.05  # s a pipe's output waits for the note of its write (sent in the same system call)
INOTIFY_EVENT = struct.Struct("iIII")  # wd, mask, cookie, length of the name that follows


class WriteOrder(object):
    """The order the program wrote to its pipes in, across them: inotify queues an event for each write to
    a watched pipe (consecutive writes to one pipe as one event), both pipes in one queue, in write order.
    ``start`` answers None where it cannot (not Linux, no inotify instance left): the pipes are then read
    as they are ready, each in its own order."""

    def __init__(self, fd, watched):
        self.fd = fd
        self.watched = watched  # watch descriptor -> Stream

    @classmethod
    def start(cls, streams):
        if not streams or not sys.platform.startswith("linux"):
            return None
        try:
            import ctypes  # noqa: PLC0415 - only here: a keeper without pipes never needs it

            libc = ctypes.CDLL(None, use_errno=True)
            fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
            if fd < 0:
                return None
            watched = {}
            for stream in streams:
                wd = libc.inotify_add_watch(fd, ("/proc/self/fd/%d" % stream.fd).encode(), IN_MODIFY)
                if wd < 0:
                    os.close(fd)
                    return None
                watched[wd] = stream
        except (ImportError, OSError, AttributeError):
            return None
        return cls(fd, watched)

    def written(self):
        """The pipes written to since the last call, in the order of their first write."""
        found = []
        while True:
            try:
                data = os.read(self.fd, 65536)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                break
            if not data:
                break
            at = 0
            while at + INOTIFY_EVENT.size <= len(data):
                wd, mask, _cookie, length = INOTIFY_EVENT.unpack_from(data, at)
                at += INOTIFY_EVENT.size + length
                stream = self.watched.get(wd)
                if mask & IN_MODIFY and stream is not None and stream not in found:
                    found.append(stream)
        return found


def pipe_holds(fd):
    """Bytes waiting in a pipe (0 at its end); None if it cannot say."""
    try:
        import fcntl  # noqa: PLC0415 - Linux only, with WriteOrder
        import termios  # noqa: PLC0415

        return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
    except (ImportError, OSError):
        return None


def echo(fd, data):
    try:
        while data:
            data = data[os.write(fd, data) :]
    except OSError:
        pass


class Keeper(object):
    """The keeper's state and its one select loop (see the module docstring)."""

    def __init__(  # noqa: PLR0915, PLR0917
        self,
        listener,
        upstream,
        secret,
        status_file=None,
        child=None,
        client=None,
        endpoints=None,
        streams=(),
        births=None,
        traces=None,
        orphan_after=None,
    ):
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
        self.gone = False  # holding a program it did not start (no command): debugpy let go for good
        self.attach_until = time.monotonic() + ATTACH_WAIT  # ... or never took the keeper by then
        self.reach_until = time.monotonic() + ATTACH_REACH  # ... or never answered a connection by then
        self.unreachable = None  # why debugpy could not be reached (said to the relay's handshake)
        self.pending = {}
        self.seq = itertools.count(1)
        self.requests = {}  # our seq -> (relay conn id, relay seq)
        self.queue = collections.deque()  # (event name, framed bytes)
        self.http_lock = threading.Lock()
        self.http_done = []  # outcomes of HTTP requests, finished in their threads, to pass on
        self.queued_bytes = 0
        self.dropped_output = 0
        self.dropped_chars = 0
        self.dropped = 0
        self.streams = list(streams)
        self.order = WriteOrder.start(self.streams)  # None: each pipe read as it is ready
        self.due = []  # pipes written to and not read to their end yet, in the order of their first write
        if self.order is not None:
            self.sel.register(self.order.fd, selectors.EVENT_READ, "order")
        self.out_seq = itertools.count(1)  # output events, numbered: ``n`` in their body
        self.retained = collections.deque()  # (n, framed) of output sent to a relay
        self.retained_bytes = 0
        self.retained_floor = 0  # the last n no longer retained
        self.held_end = []  # debugpy's exited/terminated, until the debuggee's exit: (event, framed)
        self.hold_until = 0.0
        self.linger_until = 0.0
        self.sent_at = 0.0  # the last time bytes went to the relay (or it acknowledged some)
        self.unacked = 0  # bytes written to the relay's socket it had not acknowledged, when last asked
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
        self.procs = {}  # pid -> Proc: the debuggee's children that debugpy attached
        self.refused_children = collections.OrderedDict()  # pid -> why: announced by debugpy, not attached
        self.refused_count = 0
        self.waiting = {}  # pid -> debugpy's announcement: a child held back while an outsider is connected
        self.configuration = {}  # (command, source path) -> arguments: what every process is configured with
        self.init_args = (client or {}).get("initialize")  # initialize arguments for a child's connection
        self.tree = {}  # pid -> what was said of a descendant of the debuggee found in /proc
        self.scan_at = 0.0
        self.follow = bool(((client or {}).get("attach") or {}).get("subProcess"))  # debugpy attaches children
        self.births = births  # a datagram socket: each Python process of the program sends its pid as it starts
        if births is not None:
            births.setblocking(False)
            self.sel.register(births, selectors.EVENT_READ, "births")
        self.orphan_after = orphan_after  # s without a relay before the program is ended (None: never)
        self.alone_since = time.monotonic()  # when the last relay left (or the keeper started)
        self.orphaned = False  # the deadline passed: the program is being ended, no relay is waited for
        self.kill_at = None  # SIGKILL for what is left under the keeper, once the grace has run out
        self.traces = traces  # a datagram socket: the calls of traced functions, from the program's processes
        if traces is not None:
            traces.setblocking(False)
            self.sel.register(traces, selectors.EVENT_READ, "traces")

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
            if self.held_end and (self.exit_code is not None or self.child is None or now >= self.hold_until):
                self.release_end()
            if self.orphan_at() is not None and now >= self.orphan_at():
                self.orphan(now)
            if self.kill_at is not None and now >= self.kill_at and self.exit_code is None:
                self.kill_at = None
                log("the program did not end within %g s: killing it" % ORPHAN_GRACE)
                signal_tree(signal.SIGKILL)
            if self.child is None and not self.attached and not self.gone and now >= self.attach_until:
                log("debugpy at %s:%s never took the keeper: giving up" % self.upstream_addr[:2])
                self.gone = True
            if (self.exit_code is not None or self.gone) and self.ending_at is None:
                self.ending_at = now + DRAIN_SECONDS
                self.linger_until = now + LINGER_SECONDS
                self.write_status()
            if self.exit_code is not None and self.terminated and self.up is not None and not self.up.out:
                # the run is over: debugpy's adapter waits for its client to leave before it exits, and it
                # holds the program's stdout and stderr open (inherited) until it does
                self.close(self.up)
            if self.ending_at is not None and self.finished(now):
                return
            if self.up is None and self.ending_at is None and now >= self.up_retry_at:
                self.connect_upstream()
            if now >= self.scan_at and self.exit_code is None:
                self.scan_at = now + SCAN_SECONDS
                self.scan_tree()
                self.attach_waiting_children()
            self.watch_streams()
            self.step(self.timeout(now))
            self.pass_http()

    def drained(self):
        up_done = self.up is None or self.terminated
        streams_done = all(stream.eof for stream in self.streams)
        return up_done and streams_done and not self.unsent()

    def unsent(self):
        """Bytes for the relay it has not received yet: queued here, or written to the socket and not
        acknowledged. A container's network goes with its last process, and what its sockets still held
        goes with it (the end of the run never reached the relay): the keeper leaves once the relay has it all."""
        if self.relay is None:
            return 0
        try:
            held = struct.unpack("i", fcntl.ioctl(self.relay.sock.fileno(), SIOCOUTQ, b"\0\0\0\0"))[0]
        except (OSError, ValueError, struct.error):
            held = 0
        if held != self.unacked:
            self.unacked, self.sent_at = held, time.monotonic()  # the relay reads on: the end is worth waiting for
        return len(self.relay.out) + held

    def finished(self, now):
        """After the debuggee's exit: everything passed on, or no use waiting any longer."""
        if self.relay is None and self.queue and self.worth_lingering() and not self.orphaned:
            return now >= self.linger_until  # what no relay has taken yet waits for one, a while
        if self.drained():
            return True
        if self.unsent() and now - self.sent_at < DRAIN_SECONDS:
            return False  # still passing the end of the output on, and the relay still taking it
        return now >= self.ending_at

    def worth_lingering(self):
        """What waits says something a returning relay needs (output, a stop, the exit code): a warm
        interpreter whose relay went away ends with nothing to pass on but ``terminated``, and goes at once."""
        telling = ("output", "stopped", "exited", HTTP_RESPONSE, CALLS_EVENT)
        return any(event in telling for event, _, _, _ in self.queue)

    def timeout(self, now):
        waits = [1.0]
        if self.exit_code is None:  # the tree is scanned while the debuggee runs
            waits.append(max(0.0, self.scan_at - now))
        if self.up is None and self.ending_at is None:  # debugpy is reached again only while the run goes on
            waits.append(max(0.0, self.up_retry_at - now))
        if self.ending_at is not None and self.unacked:  # acknowledgements come without an event of their own
            waits.append(0.02)
        if self.ending_at is not None:  # the drain's end, then (lingering for a relay) the linger's
            waits.append(max(0.0, (self.ending_at if now < self.ending_at else self.linger_until) - now))
        if self.held_end:
            waits.append(max(0.0, self.hold_until - now))
        for due in (self.orphan_at(), self.kill_at):
            if due is not None:
                waits.append(max(0.0, due - now))
        for conn in self.pending.values():
            waits.append(max(0.0, conn.deadline - now))
        return min(waits)

    # -- no relay for too long -------------------------------------------------------------------

    def orphan_at(self):
        """When the program is ended for want of a relay: None while one is connected, or the run ends anyway."""
        if self.orphan_after is None or self.relay is not None or self.orphaned or self.ending_at is not None:
            return None
        return self.alone_since + self.orphan_after

    def orphan(self, now):
        """No relay for the session's timeout: nobody comes back for this program, so it ends (a program
        the keeper did not start is let go: debugpy resumes it once its client, the keeper, is gone)."""
        self.orphaned = True
        what = "ending the program" if self.child is not None else "letting the program go"
        log("no relay for %s: the session's timeout; %s" % (span(self.orphan_after), what))
        if self.child is None:
            self.gone = True
            if self.up is not None:
                self.close(self.up)
            return
        signal_tree(signal.SIGTERM)
        self.kill_at = now + ORPHAN_GRACE

    def set_orphan_after(self, request):
        """A relay's ``debugrelay.orphanAfter``: the session's timeout (it may have changed since the launch)."""
        seconds = (request.get("arguments") or {}).get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds < float("inf"):
            self.reply(request, False, message="seconds must be a positive number")
            return
        self.orphan_after = float(seconds)
        self.reply(request, True, body={"seconds": self.orphan_after})

    def step(self, timeout):
        output = False  # a pipe (or the order of writes to them) is ready: read once every event is seen
        for key, mask in self.sel.select(timeout):
            if key.data == "order" or isinstance(key.data, Stream):
                output = True
            elif key.data == "wake":
                try:
                    os.read(self.wake_r, 512)
                except OSError:
                    pass
            elif key.data == "births":
                self.born()
            elif key.data == "traces":
                self.traced()
            elif key.data is None:
                self.accept()
            else:
                conn = key.data
                if mask & selectors.EVENT_READ and not conn.closed:
                    self.readable(conn)
                if mask & selectors.EVENT_WRITE and not conn.closed:
                    self.flush(conn)
        if output:
            self.read_streams()
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
                if conn is self.relay:
                    self.sent_at = time.monotonic()
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
            self.alone_since = time.monotonic()
            self.held = []
            self.init_due = False
            self.attach_waiting = None
        elif conn is self.up:
            self.upstream_lost()
        elif conn.kind == "child":
            self.child_lost(conn.proc)

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
        conn.heard = True
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
                elif conn.kind == "child":
                    self.from_child(conn.proc, Peek(body))
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
        words, rest = bytes(conn.line[:end]).split(), bytes(conn.line[end + 1 :])
        proof = words[0] if words else b""
        try:
            stored = int(words[1]) if len(words) > 1 else None  # the last output event the relay has kept
        except ValueError:
            stored = None
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
                "dropped_output_chars": self.dropped_chars,
                "lost_output": max(0, self.retained_floor - stored) if stored is not None else 0,
                "dropped": self.dropped,
                "exit_code": self.exit_code,
                "pid": self.child.pid if self.child is not None else None,
                "processes": self.process_list(),
                "python": "%d.%d" % sys.version_info[:2],  # the keeper runs on the program's interpreter
            },
        }
        out = bytearray(encode(hello))
        if stored is not None:
            for n, data_ in self.retained:
                if n > stored:
                    out += data_
        for _, data_, _, n in self.queue:
            out += data_
            if n is not None:
                self.retain(n, data_)
        self.queue.clear()
        self.queued_bytes = 0
        self.dropped_output = self.dropped_chars = self.dropped = 0
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
        pid = message.envelope("process")
        if pid is not None and (self.child is None or pid != self.child.pid):
            self.to_child(pid, message)
            return
        if self.client is not None and self.answer_handshake(message):
            return
        command = message.get("command")
        if command == ORPHAN_REQUEST:
            self.set_orphan_after(message.full())
            return
        if command == HTTP_REQUEST:
            self.http_request(message.full())
            return
        if command == "initialize" and self.init_args is None:
            self.init_args = message.full().get("arguments") or {}
        seq = next(self.seq)
        self.requests[seq] = (self.relay.id if self.relay else 0, message.get("seq"))
        if command == "attach":
            self.attached = True
            self.follow = bool((message.full().get("arguments") or {}).get("subProcess"))
            if self.streams:
                message = Peek(json.dumps(own_output(message.full()), separators=(",", ":")).encode())
        data = message.replaced("seq", seq)
        if self.up is None:
            self.up_backlog += data
        else:
            self.send(self.up, data)
        if command in CONFIGURATION:
            self.configure_all(command, message.full().get("arguments") or {})

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
            if event == "debugpyAttach":
                self.start_child(message.full().get("body") or {})
                return
            if event in ("stopped", "exited", "terminated"):
                self.drain_streams()  # what the program wrote before it stopped comes first
            if event == "stopped":
                self.scan_tree()
            if event == "stopped":
                self.paused = message.full().get("body") or {}
                if self.relay is None:
                    self.paused_while_detached = True
                    self.write_status()
            elif event == "continued":
                self.paused = None
            elif event in ("exited", "terminated") and self.streams and self.exit_code is None:
                # the debuggee may still be writing its last lines: they come first
                self.held_end.append((event, frame(message.body)))
                self.hold_until = time.monotonic() + END_HOLD
                return
            elif event == "terminated":
                self.terminated = True
            self.deliver(event, frame(message.body))
        elif kind == "request":
            self.refuse(self.up, message)

    def refuse(self, conn, message):
        """Answer a request debugpy sent us (a reverse request, e.g. ``runInTerminal``): not supported."""
        refusal = {
            "seq": next(self.seq),
            "type": "response",
            "request_seq": message.get("seq"),
            "command": message.get("command"),
            "success": False,
            "message": "'%s' is not supported by debugrelay" % message.get("command"),
        }
        self.send(conn, encode(refusal))

    # -- the debuggee's children ----------------------------------------------------------------

    def start_child(self, attach, again=False):
        """debugpy announced a child process (``debugpyAttach``): attach to it over a connection of the
        keeper's own, to debugpy's adapter as always (never to an address a message names), once the
        announced process is known to be one of the program's children (:func:`not_a_child`); else it is
        refused: logged, told to the relay, and sent nothing. A child announced while a process outside
        the program is connected to debugpy waits (``again``: looked at anew) until that one has gone."""
        pid = attach.get("subProcessId")
        if not isinstance(pid, int) or pid in self.procs or pid in self.refused_children:
            return
        if pid in self.waiting and not again:
            return
        if not self.follow:
            why = "child processes are not debugged in this session"
        else:
            why = not_a_child(pid, os.getpid(), self.upstream_addr[1])
        if why is not None and why.startswith(OUTSIDER):
            if pid not in self.waiting:
                log("child process %d waits to be attached: %s" % (pid, why))
            self.waiting[pid] = attach
            return
        self.waiting.pop(pid, None)
        if why is not None:
            self.refuse_child(pid, why)
            return
        proc = Proc(pid, attach)
        self.procs[pid] = proc
        if pid not in self.tree:
            self.seen(pid, parent_of(pid))
        try:
            sock = socket.create_connection(self.upstream_addr, timeout=1.0)
        except OSError as exc:
            log("cannot attach to child process %d: %s" % (pid, exc))
            self.child_lost(proc)
            return
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        conn = Conn(sock, "child")
        conn.proc = proc
        proc.conn = conn
        self.watch(conn)
        self.request_to(proc, "initialize", self.init_args or {})

    def attach_waiting_children(self):
        """Look again at the children waiting because a process outside the program was connected to debugpy."""
        for attach in list(self.waiting.values()):
            self.start_child(attach, again=True)

    def refuse_child(self, pid, why):
        """A process debugpy announced that is not attached: said in the log and to the relay (which notes
        it, never lists it); past MAX_REFUSED of them, only counted in the log (a flood says little more)."""
        self.refused_children[pid] = why
        while len(self.refused_children) > MAX_REFUSED:
            del self.refused_children[next(iter(self.refused_children))]
        self.refused_count += 1
        if self.refused_count > MAX_REFUSED:
            if self.refused_count % MAX_REFUSED == 1:
                log("%d processes debugpy announced refused so far" % (self.refused_count - 1))
            return
        log("refused process %d that debugpy announced as a child: %s" % (pid, why))
        body = {"pid": pid, "state": "refused", "why": why, "refused": self.refused_count}
        self.deliver(
            "debugrelay.process", encode({"seq": 0, "type": "event", "event": "debugrelay.process", "body": body})
        )

    def request_to(self, proc, command, arguments):
        seq = next(self.seq)
        proc.own[seq] = command
        self.send(proc.conn, encode({"seq": seq, "type": "request", "command": command, "arguments": arguments}))

    def child_answered(self, proc, command, message):
        if command == "initialize":
            if not message.get("success"):
                log("child process %d refused initialize: %s" % (proc.pid, message.get("message")))
                self.close(proc.conn)
                return
            arguments = dict(proc.attach)
            if self.streams:
                arguments["redirectOutput"] = False  # its stdout and stderr are the pipes the keeper reads
            self.request_to(proc, "attach", arguments)
        elif command == "attach" and not message.get("success"):
            log("child process %d refused attach: %s" % (proc.pid, message.get("message")))
            self.close(proc.conn)
        elif command == "configurationDone" and message.get("success"):
            proc.state = "running"

    def configure(self, proc):
        """A child said ``initialized``: everything the relay configured, then ``configurationDone``."""
        proc.state = "configuring"
        for (command, _), arguments in self.configuration.items():
            self.request_to(proc, command, arguments)
        self.request_to(proc, "configurationDone", {})
        self.announce(proc.pid, "running", debugged=True, name=proc.attach.get("name"))

    def configure_all(self, command, arguments):
        """Remember what the relay configured and pass it on to every child already configured."""
        key = (command, json.dumps(arguments.get("source", {}).get("path")) if command == "setBreakpoints" else "")
        if command == "setDebuggerProperty":
            key = (command, json.dumps(sorted(arguments)))
        self.configuration.pop(key, None)
        self.configuration[key] = arguments
        for proc in self.procs.values():
            if proc.state in ("configuring", "running") and proc.conn is not None and not proc.conn.closed:
                self.request_to(proc, command, arguments)

    def to_child(self, pid, message):
        """A relay's request for one child process (``"process": pid`` in its envelope)."""
        proc = self.procs.get(pid)
        if proc is None or proc.conn is None or proc.conn.closed or proc.state == "exited":
            self.reply(message, False, message="process %d is not being debugged (it ended, or never was)" % pid)
            return
        seq = next(self.seq)
        self.requests[seq] = (self.relay.id if self.relay else 0, message.get("seq"))
        self.send(proc.conn, message.replaced("seq", seq))

    def from_child(self, proc, message):
        kind = message.get("type")
        if kind == "response":
            request_seq = message.get("request_seq")
            if request_seq in proc.own:
                self.child_answered(proc, proc.own.pop(request_seq), message)
                return
            entry = self.requests.pop(request_seq, None)
            if message.get("success") and message.get("command") in RESUMING:
                proc.paused = None
            if entry is None or self.relay is None or entry[0] != self.relay.id:
                return
            self.send(self.relay, message.replaced("request_seq", entry[1]))
        elif kind == "event":
            event = message.get("event")
            if event == "debugpyAttach":  # a grandchild
                self.start_child(message.full().get("body") or {})
                return
            if event == "initialized":
                if proc.state == "attaching":
                    self.configure(proc)
                return
            if event == "stopped":
                self.drain_streams()
                proc.paused = message.full().get("body") or {}
                if self.relay is None:
                    self.paused_while_detached = True
            elif event == "continued":
                proc.paused = None
            elif event == "exited":
                proc.exit_code = (message.full().get("body") or {}).get("exitCode")
            self.deliver(event, message.tagged(proc.pid))
        elif kind == "request":
            self.refuse(proc.conn, message)

    def child_lost(self, proc):
        """A child's connection ended: the child exited (or debugpy let it go)."""
        if proc.state == "exited":
            return
        proc.state = "exited"
        proc.paused = None
        if proc.conn is not None and not proc.conn.closed:
            self.close(proc.conn)
        self.announce(proc.pid, "exited", debugged=True, exit_code=proc.exit_code)

    def announce(self, pid, state, **facts):
        """A ``debugrelay.process`` event: a child process started, attached or ended."""
        body = dict(facts, pid=pid, state=state)
        known = self.tree.get(pid)
        if known:
            body.setdefault("ppid", known.get("ppid"))
            body.setdefault("command", known.get("command"))
        self.deliver(
            "debugrelay.process", encode({"seq": 0, "type": "event", "event": "debugrelay.process", "body": body})
        )

    def process_list(self):
        """The debuggee's child processes as the keeper knows them: debugged ones and Python ones found."""
        found = []
        for pid, proc in self.procs.items():
            info = self.tree.get(pid) or {}
            found.append(
                {
                    "pid": pid,
                    "ppid": info.get("ppid"),
                    "command": info.get("command"),
                    "debugged": True,
                    "state": proc.state if proc.state != "configuring" else "running",
                    "paused": proc.paused,
                    "exit_code": proc.exit_code,
                }
            )
        for pid, info in self.tree.items():
            if pid not in self.procs and info.get("announced"):
                found.append(
                    {
                        "pid": pid,
                        "ppid": info.get("ppid"),
                        "command": info.get("command"),
                        "debugged": False,
                        "state": "running",
                    }
                )
        return found

    def seen(self, pid, ppid):
        """A descendant of the debuggee, found: what it runs, noted once."""
        info = describe_process(pid)
        info["ppid"] = ppid
        info["at"] = time.monotonic()
        self.tree[pid] = info
        return info

    def born(self):
        """Python processes of the program said their pids as they started (forks too): noted at once, so a
        short-lived one is known even if no scan ever sees it; only descendants of the debuggee count."""
        while True:
            try:
                data = self.births.recv(64)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            try:
                pid = int(data.strip())
            except ValueError:
                continue
            root = self.child.pid if self.child is not None else None
            if pid == root or pid in self.tree or root is None:
                continue
            if self.descends(pid):
                info = self.seen(pid, parent_of(pid))
                if info["python"] and pid not in self.procs and not self.follow:
                    info["announced"] = True
                    self.announce(pid, "running", debugged=False)

    def descends(self, pid):
        """Whether ``pid`` is the debuggee or one of its descendants."""
        root = self.child.pid if self.child is not None else None
        if root is None or pid is None:
            return False
        chain, hops = pid, 0
        while chain not in (None, 0, 1, root) and hops < 64:
            chain, hops = parent_of(chain), hops + 1
        return chain == root

    def heard_from(self, pid):
        """A sender of the program: the debuggee, a descendant known or found now, or (same user, as the
        kernel says) one that ended before it could be looked at (a pool's worker ended by its pool)."""
        if pid is None:
            return False
        if pid in self.tree or self.descends(pid):
            return True
        return self.child is not None and not os.path.exists("/proc/%d" % pid)

    def traced(self):
        """Calls of traced functions sent by the program's processes: passed on as ``debugrelay.calls``
        events. Only a process of the program is heard (its pid as the kernel vouches for it)."""
        while True:
            try:
                data, ancillary, _, _ = self.traces.recvmsg(TRACE_DATAGRAM, socket.CMSG_SPACE(12))
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            sender = None
            for level, kind, value in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and len(value) >= 12:
                    sender, uid, _ = struct.unpack("iII", value[:12])
                    if uid != os.getuid():
                        sender = None
            if not data.startswith(b"T") or not self.heard_from(sender):
                continue
            try:
                body = json.loads(data[1:].decode("utf-8"))
            except ValueError:
                continue
            if isinstance(body, dict):
                body["pid"] = sender
                self.deliver(CALLS_EVENT, encode({"seq": 0, "type": "event", "event": CALLS_EVENT, "body": body}))

    def scan_tree(self):
        """Find the debuggee's descendants in /proc (Linux): a Python one that no debugger follows is
        announced once, so the relay can say which processes run undebugged; an ended one, once."""
        root = self.child.pid if self.child is not None else None
        if root is None or not os.path.isdir("/proc/%d" % root):
            return
        parents = process_parents()
        if not parents:
            return
        found = descendants(parents, root)
        for pid in found:
            if pid not in self.tree:
                self.seen(pid, parents.get(pid))
        now = time.monotonic()
        for pid, info in self.tree.items():
            late = not self.follow or now - info.get("at", now) > ATTACH_GRACE
            if info["python"] and pid not in self.procs and not info.get("announced") and late:
                info["announced"] = True
                self.announce(pid, "running", debugged=False)
        for pid in [p for p in self.tree if p not in found]:
            info = self.tree.pop(pid)
            if info.get("announced") and pid not in self.procs:
                self.announce(pid, "exited", debugged=False, ppid=info.get("ppid"), command=info.get("command"))

    # -- HTTP requests to the program, for the relay --------------------------------------------------

    def http_request(self, request):
        """Send an HTTP request to the program from beside it (its loopback: a container's service need not
        be published). In a thread: a handler paused at a breakpoint holds nothing here. The outcome is an
        event, queued while no relay is connected, so a relay that died meanwhile gets it when one is back."""
        args = request.get("arguments") or {}
        self.reply(request, True, {"accepted": args.get("id")})
        threading.Thread(target=self.http_send, args=(args,), name="http", daemon=True).start()

    def http_send(self, args):
        out = {key: args.get(key) for key in ("id", "method", "path", "port")}
        started = time.monotonic()
        connect_until = started + min(float(args.get("grace") or HTTP_CONNECT_GRACE), HTTP_CONNECT_GRACE)
        body = args.get("body")
        try:
            while True:
                conn = http.client.HTTPConnection(args.get("host") or "127.0.0.1", int(args["port"]))
                try:
                    conn.connect()
                    break
                except ConnectionRefusedError:  # nothing sent yet: trying again cannot send it twice
                    conn.close()
                    if time.monotonic() >= connect_until:
                        raise
                    time.sleep(0.1)
            conn.request(
                args.get("method") or "GET",
                args.get("path") or "/",
                body=body.encode("utf-8") if isinstance(body, str) else None,
                headers=args.get("headers") or {},
            )
            response = conn.getresponse()
            kept, total = b"", 0
            while True:
                chunk = response.read(65536)
                if not chunk:
                    break
                total += len(chunk)
                if len(kept) < HTTP_BODY_KEPT * 4:
                    kept += chunk[: HTTP_BODY_KEPT * 4 - len(kept)]
            text = kept.decode("utf-8", "replace")
            out["status"] = response.status
            out["headers"] = {name.lower(): value for name, value in response.getheaders()}
            out["body"] = text[:HTTP_BODY_KEPT]
            if total > len(kept) or len(text) > HTTP_BODY_KEPT:
                out["body_bytes"] = total
            conn.close()
        except (OSError, http.client.HTTPException, ValueError) as exc:
            out["error"] = "%s: %s" % (type(exc).__name__, exc)
            out["refused"] = isinstance(exc, ConnectionRefusedError)
        out["elapsed_ms"] = round((time.monotonic() - started) * 1000, 1)
        with self.http_lock:
            self.http_done.append(out)
        self.wake()

    def pass_http(self):
        """Responses the HTTP threads finished: passed on (or queued) from the loop's thread."""
        if not self.http_done:
            return
        with self.http_lock:
            done, self.http_done = self.http_done, []
        for out in done:
            self.deliver(HTTP_RESPONSE, encode({"seq": 0, "type": "event", "event": HTTP_RESPONSE, "body": out}))

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
            attach = self.client.get("attach") or {}
            if self.streams:
                attach = own_output({"arguments": attach})["arguments"]
            self.request_own("attach", attach)
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
        if self.unreachable is not None:
            self.reply(request, False, message=self.unreachable)
        elif self.refused is not None:
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

    def deliver(self, event, data, chars=0, n=None):
        """Pass an event on to the relay, or queue it while there is none (output ``n``: retained)."""
        if self.relay is not None:
            self.send(self.relay, data)
            if n is not None:
                self.retain(n, data)
        else:
            self.enqueue(event, data, chars, n)

    def retain(self, n, data):
        self.retained.append((n, data))
        self.retained_bytes += len(data)
        while self.retained_bytes > RETAIN_BYTES and len(self.retained) > 1:
            self.retained_floor, dropped = self.retained.popleft()
            self.retained_bytes -= len(dropped)

    def enqueue(self, event, data, chars=0, n=None):
        self.queue.append((event, data, chars, n))
        self.queued_bytes += len(data)
        while len(self.queue) > MAX_QUEUED or self.queued_bytes > MAX_QUEUED_BYTES:
            if not self.drop_oldest():
                break

    def drop_oldest(self):
        """Drop the oldest output event (or, with none left, the oldest event that is not a stop)."""
        for want_output in (True, False):
            for i, (event, data, chars, _) in enumerate(self.queue):
                if (event == "output") == want_output and event not in KEPT_EVENTS:
                    del self.queue[i]
                    self.queued_bytes -= len(data)
                    if want_output:
                        self.dropped_output += 1
                        self.dropped_chars += chars
                    else:
                        self.dropped += 1
                    return True
        return False

    # -- the program's stdout and stderr -----------------------------------------------------------

    def watch_streams(self):
        """Read the pipes unless a connected relay has fallen behind (the program then waits on write)."""
        keep_up = self.relay is None or len(self.relay.out) < RELAY_BACKLOG
        for stream in self.streams:
            want = keep_up and not stream.eof
            if want != stream.watched:
                if want:
                    self.sel.register(stream.fd, selectors.EVENT_READ, stream)
                else:
                    self.sel.unregister(stream.fd)
                stream.watched = want

    def read_streams(self, drain=False):
        """What the pipes hold, in the order the program wrote it: the pipe written to first is read first,
        and one that holds more than a round's read holds back those written after it. ``drain``: read
        them even while the relay is behind (before a stop or the run's end is passed on)."""
        if self.order is None:
            for stream in self.streams:
                if not stream.eof and (drain or stream.watched):
                    self.read_stream(stream)
            return
        self.due.extend(s for s in self.order.written() if s not in self.due)
        for stream in list(self.due):
            if not stream.eof:
                if not (drain or stream.watched):
                    return  # the relay is behind: this pipe, and those written after it, wait
                if self.read_stream(stream):
                    return  # more than a round's read: the rest comes next round, in order
            self.due.remove(stream)
        for stream in self.streams:  # ready, no write noted: at its end, or the note is on its way (an instant)
            if not stream.eof and (drain or stream.watched) and self.unannounced(stream, drain):
                self.read_stream(stream)

    def unannounced(self, stream, drain):
        """Whether to read a pipe no write was noted for: at its end, in a drain (the writes are done and
        noted), or when the note is overdue (lost: the kernel's queue overflowed)."""
        held = pipe_holds(stream.fd)
        if held == 0 or drain:
            stream.unannounced_since = None
            return True
        now = time.monotonic()
        if stream.unannounced_since is None:
            stream.unannounced_since = now
        if now - stream.unannounced_since < UNANNOUNCED_WAIT:
            return False
        stream.unannounced_since = None
        return True

    def read_stream(self, stream, limit=STREAM_ROUND):
        """What the pipe holds now (up to ``limit``), passed on as one output event; True if it held more."""
        chunks = []
        got = 0
        while got < limit and not stream.eof:
            try:
                data = os.read(stream.fd, STREAM_READ)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                data = b""
            if not data:
                stream.eof = True
                break
            chunks.append(data)
            got += len(data)
        data = b"".join(chunks)
        if data:
            echo(stream.echo, data)
        text = stream.decoder.decode(data, stream.eof)
        if stream.eof:
            if stream.watched:
                self.sel.unregister(stream.fd)
                stream.watched = False
            os.close(stream.fd)
        if text:
            n = next(self.out_seq)
            body = {"category": stream.category, "output": text, "time": time.time(), "n": n}
            self.deliver("output", encode({"seq": 0, "type": "event", "event": "output", "body": body}), len(text), n)
        return got >= limit

    def drain_streams(self):
        self.read_streams(drain=True)

    def release_end(self):
        """Pass on debugpy's exited/terminated once the debuggee is gone: its output (and calls) first."""
        self.drain_streams()
        if self.traces is not None:
            self.traced()
        held, self.held_end = self.held_end, []
        for event, data in held:
            if event == "terminated":
                self.terminated = True
            self.deliver(event, data)

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
        except OSError as exc:
            self.up_retry_at = time.monotonic() + UPSTREAM_RETRY
            if self.child is None and not self.attach_done and time.monotonic() >= self.reach_until:
                self.unreachable_now(exc)
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
        # only the reaper thread waits for the debuggee: poll() here could reap it first, and its end would
        # never be told (a program killed with its adapter, the two ends racing)
        alive = self.exit_code is None and self.child is not None and self.child.returncode is None
        if alive and self.dropped_early():
            return
        if self.not_listening_yet():
            return
        if alive:
            log("debugpy closed the connection (attached: %s, configured: %s)" % (self.attached, self.configured))
        if self.child is None and self.attached:
            self.gone = True  # an attached program ended, or the relay detached: nothing left to hold
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

    def not_listening_yet(self):
        """A published container port accepts for an attached program whose debugpy does not listen yet,
        then closes without a byte (Docker's proxy): retried as a refused connection is, until the
        attach's reach runs out. A peer that said anything at all is no debugpy: that is not retried."""
        if self.child is not None or self.caps is not None or self.up is None or self.up.heard:
            return False
        self.up = None
        self.requests.clear()
        self.own.clear()
        self.up_retry_at = time.monotonic() + UPSTREAM_RETRY
        if self.up_retry_at >= self.reach_until:
            self.unreachable_now("it closed the connection without answering")
        return True

    def unreachable_now(self, why):
        """The attached program's debugpy was not reached in time: a relay that asks is told why."""
        self.unreachable = "cannot reach debugpy at %s:%s: %s" % (self.upstream_addr[0], self.upstream_addr[1], why)
        log(self.unreachable)
        self.gone = True
        held, self.held = self.held, []
        for request in held:
            self.answer_handshake(request)

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


def parent_of(pid):
    """The parent pid of ``pid`` (Linux /proc), or None."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as fh:
            stat = fh.read(4096)
        return int(stat[stat.rfind(b")") + 2 :].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def process_parents():
    """pid -> parent pid of every process in /proc (Linux; empty elsewhere)."""
    parents = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return parents
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as fh:
                stat = fh.read(4096)
            parents[int(name)] = int(stat[stat.rfind(b")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return parents


def descendants(parents, root):
    """The pids under ``root`` in ``parents`` (children, theirs, ...), ``root`` itself not among them."""
    kids = {}
    for pid, ppid in parents.items():
        kids.setdefault(ppid, []).append(pid)
    found, stack = set(), [root]
    while stack:
        for kid in kids.get(stack.pop(), ()):
            if kid not in found:
                found.add(kid)
                stack.append(kid)
    return found


OUTSIDER = "a process outside the program"  # connected to debugpy: the program's children wait until it has gone
TCP_LISTEN = "0A"
TCP_ESTABLISHED = "01"


def tcp_address(text):
    """``0100007F:1F90`` (/proc/net/tcp, tcp6) -> ``("127.0.0.1", 8080)``; an IPv4 address mapped into IPv6
    as IPv4, so both ends of one loopback connection read alike."""
    host, _, port = text.partition(":")
    raw = b"".join(struct.pack("=I", int(host[i : i + 8], 16)) for i in range(0, len(host), 8))
    if len(raw) == 4:
        ip = socket.inet_ntop(socket.AF_INET, raw)
    else:
        ip = socket.inet_ntop(socket.AF_INET6, raw)
        if ip.startswith("::ffff:") and "." in ip:
            ip = ip[7:]
    return ip, int(port, 16)


def tcp_sockets():
    """The TCP sockets of this network namespace (Linux): ``(local, remote, state, inode)`` each."""
    rows = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as fh:
                lines = fh.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            try:
                rows.append((tcp_address(fields[1]), tcp_address(fields[2]), fields[3], int(fields[9])))
            except (IndexError, ValueError, OSError):
                continue
    return rows


def socket_holders(pids):
    """socket inode -> the pids among ``pids`` holding it open (Linux; a process whose descriptors cannot be
    read, another user's, holds none)."""
    holders = {}
    for pid in pids:
        try:
            fds = os.listdir("/proc/%d/fd" % pid)
        except OSError:
            continue
        for fd in fds:
            try:
                link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
            except OSError:
                continue
            if link.startswith("socket:["):
                try:
                    holders.setdefault(int(link[8:-1]), set()).add(pid)
                except ValueError:
                    continue
    return holders


def not_a_child(pid, keeper, client_port):
    """Why the process debugpy announced as ``pid`` may not be attached (None: it may). The adapter takes
    any local connection to its server port as a process to debug, on the pid and parent the connection
    claims. Linux tells the truth: the process must be the program's (under the keeper), hold a connection
    of its own to the adapter's server port, and every connection there must be held by a process of the
    program: while a process outside it holds one (``OUTSIDER``), that one may have claimed this very pid
    first, and the adapter would pass the keeper to it. Read twice around the descriptors: a connection
    being made or closed is not an outsider."""
    before = tcp_sockets()  # first: whoever holds a connection listed here is alive in the listing below
    parents = process_parents()
    if not parents:
        return "cannot be checked here (no /proc)"
    program = descendants(parents, keeper)
    if pid not in program:
        return "not a process of the program"
    holders = socket_holders(program)
    after = {(local, remote, inode) for local, remote, state, inode in tcp_sockets() if state == TCP_ESTABLISHED}
    adapter = set()
    for local, _, state, inode in before:
        if state == TCP_LISTEN and local[1] == client_port:
            adapter |= holders.get(inode, set())
    if not adapter:
        return "debugpy's adapter is not a process of the program"
    served = {
        local[1]
        for local, _, state, inode in before
        if state == TCP_LISTEN and local[1] != client_port and holders.get(inode, set()) & adapter
    }
    ends = {(local, remote): inode for local, remote, state, inode in before if state == TCP_ESTABLISHED}
    own, outsiders = False, []
    for local, remote, state, inode in before:
        if state != TCP_ESTABLISHED or local[1] not in served or not holders.get(inode, set()) & adapter:
            continue
        end = ends.get((remote, local))  # the connecting end of a connection the adapter accepted
        held = holders.get(end, set())
        own = own or pid in held
        if end and not held and (remote, local, end) in after:
            outsiders.append(end)
    if not own:
        return "it has no connection to debugpy"
    if outsiders:
        everyone = socket_holders(parents)  # named where the kernel lets this user see them
        named = sorted({p for end in outsiders for p in everyone.get(end, ())})
        return "%s (%s) is connected to debugpy" % (
            OUTSIDER,
            "pid " + ", ".join(str(p) for p in named[:5]) if named else "another user's",
        )
    return None


PYTHON = re.compile(r"python[\d.]*m?$")


def describe_process(pid):
    """What a descendant runs: its command line (bounded), whether it is a Python interpreter. debugpy's
    own adapter is never counted as the program's (it is the debugger)."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as fh:
            argv = [a.decode("utf-8", "replace") for a in fh.read(65536).split(b"\0") if a]
    except OSError:
        argv = []
    try:
        exe = os.readlink("/proc/%d/exe" % pid)
    except OSError:
        exe = argv[0] if argv else ""
    command = " ".join(argv)
    adapter = any("debugpy/adapter" in a or a == "debugpy.adapter" for a in argv)
    python = not adapter and bool(
        PYTHON.search(os.path.basename(exe)) or (argv and PYTHON.search(os.path.basename(argv[0])))
    )
    return {"command": command[:MAX_COMMAND], "python": python}


def die_with_keeper():
    """In the child, before exec: the kernel kills it if the keeper dies (Linux), so no debuggee
    runs on without the connection that holds it (debugpy would resume it, and nobody ends it)."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def subreaper():
    """Orphans of the debuggee become the keeper's (Linux): what the program leaves behind when it ends is
    still found, and ended with it."""
    if sys.platform != "linux":
        return
    try:
        import ctypes

        ctypes.CDLL(None).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
    except Exception:
        pass


def span(seconds):
    """A deadline as said in the log: minutes from a minute on, else seconds."""
    if seconds >= 60:
        return "%g min" % round(seconds / 60, 2)
    return "%g s" % round(seconds, 2)


def end_leftovers():
    """End every process still under the keeper once the debuggee has ended: a session ends with its root."""
    signal_tree(signal.SIGKILL)


def signal_tree(signum):
    """Send ``signum`` to every process under the keeper (the debuggee, its children, their orphans: the
    keeper is their subreaper)."""
    for pid in descendants(process_parents(), os.getpid()):
        try:
            os.kill(pid, signum)
        except OSError:
            pass


def undumpable():
    """Close the keeper's /proc files (environ, where the secret came in; mem) and ptrace to processes of
    the same user, the debuggee among them (Linux; its children are dumpable again after exec)."""
    if sys.platform != "linux":
        return
    try:
        import ctypes

        ctypes.CDLL(None).prctl(4, 0)  # PR_SET_DUMPABLE
    except Exception:
        log("cannot make the keeper non-dumpable: its environment stays readable to its own user")


def read_secret(fd):
    """The secret from an inherited pipe (the relay wrote it and closed its end), then the pipe closed."""
    data = b""
    try:
        while len(data) < 1024:
            chunk = os.read(fd, 1024)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    return data.strip()


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


def births_socket():
    """An abstract datagram socket (Linux: no file, nothing left behind): where the program's Python
    processes say their pids as they start. Anyone on the host may send to it; only a pid that is a
    descendant of the debuggee is taken. None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind("\0debugrelay-keeper-%d-%s" % (os.getpid(), os.urandom(6).hex()))
    except OSError as exc:
        log("no socket for child processes to announce themselves: %s" % exc)
        return None
    return sock


def traces_socket():
    """An abstract datagram socket where the program's processes send the calls of traced functions; the
    kernel passes each sender's pid along (SO_PASSCRED). None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * 1024 * 1024)
        sock.bind("\0debugrelay-traces-%d-%s" % (os.getpid(), os.urandom(6).hex()))
    except OSError as exc:
        log("no socket for traced calls: %s" % exc)
        return None
    return sock


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


def debuggee_env(endpoints, births, client, traces=None):
    """The debuggee's environment: the keeper's own without the secret, plus where to say what."""
    env = dict(os.environ)
    env.pop(SECRET_ENV, None)
    if endpoints is not None:
        env[ENDPOINTS_ENV] = endpoints
    if births is not None:
        env[CHILDREN_ENV] = "@" + births.getsockname()[1:].decode()
    if traces is not None:
        env[TRACES_ENV] = "@" + traces.getsockname()[1:].decode()
    if ((client or {}).get("attach") or {}).get("subProcess"):
        env[FOLLOW_ENV] = "debug"  # the program's forked children keep the debugger (debugpy follows them)
    return env


def main(argv):  # noqa: PLR0915
    if "--" not in argv:
        raise SystemExit(USAGE)
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1 :]
    opts = {options[i]: options[i + 1] for i in range(0, len(options) - 1, 2)}
    undumpable()
    subreaper()
    secret = os.environ.pop(SECRET_ENV, "").encode()
    if "--secret-fd" in opts:
        secret = read_secret(int(opts["--secret-fd"]))
    if not secret or "--listen" not in opts or "--connect" not in opts or not (command or "--client" in opts):
        raise SystemExit("the keeper needs --listen, --connect, a command (or --client) and %s" % SECRET_ENV)
    listen = address(opts["--listen"])
    family = socket.AF_INET6 if ":" in listen[0] else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(listen)
    listener.listen(8)
    client = json.loads(opts["--client"]) if "--client" in opts else None
    orphan_after = None
    if "--orphan-after" in opts:
        try:
            orphan_after = float(opts["--orphan-after"])
        except ValueError:
            orphan_after = -1.0
        if not 0 < orphan_after < float("inf"):
            raise SystemExit("--orphan-after takes a number of seconds > 0")
    if not command:  # a program someone else started, debugpy listening at --connect: held, not started
        keeper = Keeper(
            listener,
            address(opts["--connect"]),
            secret,
            opts.get("--status-file"),
            None,
            client,
            None,
            [],
            None,
            orphan_after=orphan_after,
        )
        keeper.run()
        return 0
    endpoints = endpoints_path(opts.get("--status-file"))
    births = births_socket()
    traces = traces_socket()
    env = debuggee_env(endpoints, births, client, traces)
    # no thread runs yet: preexec_fn is safe here
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    child = subprocess.Popen(
        command,
        env=env,
        stdout=out_w,
        stderr=err_w,
        preexec_fn=die_with_keeper if sys.platform == "linux" else None,  # noqa: PLW1509
    )
    os.close(out_w)
    os.close(err_w)
    streams = [Stream(out_r, "stdout", 1), Stream(err_r, "stderr", 2)]
    keeper = Keeper(
        listener,
        address(opts["--connect"]),
        secret,
        opts.get("--status-file"),
        child,
        client,
        endpoints,
        streams,
        births,
        traces,
        orphan_after=orphan_after,
    )

    def forward(signum, _frame):
        try:
            os.kill(child.pid, signum)
        except OSError:
            pass

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    threading.Thread(target=reap, args=(keeper, child.pid), name="reaper", daemon=True).start()
    keeper.run()
    end_leftovers()
    if births is not None:
        births.close()
    if traces is not None:
        traces.close()
    if endpoints is not None:
        forget_endpoints(endpoints)
    code = keeper.exit_code if keeper.exit_code is not None else -1
    if code < -1:  # ended by a signal: end the same way, so whoever waits for the keeper sees that
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
