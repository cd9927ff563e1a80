"""Breakpoint rules without a target: validation, hit conditions, persistence (AC-PE-1, AC-PE-4)."""

from __future__ import annotations

import asyncio
import logging
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from debugrelay.config import load_settings
from debugrelay.errors import InvalidCondition, InvalidLine, RelayError
from debugrelay.models import BreakpointRecord, SessionRecord, StoredProfile
from debugrelay.sessions import Session, SourceRoots, breakpoints
from debugrelay.sessions.breakpoints import (
    BreakpointRequest,
    BreakpointUpdate,
    check_log_message,
    compile_expression,
    hit_test,
    normalize_hit_condition,
    type_matches,
)
from debugrelay.store import MemoryStore
from tests.conftest import free_port, line_of, target

COUNTER = target("bp_counter.py")
LogCapture = pytest.LogCaptureFixture


def new_session(store: MemoryStore) -> Session:
    record = SessionRecord(id="sess_unit")
    return Session(record, store=store, settings=load_settings(), launchers={})


def request(line: int, **extra: object) -> BreakpointRequest:
    return breakpoints.validate_request(BreakpointRequest(file=COUNTER, line=line, **extra))  # type: ignore[arg-type]


# -- AC-PE-1 -------------------------------------------------------------------------------------


async def test_ac_pe_1_breakpoints_are_saved_when_set_changed_and_removed() -> None:
    store = MemoryStore()
    session = new_session(store)
    [bp] = await breakpoints.add(session, [request(line_of(COUNTER, "step-body"), condition="i > 3")])
    saved = await store.get_session(session.id)
    assert saved is not None
    assert [(b.id, b.file, b.line, b.condition, b.verified) for b in saved.breakpoints] == [
        (bp.id, COUNTER, line_of(COUNTER, "step-body"), "i > 3", True)
    ]
    await breakpoints.update(session, bp.id, BreakpointUpdate(enabled=False, hit_condition=">=2"))
    saved = await store.get_session(session.id)
    assert saved is not None
    assert saved.breakpoints[0].enabled is False
    assert saved.breakpoints[0].hit_condition == ">= 2"
    await breakpoints.remove(session, bp.id)
    saved = await store.get_session(session.id)
    assert saved is not None
    assert saved.breakpoints == []


async def test_a_refused_breakpoint_list_saves_nothing() -> None:
    store = MemoryStore()
    session = new_session(store)
    await session.save()
    with pytest.raises(InvalidLine) as caught:
        await breakpoints.add(session, [request(line_of(COUNTER, "report")), request(10_000)])
    assert caught.value.details["index"] == 1
    assert caught.value.details["max_line"] > 0
    saved = await store.get_session(session.id)
    assert saved is not None
    assert saved.breakpoints == []
    assert saved.next_breakpoint == 1
    assert session.record.breakpoints == []


# -- AC-PE-4 -------------------------------------------------------------------------------------


def saved_profile() -> list[object]:
    return [
        BreakpointRecord(id="p1", file=COUNTER, line=line_of(COUNTER, "step-body")),
        {"id": "p2", "kind": "elephant"},
        BreakpointRecord(id="p3", file=COUNTER, line=10_000),
        BreakpointRecord(id="p4", file=COUNTER, line=line_of(COUNTER, "report"), condition="total >"),
        42,
        BreakpointRecord(id="p6", kind="function", function="Point.norm"),
        BreakpointRecord(id="p7", file="relative.py", line=1),
    ]


def test_ac_pe_4_invalid_saved_breakpoints_are_skipped_with_a_warning(caplog: LogCapture) -> None:
    with caplog.at_level(logging.WARNING):
        reqs, skipped = breakpoints.requests_from_saved(saved_profile(), SourceRoots((str(Path(COUNTER).parent),)))
    assert [(r.file, r.line, r.function) for r in reqs] == [
        (COUNTER, line_of(COUNTER, "step-body"), None),
        (None, None, "Point.norm"),
    ]
    assert [s.index for s in skipped] == [1, 2, 3, 4, 6]
    assert [s.error.code for s in skipped] == [
        "invalid_data",
        "invalid_line",
        "invalid_condition",
        "invalid_data",
        "invalid_request",
    ]
    assert sum("skipping saved breakpoint" in r.message for r in caplog.records) == 5


async def test_ac_pe_4_applying_a_damaged_profile_sets_the_good_entries() -> None:
    store = MemoryStore()
    session = new_session(store)
    created, skipped = await breakpoints.apply_saved(session, saved_profile())
    assert [b.id for b in created] == ["bp_1", "bp_2"]
    assert len(skipped) == 5
    assert created[1].pending
    assert created[1].message == breakpoints.PENDING_FUNCTION
    saved = await store.get_session(session.id)
    assert saved is not None
    assert [b.id for b in saved.breakpoints] == ["bp_1", "bp_2"]


@pytest.fixture
def redis_url() -> Iterator[str]:
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("redis-server is not installed")
    port = free_port()
    proc = subprocess.Popen(
        [server, "--port", str(port), "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL
    )
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)


async def test_ac_pe_4_unreadable_redis_profile_is_skipped(redis_url: str, caplog: LogCapture) -> None:
    from debugrelay.store.redis import RedisStore

    store = RedisStore.with_url(redis_url, namespace="unit")
    for _ in range(100):  # the server may still be starting
        if await store.ping():
            break
        await asyncio.sleep(0.05)
    await store.save_profile("good", StoredProfile(breakpoints=[BreakpointRecord(id="p1", file=COUNTER, line=5)]))
    await store.client.hset("unit:profiles", "broken", b"{not json")
    # as an older relay kept a profile: its breakpoints alone, saved by nobody in particular
    await store.client.hset("unit:profiles", "older", msgspec.json.encode([BreakpointRecord(id="p2", line=6)]))
    with caplog.at_level(logging.WARNING):
        profiles = await store.list_profiles()
        assert await store.get_profile("broken") is None
    assert sorted(profiles) == ["good", "older"]
    assert [b.line for b in profiles["older"].breakpoints] == [6] and profiles["older"].saved_by is None
    assert any("broken" in r.getMessage() for r in caplog.records)
    await store.close()


# -- expressions and hit conditions ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ("5", "5"),
        ("== 5", "== 5"),
        ("==5", "== 5"),
        (">= 5", ">= 5"),
        ("> 2", "> 2"),
        ("!= 3", "!= 3"),
        ("% 5", "% 5"),
        ("% 5 == 0", "% 5"),
        ("%5==2", "% 5 == 2"),
        ("  7 ", "7"),
    ],
)
def test_hit_conditions_are_understood(given: str, canonical: str) -> None:
    assert normalize_hit_condition(given) == canonical


@pytest.mark.parametrize("given", ["five", "== x", "% 0", "% 3 == 3", "== 0", "< 1", "i > 3", ">=", ""])
def test_hit_conditions_that_cannot_work_are_refused(given: str) -> None:
    with pytest.raises(InvalidCondition):
        normalize_hit_condition(given)


@pytest.mark.parametrize(
    ("hit_condition", "pauses"),
    [("3", [3]), ("== 3", [3]), (">= 7", [7, 8, 9]), ("< 3", [1, 2]), ("% 4", [4, 8]), ("% 4 == 1", [1, 5, 9])],
)
def test_hit_test_counts_in_the_target(hit_condition: str, pauses: list[int]) -> None:
    """The expression sent to debugpy counts its own hits, so debugpy re-sends do not reset it."""
    record = SessionRecord(id="sess_hits")
    bp = BreakpointRecord(id="bp_1", file=COUNTER, line=5, hit_condition=hit_condition)
    expression = hit_test(record, bp)
    assert expression is not None
    try:
        seen = [n for n in range(1, 10) if eval(expression, {}, {})]
    finally:
        sys.__dict__.pop("_debugrelay_hits", None)
    assert seen == pauses


def test_hit_counter_restarts_when_the_hit_condition_changes() -> None:
    record = SessionRecord(id="sess_hits")
    first = hit_test(record, BreakpointRecord(id="bp_1", hit_condition="2"))
    second = hit_test(record, BreakpointRecord(id="bp_1", hit_condition="3"))
    assert first
    assert second
    assert first != second


def test_conditions_are_normalized_to_one_line() -> None:
    assert compile_expression("x > 1  # only late ones", "condition") == "x > 1"
    assert compile_expression("(a and\n b)", "condition") == "a and b"
    with pytest.raises(InvalidCondition) as caught:
        compile_expression("x = 1", "condition")
    assert caught.value.details["error"].startswith("SyntaxError: ")


@pytest.mark.parametrize("message", ["plain", "i = {i}", "{{literal}} {i * 2} }}", "{d['k']}"])
def test_log_messages_that_compile(message: str) -> None:
    check_log_message(message)


@pytest.mark.parametrize("message", ["{i", "{}", "{i +}", "{ }"])
def test_log_messages_that_do_not_compile(message: str) -> None:
    with pytest.raises(InvalidCondition):
        check_log_message(message)


@pytest.mark.parametrize(
    ("wanted", "matches"),
    [
        ("KeyError", True),
        ("builtins.KeyError", True),
        ("LookupError", True),
        ("MissingKey", True),
        ("app.errors.MissingKey", True),
        ("errors.MissingKey", False),
        ("ValueError", False),
    ],
)
def test_exception_type_names_match_the_class_or_a_base(wanted: str, matches: bool) -> None:
    mro = [
        ("app.errors", "MissingKey"),
        ("builtins", "KeyError"),
        ("builtins", "LookupError"),
        ("builtins", "Exception"),
        ("builtins", "BaseException"),
        ("builtins", "object"),
    ]
    assert type_matches(wanted, mro) is matches


@pytest.mark.parametrize(
    "body",
    [{"source": {"path": COUNTER}, "line": 5, "function": "step"}, {"function": ""}, 7, "x", [], {"breakpoints": 3}],
)
def test_bad_bodies_raise_relay_errors(body: object) -> None:
    with pytest.raises(RelayError) as caught:
        breakpoints.parse_requests(body)
    assert caught.value.status == 400


def test_a_list_error_names_the_item() -> None:
    with pytest.raises(InvalidCondition) as caught:
        breakpoints.parse_requests([{"file": COUNTER, "line": 5}, {"file": COUNTER, "line": 5, "condition": "i >"}])
    assert caught.value.details["index"] == 1
    assert "none of the 2 was set" in caught.value.message


def test_view_always_has_id_kind_verified_enabled_and_hit_count() -> None:
    bp = BreakpointRecord(id="bp_3", file=COUNTER, line=5, dap_id=7, internal=False)
    assert breakpoints.view(bp) == {
        "breakpoint_id": "bp_3",
        "kind": "line",
        "verified": False,
        "enabled": True,
        "hit_count": 0,
        "file": COUNTER,
        "line": 5,
    }
    assert msgspec.json.encode(breakpoints.view(bp))  # plain JSON


def test_profile_entries_keep_only_what_was_asked(tmp_path: Path) -> None:
    ran = BreakpointRecord(
        id="bp_9",
        file=COUNTER,
        line=5,
        verified=True,
        hit_count=3,
        dap_id=2,
        message="Verified, but never hit during the run.",
        condition="i > 1",
    )
    entry = breakpoints.profile_entry(ran, 1)
    assert entry == BreakpointRecord(id="p1", file=COUNTER, line=5, condition="i > 1")
