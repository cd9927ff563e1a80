"""The OpenAPI document is a contract: every operation says what it answers."""

from __future__ import annotations

from typing import Any

import pytest

from debugrelay.api import create_app
from debugrelay.config import load_settings

# Litestar 2.2x announces its 3.0 parameter style; the relay pins litestar below 3.
pytestmark = pytest.mark.filterwarnings("ignore::litestar.exceptions.LitestarDeprecationWarning")


def _schema() -> dict[str, Any]:
    app = create_app(load_settings(state_dir="/nonexistent-state"))
    document: dict[str, Any] = app.openapi_schema.to_schema()
    return document


# answers whose shape is the user's data: a walk of one of their objects, a session document they keep
FREE_FORM = {"POST /sessions/{session_id}/object-inspect", "GET /sessions/{session_id}/export"}


def test_every_operation_documents_its_answer() -> None:
    document = _schema()
    undocumented = []
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            ok = [code for code in operation["responses"] if code.startswith("2")]
            content = operation["responses"][ok[0]].get("content", {}) if ok else {}
            schema = next(iter(content.values()), {}).get("schema", {})
            name = f"{method.upper()} {path}"
            if not (schema.get("$ref") or schema.get("oneOf") or schema.get("properties")) and name not in FREE_FORM:
                undocumented.append(name)
    assert undocumented == []


def test_answers_name_their_fields() -> None:
    components = _schema()["components"]["schemas"]
    status = components["Status"]["properties"]
    assert {"session_id", "status", "location", "exception", "exit_code", "timed_out"} <= set(status)
    assert {"result", "type", "variable_reference"} <= set(components["EvaluateResult"]["properties"])
    assert {"breakpoint_id", "verified", "hit_count"} <= set(components["BreakpointView"]["properties"])


def test_every_operation_documents_the_error_envelope() -> None:
    document = _schema()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method not in ("get", "post", "put", "patch", "delete") or path.startswith("/schema"):
                continue
            for status in ("400", "404", "409", "504"):
                answer = operation["responses"].get(status, {})
                schema = answer.get("content", {}).get("application/json", {}).get("schema", {})
                assert schema.get("$ref", "").endswith("/ErrorEnvelope"), (method, path, status)
    envelope = document["components"]["schemas"]["ErrorBody"]["properties"]
    assert set(envelope) == {"code", "message", "details", "hint"}
