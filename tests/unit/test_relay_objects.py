"""What is one per relay (its evidence, its redaction, the agent's trail) is held by its session manager,
built once by the wiring and shared by every service over it; nothing is looked up by a module."""

from __future__ import annotations

from pathlib import Path

import pytest

from debugrelay.config import load_settings
from debugrelay.service import RelayService
from debugrelay.sessions import SessionManager
from debugrelay.store import FileEvidence, MemoryStore
from debugrelay.wiring import build_manager


async def test_every_service_over_a_manager_shares_its_evidence_and_redaction(tmp_path: Path) -> None:
    store = MemoryStore()
    manager = SessionManager(load_settings(state_dir=str(tmp_path), redaction=True), store, {})
    api, mcp = RelayService(manager), RelayService(lambda: manager)
    assert api.manager.evidence is mcp.manager.evidence and manager.evidence.store is store.evidence
    assert api.manager.redaction is mcp.manager.redaction and manager.redaction.enabled
    off = SessionManager(load_settings(state_dir=str(tmp_path), redaction=False), MemoryStore(), {})
    assert not off.redaction.enabled


async def test_the_wiring_builds_the_evidence_on_the_stores_namespace_with_the_post_mortem_hook(
    tmp_path: Path,
) -> None:
    leftover = tmp_path / "evidence" / "sess_gone" / "old.json"
    leftover.parent.mkdir(parents=True)
    leftover.write_text("{}")
    manager = build_manager(load_settings(state_dir=str(tmp_path), redaction=False, launchers="local", pool_size=0))
    assert isinstance(manager.evidence.store, FileEvidence)  # big values stay out of memory
    assert manager.evidence.store is manager.store.evidence
    assert manager.on_stop is not None
    assert not leftover.exists()  # a relay without Redis starts with no evidence of sessions it never had
    await manager.close()


async def test_a_person_looking_does_not_keep_a_session_alive(tmp_path: Path) -> None:
    manager = SessionManager(load_settings(state_dir=str(tmp_path)), MemoryStore(), {})
    session = await manager.create(name="watched")
    session.record.last_activity = 1.0
    with manager.looking():
        assert manager.get(session.id) is session
    assert session.record.last_activity == 1.0
    manager.get(session.id)  # an agent's call is activity
    assert session.record.last_activity > 1.0
    await manager.delete(session.id)


async def test_what_the_relay_kept_of_a_session_goes_with_it(tmp_path: Path) -> None:
    manager = SessionManager(load_settings(state_dir=str(tmp_path)), MemoryStore(), {})
    session = await manager.create()
    item = await manager.evidence.store.add(session.id, "snapshot", "{}")
    manager.evidence.post_mortems[session.id] += 1
    table = await manager.redaction.table(session.id)
    assert manager.redaction.tables[session.id] is table
    await manager.delete(session.id)
    assert await manager.evidence.store.get(item.id) is None
    assert session.id not in manager.evidence.post_mortems and session.id not in manager.redaction.tables


@pytest.mark.parametrize("held", [False, True])
async def test_another_relays_session_gets_a_throwaway_placeholder_table(tmp_path: Path, held: bool) -> None:
    manager = SessionManager(load_settings(state_dir=str(tmp_path)), MemoryStore(), {})
    sid = (await manager.create()).id if held else "sess_elsewhere"
    await manager.redaction.table(sid)
    assert (sid in manager.redaction.tables) is held
