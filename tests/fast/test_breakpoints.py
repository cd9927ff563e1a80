"""Breakpoints through either backend: set (all or none), listed with their hits, removed; and the exception
breakpoints that stop the program where it raises."""

from __future__ import annotations

import pytest

from debugrelay.models import BreakpointRequest, LaunchRequest
from debugrelay.service import DebugService
from debugrelay.sessions._testruns import CARRIED

from .conftest import ADD, BASIC, CRASH, CRASH_MESSAGE, LOOP, RAISE, crash_steps, paused_at, refusal
from .fake_debugpy import Program

pytestmark = pytest.mark.asyncio


async def test_breakpoints_are_listed_as_set_and_count_their_hits(service: DebugService) -> None:
    sid = (await service.create_session()).session_id
    added = await service.add_breakpoints(
        sid, [BreakpointRequest(file=BASIC, line=ADD, condition="b >= 0"), BreakpointRequest(file=BASIC, line=LOOP)]
    )
    assert [(b.breakpoint_id, b.kind, b.line, b.hit_count) for b in added] == [
        ("bp_1", "line", ADD, 0),
        ("bp_2", "line", LOOP, 0),
    ]
    assert (added[0].file, added[0].condition, added[1].condition) == (BASIC, "b >= 0", None)
    assert (await service.session(sid)).breakpoints == 2
    await service.launch(sid, LaunchRequest(script=BASIC))
    first = await service.wait(sid, 10)
    assert first.breakpoint_ids == ["bp_2"]  # the loop's line comes first
    second = await service.resume(sid, "continue", wait=10)
    assert second.breakpoint_ids == ["bp_1"]
    listed = (await service.breakpoints(sid)).breakpoints
    assert [(b.breakpoint_id, b.verified, b.enabled, b.hit_count) for b in listed] == [
        ("bp_1", True, True, 1),
        ("bp_2", True, True, 1),
    ]


async def test_a_breakpoint_set_while_paused_stops_the_program(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    (added,) = await service.add_breakpoints(sid, [BreakpointRequest(file=BASIC, line=LOOP)])
    assert (added.breakpoint_id, added.verified) == ("bp_2", True)
    stop = await service.resume(sid, "continue", wait=10)
    assert stop.location is not None and stop.location.line == LOOP
    assert stop.breakpoint_ids == ["bp_2"]


async def test_a_removed_breakpoint_answers_its_id_and_no_longer_stops(service: DebugService) -> None:
    sid = await paused_at(service, ADD, LOOP)
    removed = await service.remove_breakpoint(sid, "bp_2")
    assert (removed.deleted, removed.breakpoint_id) == (True, "bp_2")
    assert [b.breakpoint_id for b in (await service.breakpoints(sid)).breakpoints] == ["bp_1"]
    stop = await service.resume(sid, "continue", wait=10)
    assert stop.location is not None and stop.location.line == ADD
    refused = await refusal(service.remove_breakpoint(sid, "bp_2"))
    assert (refused.status, refused.code) == (404, "breakpoint_not_found")


async def test_breakpoints_are_set_all_or_none(service: DebugService) -> None:
    sid = (await service.create_session()).session_id
    past_the_end = [BreakpointRequest(file=BASIC, line=ADD), BreakpointRequest(file=BASIC, line=9999)]
    refused = await refusal(service.add_breakpoints(sid, past_the_end))
    assert (refused.status, refused.code) == (400, "invalid_line")
    assert refused.details["max_line"] == 30
    not_python = [BreakpointRequest(file=BASIC, line=ADD, condition="a ==")]
    refused = await refusal(service.add_breakpoints(sid, not_python))
    assert (refused.status, refused.code) == (400, "invalid_condition")
    refused = await refusal(service.add_breakpoints(sid, []))
    assert (refused.status, refused.code) == (400, "invalid_request")
    assert (await service.breakpoints(sid)).breakpoints == []


async def test_an_uncaught_exception_breakpoint_stops_where_the_program_raises(
    service: DebugService, program: Program
) -> None:
    program.steps = crash_steps()
    sid = (await service.create_session()).session_id
    wanted = await service.set_exception_breakpoints(sid, ["uncaught"], [])
    assert (wanted.filters, wanted.exception_types) == (["uncaught"], [])
    started = await service.launch(sid, LaunchRequest(script=CRASH))
    assert started.stops_on == f"breakpoints, an uncaught exception ({CARRIED})"
    stop = await service.wait(sid, 10)
    assert (stop.status, stop.reason) == ("paused", "exception")
    raised = stop.exception
    assert raised is not None and (raised.type, raised.message, raised.unhandled) == ("ValueError", CRASH_MESSAGE, True)
    assert stop.location is not None and (stop.location.function, stop.location.line) == ("parse", RAISE)
    assert (await service.evaluate(sid, "text")).result == "'x'"
    end = await service.resume(sid, "continue", wait=10)
    assert (end.status, end.exit_code) == ("terminated", 1)
    assert end.output is not None and CRASH_MESSAGE in end.output


async def test_without_exception_breakpoints_the_exception_ends_the_program(
    service: DebugService, program: Program
) -> None:
    program.steps = crash_steps()
    sid = (await service.create_session()).session_id
    await service.launch(sid, LaunchRequest(script=CRASH))
    end = await service.wait(sid, 10)
    assert (end.status, end.exit_code) == ("terminated", 1)
    assert end.output is not None and f"ValueError: {CRASH_MESSAGE}" in end.output


async def test_exception_types_alone_ask_for_raised_exceptions(service: DebugService) -> None:
    sid = (await service.create_session()).session_id
    types = ["KeyError", "myapp.errors.RetryableError"]
    wanted = await service.set_exception_breakpoints(sid, [], types)
    assert (wanted.filters, wanted.exception_types) == (["raised"], types)
    started = await service.launch(sid, LaunchRequest(script=BASIC))
    said = f"breakpoints, every raised exception ({', '.join(types)}), even caught ones ({CARRIED})"
    assert started.stops_on == said


async def test_unknown_exception_filters_and_types_are_refused(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    refused = await refusal(service.set_exception_breakpoints(sid, ["sometimes"], []))
    assert (refused.status, refused.code) == (400, "invalid_request")
    assert "sometimes" in refused.message
    refused = await refusal(service.set_exception_breakpoints(sid, ["raised"], ["not a class"]))
    assert (refused.status, refused.code) == (400, "invalid_request")
