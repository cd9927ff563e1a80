"""Redis state store: session records as JSON, output as capped Streams (cursor = stream id), leases.

Keys, all under the namespace (``DEBUGRELAY_REDIS_NAMESPACE``, default ``debugrelay``):

- ``{ns}:sessions``        hash  session id → SessionRecord JSON
- ``{ns}:activity``        hash  session id → last activity (unix time; the idle deadline's base)
- ``{ns}:output:{id}``     stream of output entries, capped in entries and bytes (``DEBUGRELAY_OUTPUT_BUFFER_*``);
                           ``…:output-bytes:{id}`` its size, ``…:output-batch:{id}`` the last batch written,
                           ``…:output-seq:{id}`` the keeper's number of the last output event stored
- ``{ns}:lease:{id}``      string ``{"owner", "url"}`` with a TTL: the relay carrying the session on
- ``{ns}:instance:{id}``   string with a TTL: a relay replica's URL and start time
- ``{ns}:calls:{id}``      string  the session's traced calls (JSON)
- ``{ns}:profiles``        hash  profile name → breakpoint list JSON
- ``{ns}:audit``           list  the audit trail's newest entries (JSON), newest first; ``…:audit-of:{name}``
                           each credential's own newest, ``…:audit-names`` (sorted set) whose, by last write
- ``{ns}:redactions:{id}`` hash  placeholder → redaction entry JSON (the secret it stands for)
- ``{ns}:evidence:…``      the evidence namespace (:mod:`.redis_evidence`)

Whatever cannot be read (bad JSON, a record filed under another id, a key of the wrong type) is
skipped with a warning, or set aside under ``…:unreadable:{time}``; the relay never fails on it.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import msgspec
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import OutOfMemoryError, ReadOnlyError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from debugrelay.errors import StoreUnavailable
from debugrelay.models import BreakpointRecord, OutputEntry, SessionRecord, StoredProfile

from .base import AUDIT_NAMES, OUTPUT_BYTES, AuditItem, Lease, OutputPage, StateStore, bad_cursor, timestamp
from .redis_evidence import RedisEvidence

log = logging.getLogger(__name__)
# KEYS: the stream, the last batch's id, the stream's size in bytes, the keeper's last output number;
# ARGV: batch id, entries cap, bytes cap, that number ('' for none), then (type, text, time) per entry.
# The oldest entries go until both caps hold, never the newest.
_APPEND = """
if ARGV[1] ~= '' and redis.call('GET', KEYS[2]) == ARGV[1] then return 0 end
if ARGV[4] ~= '' and tonumber(ARGV[4]) > (tonumber(redis.call('GET', KEYS[4]) or '0') or 0) then
  redis.call('SET', KEYS[4], ARGV[4])
end
local size = 0
if redis.call('EXISTS', KEYS[1]) == 1 then size = tonumber(redis.call('GET', KEYS[3]) or '0') or 0 end
for i = 5, #ARGV, 3 do
  redis.call('XADD', KEYS[1], '*', 't', ARGV[i], 'x', ARGV[i + 1], 'at', ARGV[i + 2])
  size = size + #ARGV[i + 1]
end
local cap, max_bytes = tonumber(ARGV[2]), tonumber(ARGV[3])
local n = redis.call('XLEN', KEYS[1])
while n > 1 and (n > cap or size > max_bytes) do
  local oldest = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)[1]
  local fields = oldest[2]
  for j = 1, #fields, 2 do
    if fields[j] == 'x' then size = size - #fields[j + 1] end
  end
  redis.call('XDEL', KEYS[1], oldest[1])
  n = n - 1
end
if size < 0 then size = 0 end
redis.call('SET', KEYS[3], size)
if ARGV[1] ~= '' then redis.call('SET', KEYS[2], ARGV[1]) end
return 1
"""
_CURSOR = re.compile(r"^\d+(-\d+)?$")
T = TypeVar("T")

# A call fails within ~2.5 s when Redis hangs and at once when it is down; a connection that broke
# (Redis restarted) is retried once on a fresh one, so the first call after a restart succeeds.
SOCKET_TIMEOUT = 2.5

_CLAIM = """
local cur = redis.call('GET', KEYS[1])
if cur then
  local ok, v = pcall(cjson.decode, cur)
  local pttl = redis.call('PTTL', KEYS[1])
  if ok and type(v) == 'table' and type(v['owner']) == 'string' and v['owner'] ~= ARGV[1]
     and v['owner'] ~= ARGV[4] and pttl > 0 then
    return {cur, pttl}
  end
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return {ARGV[2], tonumber(ARGV[3])}
"""

_RENEW = """
local lost = {}
for i, key in ipairs(KEYS) do
  local cur = redis.call('GET', key)
  local mine = true
  if cur then
    local ok, v = pcall(cjson.decode, cur)
    if ok and type(v) == 'table' and type(v['owner']) == 'string' and v['owner'] ~= ARGV[1]
       and redis.call('PTTL', key) > 0 then
      mine = false
    end
  end
  if mine then redis.call('SET', key, ARGV[2], 'PX', ARGV[3]) else table.insert(lost, i) end
end
return lost
"""

_RELEASE = """
local cur = redis.call('GET', KEYS[1])
if cur then
  local ok, v = pcall(cjson.decode, cur)
  if ok and type(v) == 'table' and v['owner'] == ARGV[1] then return redis.call('DEL', KEYS[1]) end
end
return 0
"""


# KEYS: the sessions hash; ARGV: the record's id, its JSON, then (name, limit) per credential checked. A
# record counts against its owner (created_by) and its maker (made_by) unless it is terminated
# (SessionRecord.counted_against); one Redis cannot read is counted against nobody. Saved only when every
# credential checked holds fewer than its limit: {} then, else {name, count} of the first that does not.
_SAVE_WITHIN = """
local held, limits = {}, {}
for i = 3, #ARGV, 2 do
  held[ARGV[i]] = 0
  limits[#limits + 1] = {ARGV[i], tonumber(ARGV[i + 1])}
end
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  if all[i] ~= ARGV[1] then
    local ok, r = pcall(cjson.decode, all[i + 1])
    if ok and type(r) == 'table' and r['status'] ~= 'terminated' then
      local owner, maker = r['created_by'], r['made_by']
      if type(owner) == 'string' and held[owner] then held[owner] = held[owner] + 1 end
      if type(maker) == 'string' and maker ~= owner and held[maker] then held[maker] = held[maker] + 1 end
    end
  end
end
for _, limit in ipairs(limits) do
  if held[limit[1]] >= limit[2] then return {limit[1], held[limit[1]]} end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return {}
"""


class _LeaseValue(msgspec.Struct):
    owner: str
    url: str = ""


_REFUSALS = {  # Redis's answers that refuse a write while it is reachable, and what the operator does
    "OOM": "Redis is full (maxmemory): delete sessions you no longer need, or give Redis more memory.",
    "MISCONF": "Redis cannot persist (its disk): see Redis's log; the relay keeps the changes meanwhile.",
    "READONLY": "DEBUGRELAY_REDIS_URL names a read-only replica: point it at the primary.",
}


def _refusal(exc: ResponseError) -> str | None:
    """Which of Redis's write refusals ``exc`` is (redis-py strips the code of those it has a class for)."""
    if isinstance(exc, OutOfMemoryError):
        return "OOM"
    if isinstance(exc, ReadOnlyError):
        return "READONLY"
    code = str(exc).split(" ", 1)[0]
    return code if code in _REFUSALS else None


class RedisStore(StateStore):
    name = "redis"
    durable = True

    def __init__(
        self,
        client: Redis,
        *,
        namespace: str = "debugrelay",
        output_cap: int = 10_000,
        output_bytes: int = OUTPUT_BYTES,
    ) -> None:
        self.client = client
        self.ns = namespace
        self.output_cap = output_cap
        self.output_bytes = output_bytes
        self._warned: set[str] = set()
        self._claim = client.register_script(_CLAIM)
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)
        self._save_within = client.register_script(_SAVE_WITHIN)
        self._evidence = RedisEvidence(self)

    @classmethod
    def with_url(cls, url: str, **kwargs: Any) -> RedisStore:
        client = Redis.from_url(
            url,
            socket_timeout=SOCKET_TIMEOUT,
            socket_connect_timeout=SOCKET_TIMEOUT,
            retry=Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)),
            health_check_interval=10,
        )
        return cls(client, **kwargs)

    def _key(self, *parts: str) -> str:
        return ":".join((self.ns, *parts))

    async def _call(self, fn: Callable[[], Awaitable[T]]) -> T:
        try:
            return await fn()
        except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
            raise StoreUnavailable(
                f"Redis is unreachable ({exc.__class__.__name__}: {str(exc)[:120]})",
                details={"store": "redis"},
            ) from exc
        except ResponseError as exc:
            refusal = _refusal(exc)
            if refusal is None:
                raise
            # reachable but refusing writes (full under maxmemory, failing to persist, a read-only replica):
            # to the relay as good as down, and what it could not write waits for Redis to take it
            self._warn_once(f"refusal:{refusal}", "Redis refuses writes (%s: %s): %s", refusal, exc, _REFUSALS[refusal])
            raise StoreUnavailable(
                f"Redis refuses writes ({refusal}: {str(exc)[:160]})",
                details={"store": "redis", "refusal": refusal},
                hint=_REFUSALS[refusal],
            ) from exc

    def _warn_once(self, key: str, message: str, *args: Any) -> None:
        if key not in self._warned:
            self._warned.add(key)
            log.warning(message, *args)

    async def ping(self) -> bool:
        try:
            return bool(await self.client.ping())
        except Exception:
            return False

    async def check(self) -> list[str]:
        """Set aside keys of the wrong type (they would fail every call on them)."""
        warnings = []
        for part in ("sessions", "activity", "profiles"):
            key = self._key(part)
            kind = await self._call(lambda k=key: self.client.type(k))  # type: ignore[misc]
            kind = kind.decode() if isinstance(kind, bytes) else str(kind)
            if kind not in ("hash", "none"):
                aside = await self._set_aside(key)
                warnings.append(f"'{key}' held a {kind}, not a hash: moved to '{aside}', starting fresh")
        for text in warnings:
            log.warning("state store: %s", text)
        return warnings

    async def _set_aside(self, key: str) -> str:
        aside = f"{key}:unreadable:{int(time.time() * 1000)}"
        await self._call(lambda: self.client.rename(key, aside))
        return aside

    # -- sessions --------------------------------------------------------------------------

    async def save_session(self, record: SessionRecord) -> None:
        data = msgspec.json.encode(record)
        await self._call(lambda: self.client.hset(self._key("sessions"), record.id, data))

    async def save_within(self, record: SessionRecord, limits: Sequence[tuple[str, int]]) -> tuple[str, int] | None:
        args: list[str | bytes | int] = [record.id, msgspec.json.encode(record)]
        for name, limit in limits:
            args += [name, limit]
        found = await self._call(lambda: self._save_within(keys=[self._key("sessions")], args=args))
        if not found:
            return None
        name, count = found
        return (name.decode() if isinstance(name, bytes) else str(name)), int(count)

    async def get_session(self, session_id: str) -> SessionRecord | None:
        async def run() -> list[Any]:
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.hget(self._key("sessions"), session_id)
                pipe.hget(self._key("activity"), session_id)
                return await pipe.execute(raise_on_error=False)

        raw, activity = await self._call(run)
        if isinstance(raw, ResponseError):
            self._warn_once("sessions:type", "cannot read %s: %s", self._key("sessions"), raw)
            return None
        return self._decode(session_id, raw, activity)

    def _decode(self, session_id: str, raw: Any, activity: Any = None) -> SessionRecord | None:
        if raw is None:
            return None
        try:
            record = msgspec.json.decode(raw, type=SessionRecord)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            self._warn_once(f"{session_id}:{hash(raw)}", "skipping unreadable session record %r: %s", session_id, exc)
            return None
        if record.id != session_id:
            self._warn_once(
                f"{session_id}:{hash(raw)}",
                "skipping foreign session record %r (it says it is %r)",
                session_id,
                record.id,
            )
            return None
        try:
            if activity:
                record.last_activity = max(record.last_activity, float(activity))
        except (TypeError, ValueError):
            self._warn_once(f"activity:{session_id}", "ignoring unreadable activity mark of %r", session_id)
        return record

    async def list_sessions(self) -> list[SessionRecord]:
        async def run() -> list[Any]:
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.hgetall(self._key("sessions"))
                pipe.hgetall(self._key("activity"))
                return await pipe.execute(raise_on_error=False)

        raw, activity = await self._call(run)
        if isinstance(raw, ResponseError):
            self._warn_once("sessions:type", "cannot read %s: %s", self._key("sessions"), raw)
            return []
        if isinstance(activity, ResponseError):
            activity = {}
        records = []
        for key, value in raw.items():
            try:
                sid = key.decode()
            except UnicodeDecodeError:
                self._warn_once(f"key:{key!r}", "skipping a session record under an unreadable key %r", key)
                continue
            record = self._decode(sid, value, activity.get(key))
            if record is not None:
                records.append(record)
        return records

    async def delete_session(self, session_id: str) -> None:
        async def run() -> None:
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.hdel(self._key("sessions"), session_id)
                pipe.hdel(self._key("activity"), session_id)
                pipe.delete(
                    self._key("output", session_id),
                    self._key("output-batch", session_id),
                    self._key("output-bytes", session_id),
                    self._key("output-seq", session_id),
                    self._key("lease", session_id),
                    self._key("redactions", session_id),
                    self._key("calls", session_id),
                )
                self._evidence.drop_in(pipe, session_id)
                await pipe.execute()

        await self._call(run)

    @property
    def evidence(self) -> RedisEvidence:
        return self._evidence

    async def save_activity(self, activity: dict[str, float]) -> None:
        if activity:
            mapping: dict[str | bytes, str | bytes] = {k: repr(v) for k, v in activity.items()}
            await self._call(lambda: self.client.hset(self._key("activity"), mapping=mapping))  # type: ignore[arg-type]

    # -- output ----------------------------------------------------------------------------

    async def append_output(
        self,
        session_id: str,
        entries: list[tuple[str, str, float]],
        batch_id: str | None = None,
        seq: int | None = None,
    ) -> None:
        key = self._key("output", session_id)
        marker = self._key("output-batch", session_id)
        size = self._key("output-bytes", session_id)
        keeper_seq = self._key("output-seq", session_id)
        args: list[str | int] = [batch_id or "", self.output_cap, self.output_bytes, "" if seq is None else seq]
        for kind, text, at in entries:
            args += [kind, text, repr(at)]

        async def run() -> None:
            # one script: Redis runs it whole or not at all, and a batch already written is skipped
            await self.client.eval(_APPEND, 4, key, marker, size, keeper_seq, *args)

        try:
            await self._call(run)
        except ResponseError as exc:
            if "WRONGTYPE" not in str(exc):
                raise
            aside = await self._set_aside(key)
            log.warning("output key %s held another type: moved to %s", key, aside)
            await self._call(run)

    async def output_seq(self, session_id: str) -> int:
        raw = await self._call(lambda: self.client.get(self._key("output-seq", session_id)))
        try:
            return max(0, int(raw or 0))
        except ValueError:
            return 0  # not a number: not written by a relay, read as none

    async def read_output(self, session_id: str, since: str | None, limit: int, *, newest: bool = False) -> OutputPage:
        if since and not _CURSOR.match(since):
            raise bad_cursor(since)
        key = self._key("output", session_id)
        start = f"({since}" if since and since != "0" else "-"

        async def run() -> tuple[list[Any], int, Any]:
            async with self.client.pipeline(transaction=False) as pipe:
                if newest:  # the last ones after the cursor, newest first
                    pipe.xrevrange(key, max="+", min=start, count=limit + 1)
                else:
                    pipe.xrange(key, min=start, max="+", count=limit + 1)
                pipe.xlen(key)
                pipe.xrange(key, min="-", max="+", count=1)
                rows, total, first = await pipe.execute()
            return rows, total, first

        try:
            rows, total, first = await self._call(run)
        except ResponseError as exc:
            if "WRONGTYPE" not in str(exc):
                raise
            self._warn_once(f"output:{key}", "output key %s is not a stream: skipped", key)
            return OutputPage([], since or "0", False, notes=["the stored output could not be read"])
        skipped = 0
        if newest:
            skipped = -1 if len(rows) > limit else 0
            rows = list(reversed(rows[:limit]))
        entries = self._entries(key, rows[:limit])
        dropped = 0
        if first and since and since != "0" and _id_lt(since, first[0][0].decode()):
            dropped = -1  # some entries after the cursor were dropped; the count is not kept
        cursor = rows[:limit][-1][0].decode() if rows[:limit] else (since or "0")
        if newest:
            return OutputPage(entries, cursor, False, dropped, total, skipped=skipped)
        return OutputPage(entries, cursor, len(rows) > limit, dropped, total)

    def _entries(self, key: str, rows: list[Any]) -> list[OutputEntry]:
        entries = []
        for entry_id, fields in rows:
            try:
                entries.append(
                    OutputEntry(
                        type=fields[b"t"].decode(),
                        text=fields[b"x"].decode("utf-8", "replace"),
                        timestamp=timestamp(float(fields[b"at"])),
                        cursor=entry_id.decode(),
                    )
                )
            except (KeyError, ValueError, UnicodeDecodeError):
                self._warn_once(f"entry:{key}:{entry_id!r}", "skipping unreadable output entry %r of %s", entry_id, key)
        return entries

    async def output_before(self, session_id: str, cursor: str, limit: int) -> list[OutputEntry]:
        if not _CURSOR.match(cursor) or cursor == "0":
            return []
        key = self._key("output", session_id)
        try:
            rows = await self._call(lambda: self.client.xrevrange(key, max=cursor, min="-", count=limit))
        except ResponseError:
            return []  # not a stream: read_output says so
        return self._entries(key, list(rows or [])[::-1])

    async def clear_output(self, session_id: str) -> None:
        await self._call(
            lambda: self.client.delete(self._key("output", session_id), self._key("output-bytes", session_id))
        )

    # -- redaction placeholders ------------------------------------------------------------

    async def add_redactions(self, session_id: str, entries: dict[str, bytes]) -> None:
        if entries:
            mapping: dict[str | bytes, bytes] = {k: v for k, v in entries.items()}  # noqa: C416 - key type widens
            await self._call(lambda: self.client.hset(self._key("redactions", session_id), mapping=mapping))  # type: ignore[arg-type]

    async def get_redactions(self, session_id: str) -> dict[str, bytes]:
        try:
            raw: dict[Any, Any] = await self._call(lambda: self.client.hgetall(self._key("redactions", session_id)))
        except ResponseError as exc:
            self._warn_once(f"redactions:{session_id}", "cannot read the placeholders of %s: %s", session_id, exc)
            return {}
        return {(k.decode() if isinstance(k, bytes) else str(k)): bytes(v) for k, v in raw.items()}

    # -- traced calls ------------------------------------------------------------------------

    async def append_audit(self, entries: list[AuditItem], keep: int, keep_each: int) -> None:
        names = self._key("audit-names")

        async def run() -> list[Any]:
            async with self.client.pipeline(transaction=True) as pipe:
                now = time.time()
                for who, entry in entries:
                    pipe.lpush(self._key("audit"), entry)
                    if who is not None:
                        pipe.lpush(self._key("audit-of", who), entry)
                        pipe.ltrim(self._key("audit-of", who), 0, keep_each - 1)
                        pipe.zadd(names, {who: now})
                pipe.ltrim(self._key("audit"), 0, keep - 1)
                pipe.zcard(names)
                return await pipe.execute()

        async def prune(excess: int) -> None:
            gone = [
                n.decode() if isinstance(n, bytes) else str(n) for n in await self.client.zrange(names, 0, excess - 1)
            ]
            if gone:
                async with self.client.pipeline(transaction=True) as pipe:
                    pipe.delete(*(self._key("audit-of", n) for n in gone))
                    pipe.zrem(names, *gone)
                    await pipe.execute()

        if entries:
            counted = (await self._call(run))[-1]
            if isinstance(counted, int) and counted > AUDIT_NAMES:  # those that wrote longest ago go
                await self._call(lambda: prune(counted - AUDIT_NAMES))

    async def read_audit(self) -> list[bytes]:
        async def run() -> list[Any]:
            names = await self.client.zrange(self._key("audit-names"), 0, -1)
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.lrange(self._key("audit"), 0, -1)
                for name in names:
                    pipe.lrange(self._key("audit-of", name.decode() if isinstance(name, bytes) else str(name)), 0, -1)
                return await pipe.execute(raise_on_error=False)

        found = await self._call(run)
        lists = [items for items in found if isinstance(items, list)]  # a key of the wrong type reads as none
        return list(dict.fromkeys(item for items in lists for item in items if isinstance(item, bytes)))

    async def save_traced_calls(self, session_id: str, data: bytes) -> None:
        await self._call(lambda: self.client.set(self._key("calls", session_id), data))

    async def get_traced_calls(self, session_id: str) -> bytes | None:
        raw = await self._call(lambda: self.client.get(self._key("calls", session_id)))
        return raw if isinstance(raw, bytes) else None

    # -- breakpoint profiles -----------------------------------------------------------------

    async def save_profile(self, name: str, profile: StoredProfile) -> None:
        data = msgspec.json.encode(profile)
        await self._call(lambda: self.client.hset(self._key("profiles"), name, data))

    async def get_profile(self, name: str) -> StoredProfile | None:
        raw = await self._call(lambda: self.client.hget(self._key("profiles"), name))
        return _decode_profile(name, raw) if isinstance(raw, bytes) else None

    async def list_profiles(self) -> dict[str, StoredProfile]:
        raw: dict[bytes, bytes] = await self._call(lambda: self.client.hgetall(self._key("profiles")))  # type: ignore[arg-type,return-value]
        out: dict[str, StoredProfile] = {}
        for key, value in raw.items():
            try:
                name = key.decode()
            except UnicodeDecodeError:
                log.warning("skipping unreadable breakpoint profile %r", key)
                continue
            profile = _decode_profile(name, value)
            if profile is not None:
                out[name] = profile
        return out

    # -- leases and replicas -----------------------------------------------------------------

    @staticmethod
    def _lease_value(owner: str, url: str) -> bytes:
        return msgspec.json.encode(_LeaseValue(owner, url))

    @staticmethod
    def _read_lease(raw: Any, pttl: Any) -> Lease | None:
        if raw is None or not isinstance(pttl, int) or pttl <= 0:
            return None
        try:
            value = msgspec.json.decode(raw, type=_LeaseValue)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
        return Lease(value.owner, value.url, pttl / 1000)

    async def claim_lease(
        self, session_id: str, owner: str, url: str, ttl: float, *, replace: str | None = None
    ) -> Lease:
        key = self._key("lease", session_id)
        value = self._lease_value(owner, url)
        args: list[str | bytes | int] = [owner, value, int(ttl * 1000), replace or ""]
        raw, pttl = await self._call(lambda: self._claim(keys=[key], args=args))
        lease = self._read_lease(raw, pttl)
        return lease if lease is not None else Lease(owner, url, ttl)

    async def renew_leases(self, session_ids: list[str], owner: str, url: str, ttl: float) -> list[str]:
        if not session_ids:
            return []
        keys = [self._key("lease", sid) for sid in session_ids]
        value = self._lease_value(owner, url)
        lost = await self._call(lambda: self._renew(keys=keys, args=[owner, value, int(ttl * 1000)]))
        return [session_ids[int(i) - 1] for i in lost]

    async def release_lease(self, session_id: str, owner: str) -> None:
        key = self._key("lease", session_id)
        await self._call(lambda: self._release(keys=[key], args=[owner]))

    async def get_leases(self, session_ids: list[str]) -> dict[str, Lease]:
        if not session_ids:
            return {}

        async def run() -> list[Any]:
            async with self.client.pipeline(transaction=False) as pipe:
                for sid in session_ids:
                    key = self._key("lease", sid)
                    pipe.get(key)
                    pipe.pttl(key)
                return await pipe.execute(raise_on_error=False)

        values = await self._call(run)
        out = {}
        for index, sid in enumerate(session_ids):
            raw, pttl = values[2 * index], values[2 * index + 1]
            if isinstance(raw, ResponseError):
                continue
            lease = self._read_lease(raw, pttl)
            if lease is not None:
                out[sid] = lease
        return out

    async def register_instance(self, instance_id: str, info: dict[str, Any], ttl: float) -> None:
        key = self._key("instance", instance_id)
        data = msgspec.json.encode(info)
        await self._call(lambda: self.client.set(key, data, px=int(ttl * 1000)))

    async def list_instances(self) -> dict[str, dict[str, Any]]:
        prefix = self._key("instance", "")

        async def run() -> dict[str, dict[str, Any]]:
            keys = [k async for k in self.client.scan_iter(match=prefix + "*", count=200)]
            if not keys:
                return {}
            values = await self.client.mget(keys)
            out = {}
            for key, raw in zip(keys, values, strict=True):
                try:
                    info = msgspec.json.decode(raw) if raw is not None else None
                    if isinstance(info, dict):
                        out[key.decode()[len(prefix) :]] = info
                except (msgspec.DecodeError, UnicodeDecodeError):
                    continue
            return out

        return await self._call(run)

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


def _decode_profile(name: str, raw: bytes) -> StoredProfile | None:
    """A stored profile; one an older relay kept (its breakpoints alone) has nobody as its saver."""
    try:
        if raw.lstrip().startswith(b"["):
            return StoredProfile(breakpoints=msgspec.json.decode(raw, type=list[BreakpointRecord]))
        return msgspec.json.decode(raw, type=StoredProfile)
    except (msgspec.DecodeError, msgspec.ValidationError):
        log.warning("skipping unreadable breakpoint profile %r", name)
        return None
