"""The agent's trail and the change feed the live view (/ui) sleeps on."""

from __future__ import annotations

import asyncio

import pytest

from debugrelay.errors import RelayError
from debugrelay.service import TRAIL_LENGTH, RelayService, calling

from .test_service import paused_at_add


async def test_named_calls_are_recorded_per_session_with_a_short_result(relay: RelayService) -> None:
    sid = await paused_at_add(relay)  # not named: the view's own reads and in-process use leave no trail
    trail = relay.manager.trail
    assert trail.entries(sid) == []

    with calling("tool debug_step_over"):
        await relay.resume(sid, "step-over", wait=10)
        await relay.stacktrace(sid)  # the same call's further reads are not separate entries
    with calling("POST /sessions/…/evaluate"):
        await relay.evaluate(sid, "value * 2")
    with calling("POST /sessions/…/evaluate"), pytest.raises(RelayError):
        await relay.evaluate(sid, "undefined_name_" + "x" * 200)

    step, evaluated, failed = trail.entries(sid)
    assert (step.call, step.operation, step.detail) == ("tool debug_step_over", "resume", "step-over")
    assert step.result.startswith("paused at basic.py:")
    assert (evaluated.detail, evaluated.ok) == ("value * 2", True) and evaluated.result.startswith("= ")
    assert not failed.ok and failed.result.startswith("evaluation_error")
    assert failed.detail.endswith("…") and len(failed.detail) == 80  # cut, and marked as cut

    for _ in range(TRAIL_LENGTH + 5):
        with calling("GET /sessions/…/status"):
            await relay.status(sid)
    assert len(trail.entries(sid)) == TRAIL_LENGTH  # bounded per session
    assert trail.entries(sid)[-1].result.startswith("paused")


async def test_the_feed_wakes_a_view_on_a_stop_on_output_and_on_a_call(relay: RelayService) -> None:
    sid = await paused_at_add(relay)
    other = (await relay.create_session(name="other")).session_id
    feed = relay.manager.feed

    seen = feed.of[sid]
    woken = asyncio.ensure_future(feed.wait(seen, sid))
    with calling("POST /sessions/…/continue"):
        await relay.resume(sid, "continue", wait=10)  # to the next hit, printing on the way
    assert await woken > seen
    assert feed.of[sid] > seen

    seen_other = feed.of[other]
    assert await feed.wait(seen_other, other, timeout=0) == seen_other  # nothing happened to the other one

    seen = feed.of[sid]
    with calling("GET /sessions/…/status"):
        await relay.status(sid)
    assert feed.of[sid] > seen  # a recorded call shows at once

    page = await relay.output(sid)
    assert "adding" in "".join(o.text for o in page.outputs)
