"""The fast tier: the relay's services, sessions and MCP tools over a scripted stand-in for debugpy.

``service`` is each backend of :class:`DebugService` in turn: the relay's own ``RelayService`` in this
process, and ``RemoteService`` through the relay's HTTP API (the app served in process over the same
session manager, reached with the relay's token as its CLI reaches it). ``relay`` is the in-process
service alone, for what only it has (its manager, the trail, the redaction tables).

Both answer the same: the same answers, the same refusals (arguments are checked against each operation's
declaration in process as over HTTP).
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from litestar import Litestar
from litestar.exceptions import LitestarDeprecationWarning

from debugrelay import inspection
from debugrelay.api import create_app
from debugrelay.client import ApiError, AsyncRelayClient, RemoteService
from debugrelay.config import load_settings
from debugrelay.errors import RelayError
from debugrelay.evidence import EvidenceHub, with_post_mortem
from debugrelay.models import BreakpointRequest, LaunchRequest
from debugrelay.service import DebugService, RelayService
from debugrelay.sessions import SessionManager
from debugrelay.store import MemoryStore, StateStore
from tests.conftest import line_of, target

from .fake_debugpy import FakeLauncher, Program, Step

BASIC = target("basic.py")
ADD = line_of(BASIC, "add-body")
LOOP = line_of(BASIC, "loop-body")
CRASH = target("crash.py")
RAISE = line_of(CRASH, "raise-here")
CRASH_MESSAGE = "invalid literal for int() with base 10: 'x'"

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


def crash_steps() -> list[Step]:
    """crash.py as the fake plays it: parse("1"), parse("2"), then parse("x") raises a ValueError nothing catches."""
    return [
        Step(CRASH, RAISE, "parse", {"text": text}, output=f"parsing {text}\n", raises=raises)
        for text, raises in (("1", ""), ("2", ""), ("x", f"ValueError: {CRASH_MESSAGE}"))
    ]


@pytest.fixture
def program() -> Program:
    """The program the fake debugpy plays; a test may change it before it launches it."""
    return basic_program()


@pytest.fixture
def store() -> StateStore:
    """The relay's state store."""
    return MemoryStore()


@pytest.fixture
async def relay(program: Program, store: StateStore, tmp_path: Path) -> AsyncIterator[RelayService]:
    """The relay's own service in this process, over ``store`` and the fake debugpy, its manager wired as
    the relay wires it (``wiring.build_manager``): stops remembered for changes, a post-mortem at a crash."""
    settings = load_settings(state_dir=str(tmp_path / "state"), pool_size=0, token=TOKEN, allowed_hosts=[HOST])
    launcher = FakeLauncher(program)
    evidence = EvidenceHub(store.evidence)
    on_stop = with_post_mortem(evidence, inspection.remember_stop)
    manager = SessionManager(settings, store, {"local": launcher}, on_stop=on_stop, evidence=evidence)
    await manager.start()
    try:
        yield RelayService(manager)
    finally:
        await manager.close()
        await launcher.close()


@pytest.fixture
def launcher(relay: RelayService) -> FakeLauncher:
    """What started the fake debugpys of ``relay``: its peers are the programs, as the relay left them."""
    found = relay.manager.launchers["local"]
    assert isinstance(found, FakeLauncher)
    return found


@pytest.fixture(scope="session")
def relay_app(tmp_path_factory: pytest.TempPathFactory) -> Litestar:
    """The relay's HTTP API, built once for the tier: a build takes 0.1-0.5 s, more than most tests here.

    Built without a manager, the app makes one in its lifespan and keeps it and its service on ``app.state``;
    the lifespan is not run, and each test keeps its own relay there instead (:func:`relay_http`)."""
    state_dir = tmp_path_factory.mktemp("relay_app")
    settings = load_settings(state_dir=str(state_dir), pool_size=0, token=TOKEN, allowed_hosts=[HOST])
    with warnings.catch_warnings():
        # Litestar 2.2x announces its 3.0 parameter style; the relay pins litestar below 3.
        warnings.simplefilter("ignore", LitestarDeprecationWarning)
        return create_app(settings)


@asynccontextmanager
async def relay_http(app: Litestar, relay: RelayService) -> AsyncIterator[httpx.AsyncClient]:
    """``app`` serving ``relay`` (as its lifespan would serve the manager it made), reached in process with the
    relay's token."""
    app.state.manager, app.state.service = relay.manager, relay
    transport = httpx.ASGITransport(app=app)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    try:
        async with httpx.AsyncClient(transport=transport, base_url=f"http://{HOST}", headers=headers) as http:
            yield http
    finally:
        del app.state.manager, app.state.service


@pytest.fixture(params=BACKENDS)
async def service(
    request: pytest.FixtureRequest, relay: RelayService, relay_app: Litestar
) -> AsyncIterator[DebugService]:
    """Each backend in turn, over the same relay."""
    if request.param == "in_process":
        yield relay
        return
    async with relay_http(relay_app, relay) as http:
        yield RemoteService(AsyncRelayClient(str(http.base_url), http=http))


async def refusal(call: Awaitable[object]) -> RelayError | ApiError:
    """What the relay refused ``call`` with: the domain error in process, its envelope over HTTP; both carry
    the envelope's status, code, message, hint and details."""
    with pytest.raises((RelayError, ApiError)) as caught:
        await call
    refused = caught.value
    assert isinstance(refused, RelayError | ApiError)
    return refused


async def paused_at(service: DebugService, *lines: int, script: str = BASIC) -> str:
    """A new session whose program runs from ``script`` to the first of breakpoints at ``lines``."""
    sid = (await service.create_session(name="fast")).session_id
    await service.add_breakpoints(sid, [BreakpointRequest(file=script, line=line) for line in lines])
    await service.launch(sid, LaunchRequest(script=script))
    stop = await service.wait(sid, 10)
    assert stop.status == "paused", stop
    return sid
