"""Function traces through either backend: traces set before a launch, listed and removed; names checked
against the sources with the nearest names when unknown; bounds refused the same in process and over HTTP.
(The fake debugpy runs no program, so recorded calls are tested on real programs: tests/integration.)"""

from __future__ import annotations

import json

import pytest

from debugrelay.models import LaunchRequest, PathMapping, TraceRecord, TraceRequest
from debugrelay.service import DebugService
from debugrelay.traces import ENV, for_target
from tests.conftest import target

from .conftest import refusal

pytestmark = pytest.mark.asyncio

ORDERS = target("tr_orders.py")


async def test_a_trace_set_before_a_launch_is_listed_and_removed(service: DebugService) -> None:
    sid = (await service.create_session()).session_id
    added = await service.add_trace(sid, TraceRequest(function=f"{ORDERS}:Cart.total", keep=50))
    assert (added.trace_id, added.qualname, added.file, added.keep, added.found) == (
        "t1",
        "Cart.total",
        ORDERS,
        50,
        False,
    )
    assert added.line == 34 and "launch" in (added.message or "")
    again = await service.add_trace(sid, TraceRequest(function=f"{ORDERS}:Cart.total", keep=10))
    assert (again.trace_id, again.keep) == ("t1", 10)  # the same function: its options replaced, not a second
    nested = await service.add_trace(sid, TraceRequest(function=f"{ORDERS}:outer.<locals>.inner"))
    assert (nested.trace_id, nested.qualname) == ("t2", "outer.inner")
    listed = await service.traces(sid)
    assert [(t.trace_id, t.qualname) for t in listed.traces] == [("t1", "Cart.total"), ("t2", "outer.inner")]
    removed = await service.remove_trace(sid, "t1")
    assert removed.trace_id == "t1"
    assert [t.trace_id for t in (await service.traces(sid)).traces] == ["t2"]
    none = await service.traced_calls(sid)
    assert (none.total, none.calls, none.message) == (0, [], "The program has not run yet: launch it.")


async def test_an_unknown_function_or_file_is_refused_and_nothing_changes(service: DebugService) -> None:
    sid = (await service.create_session()).session_id
    unknown = await refusal(service.add_trace(sid, TraceRequest(function=f"{ORDERS}:fetc")))
    assert (unknown.status, unknown.code) == (404, "function_not_found")
    assert unknown.details["nearest"][0] == "fetch"
    assert "Cart.total" in unknown.details["functions"]
    empty = await refusal(service.add_trace(sid, TraceRequest(function=f"{ORDERS}:")))
    assert (empty.status, empty.code) == (404, "function_not_found")
    outside = await refusal(service.add_trace(sid, TraceRequest(function="/etc/hostname:x")))
    assert (outside.status, outside.code) == (403, "refused")
    assert (await service.traces(sid)).traces == []
    gone = await refusal(service.remove_trace(sid, "t9"))
    assert (gone.status, gone.details) == (404, {"trace_id": "t9"})
    no_call = await refusal(service.traced_call(sid, "1.2"))
    assert no_call.status == 404


async def test_bounds_are_refused_the_same_by_both_backends(service: DebugService) -> None:
    sid = (await service.create_session()).session_id
    malformed = await refusal(service.traced_call(sid, "not-a-call"))
    assert malformed.status == 400
    page = await refusal(service.traced_calls(sid, limit=0))
    assert page.status == 400
    outcome = await refusal(service.traced_calls(sid, outcome="maybe"))  # type: ignore[arg-type]
    assert outcome.status == 400
    too_many = await refusal(service.add_trace(sid, TraceRequest(function=f"{ORDERS}:price", keep=0)))
    assert too_many.status == 400


async def test_a_bare_name_is_found_in_the_folders_the_relay_serves(service: DebugService) -> None:
    sid = (await service.create_session()).session_id
    found = await service.add_trace(sid, TraceRequest(function="Cart.total"))
    assert (found.file, found.qualname) == (ORDERS, "Cart.total")
    module = await service.add_trace(sid, TraceRequest(function="tests.targets.tr_orders:fact"))
    assert (module.file, module.qualname) == (ORDERS, "fact")


async def test_a_launch_whose_code_is_elsewhere_in_its_image_is_given_the_traced_files_there() -> None:
    """A Kubernetes target runs the code of its image: the traces name the files where the image has them."""
    record = TraceRecord(id="t1", file="/home/me/shop/app/cart.py", qualname="Cart.total", line=3)
    spec = LaunchRequest(
        script="/home/me/shop/main.py",
        path_mappings=[PathMapping(local_root="/home/me/shop", remote_root="/srv/shop")],
    )
    given = json.loads(for_target(spec, [record]).env[ENV])
    assert given == [
        {
            "id": "t1",
            "file": "/srv/shop/app/cart.py",
            "qualname": "Cart.total",
            "keep": 1000,
            "callees": False,
            "reprs": False,
        }
    ]
    assert for_target(LaunchRequest(script="/x.py"), []).env == {}  # no trace: the launch as it was


async def test_a_bare_name_before_a_launch_is_looked_for_in_the_operators_folders_only(service: DebugService) -> None:
    """Not in the interpreter's libraries: the standard library's ``urlsplit`` is nobody's program here."""
    sid = (await service.create_session()).session_id
    unknown = await refusal(service.add_trace(sid, TraceRequest(function="urlsplit")))
    assert (unknown.status, unknown.code) == (404, "function_not_found")
