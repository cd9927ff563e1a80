"""Each operation is declared once, on the service's interface; the HTTP route, its OpenAPI entry and the
remote service come from that declaration, so none of them can be missing or drift from it."""

from __future__ import annotations

import msgspec
import pytest

from debugrelay.api import create_app
from debugrelay.api._contract import openapi_document
from debugrelay.client import RemoteService
from debugrelay.config import load_settings
from debugrelay.errors import InvalidRequest
from debugrelay.service import DebugService
from debugrelay.service._operations import declared

pytestmark = pytest.mark.filterwarnings("ignore::litestar.exceptions.LitestarDeprecationWarning")


def test_every_declared_operation_is_served_at_its_path_with_its_answer() -> None:
    document = openapi_document(create_app(load_settings(state_dir="/nonexistent-state")))
    missing, untyped = [], []
    for op in declared(DebugService).values():
        if not op.routed and "{command}" in op.path:  # continue and the steps: four routes worded by hand
            continue
        entry = document["paths"].get(op.path, {}).get(op.method.lower())
        if entry is None:
            missing.append(f"{op.method} {op.path}")
            continue
        answer = entry["responses"][str(op.status)]["content"]["application/json"]["schema"]
        typed = isinstance(op.answer, type) and issubclass(op.answer, msgspec.Struct) and op.routed
        if typed and answer.get("$ref") != f"#/components/schemas/{op.answer.__name__}":
            untyped.append(f"{op.method} {op.path}: {answer}")
    assert missing == [] and untyped == []


def test_the_remote_service_has_every_operation() -> None:
    ops = declared(DebugService)
    assert len(ops) > 60
    assert RemoteService.__abstractmethods__ == frozenset()
    for name in ops:
        method = getattr(RemoteService, name)
        assert not getattr(method, "__isabstractmethod__", False), name


def test_an_argument_outside_its_declared_bounds_is_refused_before_it_is_sent() -> None:
    op = declared(DebugService)["show_process"]
    with pytest.raises(InvalidRequest) as refused:
        op.check({"session_id": "sess_1", "pid": 0})
    assert refused.value.code == "invalid_request"
    assert "pid" in refused.value.message
    op.check({"session_id": "sess_1", "pid": 4242})  # within bounds: nothing said
