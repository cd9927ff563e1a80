"""Redaction against real debugpy targets: HTTP, the CLI, a relay restart, and the relay's own log."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Relay, Sessions, line_of, ok, output_text, target
from tests.integration.test_cli import Cli
from tests.redis_server import Cluster

SECRETS = target("secrets.py")
STOP = line_of(SECRETS, "secrets-stop")
PLANTED = (
    "hunter2-horse-battery",
    "Tr0ub4dor3x",
    "ghp_R2d2C3poR2d2C3poR2d2C3poR2d2C3po1234",
    "4111 1111 1111 1111",
    "ada.lovelace@example.org",
)
PLACEHOLDER = re.compile(r"\[(?:SECRET|CARD|EMAIL)_\d+\]")

pytestmark = pytest.mark.integration


def hidden(*answers: Any) -> str:
    text = json.dumps(answers)
    for secret in PLANTED:
        assert secret not in text, (secret, text)
    return text


def locals_of(http: httpx.Client, sid: str) -> dict[str, str]:
    found = ok(http.get(f"/sessions/{sid}/frames/0/variables"))
    hidden(found)
    return {v["name"]: v["value"] for v in found["variables"]}


def evaluate(http: httpx.Client, sid: str, expression: str) -> str:
    answer = ok(http.post(f"/sessions/{sid}/evaluate", json={"expression": expression}))
    hidden(answer)
    result: str = answer["result"]
    return result


def test_a_paused_programs_secrets_reach_the_agent_as_placeholders(
    sessions: Sessions, api: httpx.Client, relay: Relay
) -> None:
    sid, stop = sessions.start_at(SECRETS, "secrets-stop")
    hidden(stop)
    values = locals_of(api, sid)
    password = values["password"].strip("'")
    assert PLACEHOLDER.fullmatch(password)
    assert values["card"] == "'[CARD_1]'"
    assert values["owner"] == "'[EMAIL_1]'"
    assert values["request_id"] == "'550e8400-e29b-41d4-a716-446655440000'"
    assert values["url"].startswith("'postgresql://svc:[SECRET_")
    assert "token=[SECRET_" in hidden(output_text(api, sid))
    hidden(ok(api.get(f"/sessions/{sid}/variables")), ok(api.get(f"/sessions/{sid}/stacktrace")))

    # the agent uses a secret it never saw: the relay puts it back before debugpy evaluates
    assert evaluate(api, sid, f"password == '{password}'") == "True"
    assert evaluate(api, sid, f"len({password})") == str(len("hunter2-horse-battery"))
    assert evaluate(api, sid, "password.upper()").startswith("'[SECRET_")  # named by what it touches
    scope = ok(api.get(f"/sessions/{sid}/frames/0/scopes"))["scopes"][0]["reference"]
    changed = ok(api.post(f"/sessions/{sid}/variables/{scope}/set", json={"name": "copy", "value": password}))
    assert changed["value"] == f"'{password}'"
    assert evaluate(api, sid, "copy == password") == "True"

    audit = ok(api.get(f"/sessions/{sid}/redactions"))
    hidden(audit)
    rules = {r["placeholder"]: r["rule"] for r in audit["redactions"]}
    assert rules[password] == "secret_name"
    assert rules["[CARD_1]"] == "card"
    assert {"url_password", "email"} <= set(rules.values())
    assert all(set(r) == {"placeholder", "rule", "where", "at"} for r in audit["redactions"])
    for secret in PLANTED:
        assert secret not in relay.log.read_text(errors="replace")


def test_the_cli_shows_placeholders_and_the_audit(sessions: Sessions, relay: Relay) -> None:
    cli = Cli(relay)
    sid, _ = sessions.start_at(SECRETS, "secrets-stop")
    variables = cli("vars", sid)
    hidden(variables)
    password = {v["name"]: v["value"] for v in variables["variables"]}["password"].strip("'")
    assert hidden(cli("eval", sid, f"password == '{password}'"))
    assert cli("eval", sid, f"password == '{password}'")["result"] == "True"
    hidden(cli.pretty("vars", sid), cli.pretty("output", sid))
    audit = cli("redactions", sid)
    assert password in {r["placeholder"] for r in audit["redactions"]}
    hidden(audit)


def test_placeholders_survive_a_relay_restart(cluster: Cluster) -> None:
    cold = {"DEBUGRELAY_POOL_SIZE": "0"}  # kill -9 would leave a warm pool's interpreters behind
    first = cluster.relay(**cold)
    sid = ok(first.http.post("/sessions", json={}), 201)["session_id"]
    ok(first.http.post(f"/sessions/{sid}/breakpoints", json={"source": {"path": SECRETS}, "line": STOP}))
    ok(first.http.post(f"/sessions/{sid}/launch", json={"script": SECRETS}))
    assert ok(first.http.post(f"/sessions/{sid}/wait", json={"timeout": 30}))["status"] == "paused"
    before = locals_of(first.http, sid)

    first.proc.kill()  # kill -9
    first.proc.wait(10)
    second = cluster.relay(**cold)
    assert ok(second.http.post(f"/sessions/{sid}/wait", json={"timeout": 30}))["status"] == "paused"
    after = locals_of(second.http, sid)
    assert {k: after[k] for k in ("password", "card", "owner")} == {k: before[k] for k in ("password", "card", "owner")}
    password = after["password"].strip("'")
    assert evaluate(second.http, sid, f"password == '{password}'") == "True"
    # a session of its own numbers from 1 again: its placeholders stand for its values only
    other = ok(second.http.post("/sessions", json={}), 201)["session_id"]
    assert ok(second.http.get(f"/sessions/{other}/redactions"))["total"] == 0


def test_a_bad_patterns_file_stops_the_relay_at_start_saying_why(tmp_path: Path) -> None:
    patterns = tmp_path / "patterns.toml"
    patterns.write_text("[[pattern]]\nname = 'order'\nregex = '(ORD-'\n")
    done = subprocess.run(
        [sys.executable, "-m", "debugrelay.cli", "serve", "--port", "0"],
        env={"PATH": "/usr/bin:/bin", "DEBUGRELAY_REDACTION_PATTERNS": str(patterns)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert str(patterns) in done.stderr
    assert "'order'" in done.stderr
    assert "does not compile" in done.stderr
