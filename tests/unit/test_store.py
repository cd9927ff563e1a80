"""The state store contract, on Redis (a real redis-server) and on its in-memory twin."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from debugrelay.errors import StoreUnavailable
from debugrelay.models import BreakpointRecord, SessionRecord
from debugrelay.store import MemoryStore, StateStore, WriteBehind, tracking_writes
from debugrelay.store.redis import RedisStore
from tests.conftest import refused_port
from tests.redis_server import RedisServer


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("unit-redis"))
    yield server
    server.stop()


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StateStore]:
    if request.param == "memory":
        yield MemoryStore(output_cap=5)
        return
    server: RedisServer = request.getfixturevalue("redis_server")
    redis_store = RedisStore.with_url(server.url, namespace=f"u{uuid.uuid4().hex[:8]}", output_cap=5)
    yield redis_store
    keys = [k async for k in redis_store.client.scan_iter(match=f"{redis_store.ns}:*")]
    if keys:
        await redis_store.client.delete(*keys)
    await redis_store.close()


def record(sid: str = "sess_a", **fields: object) -> SessionRecord:
    return SessionRecord(id=sid, created_at=1.0, last_activity=10.0, **fields)  # type: ignore[arg-type]


async def test_sessions_round_trip(store: StateStore) -> None:
    bp = BreakpointRecord(id="bp_1", file="/x.py", line=3, condition="i > 2")
    await store.save_session(record(breakpoints=[bp], name="one"))
    await store.save_session(record("sess_b"))
    got = await store.get_session("sess_a")
    assert got is not None
    assert got.name == "one"
    assert got.breakpoints == [bp]
    assert sorted(r.id for r in await store.list_sessions()) == ["sess_a", "sess_b"]
    await store.delete_session("sess_a")
    assert await store.get_session("sess_a") is None
    assert [r.id for r in await store.list_sessions()] == ["sess_b"]


async def test_a_limited_save_counts_a_credentials_live_sessions_in_one_step(store: StateStore) -> None:
    await store.save_session(record("sess_old", created_by="dave", made_by="dave", status="terminated"))  # ended
    await store.save_session(record("sess_given", created_by="alice", made_by="dave"))  # dave made it
    made = await asyncio.gather(
        *(store.save_within(record(f"sess_{n}", created_by="dave", made_by="dave"), [("dave", 3)]) for n in range(10))
    )
    assert sorted(made, key=str) == [("dave", 3)] * 8 + [None] * 2  # with the given one: three
    assert await store.save_within(record("sess_given", created_by="dave", made_by="dave"), [("dave", 3)]) is None
    # a record is not counted against itself: saved again as it is, it fits
    assert await store.save_within(record("sess_new", created_by="bob"), [("bob", 1), ("dave", 3)]) == ("dave", 3)
    assert await store.get_session("sess_new") is None  # nothing saved
    assert len([r for r in await store.list_sessions() if "dave" in r.counted_against()]) == 3


async def test_the_audit_trail_keeps_each_credentials_newest_entries_whatever_the_others_write(
    store: StateStore,
) -> None:
    await store.append_audit([("alice", b"a1"), ("alice", b"a2"), ("alice", b"a3")], 10, 2)
    await store.append_audit([("bob", f"b{n}".encode()) for n in range(20)] + [(None, b"n1")], 10, 2)
    kept = set(await store.read_audit())
    assert {b"a2", b"a3"} <= kept and b"a1" not in kept  # alice's newest two, though the trail holds bob's ten
    assert {f"b{n}".encode() for n in range(11, 20)} | {b"n1"} <= kept and len(kept) == 12


async def test_activity_moves_the_idle_deadline_without_rewriting_the_record(store: StateStore) -> None:
    await store.save_session(record())
    await store.save_activity({"sess_a": 99.5})
    got = await store.get_session("sess_a")
    assert got is not None
    assert got.last_activity == 99.5
    await store.save_activity({"sess_a": 5.0})  # a mark older than the record's own does not count
    listed = await store.list_sessions()
    assert listed[0].last_activity == 10.0


async def test_output_is_capped_and_paged_by_cursor(store: StateStore) -> None:
    now = time.time()
    await store.append_output("sess_a", [("stdout", f"line {i}\n", now) for i in range(8)])
    page = await store.read_output("sess_a", None, 3)
    assert [e.text for e in page.entries] == ["line 3\n", "line 4\n", "line 5\n"]
    assert page.has_more
    rest = await store.read_output("sess_a", page.cursor, 10)
    assert [e.text for e in rest.entries] == ["line 6\n", "line 7\n"]
    assert not rest.has_more


async def test_output_is_bounded_in_bytes_oldest_first_never_the_newest(store: StateStore) -> None:
    now = time.time()
    store.output_bytes = 100  # type: ignore[attr-defined]
    await store.append_output("sess_a", [("stdout", "a" * 40, now), ("stdout", "b" * 40, now)])
    await store.append_output("sess_a", [("stderr", "é" * 20 + "\n", now)])  # 41 bytes in UTF-8
    page = await store.read_output("sess_a", None, 10)
    assert [e.text[0] for e in page.entries] == ["b", "é"]  # 121 bytes: the oldest went
    await store.append_output("sess_a", [("stdout", "c" * 500, now)])  # one entry over the whole bound
    page = await store.read_output("sess_a", None, 10)
    assert [e.text for e in page.entries] == ["c" * 500]  # the newest stays
    await store.clear_output("sess_a")
    await store.append_output("sess_a", [("stdout", "d" * 60, now), ("stdout", "e" * 30, now)])
    page = await store.read_output("sess_a", None, 10)
    assert [e.text[0] for e in page.entries] == ["d", "e"]  # a cleared stream counts from nothing


async def test_the_newest_entries_after_a_cursor_end_the_output(store: StateStore) -> None:
    now = time.time()
    await store.append_output("sess_a", [("stdout", f"line {n}\n", now) for n in range(10)])
    page = await store.read_output("sess_a", None, 3, newest=True)
    assert [e.text for e in page.entries] == ["line 7\n", "line 8\n", "line 9\n"]
    assert page.skipped and not page.has_more
    rest = await store.read_output("sess_a", page.cursor, 3, newest=True)
    assert rest.entries == [] and rest.cursor == page.cursor and not rest.skipped
    await store.append_output("sess_a", [("stdout", "line 10\n", now)])
    after = await store.read_output("sess_a", page.cursor, 3, newest=True)
    assert [e.text for e in after.entries] == ["line 10\n"] and not after.skipped


async def test_the_entries_up_to_a_cursor_are_read_back_oldest_first(store: StateStore) -> None:
    now = time.time()
    await store.append_output("sess_a", [("stdout", f"line {n}\n", now) for n in range(5)])  # the cap: 5
    page = await store.read_output("sess_a", None, 4)
    before = await store.output_before("sess_a", page.cursor or "", 3)
    assert [e.text for e in before] == ["line 1\n", "line 2\n", "line 3\n"]
    assert await store.output_before("sess_a", "0", 3) == []
    assert await store.output_before("sess_b", page.cursor or "", 3) == []


async def test_a_retried_output_batch_is_written_once(store: StateStore) -> None:
    now = time.time()
    batch = [("stdout", "tick 1\n", now), ("stdout", "tick 2\n", now)]
    await store.append_output("sess_a", batch, "b1")
    await store.append_output("sess_a", batch, "b1")  # its answer was lost: the writer tries again
    await store.append_output("sess_a", [("stdout", "tick 3\n", now)], "b2")
    page = await store.read_output("sess_a", None, 10)
    assert [e.text for e in page.entries] == ["tick 1\n", "tick 2\n", "tick 3\n"]


async def test_a_lease_has_one_owner_until_released_or_expired(store: StateStore) -> None:
    assert (await store.claim_lease("sess_a", "r1", "http://r1", 30)).owner == "r1"
    held = await store.claim_lease("sess_a", "r2", "http://r2", 30)
    assert (held.owner, held.url) == ("r1", "http://r1")
    assert 0 < held.expires_in <= 30
    assert await store.renew_leases(["sess_a", "sess_b"], "r1", "http://r1", 30) == []
    assert await store.renew_leases(["sess_a", "sess_b"], "r2", "http://r2", 30) == ["sess_a", "sess_b"]
    assert (await store.get_leases(["sess_a", "sess_b"]))["sess_b"].owner == "r1"
    await store.release_lease("sess_a", "r2")  # not r2's to give up
    assert (await store.get_leases(["sess_a"]))["sess_a"].owner == "r1"
    await store.release_lease("sess_a", "r1")
    assert await store.get_leases(["sess_a"]) == {}
    assert (await store.claim_lease("sess_a", "r2", "http://r2", 30)).owner == "r2"


async def test_an_expired_lease_can_be_taken(store: StateStore) -> None:
    await store.claim_lease("sess_a", "r1", "http://r1", 0.2)
    for _ in range(200):  # the TTL passing is the point here: poll, bounded
        if not await store.get_leases(["sess_a"]):
            break
        await asyncio.sleep(0.05)
    assert (await store.claim_lease("sess_a", "r2", "http://r2", 30)).owner == "r2"


async def test_a_gone_owners_live_lease_is_taken_only_when_named(store: StateStore) -> None:
    await store.claim_lease("sess_a", "dead", "http://dead", 30)
    assert (await store.claim_lease("sess_a", "r2", "http://r2", 30, replace="someone")).owner == "dead"
    assert (await store.claim_lease("sess_a", "r2", "http://r2", 30, replace="dead")).owner == "r2"


async def test_deleting_a_session_drops_its_lease_and_activity(store: StateStore) -> None:
    await store.save_session(record())
    await store.claim_lease("sess_a", "r1", "http://r1", 30)
    await store.save_activity({"sess_a": 50.0})
    await store.delete_session("sess_a")
    assert await store.get_leases(["sess_a"]) == {}
    await store.save_session(record())
    got = await store.get_session("sess_a")
    assert got is not None
    assert got.last_activity == 10.0


async def test_replicas_announce_themselves(store: StateStore) -> None:
    await store.register_instance("r1", {"url": "http://r1"}, 30)
    assert (await store.list_instances())["r1"]["url"] == "http://r1"


# -- Redis only: bad data (AC-PE-4) and outages ----------------------------------------------------


@pytest.fixture
async def redis_store(redis_server: RedisServer) -> AsyncIterator[RedisStore]:
    store = RedisStore.with_url(redis_server.url, namespace=f"u{uuid.uuid4().hex[:8]}")
    yield store
    keys = [k async for k in store.client.scan_iter(match=f"{store.ns}:*")]
    if keys:
        await store.client.delete(*keys)
    await store.close()


async def test_ac_pe_4_unreadable_and_foreign_records_are_skipped(
    redis_store: RedisStore, caplog: pytest.LogCaptureFixture
) -> None:
    await redis_store.save_session(record())
    client, key = redis_store.client, f"{redis_store.ns}:sessions"
    await client.hset(
        key,
        mapping={  # type: ignore[misc]
            "sess_json": b"{nope",
            "sess_shape": b'{"id": "sess_shape", "status": 7}',
            "sess_x": b'{"id": "sess_y"}',
            b"\xff": b"{}",
        },
    )
    await client.set(f"{redis_store.ns}:lease:sess_a", b"not json", px=60_000)
    with caplog.at_level(logging.WARNING):
        listed = await redis_store.list_sessions()
        assert await redis_store.get_session("sess_json") is None
    assert [r.id for r in listed] == ["sess_a"]
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "sess_json" in messages
    assert "foreign session record 'sess_x'" in messages
    assert await redis_store.get_leases(["sess_a"]) == {}  # an unreadable lease is no lease
    assert (await redis_store.claim_lease("sess_a", "r1", "u", 30)).owner == "r1"


async def test_ac_pe_4_keys_of_the_wrong_type_are_set_aside(redis_store: RedisStore) -> None:
    client, ns = redis_store.client, redis_store.ns
    await client.set(f"{ns}:sessions", "a string")
    await client.hset(f"{ns}:output:sess_a", "not", "a stream")  # type: ignore[misc]
    warnings = await redis_store.check()
    assert len(warnings) == 1
    assert "held a string" in warnings[0]
    assert await redis_store.list_sessions() == []
    await redis_store.save_session(record())
    assert [r.id for r in await redis_store.list_sessions()] == ["sess_a"]
    assert (await redis_store.read_output("sess_a", None, 10)).entries == []
    await redis_store.append_output("sess_a", [("stdout", "hi\n", time.time())])
    assert [e.text for e in (await redis_store.read_output("sess_a", None, 10)).entries] == ["hi\n"]


async def test_an_unreachable_redis_answers_store_unavailable_at_once() -> None:
    with refused_port() as port:
        store = RedisStore.with_url(f"redis://127.0.0.1:{port}/0")
        with pytest.raises(StoreUnavailable) as caught:
            await store.save_session(record())
        assert caught.value.status == 503
        assert "retry" in caught.value.hint
        assert await store.ping() is False
        await store.close()


async def test_placeholder_tables_are_kept_per_session_and_go_with_it(store: StateStore) -> None:
    await store.save_session(record())
    await store.save_session(record("sess_b"))
    await store.add_redactions("sess_a", {"[SECRET_1]": b'{"v": 1}'})
    await store.add_redactions("sess_a", {"[CARD_1]": b'{"v": 2}'})
    await store.add_redactions("sess_b", {"[SECRET_1]": b'{"v": 3}'})
    assert await store.get_redactions("sess_a") == {"[SECRET_1]": b'{"v": 1}', "[CARD_1]": b'{"v": 2}'}
    assert await store.get_redactions("sess_b") == {"[SECRET_1]": b'{"v": 3}'}
    await store.delete_session("sess_a")
    assert await store.get_redactions("sess_a") == {}
    assert await store.get_redactions("sess_b") == {"[SECRET_1]": b'{"v": 3}'}


async def test_writes_while_redis_is_down_are_kept_and_written_through(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "own")
    store = WriteBehind(RedisStore.with_url(server.url, namespace="wb"))
    try:
        await store.save_session(record("sess_gone"))
        server.stop()
        with tracking_writes() as tracking:
            await store.save_session(record("sess_a", name="renamed"))
            await store.delete_session("sess_gone")
        assert tracking.found == ["session", "delete"]  # the caller learns what waits
        assert store.pending == 2 and store.pending_for("sess_a") and store.pending_for("sess_gone")
        assert (await store.get_session("sess_a")).name == "renamed"  # type: ignore[union-attr]
        assert await store.get_session("sess_gone") is None
        with pytest.raises(StoreUnavailable):
            await store.write_through()  # still down: everything stays kept
        assert store.pending == 2

        server.start()
        assert await store.write_through() == 2
        assert store.pending == 0 and not store.pending_for("sess_a")
        assert [r.id for r in await store.inner.list_sessions()] == ["sess_a"]
        assert (await store.inner.get_session("sess_a")).name == "renamed"  # type: ignore[union-attr]
    finally:
        await store.close()
        server.stop()


async def test_a_sessions_evidence_goes_with_its_record(store: StateStore) -> None:
    await store.save_session(record())
    await store.save_session(record("sess_b"))
    mine = await store.evidence.add("sess_a", "snapshot", "x")
    theirs = await store.evidence.add("sess_b", "snapshot", "y")
    await store.delete_session("sess_a")
    assert await store.evidence.get(mine.id) is None and await store.evidence.ids("sess_a") == []
    assert await store.evidence.get(theirs.id) is not None


async def test_evidence_taken_while_redis_is_down_is_kept_readable_and_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from debugrelay.store import _deferred_evidence

    server = RedisServer(tmp_path / "own")
    store = WriteBehind(RedisStore.with_url(server.url, namespace="wbe"))
    try:
        before = await store.evidence.add("sess_a", "snapshot", "taken before")
        server.stop()
        with tracking_writes() as tracking:
            during = await store.evidence.add("sess_a", "post_mortem", "taken during")
        assert tracking.found == ["evidence"]  # answered as not persisted yet
        assert store.pending == 1 and store.pending_for("sess_a")
        assert (await store.evidence.get(during.id)).text == "taken during"  # type: ignore[union-attr]
        monkeypatch.setattr(_deferred_evidence, "MAX_KEPT_BYTES", 20)
        with pytest.raises(StoreUnavailable) as refused:  # past the bound: refused, nothing kept
            await store.evidence.add("sess_b", "snapshot", "too much to keep waiting")
        assert refused.value.details["max_kept_bytes"] == 20
        assert store.pending == 1

        server.start()
        assert await store.write_through() == 1
        assert store.pending == 0 and not store.pending_for("sess_a")
        assert await store.inner.evidence.ids("sess_a") == [before.id, during.id]  # oldest first
        assert (await store.inner.evidence.get(during.id)).kind == "post_mortem"  # type: ignore[union-attr]
    finally:
        await store.close()
        server.stop()


async def test_a_session_deleted_while_redis_is_down_takes_its_evidence_when_it_is_back(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "own")
    store = WriteBehind(RedisStore.with_url(server.url, namespace="wbd"))
    try:
        await store.save_session(record())
        kept = await store.evidence.add("sess_a", "snapshot", "x")
        server.stop()
        waiting = await store.evidence.add("sess_a", "snapshot", "y")
        await store.delete_session("sess_a")
        assert await store.evidence.ids("sess_a") == []
        server.start()
        assert await store.evidence.get(waiting.id) is None
        assert await store.evidence.get(kept.id) is None  # the store still has it, the relay says it is gone
        await store.write_through()
        assert await store.inner.evidence.get(kept.id) is None and await store.inner.evidence.ids("sess_a") == []
    finally:
        await store.close()
        server.stop()
