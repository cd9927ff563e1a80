"""Sessions through either backend: created, listed and read, launched at once or attached to, left running,
ended and forgotten."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from debugrelay.models import AttachSpec, LaunchRequest, limits
from debugrelay.service import DebugService

from .conftest import ADD, BASIC, paused_at, refusal
from .fake_debugpy import FakeDebugpy, FakeLauncher, Program

pytestmark = pytest.mark.asyncio


async def test_a_new_session_is_listed_with_its_name_and_idle_timeout(service: DebugService) -> None:
    assert (await service.list_sessions()).total == 0
    created = await service.create_session(name="checkout bug", timeout_minutes=5)
    sid = created.session_id
    assert (created.status, created.name, created.mode) == ("created", "checkout bug", "launch")
    assert (created.timeout_minutes, created.breakpoints, created.launch) == (5.0, 0, None)
    assert created.expires_in_seconds is not None and 0 < created.expires_in_seconds <= 300
    listed = await service.list_sessions()
    assert listed.total == 1
    assert [(s.session_id, s.name, s.status) for s in listed.sessions] == [(sid, "checkout bug", "created")]
    detail = await service.session(sid)
    assert (detail.name, detail.timeout_minutes, detail.status) == ("checkout bug", 5.0, "created")
    assert (await service.status(sid)).status == "created"
    assert not service.unpersisted(sid)  # the in-memory store takes every change as it is made


async def test_sessions_are_listed_oldest_first(service: DebugService) -> None:
    first = (await service.create_session(name="first")).session_id
    second = (await service.create_session(name="second")).session_id
    assert [s.session_id for s in (await service.list_sessions()).sessions] == [first, second]


async def test_a_session_created_with_a_launch_runs_its_program(service: DebugService, program: Program) -> None:
    program.loops = True
    created = await service.create_session(name="run", launch=LaunchRequest(script=BASIC, args=["--fast"]))
    assert (created.status, created.mode) == ("running", "launch")
    assert created.launch is not None
    assert (created.launch.script, created.launch.args) == (BASIC, ["--fast"])
    assert created.target is not None and created.target.kind == "local"
    waited = await service.wait(created.session_id, 0)
    assert (waited.status, waited.timed_out) == ("running", True)


async def test_bad_session_settings_are_refused_and_nothing_is_created(service: DebugService) -> None:
    for settings in (
        {"name": "x" * (limits.MAX_NAME + 1)},
        {"timeout_minutes": 0},
        {"timeout_minutes": limits.MAX_TIMEOUT_MINUTES + 1},
    ):
        refused = await refusal(service.create_session(**settings))
        assert (refused.status, refused.code) == (400, "invalid_request"), settings
    assert (await service.list_sessions()).total == 0


async def test_terminate_ends_the_program_and_keeps_the_session(service: DebugService, launcher: FakeLauncher) -> None:
    sid = await paused_at(service, ADD)
    ended = await service.terminate(sid)
    assert (ended.status, ended.exit_code) == ("terminated", -9)
    assert ended.description is not None and "the relay ended it" in ended.description
    assert launcher.peers[0].server is not None and not launcher.peers[0].server.is_serving()
    assert (await service.status(sid)).status == "terminated"
    assert [s.session_id for s in (await service.list_sessions()).sessions] == [sid]
    refused = await refusal(service.detach(sid))
    assert (refused.status, refused.code) == (409, "invalid_state")


async def test_delete_ends_the_program_and_forgets_the_session(service: DebugService, launcher: FakeLauncher) -> None:
    sid = await paused_at(service, ADD)
    deleted = await service.delete_session(sid)
    assert (deleted.deleted, deleted.session_id) == (True, sid)
    assert launcher.peers[0].server is not None and not launcher.peers[0].server.is_serving()
    assert (await service.list_sessions()).total == 0
    refused = await refusal(service.status(sid))
    assert (refused.status, refused.code) == (404, "session_not_found")
    assert refused.hint


async def test_an_unknown_session_is_not_found_by_any_operation(service: DebugService) -> None:
    nope = "sess_000000000000"
    calls: list[Callable[[], Awaitable[object]]] = [
        lambda: service.session(nope),
        lambda: service.status(nope),
        lambda: service.delete_session(nope),
        lambda: service.launch(nope, LaunchRequest(script=BASIC)),
        lambda: service.breakpoints(nope),
        lambda: service.output(nope),
        lambda: service.threads(nope),
        lambda: service.evaluate(nope, "1"),
        lambda: service.watches(nope),
        lambda: service.redactions(nope),
        lambda: service.snapshots(nope),
        lambda: service.captures(nope),
    ]
    for call in calls:
        refused = await refusal(call())
        assert (refused.status, refused.code) == (404, "session_not_found")
    assert await service.source_line(nope, BASIC, ADD) is None  # a courtesy read: never an error


async def test_an_attached_program_is_left_running_on_detach(service: DebugService, program: Program) -> None:
    program.loops = True
    peer = FakeDebugpy(program)  # a debugpy someone started with --listen, outside the relay
    await peer.start()
    try:
        created = await service.create_session(name="attached", attach=AttachSpec(host="127.0.0.1", port=peer.port))
        sid = created.session_id
        assert (created.mode, created.status) == ("attach", "running")
        assert created.attach is not None and (created.attach.host, created.attach.port) == ("127.0.0.1", peer.port)
        paused = await service.pause(sid)
        assert (paused.status, paused.reason) == ("paused", "pause")
        left = await service.detach(sid)
        assert (left.status, left.reason, left.exit_code) == ("terminated", "detached", None)
        assert peer.requests[-1] == "disconnect"
        assert peer.server is not None and peer.server.is_serving()  # the program goes on without the relay
        assert (await service.session(sid)).reason == "detached"
    finally:
        await peer.close()
