"""Content-Length framing of DAP messages over a byte stream, with a body-size guard."""

from __future__ import annotations

import asyncio

from debugrelay.errors import RelayError

MAX_BODY = 64 * 1024 * 1024
MAX_HEADER = 8 * 1024


class FramingError(RelayError):
    code = "dap_framing_error"
    status = 502


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


async def read_frame(reader: asyncio.StreamReader, max_body: int = MAX_BODY) -> bytes | None:
    """Read one message body; None at a clean end of stream between messages."""
    length: int | None = None
    header_bytes = 0
    while True:
        try:
            line = await reader.readuntil(b"\r\n")
        except asyncio.IncompleteReadError as exc:
            if not exc.partial and length is None and header_bytes == 0:
                return None
            raise FramingError("connection closed inside a message header") from exc
        except asyncio.LimitOverrunError as exc:
            raise FramingError("DAP header line too long") from exc
        header_bytes += len(line)
        if header_bytes > MAX_HEADER:
            raise FramingError("DAP header too long")
        if line == b"\r\n":
            break
        name, sep, value = line[:-2].partition(b":")
        if not sep:
            raise FramingError(f"malformed DAP header line {line[:80]!r}")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError as exc:
                raise FramingError(f"bad Content-Length {value[:40]!r}") from exc
    if length is None:
        raise FramingError("DAP message without Content-Length")
    if length < 0 or length > max_body:
        raise FramingError(f"DAP message body of {length} bytes exceeds the {max_body}-byte limit")
    try:
        return await reader.readexactly(length)
    except asyncio.IncompleteReadError as exc:
        raise FramingError("connection closed inside a message body") from exc
