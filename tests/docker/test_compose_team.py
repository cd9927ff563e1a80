"""A relay a team shares, the way a team runs it: ``compose.yaml`` with ``compose.team.yaml`` laid over it,
three credentials (two agents and a viewer) and the operator's own token; each credential sees and does
exactly what its role allows over HTTP, /mcp, the CLI and the live view."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import error_of, line_of, ok
from tests.docker.stack import REPO, STACK_IMAGES, Stack, remove_leftovers, require_images
from tests.integration.test_teams import mcp_agent, tool
from tests.redis_server import poll

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SCRIPT = Path("tests/targets/basic.py")
DEBUGRELAY = str(Path(sys.executable).parent / "debugrelay")
ALICE, BOB, VAL = (f"{who}-compose-token-0123456789" for who in ("alice", "bob", "val"))
TEAM = "".join(
    f'[[credentials]]\nname = "{name}"\ntoken = "{token}"\nrole = "{role}"\n\n'
    for name, token, role in (("alice", ALICE, "agent"), ("bob", BOB, "agent"), ("val", VAL, "viewer"))
)


@pytest.fixture
def team_stack(docker_client: Any, tmp_path: Path) -> Iterator[Stack]:
    require_images(docker_client, *STACK_IMAGES)
    workspace = tmp_path / "workspace"
    (workspace / SCRIPT).parent.mkdir(parents=True)
    shutil.copy(REPO / SCRIPT, workspace / SCRIPT)
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "credentials.toml").write_text(TEAM)
    for path in (tmp_path, folder, *workspace.rglob("*"), workspace, folder / "credentials.toml"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    up = Stack(workspace, REPO / "compose.team.yaml", DEBUGRELAY_CREDENTIALS_DIR=str(folder))
    yield up
    up.down()
    remove_leftovers(docker_client, up.project, up.sessions)


def test_two_agents_and_a_viewer_share_one_relay_under_compose(team_stack: Stack) -> None:
    stack = team_stack
    stack.up()
    url = stack.url

    def client(token: str) -> httpx.Client:
        return httpx.Client(base_url=url, timeout=90, headers={"Authorization": f"Bearer {token}"})

    admin_token = stack.settings["DEBUGRELAY_TOKEN"]
    with client(ALICE) as alice, client(BOB) as bob, client(VAL) as val, client(admin_token) as admin:
        poll(lambda: answers(alice), timeout=60, what="the relay under compose")
        assert httpx.get(f"{url}/sessions").status_code == 401  # nobody without a credential

        script = str(stack.workspace / SCRIPT)
        sid = ok(alice.post("/sessions", json={"name": "alice under compose"}), 201)["session_id"]
        stack.sessions.append(sid)
        ok(
            alice.post(
                f"/sessions/{sid}/breakpoints", json={"source": {"path": script}, "line": line_of(script, "add-body")}
            )
        )
        ok(alice.post(f"/sessions/{sid}/launch", json={"script": script}))
        assert ok(alice.post(f"/sessions/{sid}/wait", json={"timeout": 60}, timeout=120))["status"] == "paused"

        # HTTP: bob neither sees nor touches it; val reads it and changes nothing; alice and the operator do
        assert sid not in {s["session_id"] for s in ok(bob.get("/sessions"))["sessions"]}
        assert error_of(bob.get(f"/sessions/{sid}/status"), 403, "forbidden")["details"]["owner"] == "alice"
        assert ok(val.get(f"/sessions/{sid}/stacktrace"))["frames"][0]["name"] == "add"
        error_of(val.post(f"/sessions/{sid}/evaluate", json={"expression": "a"}), 403, "forbidden")
        assert ok(alice.post(f"/sessions/{sid}/evaluate", json={"expression": "a + b"}))["result"] == "3"
        assert ok(admin.post(f"/sessions/{sid}/evaluate", json={"expression": "a * b"}))["result"] == "0"

        # /mcp
        async def over_mcp() -> None:
            async with mcp_agent(url, BOB) as agent:
                failed, data = await tool(agent, "debug_status", session_id=sid)
                assert failed and data["error"]["code"] == "forbidden", data
            async with mcp_agent(url, VAL) as viewer:
                failed, data = await tool(viewer, "debug_evaluate", expression="a", session_id=sid)
                assert failed and data["error"]["code"] == "forbidden", data

        asyncio.run(over_mcp())

        # the CLI
        def cli(token: str, *args: str) -> tuple[int, Any]:
            env = {**os.environ, "DEBUGRELAY_URL": url, "DEBUGRELAY_TOKEN": token}
            done = subprocess.run(
                [DEBUGRELAY, *args], env=env, capture_output=True, text=True, timeout=120, check=False
            )
            return done.returncode, json.loads(done.stdout if done.returncode == 0 else done.stderr)

        code, status = cli(VAL, "status", sid)
        assert code == 0 and status["status"] == "paused"
        code, refused = cli(VAL, "continue", sid)
        assert code != 0 and refused["error"]["code"] == "forbidden"
        code, refused = cli(BOB, "status", sid)
        assert code != 0 and refused["error"]["details"]["owner"] == "alice"

        # the live view
        with httpx.Client(base_url=url, timeout=90) as person:
            assert person.post("/ui/login", json={"token": BOB}).status_code == 204
            assert sid not in person.get("/ui").text
        with httpx.Client(base_url=url, timeout=90) as person:
            assert person.post("/ui/login", json={"token": VAL}).status_code == 204
            assert sid in person.get("/ui").text

        # the audit trail names who did what
        done = [(e.get("who"), e["operation"]) for e in ok(admin.get("/audit", params={"session_id": sid}))["entries"]]
        assert ("alice", "launch") in done and ("admin", "evaluate") in done and ("val", "evaluate") in done
        ok(alice.delete(f"/sessions/{sid}"))


def answers(http: httpx.Client) -> bool:
    try:
        return http.get("/sessions").status_code == 200
    except httpx.TransportError:
        return False
