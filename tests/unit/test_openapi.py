"""The OpenAPI document is a contract: every operation says what it answers."""

from __future__ import annotations

from typing import Any

import pytest

from debugrelay.api import create_app
from debugrelay.api._contract import openapi_document
from debugrelay.config import load_settings

# Litestar 2.2x announces its 3.0 parameter style; the relay pins litestar below 3.
pytestmark = pytest.mark.filterwarnings("ignore::litestar.exceptions.LitestarDeprecationWarning")


def _schema() -> dict[str, Any]:
    app = create_app(load_settings(state_dir="/nonexistent-state"))
    return openapi_document(app)


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
            if not (schema.get("$ref") or schema.get("oneOf") or schema.get("properties")):
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


def test_request_bodies_say_what_the_relay_accepts() -> None:
    document = _schema()
    components = document["components"]["schemas"]
    assert components["LaunchRequest"]["additionalProperties"] is False
    assert {"script", "module"} == {rule["required"][0] for rule in components["LaunchRequest"]["oneOf"]}
    assert components["SessionPatch"]["properties"]["timeout_minutes"]["anyOf"][0]["exclusiveMinimum"] == 0
    create = document["paths"]["/sessions"]["post"]
    assert create["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("/SessionCreate")
    count = next(
        p
        for p in document["paths"]["/sessions/{session_id}/stacktrace"]["get"]["parameters"]
        if p["name"] == "max_frames"
    )
    assert (count["schema"]["minimum"], count["schema"]["maximum"]) == (1, 1000)


def test_a_new_session_links_to_its_operations() -> None:
    links = _schema()["paths"]["/sessions"]["post"]["responses"]["201"]["links"]
    status = links["SessionsSessionIdStatusStatus"]
    assert status["parameters"] == {"session_id": "$response.body#/session_id"}
