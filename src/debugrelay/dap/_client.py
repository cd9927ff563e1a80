"""Async DAP client: one reader task per connection, responses matched by ``request_seq``.

Callers never read the socket. Each request has a timeout because debugpy leaves some requests
unanswered forever (e.g. ``attach`` until ``configurationDone``, anything after the target died).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import re
import socket
from collections.abc import Callable
from typing import Any

import msgspec

from debugrelay.errors import DebugpyError, DebugpyTimeout, TargetGone

from ._framing import FramingError, frame, read_frame
from ._keeper import GREETING, HELLO_EVENT, prove
from ._messages import Event, Request, Response, decode_body, decode_message, encode_message

log = logging.getLogger(__name__)

EventListener = Callable[[str, Any], None]
ProcessListener = Callable[[int, str, Any], None]
# what debugpy's adapter answers when the program's side of it is gone or going (adapter/components.py)
_GOING_AWAY = re.compile(r"disconnected unexpectedly|\bis not available\b|has disconnected")


class DapClient:
    """A connected DAP peer. Create with :meth:`connect`; close with :meth:`close`."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        request_timeout: float = 10.0,
        name: str = "dap",
    ) -> None:
        self._reader = reader
        self._writer = writer
        self.request_timeout = request_timeout
        self.name = name
        self._seq = itertools.count(1)
        self._pending: dict[int, tuple[str, asyncio.Future[Response]]] = {}
        self._listeners: list[EventListener] = []
        self._process_listeners: list[ProcessListener] = []
        self._waiters: list[tuple[str, Callable[[Any], bool] | None, asyncio.Future[Any]]] = []
        self.closed = asyncio.Event()
        self.close_reason: str = ""
        self.keeper: dict[str, Any] | None = None  # a keeper's state, sent before anything else
        self._reader_task = asyncio.create_task(self._read_loop(), name=f"{name}-reader")

    @classmethod
    async def connect(
        cls,
        host: str,
        port: int,
        *,
        timeout: float = 5.0,
        request_timeout: float = 10.0,
        name: str = "dap",
        secret: str | None = None,
        stored_output: int | None = None,
    ) -> DapClient:
        """Connect to debugpy, or with ``secret`` to a target's keeper (proving the secret first).

        Through a keeper, ``client.keeper`` holds its state; the events it queued while no relay was
        connected follow, in order, to the listeners added before the caller's next ``await``, after
        the output events it sent since ``stored_output`` (the last one this relay's store holds).
        """
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port, limit=1024 * 1024), timeout)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                keep_probing(sock)
        hello: dict[str, Any] | None = None
        if secret is not None:
            try:
                hello = await asyncio.wait_for(_keeper_handshake(reader, writer, secret, stored_output), timeout)
            except BaseException:
                writer.close()
                raise
        client = cls(reader, writer, request_timeout=request_timeout, name=name)
        client.keeper = hello
        return client

    # -- listeners -------------------------------------------------------------------------

    def add_listener(self, listener: EventListener) -> None:
        """Call ``listener(event, body)`` for every event, in order, from the reader task."""
        self._listeners.append(listener)

    def add_process_listener(self, listener: ProcessListener) -> None:
        """Call ``listener(pid, event, body)`` for every event of a child process (a keeper's, tagged)."""
        self._process_listeners.append(listener)

    def expect_event(self, event: str, predicate: Callable[[Any], bool] | None = None) -> asyncio.Future[Any]:
        """A future for the next ``event`` matching ``predicate``; register before triggering it."""
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self.closed.is_set():
            fut.set_exception(TargetGone(f"debug connection closed: {self.close_reason}"))
        else:
            self._waiters.append((event, predicate, fut))
        return fut

    # -- requests --------------------------------------------------------------------------

    def send(
        self, command: str, arguments: dict[str, Any] | None = None, *, process: int | None = None
    ) -> asyncio.Future[Response]:
        """Send a request now and return the future of its response (no timeout applied)."""
        if self.closed.is_set():
            raise TargetGone(f"debug connection closed: {self.close_reason}")
        seq = next(self._seq)
        fut: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        self._pending[seq] = (command, fut)
        payload = encode_message(Request(seq=seq, command=command, process=process, arguments=arguments))
        self._writer.write(frame(payload))
        return fut

    async def request(
        self,
        command: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        process: int | None = None,
    ) -> Any:
        """Send ``command`` (to child process ``process``, through a keeper) and return its decoded body;
        raise on failure or timeout."""
        fut = self.send(command, arguments, process=process)
        return await self.result(fut, command, timeout)

    async def result(self, fut: asyncio.Future[Response], command: str, timeout: float | None = None) -> Any:
        """Await a response future from :meth:`send` and decode it like :meth:`request`."""
        try:
            response = await asyncio.wait_for(
                asyncio.shield(fut), timeout if timeout is not None else self.request_timeout
            )
        except TimeoutError as exc:
            self._forget(fut)
            raise DebugpyTimeout(
                f"debugpy did not answer '{command}' in time",
                details={"operation": command},
                hint="Retry; if the target is busy in native code, pause it or terminate the session.",
            ) from exc
        if not response.success:
            message = response.message or f"'{command}' failed"
            if _GOING_AWAY.search(message):
                raise TargetGone(
                    f"the target is going away: {message}",
                    details={"operation": command},
                    hint="The program is ending or has ended: read its status and output, then relaunch.",
                )
            raise DebugpyError(message, details={"operation": command})
        return decode_body(response.body)

    def _forget(self, fut: asyncio.Future[Response]) -> None:
        for seq, (_, pending) in list(self._pending.items()):
            if pending is fut:
                del self._pending[seq]
        if not fut.done():
            fut.cancel()

    def _drop_waiter(self, fut: asyncio.Future[Any]) -> None:
        self._waiters = [w for w in self._waiters if w[2] is not fut]

    # -- reader ----------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        reason = "closed by the target"
        try:
            while True:
                data = await read_frame(self._reader)
                if data is None:
                    break
                try:
                    message = decode_message(data)
                except msgspec.DecodeError:
                    log.warning("%s: undecodable DAP message dropped: %r", self.name, data[:200])
                    continue
                if isinstance(message, Response):
                    self._on_response(message)
                elif isinstance(message, Event):
                    self._on_event(message)
                else:
                    self._refuse(message)
        except FramingError as exc:
            reason = exc.message
            log.warning("%s: %s", self.name, reason)
        except (ConnectionError, OSError) as exc:
            reason = f"connection lost: {exc}"
        except asyncio.CancelledError:
            reason = "closed by the relay"
            raise
        finally:
            self._shutdown(reason)

    def _on_response(self, message: Response) -> None:
        entry = self._pending.pop(message.request_seq, None)
        if entry is None:
            log.debug("%s: response to unknown request %s dropped", self.name, message.request_seq)
            return
        if not entry[1].done():
            entry[1].set_result(message)

    def _on_event(self, message: Event) -> None:
        body = decode_body(message.body)
        if message.process is not None:
            for process_listener in list(self._process_listeners):
                try:
                    process_listener(message.process, message.event, body)
                except Exception:
                    log.exception("%s: process listener failed on %s", self.name, message.event)
            return
        for listener in list(self._listeners):
            try:
                listener(message.event, body)
            except Exception:
                log.exception("%s: event listener failed on %s", self.name, message.event)
        remaining = []
        for name, predicate, fut in self._waiters:
            if fut.done():
                continue
            if name == message.event and (predicate is None or predicate(body)):
                fut.set_result(body)
            else:
                remaining.append((name, predicate, fut))
        self._waiters = remaining

    def _refuse(self, message: Request) -> None:
        """Reverse requests (adapter → client, e.g. runInTerminal) are refused: the relay starts targets itself."""
        response = {
            "seq": next(self._seq),
            "type": "response",
            "request_seq": message.seq,
            "command": message.command,
            "success": False,
            "message": f"'{message.command}' is not supported by debugrelay",
        }
        with contextlib.suppress(Exception):
            self._writer.write(frame(msgspec.json.encode(response)))

    def _shutdown(self, reason: str) -> None:
        if self.closed.is_set():
            return
        self.close_reason = reason
        self.closed.set()
        gone = TargetGone(f"debug connection closed: {reason}")
        for _, fut in self._pending.values():
            if not fut.done():
                fut.set_exception(gone)
        self._pending.clear()
        for _, _, fut in self._waiters:
            if not fut.done():
                fut.set_exception(gone)
        self._waiters.clear()
        for listener in list(self._listeners):
            with contextlib.suppress(Exception):
                listener("_closed", {"reason": reason})
        with contextlib.suppress(Exception):
            self._writer.close()

    async def close(self) -> None:
        """Close the connection and stop the reader; pending requests fail with TargetGone."""
        self._reader_task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader_task
        self._shutdown("closed by the relay")
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._writer.wait_closed(), 1.0)


# a peer whose network went away with it (a container's, a pod's) sends no end: after this long without a
# byte, probes every few seconds; unanswered, the connection ends, and with it the run (``_closed``)
KEEPALIVE_IDLE, KEEPALIVE_EVERY, KEEPALIVE_PROBES = 10, 5, 3


def keep_probing(sock: socket.socket) -> None:
    """TCP keepalive on a debug connection: a live target's kernel answers the probes, paused or not."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for option, value in (
        ("TCP_KEEPIDLE", KEEPALIVE_IDLE),
        ("TCP_KEEPINTVL", KEEPALIVE_EVERY),
        ("TCP_KEEPCNT", KEEPALIVE_PROBES),
    ):
        if hasattr(socket, option):
            sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, option), value)


def let_go(*futures: asyncio.Future[Any]) -> None:
    """Futures no one awaits any more (their caller failed first): whatever they end with is settled, never
    reported as "exception was never retrieved" into the relay's log."""
    for future in futures:
        future.add_done_callback(_settled)


def _settled(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


MAX_GREETING = 256  # the greeting line: a fixed word and a nonce


async def _keeper_handshake(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, secret: str, stored_output: int | None
) -> dict[str, Any]:
    """Answer the keeper's greeting (with the last output event stored, if known) and read its state. A
    connection that closes first (a published container port accepts before the keeper listens) raises
    ConnectionError: the caller retries."""
    try:
        line = await reader.readline()
    except (ValueError, asyncio.LimitOverrunError) as exc:  # a line longer than the stream's limit
        raise ConnectionError("not a debugrelay keeper") from exc
    if not line:
        raise ConnectionError("closed before the keeper's greeting")
    if not line.startswith(GREETING) or len(line) > MAX_GREETING:
        raise ConnectionError("not a debugrelay keeper")  # the peer's bytes are never echoed
    stored = b"" if stored_output is None else b" %d" % stored_output
    writer.write(prove(secret, line[len(GREETING) :].strip()) + stored + b"\n")
    try:
        data = await read_frame(reader)
    except FramingError as exc:
        raise ConnectionError(f"the keeper closed the connection: {exc.message}") from exc
    if data is None:
        raise ConnectionError("the keeper refused the connection (wrong secret?)")
    try:
        message = decode_message(data)
        state = decode_body(message.body) if isinstance(message, Event) and message.event == HELLO_EVENT else None
    except msgspec.DecodeError:
        state = None
    if not isinstance(state, dict):
        raise ConnectionError("the keeper did not send its state first")
    return state


class Channel:
    """One process of a debug connection: the root's requests as they are, a child's tagged for the keeper.

    Reads of a stop go to the process that stopped through it; everything else a session does speaks
    to the root over the connection itself."""

    def __init__(self, client: DapClient, process: int | None = None) -> None:
        self.client = client
        self.process = process

    @property
    def closed(self) -> asyncio.Event:
        return self.client.closed

    @property
    def close_reason(self) -> str:
        return self.client.close_reason

    def send(self, command: str, arguments: dict[str, Any] | None = None) -> asyncio.Future[Response]:
        return self.client.send(command, arguments, process=self.process)

    async def request(
        self, command: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> Any:
        return await self.client.request(command, arguments, timeout=timeout, process=self.process)

    async def result(self, fut: asyncio.Future[Response], command: str, timeout: float | None = None) -> Any:
        return await self.client.result(fut, command, timeout)
