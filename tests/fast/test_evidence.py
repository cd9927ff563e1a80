"""Evidence through either backend: snapshots and the post-mortem, evidence pages, capture points and the
analysis of snapshots.

The fake debugpy evaluates what it is asked in this process, so the relay's snapshot collector really runs,
but reads this test process: the tests check what the relay keeps and answers of a snapshot (its listing,
its bounds, its pages, which patterns were checked), never what the snapshot says of the program. Capture
points record through debugpy's log points, which the fake does not play: their rows are not tested here.
"""

from __future__ import annotations

import pytest

from debugrelay.models import CaptureRequest, LaunchRequest, SnapshotBounds
from debugrelay.service import DebugService

from .conftest import ADD, BASIC, CRASH, LOOP, crash_steps, paused_at, refusal
from .fake_debugpy import Program

pytestmark = pytest.mark.asyncio

UNKNOWN = "ev-000000000000"


async def test_a_snapshot_of_a_paused_program_is_kept_listed_and_read(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    taken = await service.take_snapshot(sid, SnapshotBounds(frames=1))
    assert (taken.session_id, taken.reason, taken.program, taken.paused_ms) == (sid, "snapshot", "paused", None)
    assert taken.snapshot_id.startswith("ev-") and taken.threads and taken.size_bytes > 0
    listed = await service.snapshots(sid)
    assert (listed.total, [s.snapshot_id for s in listed.snapshots]) == (1, [taken.snapshot_id])
    whole = await service.snapshot(sid, taken.snapshot_id)
    assert (whole.snapshot_id, whole.reason) == (taken.snapshot_id, "snapshot")
    threads = whole.data["threads"]
    assert len(threads) == len(taken.threads)
    assert all(len(t["frames"]) <= 1 for t in threads)  # the bounds asked for one frame a thread
    status = await service.status(sid)
    assert (status.status, status.breakpoint_ids) == ("paused", ["bp_1"])  # the read changed nothing


async def test_a_snapshot_of_a_running_program_pauses_it_briefly(service: DebugService, program: Program) -> None:
    program.loops = True
    sid = (await service.create_session()).session_id
    await service.launch(sid, LaunchRequest(script=BASIC))
    taken = await service.take_snapshot(sid)
    assert taken.program == "running"
    assert taken.paused_ms is not None and taken.paused_ms > 0
    assert (await service.status(sid)).status == "running"


async def test_an_evidence_item_is_read_by_pages_or_searched(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    snapshot_id = (await service.take_snapshot(sid)).snapshot_id
    page = await service.evidence(snapshot_id, limit=5)
    assert (page.evidence_id, page.kind, page.offset, len(page.lines)) == (snapshot_id, "snapshot", 0, 5)
    assert page.has_more and page.total_lines > 5
    assert sid in page.title
    following = await service.evidence(snapshot_id, offset=5, limit=5)
    assert following.offset == 5 and following.lines != page.lines
    found = await service.evidence(snapshot_id, grep='"taken_at"')
    assert found.matches == 1 and len(found.lines) == 1 and '"taken_at"' in found.lines[0]
    refused = await refusal(service.evidence(snapshot_id, grep="("))
    assert (refused.status, refused.code) == (400, "invalid_request")
    refused = await refusal(service.evidence(snapshot_id, limit=0))
    assert (refused.status, refused.code) == (400, "invalid_request")
    refused = await refusal(service.evidence(UNKNOWN))
    assert (refused.status, refused.code) == (404, "not_found")


async def test_a_crash_keeps_a_post_mortem(service: DebugService, program: Program) -> None:
    program.steps = crash_steps()
    sid = (await service.create_session()).session_id
    await service.set_exception_breakpoints(sid, ["uncaught"], [])
    await service.launch(sid, LaunchRequest(script=CRASH))
    assert (await service.wait(sid, 10)).reason == "exception"
    # the post-mortem is taken while the program stays paused at the exception; resuming waits for it
    end = await service.resume(sid, "continue", wait=10)
    assert (end.status, end.exit_code) == ("terminated", 1)
    (kept,) = (await service.snapshots(sid)).snapshots
    assert (kept.reason, kept.program) == ("post_mortem", "paused")
    post_mortem = await service.snapshot(sid, "post_mortem")
    assert (post_mortem.snapshot_id, post_mortem.reason) == (kept.snapshot_id, "post_mortem")
    assert post_mortem.data["autopsy"]["exception"]["type"] == "ValueError"
    assert post_mortem.data["stop"] == {"reason": "exception", "thread_id": 1}
    found = await service.evidence(kept.snapshot_id, grep="ValueError")
    assert found.kind == "post_mortem" and found.matches


async def test_without_a_crash_there_is_no_post_mortem(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    refused = await refusal(service.snapshot(sid, "post_mortem"))
    assert (refused.status, refused.code) == (404, "not_found")
    assert "uncaught" in refused.hint
    refused = await refusal(service.snapshot(sid, UNKNOWN))
    assert (refused.status, refused.code) == (404, "not_found")
    assert (await service.snapshots(sid)).total == 0


async def test_an_ended_program_cannot_be_snapshot(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    await service.terminate(sid)
    refused = await refusal(service.take_snapshot(sid))
    assert (refused.status, refused.code) == (409, "invalid_state")


async def test_capture_points_are_set_listed_read_and_removed(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    point = await service.add_capture(sid, CaptureRequest(file=BASIC, line=LOOP, expressions=["value", "total"]))
    assert point.capture_id.startswith("cp-")
    assert (point.file, point.line, point.expressions, point.state) == (BASIC, LOOP, ["value", "total"], "active")
    assert (point.verified, point.hit_limit) == (True, 100)
    assert [c.capture_id for c in (await service.captures(sid)).captures] == [point.capture_id]
    table = await service.capture_table(sid, point.capture_id)
    assert (table.capture.capture_id, table.rows, table.total) == (point.capture_id, [], 0)
    refused = await refusal(service.capture_table(sid, point.capture_id, count=0))
    assert (refused.status, refused.code) == (400, "invalid_request")
    removed = await service.remove_capture(sid, point.capture_id)
    assert (removed.capture_id, removed.state) == (point.capture_id, "removed")
    assert (await service.captures(sid)).captures == []
    refused = await refusal(service.remove_capture(sid, point.capture_id))
    assert (refused.status, refused.code) == (404, "not_found")


async def test_a_capture_point_past_the_end_of_the_file_is_refused(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    refused = await refusal(service.add_capture(sid, CaptureRequest(file=BASIC, line=9999)))
    assert (refused.status, refused.code) == (400, "invalid_line")
    assert (await service.captures(sid)).captures == []


async def test_analysis_checks_the_known_patterns_over_snapshots(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    refused = await refusal(service.analyze(sid))
    assert (refused.status, refused.code) == (409, "invalid_state")
    assert "take=1" in refused.hint
    compared = await service.analyze(sid, take=2, interval=0)  # two new snapshots, compared
    assert (compared.session_id, len(compared.snapshots), compared.note) == (sid, 2, None)
    assert {"deadlock", "leak", "busy_loop", "crash"} <= set(compared.checked)
    listed = [s.snapshot_id for s in (await service.snapshots(sid)).snapshots]
    assert listed == compared.snapshots
    one = await service.analyze(sid, [listed[0]])
    assert one.snapshots == [listed[0]]
    assert one.note is not None and "need two" in one.note
    for bad in ({"take": 3}, {"snapshot_ids": [UNKNOWN] * 3}):
        refused = await refusal(service.analyze(sid, **bad))
        assert (refused.status, refused.code) == (400, "invalid_request"), bad
    refused = await refusal(service.analyze(sid, [UNKNOWN]))
    assert (refused.status, refused.code) == (404, "not_found")


async def test_snapshot_bounds_out_of_range_are_refused(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    refused = await refusal(service.take_snapshot(sid, SnapshotBounds(frames=0)))
    assert (refused.status, refused.code) == (400, "invalid_request")
    assert (await service.snapshots(sid)).total == 0


async def test_a_capture_point_records_at_least_one_expression(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    refused = await refusal(service.add_capture(sid, CaptureRequest(file=BASIC, line=LOOP, expressions=[])))
    assert (refused.status, refused.code) == (400, "invalid_request")
    assert (await service.captures(sid)).captures == []


async def test_a_malformed_snapshot_id_is_an_invalid_request(service: DebugService) -> None:
    sid = await paused_at(service, ADD)
    refused = await refusal(service.analyze(sid, ["snapshot-1"]))
    assert (refused.status, refused.code) == (400, "invalid_request")


async def test_a_bad_evidence_page_is_an_invalid_request_whatever_the_id(service: DebugService) -> None:
    refused = await refusal(service.evidence(UNKNOWN, limit=0))
    assert (refused.status, refused.code) == (400, "invalid_request")
