"""The fast tier: the relay's services, sessions and MCP tools over a scripted stand-in for debugpy.

``service`` is each backend of :class:`DebugService` in turn: the relay's own ``RelayService`` in this
process, and ``RemoteService`` through the relay's HTTP API (the app served in process over the same
session manager, reached with the relay's token as its CLI reaches it). ``relay`` is the in-process
service alone, for what only it has (its manager, the trail, the redaction tables).
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from litestar.exceptions import LitestarDeprecationWarning

from debugrelay.api import create_app
from debugrelay.client import ApiError, AsyncRelayClient, RemoteService
from debugrelay.config import load_settings
from debugrelay.errors import RelayError
from debugrelay.service import DebugService, RelayService
from debugrelay.sessions import SessionManager
from debugrelay.store import MemoryStore
from tests.conftest import line_of, target

from .fake_debugpy import FakeLauncher, Program, Step

BASIC = target("basic.py")
ADD = line_of(BASIC, "add-body")
LOOP = line_of(BASIC, "loop-body")

TOKEN = "fast-tier-token"
HOST = "testserver"  # httpx's name for an app served in process: let in by the settings, as a compose name is
BACKENDS = ("in_process", "http")


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
async def relay(program: Program, tmp_path: Path) -> AsyncIterator[RelayService]:
    """The relay's own service in this process, over a MemoryStore and the fake debugpy."""
    settings = load_settings(state_dir=str(tmp_path / "state"), pool_size=0, token=TOKEN, allowed_hosts=[HOST])
    launcher = FakeLauncher(program)
    manager = SessionManager(settings, MemoryStore(), {"local": launcher})
    await manager.start()
    try:
        yield RelayService(manager)
    finally:
        await manager.close()
        await launcher.close()


@asynccontextmanager
async def relay_http(relay: RelayService) -> AsyncIterator[httpx.AsyncClient]:
    """The relay's HTTP API over ``relay``'s manager, served in process. The app's lifespan is not run: given a
    manager it starts nothing (the caller started it), and /mcp is not reached here."""
    with warnings.catch_warnings():
        # Litestar 2.2x announces its 3.0 parameter style; the relay pins litestar below 3.
        warnings.simplefilter("ignore", LitestarDeprecationWarning)
        app = create_app(relay.manager.settings, relay.manager)
    transport = httpx.ASGITransport(app=app)
    headers = {"Authorization": f"Bearer {relay.manager.settings.token}"}
    async with httpx.AsyncClient(transport=transport, base_url=f"http://{HOST}", headers=headers) as http:
        yield http


@pytest.fixture(params=BACKENDS)
async def service(request: pytest.FixtureRequest, relay: RelayService) -> AsyncIterator[DebugService]:
    """Each backend in turn, over the same relay."""
    if request.param == "in_process":
        yield relay
        return
    async with relay_http(relay) as http:
        yield RemoteService(AsyncRelayClient(str(http.base_url), http=http))


async def refusal(call: Awaitable[object]) -> RelayError | ApiError:
    """What the relay refused ``call`` with: the domain error in process, its envelope over HTTP; both carry
    the envelope's status, code, message, hint and details."""
    with pytest.raises((RelayError, ApiError)) as caught:
        await call
    return caught.value
