"""The service layer and the session state machine, one story per behaviour, against the fake debugpy, through
each backend (in process and over the relay's HTTP API)."""

from __future__ import annotations

import asyncio
import gc
import logging

import pytest

from debugrelay.models import LaunchRequest, limits
from debugrelay.service import DebugService, RelayService
from debugrelay.sessions import BreakpointRequest

from .conftest import ADD, BASIC, refusal
from .fake_debugpy import Program

pytestmark = pytest.mark.asyncio


async def paused_at_add(service: DebugService) -> str:
    sid = (await service.create_session(name="fast")).session_id
    await service.add_breakpoints(sid, [BreakpointRequest(file=BASIC, line=ADD)])
    await service.launch(sid, LaunchRequest(script=BASIC))
    stop = await service.wait(sid, 10)
    assert stop.status == "paused", stop
    return sid


async def test_launch_stops_at_the_breakpoint_with_its_locals(service: DebugService) -> None:
    sid = await paused_at_add(service)
    status = await service.status(sid)
    assert status.reason == "breakpoint"
    assert status.location is not None
    assert (status.location.file, status.location.line, status.location.function) == (BASIC, ADD, "add")
    assert status.breakpoint_ids == ["bp_1"]
    stack = await service.stacktrace(sid)
    assert [f.name for f in stack.frames] == ["add"]
    scopes = (await service.scopes(sid)).scopes
    names = {v.name: v.value for v in (await service.variables(sid, scopes[0].reference)).variables}
    assert names == {"a": "0", "b": "3"}


async def test_continue_goes_to_the_next_hit_and_then_the_end(service: DebugService) -> None:
    sid = await paused_at_add(service)
    second = await service.resume(sid, "continue", wait=10)
    assert second.status == "paused"
    assert (await service.evaluate(sid, "a + b")).result == "7"
    await service.resume(sid, "continue", wait=10)
    end = await service.resume(sid, "continue", wait=10)
    assert end.status == "terminated"
    assert end.exit_code == 0
    hits = (await service.breakpoints(sid)).breakpoints
    assert hits[0].hit_count == 3
    printed = "".join(line.text for line in (await service.output(sid)).outputs)
    assert printed == "adding 3\nadding 4\nadding 5\n"


async def test_evaluate_formats_integers_only(service: DebugService) -> None:
    sid = await paused_at_add(service)
    assert (await service.evaluate(sid, "b + 252", format="hex")).result == "0xff"
    assert (await service.evaluate(sid, "b", format="binary")).result == "0b11"
    assert (await service.evaluate(sid, "-b", format="hex")).result == "-0x3"
    flag = await service.evaluate(sid, "b > 0", format="hex")
    assert (flag.result, flag.type) == ("True", "bool")
    refused = await refusal(service.evaluate(sid, "b", format="octal"))
    assert refused.code == "invalid_request"
    assert "'octal'" in refused.message  # the HTTP API refuses it decoding the body, in its own words


async def test_an_expression_that_raises_is_an_evaluation_error(service: DebugService) -> None:
    sid = await paused_at_add(service)
    refused = await refusal(service.evaluate(sid, "no_such_name"))
    assert (refused.status, refused.code) == (400, "evaluation_error")
    assert "NameError" in refused.message
    assert (await service.status(sid)).status == "paused"


async def test_a_step_answers_with_the_new_location(service: DebugService) -> None:
    sid = await paused_at_add(service)
    step = await service.resume(sid, "step-over", wait=10)
    assert step.status == "paused"
    assert step.reason == "step"
    assert step.location is not None
    assert step.location.function == "average"


async def test_a_running_program_answers_not_paused_until_paused(service: DebugService, program: Program) -> None:
    program.loops = True
    sid = (await service.create_session()).session_id
    await service.launch(sid, LaunchRequest(script=BASIC))  # no breakpoint: it loops at its last step
    waited = await service.wait(sid, 0)
    assert (waited.status, waited.timed_out) == ("running", True)
    assert (await refusal(service.evaluate(sid, "1"))).code == "NOT_PAUSED"
    await service.pause(sid)
    paused = await service.wait(sid, 10)
    assert (paused.status, paused.reason) == ("paused", "pause")
    assert (await service.evaluate(sid, "a")).result == "7"


async def test_a_bad_wait_changes_nothing(service: DebugService) -> None:
    sid = await paused_at_add(service)
    refused = await refusal(service.resume(sid, "continue", wait=301))
    assert refused.code == "invalid_request"
    assert "300" in refused.message  # the bound, in either backend's words
    status = await service.status(sid)
    assert (status.status, status.location.line if status.location else None) == ("paused", ADD)


async def test_a_breakpoint_set_while_paused_is_hit(service: DebugService) -> None:
    sid = await paused_at_add(service)
    (removed,) = (await service.breakpoints(sid)).breakpoints
    await service.remove_breakpoint(sid, removed.breakpoint_id)
    end = await service.resume(sid, "continue", wait=10)
    assert end.status == "terminated"
    assert (await service.breakpoints(sid)).breakpoints == []


async def test_long_polls_on_one_session_are_bounded(
    service: DebugService, relay: RelayService, program: Program
) -> None:
    program.loops = True
    sid = (await service.create_session()).session_id
    await service.launch(sid, LaunchRequest(script=BASIC))
    waits = [asyncio.ensure_future(service.wait(sid, 30)) for _ in range(limits.MAX_WAITS_PER_SESSION)]
    await asyncio.sleep(0)  # one turn of the loop: each wait starts and is counted
    assert relay.manager.open_waits[sid] == limits.MAX_WAITS_PER_SESSION
    refused = await refusal(service.wait(sid, 30))
    assert (refused.status, refused.code) == (429, "too_many_waits")
    assert str(limits.MAX_WAITS_PER_SESSION) in refused.message
    await service.pause(sid)
    answers = await asyncio.gather(*waits)
    assert {a.status for a in answers} == {"paused"}
    assert relay.manager.open_waits[sid] == 0
    assert (await service.wait(sid, 0)).status == "paused"


async def test_a_pause_while_the_program_goes_away_is_a_state_conflict_with_a_hint(
    service: DebugService, program: Program
) -> None:
    program.loops = True
    # what debugpy's adapter answers once the program's side of it has gone
    program.refusals["pause"] = "Server[pid=4242] disconnected unexpectedly"
    sid = (await service.create_session(name="going")).session_id
    await service.launch(sid, LaunchRequest(script=BASIC))
    refused = await refusal(service.pause(sid))
    assert (refused.status, refused.code) == (409, "target_gone")
    assert "going away" in refused.message and refused.hint


async def test_a_target_gone_while_it_is_configured_fails_the_launch_and_leaves_no_error_in_the_log(
    service: DebugService, program: Program, caplog: pytest.LogCaptureFixture
) -> None:
    program.hangs_up_at = "setDebuggerProperty"  # the target died between 'initialized' and its breakpoints
    sid = (await service.create_session(name="gone")).session_id
    with caplog.at_level(logging.ERROR):
        refused = await refusal(service.launch(sid, LaunchRequest(script=BASIC)))
        gc.collect()  # a future left failed and unawaited says so when it is collected
    assert refused.code == "target_gone", refused
    assert (await service.session(sid)).status == "failed"
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
