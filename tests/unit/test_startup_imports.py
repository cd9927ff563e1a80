"""What starting a tool loads: ``debugrelay mcp`` answers its first request without the web framework, the
container engine's client or the relay's sessions (those load after the answer, when the tools need them);
``debugrelay --help`` loads no client, and a client command nothing of the relay's server side."""

from __future__ import annotations

import json
import subprocess
import sys

SERVER_ONLY = (
    "litestar",
    "docker",
    "redis",
    "kubernetes",
    "prometheus_client",
    "debugrelay.sessions",
    "debugrelay.launchers",
    "debugrelay.service._relay",
)


def loaded_after(statement: str, names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` a fresh interpreter has loaded after running ``statement``."""
    code = f"import json, sys\n{statement}\nprint(json.dumps([n for n in {list(names)!r} if n in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return list(json.loads(done.stdout))


def test_the_mcp_server_s_tools_load_without_the_relay_s_server_parts() -> None:
    statement = "from debugrelay.mcp_server import build_server, run_stdio"
    assert loaded_after(statement, (*SERVER_ONLY, "httpx", "debugrelay.client")) == []  # the client: for --url


def test_the_command_line_s_help_loads_no_client() -> None:
    statement = "from debugrelay.cli import build_parser\nbuild_parser().format_help()"
    assert loaded_after(statement, (*SERVER_ONLY, "mcp", "httpx", "asyncio", "debugrelay.client")) == []


def test_a_client_command_loads_nothing_of_the_relay_s_server_side() -> None:
    statement = "from debugrelay.cli import _client, _commands, _launch"
    unused = ("mcp", "pydantic", "uvicorn", "psutil", "debugpy", "debugrelay.access")
    assert loaded_after(statement, (*SERVER_ONLY, *unused)) == []
