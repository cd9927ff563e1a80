"""Every input bounded, every secret masked: each refusal is a clear 4xx that changes nothing."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import httpx
import pytest

from debugrelay.models import limits
from tests.conftest import Relay, Sessions, error_of, line_of, ok, output_text, target
from tests.redis_server import Cluster

pytestmark = pytest.mark.integration

BASIC = target("basic.py")


def session_count(api: httpx.Client) -> int:
    total: int = ok(api.get("/sessions"))["total"]
    return total


def test_a_session_that_would_never_expire_is_refused(api: httpx.Client) -> None:
    before = session_count(api)
    error = error_of(api.post("/sessions", json={"timeout_minutes": 1e300}), 400, "invalid_request")
    assert "1440" in error["message"]
    error_of(api.post("/sessions", json={"timeout_minutes": 0}), 400, "invalid_request")
    assert session_count(api) == before


def test_strings_over_their_bound_are_refused(api: httpx.Client, sessions: Sessions) -> None:
    before = session_count(api)
    error = error_of(api.post("/sessions", json={"name": "n" * (limits.MAX_NAME + 1)}), 400, "invalid_request")
    assert str(limits.MAX_NAME) in error["message"]
    assert session_count(api) == before
    sid, _ = sessions.start_at(BASIC, "add-body")
    long = "1 + " * (limits.MAX_EXPRESSION // 4 + 1)
    error_of(api.post(f"/sessions/{sid}/evaluate", json={"expression": long}), 400, "invalid_request")
    error_of(api.post(f"/sessions/{sid}/watch", json={"expression": long}), 400, "invalid_request")
    condition = {"source": {"path": BASIC}, "line": line_of(BASIC, "loop-body"), "condition": long}
    error_of(api.post(f"/sessions/{sid}/breakpoints", json=condition), 400, "invalid_request")
    assert len(ok(api.get(f"/sessions/{sid}/breakpoints"))["breakpoints"]) == 1
    assert ok(api.get(f"/sessions/{sid}/watch"))["watches"] == []
    assert ok(api.get(f"/sessions/{sid}/status"))["status"] == "paused"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("script", "s" * (limits.MAX_PATH + 1)),
        ("cwd", "c" * 100_000),
        ("python", "p" * 100_000),
        ("module", "m" * (limits.MAX_MODULE + 1)),
        ("module", "not a module"),
        ("args", ["a" * (limits.MAX_ARG + 1)]),
        ("args", ["a"] * (limits.MAX_ARGS + 1)),
        ("env", {"K": "v" * (limits.MAX_ARG + 1)}),
        ("env", {"A=B": "v"}),
        ("pythonpath", ["/x"] * (limits.MAX_PATHS + 1)),
        ("test", "t" * (limits.MAX_TEST + 1)),
        ("image", "i" * (limits.MAX_IMAGE + 1)),
        ("mounts", {"/m" * 3000: "/m"}),
        ("limits", {"pids": 1 << 40}),
    ],
)
def test_every_launch_field_is_bounded(relay: Relay, api: httpx.Client, field: str, value: object) -> None:
    sid = ok(api.post("/sessions", json={}), 201)["session_id"]
    try:
        body = {"script": BASIC, field: value} if field not in ("script", "module") else {field: value}
        error = error_of(api.post(f"/sessions/{sid}/launch", json=body), 400, "invalid_request")
        assert field in error["message"] or field in str(error["details"]), error
        assert ok(api.get(f"/sessions/{sid}/status"))["status"] == "created"
        # the relay's log holds no line the size of what was sent
        assert max(len(line) for line in relay.log.read_text(errors="replace").splitlines()) < 20_000
    finally:
        api.delete(f"/sessions/{sid}")


def test_an_attach_pid_beyond_any_kernel_s_is_refused(api: httpx.Client) -> None:
    before = session_count(api)
    error = error_of(api.post("/sessions", json={"mode": "attach", "pid": 49051298951}), 400, "invalid_request")
    assert "pid" in error["message"] or "pid" in str(error["details"])
    assert session_count(api) == before


def test_an_attach_to_the_relay_or_a_process_it_runs_under_is_refused(relay: Relay) -> None:
    """The relay's parent (here: this test's own process, which started it) and the relay itself: the
    debugger is never injected there, and nothing is created (pid 1: tests/unit/test_launch_policy.py)."""
    api = relay.http
    before = session_count(api)
    for pid in (os.getpid(), relay.proc.pid):
        error = error_of(api.post("/sessions", json={"mode": "attach", "pid": pid}), 403, "refused")
        assert error["details"] == {"pid": pid} and "runs under" in error["message"], error
    assert session_count(api) == before


def test_too_many_breakpoints_at_once_set_none(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    many = [{"function": f"f{i}"} for i in range(limits.MAX_BREAKPOINTS_PER_REQUEST + 1)]
    error = error_of(api.post(f"/sessions/{sid}/breakpoints", json=many), 400, "invalid_request")
    assert str(limits.MAX_BREAKPOINTS_PER_REQUEST) in error["message"]
    assert ok(api.get(f"/sessions/{sid}/breakpoints"))["breakpoints"] == []


def test_environment_values_are_masked_in_views_and_exports(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.launch(sid, BASIC, env={"API_KEY": "s3cr3t-value"}, stop_on_entry=True)
    sessions.wait(sid)
    assert "s3cr3t-value" not in api.get(f"/sessions/{sid}").text
    assert ok(api.get(f"/sessions/{sid}"))["launch"]["env"] == {"API_KEY": "***"}
    exported = ok(api.get(f"/sessions/{sid}/export"))
    assert exported["launch"]["env"] == {"API_KEY": "***"}
    error = error_of(api.post("/sessions/import", json=exported), 400, "invalid_request")
    assert "reveal_env" in error["hint"]
    revealed = ok(api.get(f"/sessions/{sid}/export", params={"reveal_env": "true"}))
    # redaction is on: the value itself never leaves the relay, a placeholder stands for it
    assert revealed["launch"]["env"] == {"API_KEY": "[SECRET_1]"}
    copy = ok(api.post("/sessions/import", json=revealed), 201)
    sessions.created.append(copy["session_id"])
    assert copy["launch"]["env"] == {"API_KEY": "***"}


def test_the_schema_page_loads_nothing_from_elsewhere(api: httpx.Client) -> None:
    page = api.get("/schema")
    assert page.status_code == 200
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert "<script" not in page.text
    assert "/sessions/{session_id}/evaluate" in page.text
    assert ok(api.get("/schema/openapi.json"))["paths"]


def test_a_token_that_is_not_ascii_is_just_wrong(tmp_path: Path) -> None:
    relay = Relay(tmp_path, env={"DEBUGRELAY_TOKEN": "right-token"})
    try:
        with httpx.Client(base_url=relay.url) as raw:
            answer = raw.get("/sessions", headers={"Authorization": "Bearer café".encode()})
            error_of(answer, 401, "unauthorized")
        assert "Traceback" not in relay.log.read_text()
    finally:
        relay.stop()


def test_a_malformed_hops_header_is_a_bad_request(cluster: Cluster) -> None:
    relay = cluster.relay()
    sid = ok(relay.http.post("/sessions", json={}), 201)["session_id"]
    elsewhere = "sess_0123456789ab"  # not held here: the header decides whether to forward
    error_of(relay.http.get(f"/sessions/{elsewhere}", headers={"x-debugrelay-hops": "many"}), 400, "invalid_request")
    error_of(relay.http.get(f"/sessions/{elsewhere}"), 404, "session_not_found")
    assert ok(relay.http.get(f"/sessions/{sid}"))["status"] == "created"


@pytest.mark.parametrize("field", ["script", "cwd"])
def test_a_name_longer_than_any_file_name_is_a_clear_error(api: httpx.Client, field: str) -> None:
    """Within the field's bound, but one part is longer than a file name may be (255 bytes): the system
    refuses to even look it up, and the relay says the file is not there rather than failing."""
    sid = ok(api.post("/sessions", json={}), 201)["session_id"]
    try:
        name = "0" * 300
        body = {"script": f"/tmp/{name}.py"} if field == "script" else {"script": BASIC, "cwd": f"/tmp/{name}"}
        response = api.post(f"/sessions/{sid}/launch", json=body)
        assert 400 <= response.status_code < 500, response.text
        assert response.json()["error"]["hint"]
        assert ok(api.get(f"/sessions/{sid}/status"))["status"] == "created"
    finally:
        api.delete(f"/sessions/{sid}")


def test_a_module_name_longer_than_any_file_name_runs_and_python_says_it_is_not_found(
    api: httpx.Client, sessions: Sessions
) -> None:
    """The relay looks for the module's file to check breakpoints; a name the system will not look up is
    simply not found there, and Python says so in the program's output."""
    sid = sessions.create()
    ok(api.post(f"/sessions/{sid}/launch", json={"module": "0" * 300}))
    assert sessions.wait(sid)["status"] == "terminated"
    assert "No module named" in output_text(api, sid)


def test_the_relays_own_session_limit_holds_under_parallel_creates(cluster: Cluster) -> None:
    relay = cluster.relay(DEBUGRELAY_MAX_SESSIONS="2", DEBUGRELAY_POOL_SIZE="0")

    async def burst() -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=relay.url, timeout=180) as client:
            return await asyncio.gather(*(client.post("/sessions", json={}) for _ in range(20)))

    answers = asyncio.run(burst())  # each create awaits the store (its lease) before it holds a place
    assert sorted(a.status_code for a in answers) == [201, 201] + [429] * 18, [a.text for a in answers]
    assert all(error_of(a, 429, "too_many_sessions") for a in answers if a.status_code == 429)
    assert session_count(relay.http) == 2
