"""Running the program through either backend: launch, the steps, continue, pause, wait, restart; and what it
printed, page by page and as news."""

from __future__ import annotations

import pytest

from debugrelay.models import LaunchRequest
from debugrelay.service import DebugService

from .conftest import ADD, BASIC, CRASH, CRASH_MESSAGE, LOOP, crash_steps, paused_at, refusal
from .fake_debugpy import FakeLauncher, Program

pytestmark = pytest.mark.asyncio


async def test_launch_answers_at_once_with_what_will_stop_the_program(service: DebugService, program: Program) -> None:
    program.loops = True
    sid = (await service.create_session()).session_id
    started = await service.launch(sid, LaunchRequest(script=BASIC))
    assert (started.status, started.stops_on, started.restarted) == ("running", "breakpoints", None)
    again = await service.launch(sid, LaunchRequest(script=BASIC))  # launching again is a restart
    assert again.status == "running"
    assert again.restarted is not None and "ended" in again.restarted


async def test_a_launch_of_a_missing_script_is_refused(service: DebugService) -> None:
    sid = (await service.create_session()).session_id
    refused = await refusal(service.launch(sid, LaunchRequest(script="/nonexistent/app.py")))
    assert (refused.status, refused.code) == (400, "file_not_found")
    assert (await service.status(sid)).status == "created"


async def test_steps_go_into_a_call_and_out_of_it(service: DebugService) -> None:
    sid = await paused_at(service, LOOP)
    into = await service.resume(sid, "step-into", wait=10)
    assert (into.status, into.reason) == ("paused", "step")
    assert into.location is not None and (into.location.function, into.location.line) == ("add", ADD)
    out = await service.resume(sid, "step-out", wait=10)
    assert out.location is not None and (out.location.function, out.location.line) == ("average", LOOP)
    assert (await service.evaluate(sid, "total")).result == "3"  # back in the caller, one value further


async def test_a_stop_with_details_carries_its_line_locals_and_watches(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    await service.add_watch(sid, "a * b")
    stop = await service.resume(sid, "continue", wait=10, details=True)
    assert (stop.status, stop.code) == ("paused", "result = a + b  # add-body")
    assert (stop.locals, stop.watches) == ({"a": "3", "b": "4"}, {"a * b": "12"})
    waited = await service.wait(sid, 10, details=True)  # already paused: the same stop
    assert (waited.code, waited.locals, waited.watches) == (stop.code, stop.locals, stop.watches)
    plain = await service.wait(sid, 10)
    assert (plain.code, plain.locals, plain.watches) == (None, None, None)


async def test_a_continue_of_every_process_goes_on_as_a_continue_with_one(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    stop = await service.resume(sid, "continue", wait=10, every=True)
    assert (stop.status, stop.breakpoint_ids) == ("paused", ["bp_1"])
    assert (await service.evaluate(sid, "b")).result == "4"


async def test_an_unknown_resume_command_is_an_invalid_request(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    refused = await refusal(service.resume(sid, "jump"))
    assert (refused.status, refused.code) == (400, "invalid_request")
    assert "jump" in refused.message
    assert (await service.status(sid)).status == "paused"


async def test_a_continue_that_meets_no_stop_in_its_wait_says_so(service: DebugService, program: Program) -> None:
    program.loops = True
    sid = (await service.create_session()).session_id
    await service.launch(sid, LaunchRequest(script=BASIC))
    refused = await refusal(service.resume(sid, "continue"))
    assert (refused.status, refused.code) == (409, "NOT_PAUSED")
    await service.pause(sid)
    going = await service.resume(sid, "continue", wait=0.01)  # it loops: no stop comes
    assert (going.status, going.timed_out) == ("running", True)
    assert going.message is not None and going.message.startswith("still running after 0.01s")


async def test_wait_answers_the_end_with_its_exit_code_output_and_next_step(service: DebugService) -> None:
    sid = (await service.create_session()).session_id
    await service.launch(sid, LaunchRequest(script=BASIC))
    end = await service.wait(sid, 10)
    assert (end.status, end.exit_code, end.timed_out) == ("terminated", 0, False)
    assert end.output == "adding 3\nadding 4\nadding 5\n"
    assert end.hint is not None and "launch runs it again" in end.hint
    assert (await service.new_output(sid)).outputs == []  # the end's answer carried it


async def test_restart_runs_the_program_again_with_its_breakpoints(
    service: DebugService, launcher: FakeLauncher
) -> None:
    sid = await paused_at(service, ADD)
    await service.resume(sid, "continue", wait=10)
    assert (await service.evaluate(sid, "b")).result == "4"
    again = await service.restart(sid)
    assert again.status == "running"
    stop = await service.wait(sid, 10)
    assert (stop.status, stop.breakpoint_ids) == ("paused", ["bp_1"])
    assert (await service.evaluate(sid, "b")).result == "3"  # a new run, from the start
    assert len(launcher.peers) == 2
    assert launcher.peers[0].server is not None and not launcher.peers[0].server.is_serving()


async def test_restart_needs_a_launch_to_repeat(service: DebugService) -> None:
    sid = (await service.create_session()).session_id
    refused = await refusal(service.restart(sid))
    assert (refused.status, refused.code) == (409, "invalid_state")
    refused = await refusal(service.pause(sid))
    assert (refused.status, refused.code) == (409, "invalid_state")


async def test_output_pages_follow_a_cursor(service: DebugService) -> None:
    sid = (await service.create_session()).session_id
    await service.launch(sid, LaunchRequest(script=BASIC))
    assert (await service.wait(sid, 10)).status == "terminated"
    first = await service.output(sid, limit=2)
    assert [line.text for line in first.outputs] == ["adding 3\n", "adding 4\n"]
    assert first.has_more and first.cursor is not None
    rest = await service.output(sid, since=first.cursor)
    assert ([line.text for line in rest.outputs], rest.has_more) == (["adding 5\n"], False)
    assert {line.type for line in [*first.outputs, *rest.outputs]} == {"stdout"}
    newest = await service.output(sid, limit=1, newest=True)
    assert ([line.text for line in newest.outputs], newest.skipped) == (["adding 5\n"], 2)
    assert (await service.output(sid, since=rest.cursor)).outputs == []


async def test_output_of_one_stream(service: DebugService, program: Program) -> None:
    program.steps = crash_steps()  # nothing stops it: the ValueError ends it
    sid = (await service.create_session()).session_id
    await service.launch(sid, LaunchRequest(script=CRASH))
    end = await service.wait(sid, 10)
    assert (end.status, end.exit_code) == ("terminated", 1)
    printed = await service.output(sid, stream="stdout")
    assert [line.text for line in printed.outputs] == ["parsing 1\n", "parsing 2\n", "parsing x\n"]
    errors = await service.output(sid, stream="stderr")
    assert errors.outputs[0].text == "Traceback (most recent call last):\n"
    assert errors.outputs[-1].text == f"ValueError: {CRASH_MESSAGE}\n"
    assert {line.type for line in errors.outputs} == {"stderr"}


async def test_a_bad_output_page_is_refused(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    for limit in (0, 10_001):
        refused = await refusal(service.output(sid, limit=limit))
        assert (refused.status, refused.code) == (400, "invalid_request")
    refused = await refusal(service.output(sid, since="not-a-cursor"))
    assert (refused.status, refused.code) == (400, "invalid_request")
    assert "cursor" in refused.message


async def test_new_output_carries_each_line_once(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    assert [line.text for line in (await service.new_output(sid)).outputs] == ["adding 3\n"]
    assert (await service.new_output(sid)).outputs == []
    await service.resume(sid, "continue", wait=10)
    assert [line.text for line in (await service.new_output(sid)).outputs] == ["adding 4\n"]
    assert [line.text for line in (await service.output(sid)).outputs] == ["adding 3\n", "adding 4\n"]
