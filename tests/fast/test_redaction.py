"""Secrets never reach an agent: the service, the HTTP API and the MCP tools, over the fake debugpy."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar import Litestar
from mcp import Client
from mcp.types import CallToolResult

from debugrelay.api import create_app
from debugrelay.config import load_settings
from debugrelay.errors import EvaluationError
from debugrelay.mcp_server import build_server
from debugrelay.models import LaunchRequest
from debugrelay.service import RelayService
from debugrelay.sessions import BreakpointRequest, SessionManager
from debugrelay.store import MemoryStore

from .conftest import ADD, BASIC, relay_http
from .fake_debugpy import FakeLauncher, Program, Step

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("ignore::litestar.exceptions.LitestarDeprecationWarning"),
]

PASSWORD = "hunter2-horse"
CARD = "4111 1111 1111 1111"
TOKEN = "ghp_R2d2C3poR2d2C3poR2d2C3poR2d2C3po1234"
EMAIL = "ada@corp.io"
LOCALS = {
    "password": PASSWORD,
    "card": CARD,
    "headers": {"Authorization": f"token {TOKEN}", "X-Request-Id": "550e8400-e29b-41d4-a716-446655440000"},
    "user": EMAIL,
    "address": "0x7f3a2c1b4e50",
    "port": 8080,
}
PLANTED = (PASSWORD, CARD, TOKEN, EMAIL)


def secret_program() -> Program:
    printed = f"login {EMAIL} with {TOKEN} on port 8080\n"
    return Program([Step(BASIC, ADD, "add", LOCALS, output=printed), Step(BASIC, ADD, "add", LOCALS)])


@pytest.fixture
def program() -> Program:
    return secret_program()


async def manager_for(program: Program, tmp_path: Path, store: MemoryStore, **settings: Any) -> SessionManager:
    config = load_settings(state_dir=str(tmp_path / "state"), pool_size=0, **settings)
    manager = SessionManager(config, store, {"local": FakeLauncher(program)})
    await manager.start()
    return manager


@pytest.fixture
async def plain_service(tmp_path: Path) -> AsyncIterator[RelayService]:
    """A relay whose operator turned redaction off."""
    manager = await manager_for(secret_program(), tmp_path, MemoryStore(), redaction=False)
    try:
        yield RelayService(manager)
    finally:
        await manager.close()
        for launcher in manager.launchers.values():
            await launcher.close()


async def paused(relay: RelayService) -> str:
    sid = (await relay.create_session(name="secrets")).session_id
    await relay.add_breakpoints(sid, [BreakpointRequest(file=BASIC, line=ADD)])
    await relay.launch(sid, LaunchRequest(script=BASIC))
    assert (await relay.wait(sid, 10)).status == "paused"
    return sid


def shown(*answers: Any) -> str:
    return json.dumps([a if isinstance(a, dict | list | str) else _builtins(a) for a in answers])


def _builtins(answer: Any) -> Any:
    import msgspec

    return msgspec.to_builtins(answer)


async def test_variables_evaluate_and_output_carry_placeholders_not_secrets(relay: RelayService) -> None:
    sid = await paused(relay)
    frame_locals = await relay.frame_locals(sid)
    values = {v.name: v.value for v in frame_locals.variables}
    assert values["password"] == "'[SECRET_1]'"
    assert values["card"] == "'[CARD_1]'"
    assert values["user"] == "'[EMAIL_1]'"
    assert "[SECRET_2]" in values["headers"]
    assert "550e8400-e29b-41d4-a716-446655440000" in values["headers"]  # look-alikes survive
    assert (values["address"], values["port"]) == ("'0x7f3a2c1b4e50'", "8080")
    evaluated = await relay.evaluate(sid, "user + ' / ' + card")
    assert evaluated.result == "'[EMAIL_1] / [CARD_1]'"  # the same value, the same placeholder
    output = await relay.output(sid)
    assert output.outputs[0].text == "login [EMAIL_1] with [SECRET_2] on port 8080\n"
    everything = shown(frame_locals, evaluated, output, await relay.scoped_variables(sid), await relay.status(sid))
    for secret in PLANTED:
        assert secret not in everything


async def test_a_placeholder_in_an_expression_stands_for_its_secret(relay: RelayService) -> None:
    sid = await paused(relay)
    await relay.frame_locals(sid)
    assert (await relay.evaluate(sid, "password == '[SECRET_1]'")).result == "True"
    assert (await relay.evaluate(sid, "password == [SECRET_1]")).result == "True"
    assert (await relay.evaluate(sid, "len([SECRET_1])")).result == str(len(PASSWORD))
    assert (await relay.evaluate(sid, "password == '[SECRET_9]'")).result == "False"  # unknown stays literal


async def test_a_placeholder_in_a_condition_is_put_back_and_shown_back(relay: RelayService) -> None:
    sid = await paused(relay)
    await relay.frame_locals(sid)
    added = await relay.add_breakpoints(
        sid, [BreakpointRequest(file=BASIC, line=ADD + 1, condition="password == '[SECRET_1]'")]
    )
    assert added[0].condition == "password == '[SECRET_1]'"
    stored = relay.manager.get(sid).record.breakpoints[-1]
    assert stored.condition == f"password == '{PASSWORD}'"  # what debugpy is given


async def test_error_texts_are_redacted(relay: RelayService) -> None:
    sid = await paused(relay)
    with pytest.raises(EvaluationError) as caught:
        await relay.evaluate(sid, "int(password)")
    assert PASSWORD not in caught.value.message
    assert "[SECRET_1]" in caught.value.message
    assert PASSWORD not in str(caught.value)


async def test_the_audit_lists_each_redaction_and_never_the_value(relay: RelayService) -> None:
    sid = await paused(relay)
    await relay.frame_locals(sid)
    await relay.output(sid)
    audit = await relay.redactions(sid)
    assert audit.enabled
    seen = {r.placeholder: (r.rule, r.where) for r in audit.redactions}
    assert seen["[SECRET_1]"] == ("secret_name", "frame_locals")
    assert seen["[CARD_1]"] == ("card", "frame_locals")
    assert seen["[EMAIL_1]"] == ("email", "frame_locals")
    assert seen["[SECRET_2]"][0] == "github_token"
    assert audit.total == len(audit.redactions) == 4
    for secret in PLANTED:
        assert secret not in shown(audit)


async def test_placeholders_differ_across_sessions_and_survive_a_reload(tmp_path: Path) -> None:
    store = MemoryStore()
    manager = await manager_for(secret_program(), tmp_path, store)
    try:
        service = RelayService(manager)
        first = await paused(service)
        await service.evaluate(first, "card")
        assert (await service.evaluate(first, "password")).result == "'[SECRET_1]'"
        second = await paused(service)
        assert (await service.evaluate(second, "password")).result == "'[SECRET_1]'"
        # each session's placeholder stands for its own session's value only
        assert (await service.evaluate(second, "card == '[CARD_1]'")).result == "False"
        # the tables live in the store: a relay that reads them back answers the same placeholders
        manager.redaction.tables.clear()
        assert (await service.evaluate(first, "card")).result == "'[CARD_1]'"
        assert (await service.evaluate(first, "user")).result == "'[EMAIL_1]'"
        assert len(await store.get_redactions(first)) == 3
        await service.delete_session(first)
        assert await store.get_redactions(first) == {}
    finally:
        await manager.close()
        for launcher in manager.launchers.values():
            await launcher.close()


async def test_turned_off_the_relay_answers_values_as_they_are_and_says_so(plain_service: RelayService) -> None:
    sid = await paused(plain_service)
    values = {v.name: v.value for v in (await plain_service.frame_locals(sid)).variables}
    assert values["password"] == repr(PASSWORD)
    audit = await plain_service.redactions(sid)
    assert (audit.enabled, audit.total) == (False, 0)
    app = create_app(plain_service.manager.settings, plain_service.manager)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as http:
        assert (await http.get("/info")).json()["redaction"] == "off"
        assert (await http.get("/config")).json()["redaction"] is False


async def test_over_http_every_answer_is_redacted(relay: RelayService, relay_app: Litestar) -> None:
    async with relay_http(relay_app, relay) as http:
        assert (await http.get("/info")).json()["redaction"] == "on"
        sid = (await http.post("/sessions", json={"name": "h"})).json()["session_id"]
        await http.post(f"/sessions/{sid}/breakpoints", json={"file": BASIC, "line": ADD})
        await http.post(f"/sessions/{sid}/launch", json={"script": BASIC})
        stop = (await http.post(f"/sessions/{sid}/wait", params={"timeout": 10})).json()
        assert stop["status"] == "paused"
        bodies = [
            (await http.get(f"/sessions/{sid}/frames/0/variables")).text,
            (await http.get(f"/sessions/{sid}/variables")).text,
            (await http.post(f"/sessions/{sid}/evaluate", json={"expression": "headers"})).text,
            (await http.get(f"/sessions/{sid}/output")).text,
            (await http.post(f"/sessions/{sid}/evaluate", json={"expression": "int(password)"})).text,
        ]
        for body in bodies:
            for secret in PLANTED:
                assert secret not in body, body
        assert "'[SECRET_1]'" in bodies[0]
        assert json.loads(bodies[4])["error"]["code"] == "evaluation_error"
        check = await http.post(f"/sessions/{sid}/evaluate", json={"expression": "password == '[SECRET_1]'"})
        assert check.json()["result"] == "True"
        audit = (await http.get(f"/sessions/{sid}/redactions")).json()
        assert {r["placeholder"] for r in audit["redactions"]} == {"[SECRET_1]", "[SECRET_2]", "[CARD_1]", "[EMAIL_1]"}
        assert set(audit["redactions"][0]) == {"placeholder", "rule", "where", "at"}
        missing = await http.get("/sessions/nope/redactions")
        assert missing.status_code == 404
        assert missing.json()["error"]["code"] == "session_not_found"


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert isinstance(result, CallToolResult)
    text = result.content[0].text  # type: ignore[union-attr]
    for secret in PLANTED:
        assert secret not in text, (tool, text)
    data: dict[str, Any] = json.loads(text)
    assert not result.is_error, data
    return data


async def test_the_mcp_tools_see_placeholders_only(relay: RelayService) -> None:
    async with Client(build_server(relay)) as tools:
        stop = await call(tools, "debug_launch", script=BASIC, breakpoints=[f"{BASIC}:{ADD}"])
        assert stop["locals"]["password"] == "'[SECRET_1]'"
        assert stop["locals"]["card"] == "'[CARD_1]'"
        assert "[SECRET_2]" in stop["output"]
        assert (await call(tools, "evaluate", expression="password == '[SECRET_1]'"))["result"] == "True"
        await call(tools, "debug_variables")
        await call(tools, "debug_output")
        failed = await tools.call_tool("evaluate", {"expression": "int(password)"})
        assert failed.is_error
        assert PASSWORD not in failed.content[0].text  # type: ignore[union-attr]
        audit = await call(tools, "debug_redactions")
        assert audit["total"] == 4
