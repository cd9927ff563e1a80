"""A change made while the state store is down, through either backend: applied at once, and said to wait for
the store until it is written through."""

from __future__ import annotations

import msgspec
import pytest

from debugrelay.errors import StoreUnavailable
from debugrelay.models import BreakpointRequest, SessionRecord
from debugrelay.service import DebugService
from debugrelay.store import MemoryStore, WriteBehind

from .conftest import ADD, BASIC

pytestmark = pytest.mark.asyncio


class OutageStore(MemoryStore):
    """A store that refuses session writes while ``down``, as Redis does when it cannot be reached."""

    down = False

    async def save_session(self, record: SessionRecord) -> None:
        if self.down:
            raise StoreUnavailable("the state store is down (the test's outage)")
        await super().save_session(record)


@pytest.fixture
def outage() -> OutageStore:
    return OutageStore()


@pytest.fixture
def store(outage: OutageStore) -> WriteBehind:
    """The relay's store as it keeps Redis: writes it cannot make now wait and are written through later."""
    return WriteBehind(outage)


async def test_a_change_the_store_could_not_take_is_said_until_it_is_written(
    service: DebugService, store: WriteBehind, outage: OutageStore
) -> None:
    sid = (await service.create_session()).session_id
    assert not service.unpersisted(sid)
    outage.down = True
    (added,) = await service.add_breakpoints(sid, [BreakpointRequest(file=BASIC, line=ADD)])
    assert [b.breakpoint_id for b in (await service.breakpoints(sid)).breakpoints] == [added.breakpoint_id]
    assert service.unpersisted(sid)
    watched = await service.add_watch(sid, "1 + 1")  # an answer to a change says it, on either backend
    assert watched.persisted is False
    outage.down = False
    assert await store.write_through() == 1  # the session, written once with both changes
    again = await service.add_watch(sid, "2 + 2")  # a change the store took: nothing waits any more
    assert again.persisted is msgspec.UNSET
    assert not service.unpersisted(sid)
