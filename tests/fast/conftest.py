"""The fast tier: the relay's services, sessions and MCP tools over a scripted stand-in for debugpy."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from debugrelay.config import load_settings
from debugrelay.service import RelayService
from debugrelay.sessions import SessionManager
from debugrelay.store import MemoryStore
from tests.conftest import line_of, target

from .fake_debugpy import FakeLauncher, Program, Step

BASIC = target("basic.py")
ADD = line_of(BASIC, "add-body")
LOOP = line_of(BASIC, "loop-body")


def basic_program(exit_code: int = 0) -> Program:
    """basic.py as the fake plays it: average([3, 4, 5]) adding 3, then 4, then 5."""
    steps = []
    total = 0
    for value in (3, 4, 5):
        steps.append(Step(BASIC, LOOP, "average", {"values": [3, 4, 5], "total": total, "value": value}))
        steps.append(Step(BASIC, ADD, "add", {"a": total, "b": value}, output=f"adding {value}\n"))
        total += value
    return Program(steps, exit_code=exit_code)


@pytest.fixture
def program() -> Program:
    return basic_program()


@pytest.fixture
async def service(program: Program, tmp_path: Path) -> AsyncIterator[RelayService]:
    settings = load_settings(state_dir=str(tmp_path / "state"), pool_size=0)
    launcher = FakeLauncher(program)
    manager = SessionManager(settings, MemoryStore(), {"local": launcher})
    await manager.start()
    try:
        yield RelayService(manager)
    finally:
        await manager.close()
        await launcher.close()
