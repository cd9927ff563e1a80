"""Every launch option reaches an agent: through MCP (forwarding to a relay) and the CLI, ``launcher:
"docker"`` runs the program in a container, not on the relay's machine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Relay, ok, target
from tests.integration.test_cli import Cli
from tests.integration.test_mcp import stdio_agent

BASIC = target("basic.py")
IN_A_CONTAINER = "__import__('os').path.exists('/.dockerenv')"


@pytest.mark.asyncio
async def test_an_mcp_launch_with_the_docker_launcher_runs_in_a_container(
    docker_client: Any, tmp_path: Path, relay: Relay
) -> None:
    async with stdio_agent(tmp_path, "--url", relay.url) as agent, httpx.AsyncClient(base_url=relay.url) as api:
        stop = await agent.call("debug_launch", script=BASIC, launcher="docker", stop_on_entry=True)
        assert stop["status"] == "paused", stop
        assert ok(await api.get(f"/sessions/{stop['session_id']}"))["launch"]["launcher"] == "docker"
        shown = await agent.call("debug_evaluate", expression=IN_A_CONTAINER)
        assert shown["result"] == "True", shown
        await agent.call("debug_disconnect")


def test_a_cli_launch_with_the_docker_launcher_runs_in_a_container(docker_client: Any, relay: Relay) -> None:
    cli = Cli(relay)
    stop = cli("launch", "--launcher", "docker", "--stop-on-entry", BASIC)
    assert stop["status"] == "paused", stop
    assert cli("eval", stop["session_id"], IN_A_CONTAINER)["result"] == "True"
    cli("delete", stop["session_id"])
