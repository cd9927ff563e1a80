"""Inspection over HTTP: variables by scope and path, object_inspect, evaluate formats, and stop diffs."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from tests.conftest import Sessions, line_of, ok, target

pytestmark = pytest.mark.integration

OBJECTS = target("insp_objects.py")
LOOP = target("insp_loop.py")
FOREVER = target("loop.py")  # the core's target that never ends


def error_code(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    code: str = response.json()["error"]["code"]
    return code


def names(listing: dict[str, Any]) -> list[str]:
    return [v["name"] for v in listing["variables"]]


def inspect(api: httpx.Client, sid: str, **body: Any) -> httpx.Response:
    return api.post(f"/sessions/{sid}/object-inspect", json=body)


@pytest.fixture
def at_lookup(sessions: Sessions) -> str:
    sid, _ = sessions.start_at(OBJECTS, "lookup-here")
    return sid


# -- variables by scope and path -------------------------------------------------------------------------


def test_variables_by_scope(api: httpx.Client, at_lookup: str) -> None:
    base = f"/sessions/{at_lookup}/variables"
    arguments = ok(api.get(base, params={"scope": "arguments"}))
    assert set(names(arguments)) == {"self", "user_id", "extra", "verbose", "options"}
    by = {v["name"]: v for v in arguments["variables"]}
    assert by["user_id"]["value"] == "42"
    assert by["extra"]["value"] == "('x',)"
    assert by["verbose"]["value"] == "True"

    local = ok(api.get(base, params={"scope": "locals"}))
    assert set(names(local)) == {"root", "child", "mask", "found"}
    assert local["total"] == 4
    assert local["has_more"] is False

    everything = ok(api.get(base))
    assert everything["scope"] == "all"
    assert everything["total"] == 9
    scopes = {v["name"]: v["scope"] for v in everything["variables"]}
    assert scopes["self"] == "argument"
    assert scopes["root"] == "local"
    paged = ok(api.get(base, params={"start": 2, "count": 3}))
    assert paged["variables"] == everything["variables"][2:5]
    assert paged["has_more"] is True

    module = ok(api.get(base, params={"scope": "globals"}))
    assert {"CONFIG_NAME", "Service"} <= set(names(module)) or "CONFIG_NAME" in names(module)

    caller = ok(api.get(base, params={"scope": "all", "frame_id": 1}))
    assert "CONFIG_NAME" in names(caller)  # the module frame: its locals are the globals

    assert error_code(api.get(base, params={"scope": "this"}), 400) == "invalid_request"


def test_expand_a_variable_path(api: httpx.Client, at_lookup: str) -> None:
    base = f"/sessions/{at_lookup}/variables"
    conn = ok(api.get(base, params={"expand": "self.repo._conn"}))
    assert conn["parent"] == "self.repo._conn"
    assert conn["type"] == "Connection"
    fields = {v["name"]: v for v in conn["variables"]}
    assert fields["dsn"]["value"] == "'db://local/main'"
    assert fields["open"]["value"] == "True"
    assert fields["retries"]["length"] == 3

    users = ok(api.get(base, params={"expand": "self.repo.cache['users']"}))
    assert [v["value"] for v in users["variables"] if "index" in v] == ["'ada'", "'bob'"]
    first = ok(api.get(base, params={"expand": "self.repo._conn.retries[0]"}))
    assert first["value"] == "1"
    assert first["variables"] == []

    missing = api.get(base, params={"expand": "self.repo.nope"})
    assert error_code(missing, 404) == "INVALID_REFERENCE"
    assert "_conn" in missing.json()["error"]["details"]["children"]
    assert error_code(api.get(base, params={"expand": "ghost.x"}), 404) == "INVALID_REFERENCE"
    assert error_code(api.get(base, params={"expand": "self..x"}), 400) == "invalid_request"


def test_every_path_the_schema_describes_is_walked_and_no_other_accepted(api: httpx.Client, at_lookup: str) -> None:
    base = f"/sessions/{at_lookup}/variables"
    schema = ok(api.get("/schema/openapi.json"))
    operation = schema["paths"]["/sessions/{session_id}/variables"]["get"]
    described = next(p for p in operation["parameters"] if p["name"] == "expand")
    pattern = json_schema_of(described)["pattern"]
    # names need not be ASCII, list items go by their index either way: each is walked, or answered as absent
    for path in ("self.repo._conn.retries.0", "self.repo._conn.retries[0]", "é", "self[ ]", "0"):
        assert re.search(pattern, path), path
        answer = api.get(base, params={"expand": path})
        assert answer.status_code in (200, 404), (path, answer.text)
    assert ok(api.get(base, params={"expand": "self.repo._conn.retries.0"}))["value"] == "1"
    for path in ("self..x", "]", " ", "a[", "a[]"):
        assert not re.search(pattern, path), path
        assert error_code(api.get(base, params={"expand": path}), 400) == "invalid_request"


def json_schema_of(parameter: dict[str, Any]) -> dict[str, Any]:
    """The parameter's schema with its string constraints (beside an optional one's oneOf, or in it)."""
    schema: dict[str, Any] = parameter["schema"]
    if "pattern" in schema:
        return schema
    string: dict[str, Any] = next(o for o in schema.get("oneOf", []) if o.get("type") == "string")
    return string


# -- object_inspect ----------------------------------------------------------------------------------------


def test_object_inspect_depth(api: httpx.Client, at_lookup: str) -> None:
    shallow = ok(inspect(api, at_lookup, object_ref="self"))
    assert shallow["type"] == "__main__.Service"
    assert shallow["id"].startswith("0x")
    assert shallow["size"] > 0
    assert shallow["is_none"] is False
    assert shallow["has_circular_ref"] is False
    repo = {f["name"]: f for f in shallow["fields"]}["repo"]
    assert repo["type"] == "__main__.Repository"
    assert repo["expandable"] is True
    assert "fields" not in repo

    deep = ok(inspect(api, at_lookup, object_ref="self", depth=3))
    repo = {f["name"]: f for f in deep["fields"]}["repo"]
    conn = {f["name"]: f for f in repo["fields"]}["_conn"]
    dsn = {f["name"]: f for f in conn["fields"]}["dsn"]
    assert dsn == {"name": "dsn", "type": "str", "value": "'db://local/main'", "length": 15, "size": dsn["size"]}
    retries = {f["name"]: f for f in conn["fields"]}["retries"]
    assert retries["length"] == 3
    assert retries["value"] == "[1, 2, 3]"  # a small list of plain values at the depth asked for: shown whole

    nested = ok(inspect(api, at_lookup, object_ref="self.level", depth=10))
    level: Any = nested
    for key in ("'a'", "'b'", "'c'", "'d'", "'e'"):
        level = {i["name"]: i for i in level["items"]}[key]
    assert [i["value"] for i in level["items"]] == ["1", "2"]

    for depth in (0, 11):
        assert error_code(inspect(api, at_lookup, object_ref="self", depth=depth), 400) == "DEPTH_EXCEEDED"


def test_object_inspect_circular_references(api: httpx.Client, at_lookup: str) -> None:
    out = ok(inspect(api, at_lookup, object_ref="root", depth=3))
    assert out["has_circular_ref"] is True
    fields = {f["name"]: f for f in out["fields"]}
    assert fields["me"] == {"name": "me", "type": "__main__.Node", "value": "<circular: root>", "circular": True}
    child = fields["children"]["items"][0]
    parent = {f["name"]: f for f in child["fields"]}["parent"]
    assert parent["circular"] is True
    assert parent["value"] == "<circular: root>"
    # depth 1 does not reach the cycle through children, but root.me points at root itself
    assert ok(inspect(api, at_lookup, object_ref="child"))["has_circular_ref"] is False


def test_object_inspect_values_and_errors(api: httpx.Client, sessions: Sessions, at_lookup: str) -> None:
    none = ok(inspect(api, at_lookup, object_ref="found"))
    assert none["is_none"] is True
    assert none["type"] == "NoneType"
    big = ok(inspect(api, at_lookup, object_ref="list(range(1000))"))
    assert big["truncated"] is True
    assert big["length"] == 1000
    assert len(big["items"]) == 100
    assert big["total"] == 1000
    assert big["has_more"] is True
    in_caller = ok(inspect(api, at_lookup, object_ref="CONFIG_NAME", frame_id=1))
    assert in_caller["value"] == "'insp'"

    variables = ok(api.get(f"/sessions/{at_lookup}/frames/0/variables"))["variables"]
    ref = next(v["variable_reference"] for v in variables if v["name"] == "root")
    by_ref = ok(inspect(api, at_lookup, object_ref=str(ref)))
    assert by_ref["type"] == "__main__.Node"
    assert by_ref["has_circular_ref"] is True

    assert error_code(inspect(api, at_lookup, object_ref="nope"), 404) == "INVALID_REFERENCE"
    assert "NameError" in inspect(api, at_lookup, object_ref="nope").json()["error"]["message"]
    assert error_code(inspect(api, at_lookup, object_ref="root +"), 404) == "INVALID_REFERENCE"
    assert error_code(inspect(api, at_lookup, object_ref="999999"), 404) == "INVALID_REFERENCE"

    running = sessions.create()
    sessions.launch(running, FOREVER)
    assert error_code(inspect(api, running, object_ref="x"), 409) == "NOT_PAUSED"
    assert error_code(api.get(f"/sessions/{running}/variables"), 409) == "NOT_PAUSED"
    assert error_code(api.get(f"/sessions/{running}/changes"), 409) == "NOT_PAUSED"
    assert error_code(api.get(f"/sessions/{running}/autopsy"), 409) == "NOT_PAUSED"


def test_evaluate_hex_and_binary(api: httpx.Client, at_lookup: str) -> None:
    url = f"/sessions/{at_lookup}/evaluate"
    assert ok(api.post(url, json={"expression": "mask", "format": "hex"}))["result"] == "0xff"
    assert ok(api.post(url, json={"expression": "mask", "format": "binary"}))["result"] == "0b11111111"
    assert ok(api.post(url, json={"expression": "mask"}))["result"] == "255"


# -- stop diff ---------------------------------------------------------------------------------------------


def test_changes_across_steps_in_a_loop(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(LOOP, "loop-body")
    url = f"/sessions/{sid}/changes"
    first = ok(api.get(url))
    assert first["first_stop_in_frame"] is True
    assert first["changed"] == []
    assert first["frame"]["function"] == "accumulate"

    ok(api.post(f"/sessions/{sid}/step-over"))  # total += v ran
    after_add = ok(api.get(url))
    assert after_add["changed"] == [{"name": "total", "type": "int", "old": "0", "new": "3"}]
    assert after_add["since"]["line"] == line_of(LOOP, "loop-body")

    ok(api.post(f"/sessions/{sid}/step-over"))  # seen.append(v) ran
    assert [(c["name"], c["old"], c["new"]) for c in ok(api.get(url))["changed"]] == [("seen", "[]", "[3]")]

    ok(api.post(f"/sessions/{sid}/continue"))  # around the loop to the breakpoint again
    assert sessions.wait(sid)["reason"] == "breakpoint"
    lap = ok(api.get(url))
    moved = {c["name"]: (c["old"], c["new"]) for c in lap["changed"]}
    assert moved == {"label": ("'start'", "'running'"), "v": ("3", "4")}
    assert lap["unchanged"] == 3  # values, total, seen: unchanged since the previous stop in this frame


def test_changes_start_over_in_a_new_frame(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(LOOP, "loop-body")
    for bp in ok(api.get(f"/sessions/{sid}/breakpoints"))["breakpoints"]:
        ok(api.delete(f"/sessions/{sid}/breakpoints/{bp.get('breakpoint_id') or bp['id']}"))
    ok(api.post(f"/sessions/{sid}/step-out"))  # back in the module frame
    out = ok(api.get(f"/sessions/{sid}/changes"))
    assert out["frame"]["function"] == "<module>"
    assert out["first_stop_in_frame"] is True
