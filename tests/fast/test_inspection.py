"""Reading a paused program through either backend: threads, processes, the stack, scopes and variables,
evaluation, source, watches, changes, the exception autopsy, object inspection, what was redacted; and the
requests the relay sends to the program's service."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import msgspec
import pytest

from debugrelay.models import HttpCall, LaunchRequest
from debugrelay.service import DebugService
from tests.conftest import refused_port

from .conftest import ADD, BASIC, CRASH, CRASH_MESSAGE, LOOP, RAISE, crash_steps, paused_at, refusal
from .fake_debugpy import Program, Step

pytestmark = pytest.mark.asyncio


async def test_threads_and_processes_of_a_paused_program(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    threads = (await service.threads(sid)).threads
    assert [(t.id, t.name, t.state, t.is_current) for t in threads] == [(1, "MainThread", "stopped", True)]
    (process,) = (await service.processes(sid)).processes
    assert (process.root, process.command, process.state) == (True, BASIC, "paused")
    await service.terminate(sid)
    (process,) = (await service.processes(sid)).processes
    assert (process.state, process.exit_code) == ("exited", -9)
    refused = await refusal(service.threads(sid))
    assert (refused.status, refused.code) == (409, "invalid_state")


async def test_the_stack_of_the_stopped_thread(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    stack = await service.stacktrace(sid)
    assert (stack.thread_id, stack.total_frames, stack.post_mortem) == (1, 1, None)
    assert [(f.id, f.name, f.file, f.line) for f in stack.frames] == [(0, "add", BASIC, ADD)]
    assert (await service.stacktrace(sid, library=True)).frames == stack.frames
    for start, count in ((-1, 20), (0, 0), (0, 1001)):
        refused = await refusal(service.stacktrace(sid, start=start, count=count))
        assert (refused.status, refused.code) == (400, "invalid_request")


async def test_scopes_and_variables_page_through_a_frame(service: DebugService) -> None:
    sid = await paused_at(service, LOOP)
    (scope,) = (await service.scopes(sid)).scopes
    assert scope.name == "Locals"
    everything = await service.variables(sid, scope.reference)
    assert [(v.name, v.value, v.type) for v in everything.variables] == [
        ("values", "[3, 4, 5]", "list"),
        ("total", "0", "int"),
        ("value", "3", "int"),
    ]
    page = await service.variables(sid, scope.reference, start=1, count=1)
    assert ([v.name for v in page.variables], page.total, page.has_more) == (["total"], 3, True)
    refused = await refusal(service.variables(sid, 0))
    assert (refused.status, refused.code) == (404, "INVALID_REFERENCE")
    refused = await refusal(service.scopes(sid, 5))
    assert (refused.status, refused.code) == (404, "INVALID_REFERENCE")
    assert "no frame 5" in refused.message


async def test_variables_by_scope_and_by_path(service: DebugService) -> None:
    sid = await paused_at(service, LOOP)
    every = await service.scoped_variables(sid)
    assert (every.scope, every.frame_id, every.total) == ("all", 0, 3)
    assert [(v.name, v.scope) for v in every.variables] == [("values", "local"), ("total", "local"), ("value", "local")]
    local = await service.scoped_variables(sid, scope="locals", start=2, count=1)
    assert ([v.name for v in local.variables], local.has_more) == (["value"], False)
    assert (await service.scoped_variables(sid, scope="globals")).variables == []
    scalar = await service.scoped_variables(sid, expand="total")
    assert (scalar.parent, scalar.value, scalar.variables) == ("total", "0", [])
    refused = await refusal(service.scoped_variables(sid, expand="nope"))
    assert (refused.status, refused.code) == (404, "INVALID_REFERENCE")
    refused = await refusal(service.scoped_variables(sid, scope="everything"))
    assert (refused.status, refused.code) == (400, "invalid_request")


async def test_evaluate_in_the_paused_frame(service: DebugService) -> None:
    sid = await paused_at(service, LOOP)
    found = await service.evaluate(sid, "values[1] * 10")
    assert (found.result, found.type, found.truncated) == ("40", "int", False)
    assert (await service.evaluate(sid, "value", context="watch")).result == "3"
    refused = await refusal(service.evaluate(sid, "value +"))
    assert (refused.status, refused.code) == (400, "evaluation_error")
    assert "SyntaxError" in refused.message
    refused = await refusal(service.evaluate(sid, "value", frame_index=3))
    assert (refused.status, refused.code) == (404, "INVALID_REFERENCE")
    refused = await refusal(service.evaluate(sid, "value", context="debugger"))
    assert (refused.status, refused.code) == (400, "invalid_request")


async def test_a_source_line_is_read_or_none(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    assert await service.source_line(sid, BASIC, ADD) == "    result = a + b  # add-body"
    assert await service.source_line(sid, BASIC, 9999) is None
    assert await service.source_line(sid, "/nonexistent/app.py", 1) is None


async def test_watches_are_valued_at_each_stop(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    added = await service.add_watch(sid, "a + b")
    assert (added.watch_id, added.expression, added.result, added.type) == ("w1", "a + b", "3", "int")
    failing = await service.add_watch(sid, "nope")
    assert (failing.watch_id, failing.result) == ("w2", None)
    assert failing.error is not None and "NameError" in failing.error
    await service.resume(sid, "continue", wait=10)
    listed = (await service.watches(sid)).watches
    assert [(w.watch_id, w.result) for w in listed] == [("w1", "7"), ("w2", None)]
    removed = await service.remove_watch(sid, "w1")
    assert (removed.deleted, removed.watch_id) == (True, "w1")
    assert [w.watch_id for w in (await service.watches(sid)).watches] == ["w2"]
    refused = await refusal(service.remove_watch(sid, "w1"))
    assert (refused.status, refused.code) == (404, "not_found")


async def test_changes_name_the_locals_that_moved_since_the_last_stop_in_the_frame(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    first = await service.changes(sid)
    assert (first.first_stop_in_frame, first.changed, first.locals) == (True, [], 2)
    assert first.frame is not None and (first.frame.function, first.frame.line) == ("add", ADD)
    await service.resume(sid, "continue", wait=10)
    moved = await service.changes(sid)
    assert [(c.name, c.old, c.new) for c in moved.changed] == [("a", "0", "3"), ("b", "3", "4")]
    assert moved.since is not None and (moved.since.stop, moved.since.line) == (1, ADD)
    assert moved.unchanged == 0


async def test_the_autopsy_of_an_uncaught_exception(service: DebugService, program: Program) -> None:
    program.steps = crash_steps()
    sid = (await service.create_session()).session_id
    await service.set_exception_breakpoints(sid, ["uncaught"], [])
    await service.launch(sid, LaunchRequest(script=CRASH))
    stop = await service.wait(sid, 10, include_autopsy=True)
    assert stop.autopsy is not None
    assert (stop.autopsy.exception.type, stop.autopsy.exception.message) == ("ValueError", CRASH_MESSAGE)
    autopsy = await service.autopsy(sid)
    assert (autopsy.thread_id, autopsy.exception.unhandled, autopsy.total_frames) == (1, True, 1)
    assert autopsy.exception.location is not None and autopsy.exception.location.line == RAISE
    (frame,) = autopsy.frames
    assert (frame.function, frame.line) == ("parse", RAISE)
    assert frame.source is not None and frame.source.text == "return int(text)  # raise-here"
    assert [(v.name, v.value) for v in frame.locals or []] == [("text", "'x'")]
    # the exception object itself is read by the relay's helper inside the target, which the fake has not got
    assert autopsy.partial and any("exception details unavailable" in w for w in autopsy.warnings)
    refused = await refusal(service.autopsy(sid, max_frames=0))
    assert (refused.status, refused.code) == (400, "invalid_request")
    await service.resume(sid, "continue", wait=10)
    after = await service.autopsy(sid)  # the program has ended: answered from its post-mortem
    assert after.post_mortem is not None
    assert (after.exception.type, after.exception.message) == ("ValueError", CRASH_MESSAGE)
    stack = await service.stacktrace(sid)
    assert (stack.post_mortem, [f.name for f in stack.frames]) == (after.post_mortem, ["parse"])
    kept = await service.scoped_variables(sid)
    assert (kept.post_mortem, [(v.name, v.value) for v in kept.variables]) == (after.post_mortem, [("text", "'x'")])


async def test_an_autopsy_needs_an_exception_stop(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    refused = await refusal(service.autopsy(sid))
    assert (refused.status, refused.code) == (409, "NO_EXCEPTION")
    assert refused.details == {"reason": "breakpoint"}


async def test_object_inspection_needs_the_relays_helper_in_the_target(service: DebugService) -> None:
    sid = await paused_at(service, LOOP)
    refused = await refusal(service.object_inspect(sid, "values"))
    assert (refused.status, refused.code) == (400, "unsupported")
    assert "expand" in refused.hint  # the way that works without it
    refused = await refusal(service.object_inspect(sid, "values", depth=11))
    assert (refused.status, refused.code) == (400, "DEPTH_EXCEEDED")


async def test_the_redaction_audit_names_what_was_hidden_never_the_value(
    service: DebugService, program: Program
) -> None:
    password = "hunter2-horse"
    program.steps = [Step(BASIC, ADD, "add", {"password": password, "a": 1})]
    sid = await paused_at(service, ADD)
    assert (await service.redactions(sid)).total == 0
    assert (await service.evaluate(sid, "password")).result == "'[SECRET_1]'"
    audit = await service.redactions(sid)
    assert (audit.session_id, audit.enabled, audit.total) == (sid, True, 1)
    (entry,) = audit.redactions
    assert (entry.placeholder, entry.rule, entry.where) == ("[SECRET_1]", "secret_name", "evaluate")
    assert password not in json.dumps(msgspec.to_builtins(audit))


@pytest.fixture
async def web_service() -> AsyncIterator[tuple[int, list[bytes]]]:
    """A stand-in for the program's web service on loopback: its port and the requests it was sent."""
    seen: list[bytes] = []
    body = b'{"id": 42}\n'

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        sizes = [line.split(b":")[1] for line in head.lower().split(b"\r\n") if line.startswith(b"content-length:")]
        seen.append(head + await reader.readexactly(int(sizes[0]) if sizes else 0))
        writer.write(b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n")
        writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1], seen
    finally:
        server.close()
        await server.wait_closed()


async def test_a_request_to_the_programs_service_is_answered_and_kept(
    service: DebugService, web_service: tuple[int, list[bytes]]
) -> None:
    port, seen = web_service
    sid = await paused_at(service, ADD)
    call = HttpCall(method="POST", path="/orders", port=port, headers={"X-Trace": "t1"}, body='{"n": 1}', timeout=10)
    answered = await service.request(sid, call)
    assert (answered.status, answered.timed_out) == ("paused", False)  # the program stays where it was
    view = answered.request
    assert view is not None
    assert (view.method, view.path, view.port, view.state) == ("POST", "/orders", port, "answered")
    assert view.response is not None and (view.response.status, view.response.body) == (201, '{"id": 42}\n')
    (sent,) = seen
    assert sent.startswith(b"POST /orders HTTP/1.1\r\n") and b"x-trace: t1" in sent.lower()
    assert sent.endswith(b'{"n": 1}')
    kept = await service.request_result(sid, view.request_id)
    assert (kept.request_id, kept.state, kept.response) == (view.request_id, "answered", view.response)
    refused = await refusal(service.request_result(sid, "req_00000000"))
    assert (refused.status, refused.code) == (404, "not_found")


async def test_a_request_nothing_answers_is_refused(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    with refused_port() as closed:  # a port nothing listens on
        refused = await refusal(service.request(sid, HttpCall(port=closed, timeout=1.0)))
    assert (refused.status, refused.code) == (409, "service_unreachable")
    assert refused.details["port"] == closed
    refused = await refusal(service.request(sid, HttpCall(path="/")))  # no port, and no launch's ready port
    assert (refused.status, refused.code) == (400, "invalid_request")


async def test_show_process_names_a_process_of_the_program(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    refused = await refusal(service.show_process(sid, 4242))
    assert (refused.status, refused.code) == (404, "not_found")
    assert refused.details == {"pid": 4242}


async def test_a_pid_below_1_is_an_invalid_request(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    refused = await refusal(service.show_process(sid, 0))
    assert (refused.status, refused.code) == (400, "invalid_request")


async def test_a_request_path_must_start_with_a_slash(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    refused = await refusal(service.request(sid, HttpCall(path="orders", port=8000, timeout=0.1)))
    assert (refused.status, refused.code) == (400, "invalid_request")
