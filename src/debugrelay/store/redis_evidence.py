"""The Redis store's evidence namespace: a hash per session, its order, and an index of item → session.

Keys (unchanged since evidence had a store of its own, so a relay upgraded in place reads what was kept):

- ``{ns}:evidence:{id}``        hash  evidence id → EvidenceItem JSON
- ``{ns}:evidence:{id}:order``  list  the session's evidence ids, oldest first
- ``{ns}:evidence:index``       hash  evidence id → session id

A put and a drop are each one Lua script: the bounds hold whoever else writes, and a session's
evidence goes whole or not at all (the state store's ``delete_session`` runs the drop in its MULTI).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
from redis.exceptions import ResponseError

from . import evidence
from .evidence import EvidenceItem, EvidenceStore, decode_item, encode_item

if TYPE_CHECKING:
    from redis.asyncio.client import Pipeline

    from .redis import RedisStore

# KEYS: the session's hash, its order, the index; ARGV: id, item JSON, session id, items cap, bytes cap.
# An item already there is not added twice (a put retried after its answer was lost); the oldest go
# until both bounds hold (sizes are the items' JSON, as stored).
PUT = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
local order = redis.call('LRANGE', KEYS[2], 0, -1)
local total = 0
for _, id in ipairs(order) do total = total + redis.call('HSTRLEN', KEYS[1], id) end
local cap, max_bytes = tonumber(ARGV[4]), tonumber(ARGV[5])
local n, i = #order, 1
while n > 0 and (n > cap or total > max_bytes) do
  local oldest = order[i]
  total = total - redis.call('HSTRLEN', KEYS[1], oldest)
  redis.call('HDEL', KEYS[1], oldest)
  redis.call('LPOP', KEYS[2])
  redis.call('HDEL', KEYS[3], oldest)
  n, i = n - 1, i + 1
end
return 1
"""
# KEYS: the session's hash, its order, the index.
DROP = """
local ids = redis.call('LRANGE', KEYS[2], 0, -1)
if #ids > 0 then redis.call('HDEL', KEYS[3], unpack(ids)) end
redis.call('DEL', KEYS[1], KEYS[2])
return #ids
"""


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class RedisEvidence(EvidenceStore):
    """Evidence under the Redis store's namespace, through its connection and its error mapping."""

    name = "redis"

    def __init__(self, store: RedisStore) -> None:
        self.store = store

    def keys(self, session_id: str) -> list[str]:
        """The session's hash, its order and the index: what the put and drop scripts take."""
        key = self.store._key
        return [key("evidence", session_id), key("evidence", session_id, "order"), key("evidence", "index")]

    def drop_in(self, pipe: Pipeline, session_id: str) -> None:
        """Add the drop of the session's evidence to ``pipe`` (the state store's deletion of the session)."""
        pipe.eval(DROP, 3, *self.keys(session_id))

    async def put(self, item: EvidenceItem) -> None:
        client = self.store.client
        bounds = (evidence.MAX_ITEMS_PER_SESSION, evidence.MAX_BYTES_PER_SESSION)  # read now: tests lower them
        args: list[str | bytes | int] = [item.id, encode_item(item), item.session_id, *bounds]
        await self.store._call(lambda: client.eval(PUT, 3, *self.keys(item.session_id), *args))

    async def get(self, evidence_id: str) -> EvidenceItem | None:
        client, key = self.store.client, self.store._key

        async def run() -> Any:
            session_id = await client.hget(key("evidence", "index"), evidence_id)
            if session_id is None:
                return None
            return await client.hget(key("evidence", _text(session_id)), evidence_id)

        try:
            raw = await self.store._call(run)
        except ResponseError:
            return None  # a key of another type holds nothing of ours
        if raw is None:
            return None
        try:
            return decode_item(raw)
        except msgspec.DecodeError:
            return None

    async def ids(self, session_id: str) -> list[str]:
        order = self.store._key("evidence", session_id, "order")
        found: list[Any] = await self.store._call(lambda: self.store.client.lrange(order, 0, -1))
        return [_text(o) for o in found]

    async def drop_session(self, session_id: str) -> None:
        client = self.store.client
        await self.store._call(lambda: client.eval(DROP, 3, *self.keys(session_id)))
