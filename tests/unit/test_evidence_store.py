"""The evidence store contract: Redis (a real redis-server), files under the state dir, and the memory twin."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from debugrelay.evidence import EvidenceStore, FileEvidence, MemoryEvidence, RedisEvidence, _store
from debugrelay.store.redis import RedisStore
from tests.redis_server import RedisServer


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("evidence-redis"))
    yield server
    server.stop()


@pytest.fixture(params=["memory", "files", "redis"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[EvidenceStore]:
    if request.param == "memory":
        yield MemoryEvidence()
    elif request.param == "files":
        yield FileEvidence(tmp_path / "evidence")
    else:
        server: RedisServer = request.getfixturevalue("redis_server")
        state = RedisStore.with_url(server.url, namespace=f"e{uuid.uuid4().hex[:8]}")
        yield RedisEvidence(state.client, state.ns)
        keys = [k async for k in state.client.scan_iter(match=f"{state.ns}:*")]
        if keys:
            await state.client.delete(*keys)
        await state.close()


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
    monkeypatch.setattr(_store, "MAX_ITEMS_PER_SESSION", 3)
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
    monkeypatch.setattr(_store, "MAX_ITEM_BYTES", 100)
    item = await store.add("sess_f", "value", "y" * 1000)
    found = await store.get(item.id)
    assert found is not None and found.text.startswith("y" * 100)
    assert found.text.endswith("the item was 1000 characters, 100 are kept")
