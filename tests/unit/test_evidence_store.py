"""The evidence namespace of each state store: Redis (a real redis-server), the memory store's files under
the state dir and its in-memory twin."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import msgspec
import pytest

from debugrelay.store import EvidenceItem, EvidenceStore, MemoryStore, WriteBehind, evidence
from debugrelay.store.redis import RedisStore
from tests.redis_server import RedisServer


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("evidence-redis"))
    yield server
    server.stop()


@contextlib.asynccontextmanager
async def fresh_namespace(server: RedisServer) -> AsyncIterator[RedisStore]:
    state = RedisStore.with_url(server.url, namespace=f"e{uuid.uuid4().hex[:8]}")
    try:
        yield state
    finally:
        keys = [k async for k in state.client.scan_iter(match=f"{state.ns}:*")]
        if keys:
            await state.client.delete(*keys)
        await state.close()


@pytest.fixture
async def redis_state(redis_server: RedisServer) -> AsyncIterator[RedisStore]:
    async with fresh_namespace(redis_server) as state:
        yield state


@pytest.fixture(params=["memory", "files", "redis", "write-behind"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[EvidenceStore]:
    if request.param == "memory":
        yield MemoryStore().evidence
    elif request.param == "files":
        yield MemoryStore(evidence_dir=tmp_path / "evidence").evidence
    else:
        server: RedisServer = request.getfixturevalue("redis_server")
        async with fresh_namespace(server) as state:
            yield state.evidence if request.param == "redis" else WriteBehind(state).evidence


async def test_evidence_an_earlier_relay_kept_in_redis_is_read_after_an_upgrade(redis_state: RedisStore) -> None:
    """The keys evidence had when it was a store of its own: a hash per session, its order, an index."""
    item = EvidenceItem(id="ev-0123456789ab", session_id="sess_old", kind="snapshot", created_at=1.0, text="{}")
    ns, client = redis_state.ns, redis_state.client
    await client.hset(f"{ns}:evidence:sess_old", item.id, msgspec.json.encode(item))
    await client.rpush(f"{ns}:evidence:sess_old:order", item.id)
    await client.hset(f"{ns}:evidence:index", item.id, "sess_old")
    assert await redis_state.evidence.get(item.id) == item
    assert await redis_state.evidence.ids("sess_old") == [item.id]
    await redis_state.delete_session("sess_old")
    assert [k async for k in client.scan_iter(match=f"{ns}:evidence*")] == []


async def test_an_item_is_kept_whole_and_found_by_its_id(store: EvidenceStore) -> None:
    text = "\n".join(f"line {n}" for n in range(10_000))
    item = await store.add("sess_a", "snapshot", text, "a snapshot")
    found = await store.get(item.id)
    assert found is not None and found.text == text and found.kind == "snapshot" and found.session_id == "sess_a"
    assert await store.ids("sess_a") == [item.id]
    assert await store.get("ev-000000000000") is None


async def test_a_session_keeps_at_most_its_bound_oldest_first_out(
    store: EvidenceStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(evidence, "MAX_ITEMS_PER_SESSION", 3)
    made = [(await store.add("sess_b", "capture", f"rows {n}")).id for n in range(5)]
    other = await store.add("sess_c", "capture", "another session's")
    assert await store.ids("sess_b") == made[2:]
    assert await store.get(made[0]) is None
    assert await store.get(other.id) is not None


async def test_evidence_goes_with_its_session(store: EvidenceStore) -> None:
    mine = await store.add("sess_d", "snapshot", "x")
    theirs = await store.add("sess_e", "snapshot", "y")
    await store.drop_session("sess_d")
    assert await store.get(mine.id) is None and await store.ids("sess_d") == []
    assert await store.get(theirs.id) is not None


async def test_a_huge_item_is_cut_and_says_so(store: EvidenceStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(evidence, "MAX_ITEM_BYTES", 100)
    item = await store.add("sess_f", "value", "y" * 1000)
    found = await store.get(item.id)
    assert found is not None and found.text.startswith("y" * 100)
    assert found.text.endswith("the item was 1000 characters, 100 are kept")
