"""Redis state store: session records as JSON, output as capped Streams (cursor = stream id)."""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import msgspec
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from debugrelay.errors import StoreUnavailable
from debugrelay.models import BreakpointRecord, OutputEntry, SessionRecord

from .base import OutputPage, StateStore, bad_cursor, timestamp

log = logging.getLogger(__name__)
_CURSOR = re.compile(r"^\d+(-\d+)?$")
T = TypeVar("T")
_profiles_type = list[BreakpointRecord]


class RedisStore(StateStore):
    name = "redis"
    durable = True

    def __init__(self, client: Redis, *, namespace: str = "debugrelay", output_cap: int = 10_000) -> None:
        self.client = client
        self.ns = namespace
        self.output_cap = output_cap

    @classmethod
    def with_url(cls, url: str, **kwargs: Any) -> RedisStore:
        client = Redis.from_url(url, socket_timeout=3, socket_connect_timeout=3, retry_on_timeout=False)
        return cls(client, **kwargs)

    def _key(self, *parts: str) -> str:
        return ":".join((self.ns, *parts))

    async def _call(self, fn: Callable[[], Awaitable[T]]) -> T:
        try:
            return await fn()
        except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
            raise StoreUnavailable(f"Redis is unreachable: {exc.__class__.__name__}") from exc

    async def ping(self) -> bool:
        try:
            return bool(await self.client.ping())  # type: ignore[misc]
        except Exception:
            return False

    async def save_session(self, record: SessionRecord) -> None:
        data = msgspec.json.encode(record)
        await self._call(lambda: self.client.hset(self._key("sessions"), record.id, data))  # type: ignore[arg-type,return-value]

    async def get_session(self, session_id: str) -> SessionRecord | None:
        raw = await self._call(lambda: self.client.hget(self._key("sessions"), session_id))  # type: ignore[arg-type,return-value]
        return self._decode(session_id, raw)

    def _decode(self, session_id: str, raw: Any) -> SessionRecord | None:
        if raw is None:
            return None
        try:
            return msgspec.json.decode(raw, type=SessionRecord)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            log.warning("skipping unreadable session record %r: %s", session_id, exc)
            return None

    async def list_sessions(self) -> list[SessionRecord]:
        raw: dict[bytes, bytes] = await self._call(lambda: self.client.hgetall(self._key("sessions")))  # type: ignore[arg-type,return-value]
        records = [self._decode(k.decode("utf-8", "replace"), v) for k, v in raw.items()]
        return [r for r in records if r is not None]

    async def delete_session(self, session_id: str) -> None:
        async def run() -> None:
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.hdel(self._key("sessions"), session_id)
                pipe.delete(self._key("output", session_id), self._key("output-dropped", session_id))
                await pipe.execute()

        await self._call(run)

    async def append_output(self, session_id: str, entries: list[tuple[str, str, float]]) -> None:
        key = self._key("output", session_id)

        async def run() -> None:
            async with self.client.pipeline(transaction=False) as pipe:
                for kind, text, at in entries:
                    pipe.xadd(key, {"t": kind, "x": text, "at": repr(at)}, maxlen=self.output_cap, approximate=False)
                await pipe.execute()

        await self._call(run)

    async def read_output(self, session_id: str, since: str | None, limit: int) -> OutputPage:
        if since and not _CURSOR.match(since):
            raise bad_cursor(since)
        key = self._key("output", session_id)
        start = f"({since}" if since and since != "0" else "-"

        async def run() -> tuple[list[Any], int, Any]:
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.xrange(key, min=start, max="+", count=limit + 1)
                pipe.xlen(key)
                pipe.xrange(key, min="-", max="+", count=1)
                rows, total, first = await pipe.execute()
            return rows, total, first

        rows, total, first = await self._call(run)
        entries = [
            OutputEntry(
                type=fields[b"t"].decode(),
                text=fields[b"x"].decode("utf-8", "replace"),
                timestamp=timestamp(float(fields[b"at"])),
                cursor=entry_id.decode(),
            )
            for entry_id, fields in rows[:limit]
        ]
        dropped = 0
        if first and since and since != "0" and _id_lt(since, first[0][0].decode()):
            dropped = -1  # some entries after the cursor were dropped; the count is not kept
        cursor = entries[-1].cursor if entries else (since or "0")
        return OutputPage(entries, cursor, len(rows) > limit, dropped, total)

    async def clear_output(self, session_id: str) -> None:
        await self._call(lambda: self.client.delete(self._key("output", session_id)))  # type: ignore[arg-type,return-value]

    async def save_profile(self, name: str, breakpoints: list[BreakpointRecord]) -> None:
        data = msgspec.json.encode(breakpoints)
        await self._call(lambda: self.client.hset(self._key("profiles"), name, data))  # type: ignore[arg-type,return-value]

    async def get_profile(self, name: str) -> list[BreakpointRecord] | None:
        raw = await self._call(lambda: self.client.hget(self._key("profiles"), name))  # type: ignore[arg-type,return-value]
        if raw is None:
            return None
        try:
            return msgspec.json.decode(raw, type=_profiles_type)
        except (msgspec.DecodeError, msgspec.ValidationError):
            log.warning("skipping unreadable breakpoint profile %r", name)
            return None

    async def list_profiles(self) -> dict[str, list[BreakpointRecord]]:
        raw: dict[bytes, bytes] = await self._call(lambda: self.client.hgetall(self._key("profiles")))  # type: ignore[arg-type,return-value]
        out: dict[str, list[BreakpointRecord]] = {}
        for key, value in raw.items():
            try:
                out[key.decode()] = msgspec.json.decode(value, type=_profiles_type)
            except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError):
                log.warning("skipping unreadable breakpoint profile %r", key)
        return out

    async def close(self) -> None:
        await self.client.aclose()


def _id_lt(a: str, b: str) -> bool:
    def parts(x: str) -> tuple[int, int]:
        ms, _, seq = x.partition("-")
        return int(ms or 0), int(seq or 0)

    try:
        return parts(a) < parts(b)
    except ValueError:
        return False
