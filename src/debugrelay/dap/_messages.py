"""DAP wire messages as msgspec Structs: an envelope tagged on ``type`` with a raw body."""

from __future__ import annotations

from typing import Any

import msgspec


class Request(msgspec.Struct, tag_field="type", tag="request", kw_only=True, omit_defaults=True):
    seq: int
    command: str
    # a child process of the debuggee the request is for (a keeper routes it); before ``arguments``, so
    # the keeper finds it without parsing them
    process: int | None = None
    arguments: dict[str, Any] | None = None


class Response(msgspec.Struct, tag_field="type", tag="response", kw_only=True):
    seq: int = 0
    request_seq: int
    command: str
    success: bool
    message: str | None = None
    body: msgspec.Raw = msgspec.Raw(b"null")


class Event(msgspec.Struct, tag_field="type", tag="event", kw_only=True):
    seq: int = 0
    event: str
    process: int | None = None  # set by a keeper on a child process's events
    body: msgspec.Raw = msgspec.Raw(b"null")


Message = Request | Response | Event

_decoder = msgspec.json.Decoder(Message)
_body_decoder = msgspec.json.Decoder(Any)
_encoder = msgspec.json.Encoder()


def decode_message(data: bytes) -> Request | Response | Event:
    message: Request | Response | Event = _decoder.decode(data)
    return message


def decode_body(raw: msgspec.Raw) -> Any:
    """Decode a message body lazily, only for messages someone reads."""
    return _body_decoder.decode(raw)


def encode_message(message: Request) -> bytes:
    return _encoder.encode(message)
