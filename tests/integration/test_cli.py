"""The installed ``debugrelay`` command against a running relay, as an agent with only a shell uses it."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from debugrelay.cli import CLI_HINTS
from tests.conftest import Relay, line_of, ok, target

pytestmark = pytest.mark.integration

DEBUGRELAY = str(Path(sys.executable).parent / "debugrelay")
BASIC = target("basic.py")
CRASH = target("crash.py")
ADD = line_of(BASIC, "add-body")


# where a command runs unless a test says: an empty folder, so that answers name the tests' files by their
# whole paths (a path under the folder a command runs in is shown relative to it)
ELSEWHERE = Path(tempfile.mkdtemp(prefix="debugrelay-cli-"))
atexit.register(shutil.rmtree, ELSEWHERE, True)


class Cli:
    """Runs ``debugrelay ARGS`` with DEBUGRELAY_URL pointing at the test relay."""

    def __init__(self, relay: Relay) -> None:
        self.env = {**os.environ, "DEBUGRELAY_URL": relay.url}
        self.env.pop("DEBUGRELAY_TOKEN", None)

    def run(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [DEBUGRELAY, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd=cwd or ELSEWHERE,
        )

    def __call__(self, *args: str, cwd: Path | None = None) -> Any:
        done = self.run(*args, cwd=cwd)
        assert done.returncode == 0, f"debugrelay {' '.join(args)}: {done.stderr}"
        assert "\n" not in done.stdout.strip(), "compact JSON is one line"
        return json.loads(done.stdout)

    def pretty(self, *args: str) -> str:
        done = self.run(*args, "--pretty")
        assert done.returncode == 0, done.stderr
        return done.stdout

    def error(self, *args: str, cwd: Path | None = None) -> dict[str, Any]:
        done = self.run(*args, cwd=cwd)
        assert done.returncode != 0, done.stdout
        assert done.stdout == ""
        error: dict[str, Any] = json.loads(done.stderr)["error"]
        assert error["code"]
        assert error["message"]
        assert "hint" in error
        return error


@pytest.fixture
def cli(relay: Relay) -> Cli:
    return Cli(relay)


def test_a_debugging_story_from_the_shell(cli: Cli, api: httpx.Client) -> None:
    sid = cli("create", "--name", "cli-story")["session_id"]
    assert cli("status")["session_id"] == sid  # no ID: the most recent session
    bp = cli("break", sid, f"{BASIC}:{ADD}")
    assert bp["verified"] is True
    assert bp["breakpoint_id"] == "bp_1"

    stop = cli("launch", sid, BASIC, "one", "--env", "GREETING=hi", "--", "--two")
    assert stop["status"] == "paused", stop
    assert stop["python"] and "stops_on" not in stop  # said once; the default (uncaught exceptions) goes unsaid
    assert stop["reason"] == "breakpoint", stop
    assert stop["location"] == {"file": BASIC, "line": ADD, "function": "add"}

    stack = cli("stack", sid)
    assert [f["name"] for f in stack["frames"]][:2] == ["add", "average"]
    variables = cli("vars", sid)
    assert {v["name"]: v["value"] for v in variables["variables"]} == {"a": "0", "b": "3"}
    caller = cli("vars", sid, "--frame", "1")
    assert {v["name"] for v in caller["variables"]} >= {"total", "values"}
    ref = next(v["ref"] for v in caller["variables"] if v["name"] == "values")  # as MCP names it
    assert all("variable_reference" not in v and "expandable" not in v for v in caller["variables"])
    items = cli("vars", sid, "--ref", str(ref))
    assert [v["value"] for v in items["variables"] if v["name"].isdigit()] == ["3", "4", "5"]
    assert cli("eval", sid, "a + b") == {"result": "3", "type": "int"}
    assert cli("eval", "a * 10")["result"] == "0"  # no ID: the most recent session
    # several expressions: one result each, in order; one that fails does not hide the others
    assert cli("eval", sid, "a", "b", "nope") == {
        "results": [
            {"expression": "a", "result": "0", "type": "int"},
            {"expression": "b", "result": "3", "type": "int"},
            {
                "expression": "nope",
                "error": {
                    "code": "evaluation_error",
                    "message": "NameError: name 'nope' is not defined",
                    "details": {"expression": "nope", "frame_index": 0},
                    "hint": CLI_HINTS["evaluation_error"],
                },
            },
        ]
    }
    assert cli.pretty("eval", sid, "a", "b").splitlines() == ["a = 0  (int)", "b = 3  (int)"]
    # errors name CLI commands, never the HTTP API's paths
    no_exception = cli.error("autopsy", sid)
    assert no_exception["code"] == "NO_EXCEPTION"
    assert "debugrelay catch" in no_exception["hint"]
    assert "/" not in no_exception["hint"]

    step = cli("step", "over", sid)
    assert step["reason"] == "step"
    assert step["location"]["line"] == ADD + 1
    out = cli("step", "out")
    assert out["location"]["function"] == "average"
    cli("unbreak", sid, "bp_1")
    end = cli("continue", sid)
    assert end["status"] == "terminated", end
    assert end["exit_code"] == 0, end

    printed = cli("output", sid)
    text = "".join(o["text"] for o in printed["outputs"])
    assert "hi stdout" in text
    assert "args ['one', '--two']" in text
    newer = cli("output", sid, "--since", printed["cursor"])
    assert newer["outputs"] == []

    assert sid in {s["session_id"] for s in cli("sessions")["sessions"]}
    assert cli("delete", sid)["deleted"] is True
    assert api.get(f"/sessions/{sid}").status_code == 404


def test_breakpoint_kinds_wait_pause_and_autopsy(cli: Cli) -> None:
    sid = cli("create")["session_id"]
    cli("break", sid, f"{BASIC}:{ADD}", "--condition", "b == 5")
    cli("break", sid, f"{BASIC}:{line_of(BASIC, 'loop-body')}", "--log", "loop value={value}")
    listed = cli("breakpoints", sid)["breakpoints"]
    assert [b.get("condition") for b in listed] == ["b == 5", None]
    started = cli("launch", sid, BASIC, "--wait", "0")
    assert started["status"] in ("running", "paused")
    stop = cli("wait", sid, "--timeout", "30")
    assert stop["status"] == "paused", stop
    assert stop["location"]["line"] == ADD, stop
    assert cli("eval", sid, "b")["result"] == "5"
    cli("continue", sid)
    logged = "".join(o["text"] for o in cli("output", sid)["outputs"])
    assert "loop value=3" in logged
    assert "loop value=5" in logged

    hits = cli("create")["session_id"]
    cli("break", hits, f"{BASIC}:{ADD}", "--hit", "3")
    stop = cli("launch", hits, BASIC)
    assert cli("eval", hits, "b")["result"] == "5", stop
    cli("delete", hits)

    crash = cli("launch", CRASH)  # no ID: a new session, stopping on the uncaught exception
    assert crash["reason"] == "exception", crash
    assert crash["exception"]["type"].endswith("ValueError"), crash
    autopsy = cli("autopsy")
    assert autopsy["frames"][0]["function"] == "parse"
    pretty = cli.pretty("autopsy")
    assert "ValueError" in pretty
    assert "text = 'x'" in pretty
    cli("delete", crash["session_id"])
    cli("delete", sid)


def test_a_failing_testcase_test_under_pytest_pauses_at_its_assert(cli: Cli) -> None:
    units = target("testrun/check_units.py")
    stop = cli("launch", "--module", "pytest", "--cwd", str(Path(units).parent), "--", "-q", units)
    assert stop["status"] == "paused", stop
    assert stop["location"] == {"file": units, "line": line_of(units, "unit-assert"), "function": "test_total"}
    assert stop["exception"]["message"] == "4 != 5", stop
    cli("delete", stop["session_id"])


def test_pretty_output_is_for_people(cli: Cli) -> None:
    sid = cli("create")["session_id"]
    cli("break", sid, f"{BASIC}:{ADD}")
    cli("launch", sid, BASIC)
    sessions = cli.pretty("sessions")
    assert sessions.splitlines()[0].split() == ["SESSION", "STATUS", "REASON", "WHERE", "NAME"]
    assert sid in sessions
    assert f"{sid} paused (breakpoint bp_1) at {BASIC}:{ADD} in add" in cli.pretty("status", sid)
    stack = cli.pretty("stack", sid)
    assert "#0" in stack
    assert "add" in stack
    variables = cli.pretty("vars", sid).splitlines()
    assert variables[0].split() == ["NAME", "TYPE", "VALUE", "REF"]
    assert variables[1].split() == ["a", "int", "0"]
    assert cli.pretty("eval", sid, "b").strip() == "3  (int)"
    assert "bp_1" in cli.pretty("breakpoints", sid)
    cli("delete", sid)


def test_failures_exit_non_zero_with_the_error_json(cli: Cli, relay: Relay) -> None:
    assert cli.error("status", "sess_nope")["code"] == "session_not_found"
    sid = cli("create")["session_id"]
    bad = cli.error("break", sid, f"{BASIC}:9999")
    assert bad["code"] == "invalid_line"
    assert bad["details"]["max_line"] == 30
    assert cli.error("eval", sid, "1")["code"] == "invalid_state"  # nothing runs yet
    assert cli.error("break", sid, "no-line-here")["code"] == "invalid_request"
    cli("delete", sid)

    elsewhere = Cli(relay)
    elsewhere.env["DEBUGRELAY_URL"] = "http://127.0.0.1:9"
    assert elsewhere.error("sessions")["code"] == "relay_unreachable"
    usage = cli.run("step", "sideways")
    assert usage.returncode == 2
    assert "invalid choice: 'sideways'" in json.loads(usage.stderr)["error"]["message"]


def test_an_option_nothing_takes_is_refused_by_name_on_the_cli_and_over_http(cli: Cli, api: httpx.Client) -> None:
    """``frobnicate`` is refused by name, with the error JSON every other failure has, and launches nothing."""
    before = ok(api.get("/sessions"))["sessions"]
    refused = cli.run("launch", BASIC, "--frobnicate", "1")
    assert refused.returncode == 2 and refused.stdout == ""
    error = json.loads(refused.stderr)["error"]
    assert error["code"] == "invalid_request"
    assert "--frobnicate" in error["message"]
    sid = cli("create")["session_id"]
    over_http = api.post(f"/sessions/{sid}/launch", json={"script": BASIC, "frobnicate": 1})
    assert over_http.status_code == 400
    assert "frobnicate" in over_http.json()["error"]["message"]
    assert ok(api.get(f"/sessions/{sid}"))["status"] == "created"  # nothing ran
    cli("delete", sid)
    assert ok(api.get("/sessions"))["sessions"] == before


def test_a_test_launch_runs_where_the_command_is_given(cli: Cli, tmp_path: Path) -> None:
    """``launch --test NODE`` runs pytest on one test in the folder the agent stands in (its rootdir, its
    configuration), not the relay's, and pauses at the failing assert."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    checks = project / "test_totals.py"
    checks.write_text("def test_total():\n    total = 2 + 2\n    assert total == 5  # total-assert\n")
    stop = cli("launch", "--test", "test_totals.py::test_total", cwd=project)
    assert stop["status"] == "paused", stop
    assert stop["location"]["file"] == "test_totals.py"  # under the folder it was asked from: as named there
    assert stop["location"]["line"] == line_of(str(checks), "total-assert")
    assert stop["locals"]["total"] == "4"
    done = cli("continue", stop["session_id"])
    assert done["status"] == "terminated", done
    assert f"rootdir: {project}" in "".join(o["text"] for o in cli("output", stop["session_id"])["outputs"])
    cli("delete", stop["session_id"])


def test_the_token_is_sent(tmp_path: Path) -> None:
    relay = Relay(tmp_path, env={"DEBUGRELAY_TOKEN": "s3cret"})
    try:
        cli = Cli(relay)
        assert cli.error("sessions")["code"] == "unauthorized"
        cli.env["DEBUGRELAY_TOKEN"] = "s3cret"
        assert cli("sessions")["sessions"] == []
        assert Cli(relay)("sessions", "--token", "s3cret")["total"] == 0
    finally:
        relay.stop()


def test_mcp_endpoint_needs_the_token_too(tmp_path: Path) -> None:
    relay = Relay(tmp_path, env={"DEBUGRELAY_TOKEN": "s3cret"})
    try:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        denied = httpx.post(f"{relay.url}/mcp", json=body, headers={"Accept": "application/json, text/event-stream"})
        assert denied.status_code == 401
        assert ok(relay.http.get("/health"))["status"] == "ok"
    finally:
        relay.stop()


def test_the_token_comes_from_a_file_and_a_token_on_the_command_line_is_warned_about(tmp_path: Path) -> None:
    relay = Relay(tmp_path, env={"DEBUGRELAY_TOKEN": "file-token-123"})
    try:
        cli = Cli(relay)
        denied = cli.error("sessions")
        assert denied["code"] == "unauthorized"
        token_file = tmp_path / "token"
        token_file.write_text("file-token-123\n")
        token_file.chmod(0o600)
        assert cli("sessions", "--token-file", str(token_file))["sessions"] == []
        shown = cli.run("sessions", "--token", "file-token-123")
        assert shown.returncode == 0, shown.stderr
        assert "--token-file" in shown.stderr  # the warning: a token in argv is visible in ps
        assert "file-token-123" not in shown.stderr
    finally:
        relay.stop()


def test_unbreak_all_removes_every_breakpoint(cli: Cli) -> None:
    sid = cli("create")["session_id"]
    cli("break", sid, f"{BASIC}:{ADD}")
    cli("break", sid, f"{BASIC}:{line_of(BASIC, 'loop-body')}")
    assert cli("unbreak", sid, "--all") == {"session_id": sid, "removed": ["bp_1", "bp_2"]}
    assert cli("breakpoints", sid)["breakpoints"] == []
    assert cli.error("unbreak")["code"] == "invalid_request"  # neither ids nor --all


def test_a_continue_that_meets_no_stop_names_the_next_commands(cli: Cli) -> None:
    sid = cli("create")["session_id"]
    assert cli("launch", sid, target("bp_forever.py"), "--stop-on-entry")["reason"] == "entry"
    going = cli("continue", sid, "--timeout", "0.2")
    assert (going["status"], going["timed_out"]) == ("running", True)
    assert going["hint"] == "`debugrelay wait` waits for the next stop; `debugrelay pause` pauses it."
    assert cli("pause", sid)["status"] == "paused"
