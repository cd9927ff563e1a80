"""DAP framing and correlation against a scripted peer on a real loopback socket.

The peer is a stand-in for debugpy's adapter, named as such: it lets the tests cut frames
at awkward places, interleave events and leave a request unanswered on purpose.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from debugrelay.dap import DapClient, FramingError, frame, read_frame
from debugrelay.errors import DebugpyError, DebugpyTimeout, TargetGone

Peer = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def msg(**fields: object) -> bytes:
    return frame(json.dumps(fields).encode())


async def read_request(reader: asyncio.StreamReader) -> dict[str, object]:
    body = await read_frame(reader)
    assert body is not None
    data: dict[str, object] = json.loads(body)
    return data


@pytest.fixture
async def scripted_peer() -> AsyncIterator[Callable[[Peer], Awaitable[DapClient]]]:
    servers: list[asyncio.Server] = []
    clients: list[DapClient] = []

    async def start(peer: Peer) -> DapClient:
        server = await asyncio.start_server(peer, "127.0.0.1", 0)
        servers.append(server)
        port = server.sockets[0].getsockname()[1]
        client = await DapClient.connect("127.0.0.1", port, request_timeout=1.0)
        clients.append(client)
        return client

    yield start
    for client in clients:
        await client.close()
    for server in servers:
        server.close()
        await server.wait_closed()


async def feed(data: bytes) -> asyncio.StreamReader:
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    return reader


async def test_frames_split_across_reads_are_reassembled() -> None:
    reader = asyncio.StreamReader()
    payload = msg(seq=1, type="event", event="output", body={"output": "héllo"})
    for i in range(0, len(payload), 3):
        reader.feed_data(payload[i : i + 3])
    reader.feed_eof()
    body = await read_frame(reader)
    assert body is not None
    assert json.loads(body)["body"]["output"] == "héllo"
    assert await read_frame(reader) is None


async def test_oversized_body_is_refused_before_reading_it() -> None:
    reader = await feed(b"Content-Length: 999999999\r\n\r\n{}")
    with pytest.raises(FramingError, match="exceeds"):
        await read_frame(reader, max_body=1024)


async def test_header_without_content_length_is_an_error() -> None:
    with pytest.raises(FramingError, match="Content-Length"):
        await read_frame(await feed(b"X-Other: 1\r\n\r\n{}"))


async def test_eof_inside_a_body_is_an_error() -> None:
    with pytest.raises(FramingError, match="inside a message body"):
        await read_frame(await feed(b"Content-Length: 10\r\n\r\n{}"))


async def test_responses_match_requests_out_of_order_with_events_between(scripted_peer) -> None:
    async def peer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first = await read_request(reader)
        second = await read_request(reader)
        writer.write(msg(seq=1, type="event", event="output", body={"output": "a"}))
        writer.write(msg(seq=2, type="response", request_seq=second["seq"], command="b", success=True, body={"n": 2}))
        writer.write(msg(seq=3, type="event", event="stopped", body={"threadId": 7}))
        writer.write(msg(seq=4, type="response", request_seq=first["seq"], command="a", success=True, body={"n": 1}))
        await writer.drain()
        await reader.read()

    client = await scripted_peer(peer)
    events: list[tuple[str, object]] = []
    client.add_listener(lambda name, body: events.append((name, body)))
    stopped = client.expect_event("stopped")
    a, b = await asyncio.gather(client.request("a"), client.request("b"))
    assert (a, b) == ({"n": 1}, {"n": 2})
    assert await stopped == {"threadId": 7}
    assert [name for name, _ in events] == ["output", "stopped"]


async def test_unanswered_request_times_out_and_the_connection_stays_usable(scripted_peer) -> None:
    async def peer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)  # never answered, as debugpy does with some requests
        later = await read_request(reader)
        writer.write(
            msg(seq=1, type="response", request_seq=later["seq"], command="threads", success=True, body={"threads": []})
        )
        await writer.drain()
        await reader.read()

    client = await scripted_peer(peer)
    with pytest.raises(DebugpyTimeout) as info:
        await client.request("evaluate", timeout=0.2)
    assert info.value.status == 504
    assert await client.request("threads") == {"threads": []}


async def test_failed_response_raises_with_debuggers_message(scripted_peer) -> None:
    async def peer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        req = await read_request(reader)
        writer.write(
            msg(
                seq=1,
                type="response",
                request_seq=req["seq"],
                command="evaluate",
                success=False,
                message="NameError: name 'nope' is not defined",
            )
        )
        await writer.drain()
        await reader.read()

    client = await scripted_peer(peer)
    with pytest.raises(DebugpyError, match="NameError"):
        await client.request("evaluate")


async def test_peer_closing_fails_pending_requests_and_waiters(scripted_peer) -> None:
    async def peer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.close()

    client = await scripted_peer(peer)
    waiter = client.expect_event("terminated")
    with pytest.raises(TargetGone):
        await client.request("continue")
    with pytest.raises(TargetGone):
        await waiter
    assert client.closed.is_set()
    with pytest.raises(TargetGone):
        client.send("threads")


async def test_garbage_message_is_dropped_and_reading_goes_on(scripted_peer) -> None:
    async def peer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        req = await read_request(reader)
        writer.write(frame(b"{not json"))
        writer.write(msg(seq=2, type="response", request_seq=req["seq"], command="x", success=True, body={}))
        await writer.drain()
        await reader.read()

    client = await scripted_peer(peer)
    assert await client.request("x") == {}


async def test_reverse_request_is_answered_with_an_error(scripted_peer) -> None:
    answered: asyncio.Future[dict[str, object]] = asyncio.get_running_loop().create_future()

    async def peer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(msg(seq=1, type="request", command="runInTerminal", arguments={}))
        await writer.drain()
        answered.set_result(await read_request(reader))
        await reader.read()

    await scripted_peer(peer)
    reply = await asyncio.wait_for(answered, 5)
    assert reply["request_seq"] == 1
    assert reply["success"] is False
