"""Redaction against real debugpy targets: HTTP, the CLI, a relay restart, and the relay's own log."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Relay, Sessions, line_of, ok, output_text, target, until
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


CRAFTED = target("out_crafted.py")


class OutputReader:
    """A second client reading a session's whole output, page after page, over and over: which request
    is in flight (``started``) and how many have answered (``answered``)."""

    def __init__(self, relay: Relay, sid: str) -> None:
        self.relay, self.sid = relay, sid
        self.started = self.answered = 0
        self.rounds: list[list[dict[str, Any]]] = []
        self.failure: BaseException | None = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            with httpx.Client(base_url=self.relay.url, timeout=600) as http:
                while not self.stop.is_set():
                    found: list[dict[str, Any]] = []
                    since = None
                    while True:
                        self.started += 1
                        params = {"limit": 1000, **({"since": since} if since else {})}
                        page = ok(http.get(f"/sessions/{self.sid}/output", params=params))
                        self.answered += 1
                        found += page["outputs"]
                        since = page["cursor"]
                        if not page["has_more"]:
                            break
                    self.rounds.append(found)
        except BaseException as exc:
            self.failure = exc


def test_output_made_to_be_slow_to_redact_leaves_the_relay_answering(
    api: httpx.Client, sessions: Sessions, relay: Relay
) -> None:
    """30 lines of ~60 KB of "token=" + hex (seconds each for a quadratic rule): while another client
    reads them, /health answers between the start and the answer of one output request, three times."""
    sid = sessions.create()
    sessions.launch(sid, CRAFTED)
    assert sessions.wait(sid, timeout=120)["status"] == "terminated"
    reader = OutputReader(relay, sid)
    reader.thread.start()
    seen: set[int] = set()

    def health_while_reading() -> bool:
        before = (reader.started, reader.answered)
        answered = api.get("/health").status_code == 200
        if answered and before == (reader.started, reader.answered) and before[0] > before[1]:
            seen.add(before[0])  # /health came back while output request number before[0] was in flight
        assert reader.failure is None, reader.failure
        return len(seen) >= 3

    try:
        until(health_while_reading, "/health to answer during three output requests")
        until(lambda: reader.rounds, "the whole output, read page by page")
    finally:
        reader.stop.set()
        reader.thread.join(600)
    assert reader.failure is None, reader.failure
    lines = reader.rounds[0]
    stdout = "".join(o["text"] for o in lines if o["type"] == "stdout").splitlines()
    assert len(stdout) == 31 and stdout[-1] == "DONE-END", [(o["type"], o["text"][:60]) for o in lines][:40]
    leaked = [line[:80] for line in stdout[:-1] if not re.fullmatch(r"token=\[SECRET_\d+\]", line)]
    assert leaked == [], leaked
    assert reader.answered > len(reader.rounds)  # 1.8 MB of output came in pages, none past the bound


def test_a_known_secret_is_hidden_in_its_common_encodings(api: httpx.Client, sessions: Sessions) -> None:
    """Once the relay has seen the database password (in ``url``), an expression that encodes it finds
    a placeholder, not the password: base64 at any alignment, hex, reversed, upper-cased, letters
    joined, a list of characters or ords, URL-encoded; a watch too."""
    sid, _ = sessions.start_at(SECRETS, "secrets-stop")
    url = "postgresql://svc:Tr0ub4dor3x@db.internal:5432/app"
    assert locals_of(api, sid)["url"].startswith("'postgresql://svc:[SECRET_")
    secret = "Tr0ub4dor3x"
    at = url.index(secret)

    def base64_of_the_secret(prefix: str) -> str:
        """The base64 characters of ``prefix + url`` that only the secret's bytes decide."""
        whole = base64.b64encode((prefix + url).encode()).decode()
        start = len(prefix) + at
        return whole[-(-start * 4 // 3) : (start + len(secret)) * 4 // 3]

    checks = {
        "__import__('base64').b64encode(url.encode()).decode()": base64_of_the_secret(""),
        "__import__('base64').b64encode(b'x' + url.encode()).decode()": base64_of_the_secret("x"),
        "__import__('base64').urlsafe_b64encode(b'xy' + url.encode()).decode()": base64_of_the_secret("xy"),
        "url.encode().hex()": secret.encode().hex(),
        "url.encode().hex(':').upper()": secret.encode().hex(":").upper(),
        "url[::-1]": secret[::-1],
        "url.upper()[::-1]": secret.upper()[::-1],
        "' '.join(url)": " ".join(secret),
        "list(url)": repr(list(secret))[1:-1],
        "[ord(c) for c in url]": repr([ord(c) for c in secret])[1:-1],
        "__import__('urllib.parse').parse.quote(url, safe='')": secret,
    }
    for expression, encoded in checks.items():
        result = evaluate(api, sid, expression)
        assert encoded not in result and "[SECRET_" in result, (expression, result)
    watch = ok(api.post(f"/sessions/{sid}/watch", json={"expression": "url.upper()[::-1]"}))
    assert secret.upper()[::-1] not in json.dumps(watch) and "[SECRET_" in watch["result"], watch


SPLIT = target("out_split_secret.py")
SPLIT_SECRET = "Tr0ub4dor3x-Zebra-Quill-77"


def test_a_secret_written_across_lines_or_in_composed_encodings_is_hidden(
    api: httpx.Client, sessions: Sessions
) -> None:
    """The program prints its database password once (the rules find it), then three characters of it a
    line, then it base64'd upper-cased and reversed, hex'd reversed, and escaped a byte or a character at a
    time: no output answer shows it, read whole or a few lines a page."""
    sid = sessions.create()
    sessions.launch(sid, SPLIT, env={"SPLIT_SECRET": SPLIT_SECRET})
    ended = sessions.wait(sid)
    assert ended["status"] == "terminated"
    pieces = [SPLIT_SECRET[i : i + 3] for i in range(0, len(SPLIT_SECRET), 3)]
    encoded = [
        base64.b64encode(SPLIT_SECRET.upper().encode()).decode()[:-4],  # the characters the secret alone decides
        base64.b64encode(SPLIT_SECRET[::-1].encode()).decode()[:-4],
        SPLIT_SECRET[::-1].encode().hex(),
        "".join(f"\\x{b:02x}" for b in SPLIT_SECRET.encode()),
        "".join(f"\\u{ord(c):04x}" for c in SPLIT_SECRET),
    ]

    def shows_none(lines: list[str]) -> None:
        text = "".join(lines)
        assert not any(line.strip() in pieces for line in lines), text
        assert SPLIT_SECRET not in text and "".join(pieces[:4]) not in text.replace("\n", ""), text
        for form in encoded:
            assert form not in text, (form, text)

    shows_none(ended["output"].splitlines(keepends=True))  # what the program printed, told as it ends
    whole = [o["text"] for o in ok(api.get(f"/sessions/{sid}/output", params={"limit": 1000}))["outputs"]]
    shows_none(whole)
    assert sum("[SECRET_" in line for line in whole) >= 7, whole  # the URL, the lines, each encoding
    paged: list[str] = []
    cursor = "0"
    while True:  # four lines a page: the password's lines fall across pages
        page = ok(api.get(f"/sessions/{sid}/output", params={"since": cursor, "limit": 4}))
        lines = [o["text"] for o in page["outputs"]]
        assert not any(line.strip() in pieces for line in lines), lines
        paged += lines
        cursor = page["cursor"]
        if not page["has_more"]:
            break
    shows_none(paged)
    newest = ok(api.get(f"/sessions/{sid}/output", params={"limit": 9, "newest": True}))["outputs"]
    shows_none([o["text"] for o in newest])
